# test/attack_lib.sh - scripted volunteers for the attack tests
# (test/attack.mk), sourced after test/server_lib.sh: a small job, accounts,
# and volunteers that ask for work, compute it honestly or as a crafted
# cheat (test/craft_result) and upload and report it, each from a source
# address of its own choosing on the loopback network (127.0.0.0/8 all
# reaches the server, so two volunteers can be "on different networks").
#
# Sets CRAFT, CTUNE, CORPUS; skips (77) when they are not built
# (craft_tools; make_data, mkuser, fetch and craft_item are server_lib.sh's).
craft_tools

# attack_project NAME [SCHED-SETTINGS]: the data (make_data) and a new
# project NAME; SCHED-SETTINGS (lines joined by \n) open its [sched] section.
# request_delay is 1 s (the server enforces it: a volunteer told "no work"
# gets none before then), so the scripted volunteers may ask again at once.
attack_project() {
	make_data
	"$S" init "$P" --listen 127.0.0.1:0 --name "$1" >/dev/null || die "init"
	sed -i 's/^request_delay = .*/request_delay = 1/' "$P/ctune-server.conf"
	[ -z "${2:-}" ] || sed -i "s/^\[sched\]\$/[sched]\n$2/" "$P/ctune-server.conf"
}

# submit OPTIONS...: job submit with the data of make_data
submit() {
	"$S" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" \
		--eval "$T/eval.bin" --steps 2 --batch 2 --seq 16 --lr 0.001 "$@" >/dev/null ||
		die "job submit $*"
}

# A volunteer VOL is an account (its key file) and a host; VOL may be
# "user" or "user.hostname" (several hosts of one account). Its source
# address is $T/ip.VOL when set (e.g. 127.0.5.1), else 127.0.0.1.
vuser() { echo "${1%%.*}"; }
vip() { [ -f "$T/ip.$1" ] && cat "$T/ip.$1" || echo 127.0.0.1; }
cpid() {	# the client id of VOL: $T/cpid.VOL when set, else from its name
	[ -f "$T/cpid.$1" ] && { cat "$T/cpid.$1"; return; }
	printf '%s' "$1" | sha256sum | cut -c1-32
}
# vrpc VOL WANT [EXTRA-XML]: scheduler RPC -> $T/reply.xml, $code (the
# volunteer says it runs LoRA work units: craft_result makes their results)
vrpc() {
	hid=0
	[ -f "$T/host.$1" ] && hid=$(cat "$T/host.$1")
	sched_rpc "$(cat "$T/key.$(vuser "$1")")" "$hid" "$(cpid "$1")" "$2" \
		"<hostname>$1</hostname><os>Linux</os>" "${3:-}" "<lora>1</lora>" \
		--interface "$(vip "$1")"
}
# ask VOL WANT: an RPC asking for WANT results; remembers the host id and
# the reply in $T/reply.VOL; prints the number of results got. A reply
# without a host id (a refusal, which comes with HTTP 200) ends the test
# with the reply: storing an empty id would make VOL a new host.
ask() {
	vrpc "$1" "$2"
	[ "$code" = 200 ] || die "$1's RPC: HTTP $code: $(cat "$T/reply.xml")"
	hid=$(xp 'string(/scheduler_reply/host_id)')
	[ -n "$hid" ] || die "$1's RPC: a reply without host_id: $(cat "$T/reply.xml")"
	echo "$hid" >"$T/host.$1"
	cp "$T/reply.xml" "$T/reply.$1"
	xp 'count(/scheduler_reply/result)'
}
# compute VOL MODE: make the file of every result in VOL's last reply as
# MODE (craft_result), without uploading; lines "RESULT WU SHARD TOKEN"
# go to $T/todo.VOL (and are appended to $T/got.VOL)
compute() {
	: >"$T/todo.$1"
	n=$(xmllint --xpath 'count(/scheduler_reply/result)' "$T/reply.$1")
	i=1
	while [ "$i" -le "$n" ]; do
		craft_item "$T/reply.$1" "$i" "$2"
		echo "$r $wu $shard $tok" >>"$T/todo.$1"
		echo "$r $wu $shard" >>"$T/got.$1"
		i=$((i + 1))
	done
}
# deliver VOL [WANT]: upload each result of $T/todo.VOL and report them all
# in one RPC (asking for WANT more, default 0); sets up_codes (the HTTP
# codes, space-separated) and acks
deliver() {
	reports=
	up_codes=
	while read -r r wu shard tok; do
		sha=$(sha256sum <"$T/work/$r" | cut -d' ' -f1)
		c=$(curl -s --interface "$(vip "$1")" -o "$T/up.xml" -w '%{http_code}' \
			-H "X-Upload-Token: $tok" -H "X-Content-SHA256: $sha" \
			-H "X-Upload-MAC: $(upload_mac "$r" "$tok" "$T/work/$r")" \
			--data-binary @"$T/work/$r" "$URL/upload/$r")
		up_codes="$up_codes $c"
		reports="$reports$(report "$r" "$sha" "$(wc -c <"$T/work/$r")")"
	done <"$T/todo.$1"
	up_codes=${up_codes# }
	acks=0
	if [ -n "$reports" ]; then
		vrpc "$1" "${2:-0}" "$reports"
		acks=$(xp 'count(/scheduler_reply/ack[status="accepted"])')
	fi
}
# work VOL MODE: compute and deliver
work() { compute "$1" "$2"; deliver "$1"; }
# errors VOL: report every result of VOL's last reply as a client error
errors() {
	reports=
	for r in $(xmllint --xpath '/scheduler_reply/result/name/text()' "$T/reply.$1" 2>/dev/null); do
		reports="$reports<result><name>$r</name><status>error</status><error_code>-1</error_code><error_message>fake</error_message></result>"
	done
	vrpc "$1" 0 "$reports"
}
# settle JOB: wait (a minute at most) until the daemons are done with
# what was reported: no success awaits the validator, and no round is
# "averaging" (open with every WU done: the assimilator is about to open
# the next). A scenario that settles before its volunteers ask has each
# new round open while nobody asks, so the order it asks in is the order
# they get the round's work in (else the round may open between two of
# their asks: CI saw that in server_trust.sh and server_round_capture.sh).
# A wait that runs out says so in the log: the scenario then races the
# daemons.
settle() {
	i=0
	while "$S" job show "$P" "$1" 2>/dev/null |
		grep -Eq '^  over +success +init |^  [0-9]+ +averaging '; do
		if [ $i -ge 300 ]; then
			echo "# settle: the daemons still busy with job $1 after 60 s"
			return 0
		fi
		sleep 0.2
		i=$((i + 1))
	done
}
round_done() {	# round_done JOB ROUND: the round is averaged
	"$S" job show "$P" "$1" 2>/dev/null | grep -Eq "^ +$2 +done "
}
