# test/attack_lib.sh - scripted volunteers for the attack tests
# (test/attack.mk), sourced after test/server_lib.sh: a small job, accounts,
# and volunteers that ask for work, compute it honestly or as a crafted
# cheat (test/craft_result) and upload and report it, each from a source
# address of its own choosing on the loopback network (127.0.0.0/8 all
# reaches the server, so two volunteers can be "on different networks").
#
# Sets CRAFT, CTUNE, CORPUS; skips (77) when they are not built.
CRAFT="$B/test/craft_result"
CTUNE="$B/ctune"
CORPUS="$B/bench/ctune-corpus"
for x in "$S" "$CRAFT" "$CTUNE" "$CORPUS"; do
	[ -x "$x" ] || { echo "skip: $x not built"; exit 77; }
done
command -v xmllint >/dev/null 2>&1 || { echo "skip: no xmllint"; exit 77; }
mkdir -p "$T/cache" "$T/work"

# make_data: a tiny model and token files in $T
make_data() {
	"$CTUNE" model init --layers 1 --heads 2 --channels 32 --max-seq 32 --vocab 29 \
		--seed 1 --out "$T/base.bin" >/dev/null || die "model init"
	"$CORPUS" --lang 1 --tokens 20000 --out "$T/train.bin" >/dev/null || die "corpus"
	"$CORPUS" --lang 1 --tokens 4000 --seed 2 --out "$T/eval.bin" >/dev/null || die "corpus"
}
# mkuser NAME...: accounts; keys in $T/key.NAME
mkuser() {
	for u in "$@"; do
		k=$("$S" user create "$P" --name "$u" --email "$u@example.org" \
			--password "password-$u" | sed -n 's/.* account key \([0-9a-f]*\)$/\1/p')
		[ ${#k} = 32 ] || die "user create $u"
		echo "$k" >"$T/key.$u"
	done
}
# submit OPTIONS...: job submit with the data of make_data
submit() {
	"$S" job submit "$P" --model "$T/base.bin" --train "$T/train.bin" \
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
# vrpc VOL WANT [EXTRA-XML]: scheduler RPC -> $T/reply.xml, $code
vrpc() {
	hid=0
	[ -f "$T/host.$1" ] && hid=$(cat "$T/host.$1")
	cat >"$T/req.xml" <<EOR
<scheduler_request>
<authenticator>$(cat "$T/key.$(vuser "$1")")</authenticator><host_id>$hid</host_id><host_cpid>$(cpid "$1")</host_cpid>
<host><hostname>$1</hostname><os>Linux</os><ncpus>2</ncpus><ram_bytes>1000</ram_bytes>
<device><name>cpu</name><vendor>x</vendor><type>cpu</type><conforming>1</conforming></device></host>
${3:-}
<work_req><want_results>$2</want_results></work_req>
</scheduler_request>
EOR
	code=$(curl -s --interface "$(vip "$1")" -o "$T/reply.xml" -w '%{http_code}' \
		--data-binary @"$T/req.xml" "$URL/rpc/scheduler")
}
# ask VOL WANT: an RPC asking for WANT results; remembers the host id and
# the reply in $T/reply.VOL; prints the number of results got
ask() {
	vrpc "$1" "$2"
	[ "$code" = 200 ] || die "$1's RPC: HTTP $code"
	xp 'string(/scheduler_reply/host_id)' >"$T/host.$1"
	cp "$T/reply.xml" "$T/reply.$1"
	xp 'count(/scheduler_reply/result)'
}
fetch() {	# fetch URL SHA: into the cache once, checked against its hash
	[ -f "$T/cache/$2" ] && return 0
	curl -sf -o "$T/cache/$2.part" "$1" || die "download $1"
	[ "$(sha256sum <"$T/cache/$2.part" | cut -d' ' -f1)" = "$2" ] || die "hash of $1"
	mv "$T/cache/$2.part" "$T/cache/$2"
}
# compute VOL MODE: make the file of every result in VOL's last reply as
# MODE (craft_result), without uploading; lines "RESULT WU SHARD TOKEN"
# go to $T/todo.VOL (and are appended to $T/got.VOL)
compute() {
	w() { xmllint --xpath "$1" "$T/reply.$vol" 2>/dev/null; }
	vol=$1
	: >"$T/todo.$1"
	n=$(xmllint --xpath 'count(/scheduler_reply/result)' "$T/reply.$1")
	i=1
	while [ "$i" -le "$n" ]; do
		r=$(w "string(/scheduler_reply/result[$i]/name)")
		wu=$(w "string(/scheduler_reply/result[$i]/wu_name)")
		tok=$(w "string(/scheduler_reply/result[$i]/upload_token)")
		W="/scheduler_reply/workunit[name='$wu']"
		msha=$(w "string($W/file[@role='model']/sha256)")
		dsha=$(w "string($W/file[@role='data']/sha256)")
		fetch "$(w "string($W/file[@role='model']/url)")" "$msha"
		fetch "$(w "string($W/file[@role='data']/url)")" "$dsha"
		hp=
		for k in steps batch seq lr beta1 beta2 eps weight_decay grad_clip; do
			hp="$hp $k=$(w "string($W/$k)")"
		done
		"$CRAFT" "$2" "$T/cache/$msha" "$T/cache/$dsha" "$T/work/$r" $hp ||
			die "craft $2 $r"
		echo "$r $wu $(w "string($W/shard)") $tok" >>"$T/todo.$1"
		echo "$r $wu $(w "string($W/shard)")" >>"$T/got.$1"
		i=$((i + 1))
	done
}
# deliver VOL: upload each result of $T/todo.VOL and report them all in one
# RPC; sets up_codes (the HTTP codes, space-separated) and acks
deliver() {
	reports=
	up_codes=
	while read -r r wu shard tok; do
		sha=$(sha256sum <"$T/work/$r" | cut -d' ' -f1)
		c=$(curl -s --interface "$(vip "$1")" -o "$T/up.xml" -w '%{http_code}' \
			-H "X-Upload-Token: $tok" -H "X-Content-SHA256: $sha" \
			--data-binary @"$T/work/$r" "$URL/upload/$r")
		up_codes="$up_codes $c"
		reports="$reports$(report "$r" "$sha" "$(wc -c <"$T/work/$r")")"
	done <"$T/todo.$1"
	up_codes=${up_codes# }
	acks=0
	if [ -n "$reports" ]; then
		vrpc "$1" 0 "$reports"
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
wait_for() {	# wait_for SECONDS DESCRIPTION COMMAND...: poll until it succeeds
	secs=$1; what=$2; shift 2
	i=0
	while ! "$@"; do
		i=$((i + 1))
		[ "$i" -ge $((secs * 5)) ] && { fail "timed out: $what"; return 1; }
		sleep 0.2
	done
	ok "$what"
}
round_done() {	# round_done JOB ROUND: the round is averaged
	"$S" job show "$P" "$1" 2>/dev/null | grep -Eq "^ +$2 +done "
}
