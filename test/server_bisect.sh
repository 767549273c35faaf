#!/bin/sh
# test/server_bisect.sh - disputes settled by bisection of the replicas'
# hash chains, with a real ctune-server (HTTP, transitioner, validator,
# assimilator; embedded database) and scripted volunteers whose results
# and chains test/craft_result makes. WUs of 6 steps, a link every 2
# (3 links: after steps 2, 4 and 6), 2 replicas, quorum 2:
#  job 1, 3 WUs, honest h1 holds one replica of each; cheaters return a
#  result that passes every check of its own (the x0.9 "nudge" update):
#   - c_last claims h1's chain but its own hash as the last link: the
#     chains part at link 2, the validator asks h1 (in its next scheduler
#     reply) for the state after step 4, h1 uploads it, the server checks
#     it against the agreed link and recomputes steps 5-6: h1 valid,
#     c_last invalid, and no third result;
#   - c_first's chain parts at link 0: the server recomputes steps 1-2
#     from the WU's start, no upload: h1 valid, c_first invalid, no third;
#   - c_false sends h1's chain unchanged (its last link is not c_false's
#     own hash): refused at once as false_chain; h1's replica waits for a
#     third one (h2's, honest) and is valid with it;
#  job 1's receipt states the chain of each bisected WU's winner, and
#  `ctune verify --all` recomputes it link by link; a receipt signed with
#  the project's key that states another chain fails naming the link;
#  job 2: c_mute's result comes first, so the state is asked of c_mute,
#  who never sends it: after [daemons] state_deadline a third replica
#  (h2) settles the WU as before bisection;
#  job 3: c_bad is asked and uploads a state that is not the agreed one:
#  c_bad invalid, and a third replica validates h1;
#  job 4: a real `ctune run` client holds the first replica and c_late
#  the second, parting at the last link: the client gets the state request
#  as a task in its scheduler reply, computes the WU to step 4, uploads
#  the state and reports it; its result is valid, c_late's invalid, and
#  the WU has two results.
# Every cheat ends without credit; the honest hosts get theirs.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-bisect
. "$(dirname "$0")/server_lib.sh"
craft_tools
make_data
"$S" init "$P" --listen 127.0.0.1:0 --name "bisect test" >/dev/null || die "init"
sed -i 's/^max_in_progress = .*/max_in_progress = 8/; s/^max_wus_per_rpc = .*/max_wus_per_rpc = 8/;
	s/^request_delay = .*/request_delay = 1/;
	s/^file_grace = .*/&\nchain_every = 2\nstate_deadline = 4/;
	s/^\[sched\]$/[sched]\nmax_shared_per_round = 0\nmax_account_share = 0/' "$P/ctune-server.conf"
CHEATS="c_last c_first c_false c_mute c_bad c_late"
mkuser h1 h2 real $CHEATS
CL_PID=
# the real client is ours to stop too (server_lib.sh's cleanup stops the server)
trap 'st=$?; [ -n "$CL_PID" ] && kill "$CL_PID" 2>/dev/null && wait "$CL_PID" 2>/dev/null
	(exit $st); cleanup' EXIT
trap 'exit 1' INT TERM
submit() {
	"$S" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" \
		--eval "$T/eval.bin" --shards "$1" --rounds 1 --steps 6 --batch 2 --seq 16 \
		--lr 0.001 --replicas 2 --quorum 2 --no-adaptive --name "bisect$1" >/dev/null ||
		die "job submit"
}
submit 3
start_server http,transitioner,validator,assimilator

cpid() { printf '%s' "$1" | sha256sum | cut -c1-32; }
# ask USER WANT: a scheduler RPC asking for WANT results; remembers the host id
ask() {
	hid=0
	[ -f "$T/host.$1" ] && hid=$(cat "$T/host.$1")
	rpc "$(cat "$T/key.$1")" "$hid" "$(cpid "$1")" "$2" "${3:-}"
	[ "$code" = 200 ] || die "$1's RPC: HTTP $code"
	xp 'string(/scheduler_reply/host_id)' >"$T/host.$1"
	cp "$T/reply.xml" "$T/reply.$1"
}
sha() { sha256sum <"$1" | cut -d' ' -f1; }
# fake_links N TAG: N made-up links
fake_links() {
	k=0
	while [ "$k" -lt "$1" ]; do printf '%s %s' "$2" "$k" | sha256sum | cut -d' ' -f1; k=$((k + 1)); done |
		tr -d '\n'
}
# work USER MODE CHAIN: USER's results of its last reply made as MODE
# (craft_result), uploaded and reported with a chain made as CHAIN:
# honest (the WU's own), last (the honest links, its own hash last), first
# (made-up links, its own hash last), false (the honest chain whatever
# the result). Appends "RESULT WU" to $T/got.USER.
work() {
	n=$(xmllint --xpath 'count(/scheduler_reply/result)' "$T/reply.$1")
	reports=
	i=1
	while [ "$i" -le "$n" ]; do
		craft_item "$T/reply.$1" "$i" "$2"
		"$CRAFT" chain "$T/cache/$msha" "$T/cache/$dsha" 2 "$T/work/$r.chain" $hp ||
			die "chain of $r"
		honest=$(cat "$T/work/$r.chain")
		own=$(sha "$T/work/$r.weights")
		case $3 in
		honest) chain=$honest
			[ "$(printf '%s' "$honest" | cut -c129-192)" = "$own" ] ||
				fail "the honest chain of $r does not end in its weights' hash" ;;
		last) chain=$(printf '%s' "$honest" | cut -c1-128)$own ;;
		first) chain=$(fake_links 2 "$1")$own ;;
		false) chain=$honest ;;
		esac
		s=$(sha "$T/work/$r")
		c=$(up "$r" "$tok" "$T/work/$r" -H "X-Content-SHA256: $s")
		check "$1 uploads $r ($2)" "$c" 200
		reports="$reports<result><name>$r</name><status>success</status><sha256>$s</sha256><size>$(wc -c <"$T/work/$r")</size><elapsed_s>1</elapsed_s><conforming>1</conforming><chain>$chain</chain></result>"
		echo "$r $wu" >>"$T/got.$1"
		cp "$T/reply.$1" "$T/wu.$r"	# the WU, for a state asked later
		i=$((i + 1))
	done
	rpc "$(cat "$T/key.$1")" "$(cat "$T/host.$1")" "$(cpid "$1")" 0 "$reports"
	check "$1's $n report(s) accepted" "$(xp 'count(/scheduler_reply/ack[status="accepted"])')" "$n"
}
# state_asked USER: USER's reply asks for a state (into $T/reply.USER)
state_asked() {
	ask "$1" 0
	[ "$(xp 'count(/scheduler_reply/state_request)')" -gt 0 ]
}
# send_state USER [HP-EXTRA]: make the state the reply asks of USER and
# upload it (HP-EXTRA, e.g. lr=0.002, makes it another WU's state)
send_state() {
	sr=$(xp 'string(/scheduler_reply/state_request[1]/name)')
	step=$(xp 'string(/scheduler_reply/state_request[1]/step)')
	stok=$(xp 'string(/scheduler_reply/state_request[1]/upload_token)')
	swu=$(grep -m1 "^$sr " "$T/got.$1" | cut -d' ' -f2)
	W="/scheduler_reply/workunit[name='$swu']"
	m=$(xmllint --xpath "string($W/file[@role='model']/sha256)" "$T/wu.$sr")
	d=$(xmllint --xpath "string($W/file[@role='data']/sha256)" "$T/wu.$sr")
	"$CRAFT" state "$T/cache/$m" "$T/cache/$d" "$step" "$T/work/$sr.state" \
		$(wu_hp "$T/wu.$sr" "$swu") ${2:-} || die "state of $sr"
	c=$(up "$sr.state" "$stok" "$T/work/$sr.state")
	check "$1 uploads the state of $sr after step $step" "$c" 200
}
logged() { grep -c "$1" "$T/server.log"; }
wait_log() { wait_for "$1" "$2" grep -q "$3" "$T/server.log"; }
show() { "$S" job show "$P" "$1" >"$T/show$1.txt" 2>&1 || fail "job show $1"; }
count() {	# count JOB OUTCOME VALIDATE: results of JOB so
	awk -v o="$2" -v v="$3" '$1 == "over" && $2 == o && $3 == v {n += $4} END {print n + 0}' \
		"$T/show$1.txt"
}
job_done() { "$S" job show "$P" "$1" 2>/dev/null | head -1 | grep -q ': done'; }
# third USER: USER asks until it gets a result (a third replica), honest
third() {
	ask "$1" 1
	[ "$(xp 'count(/scheduler_reply/result)')" -gt 0 ] || return 1
	work "$1" honest honest
}

# ---- job 1: three cheaters against h1 ----------------------------------------
ask h1 3
check "h1 gets one replica of each of the 3 WUs" "$(xp 'count(/scheduler_reply/result)')" 3
check "the WUs carry the chain interval" \
	"$(xp 'string(/scheduler_reply/workunit[1]/chain_every)')" 2
for u in c_last c_first c_false; do
	ask "$u" 1
	check "$u gets one result" "$(xp 'count(/scheduler_reply/result)')" 1
done
work h1 honest honest
work c_last nudge last
work c_first nudge first
work c_false nudge false
rl=$(cut -d' ' -f1 "$T/got.c_last"); wl=$(cut -d' ' -f2 "$T/got.c_last")
rf=$(cut -d' ' -f1 "$T/got.c_first"); wf=$(cut -d' ' -f2 "$T/got.c_first")
rx=$(cut -d' ' -f1 "$T/got.c_false"); wx=$(cut -d' ' -f2 "$T/got.c_false")
h1of() { grep " $1\$" "$T/got.h1" | cut -d' ' -f1; }

wait_log 30 "c_first's WU settled from its start" \
	"$wf: dispute settled by bisection at link 0: recomputed 2 of 6 steps .*state upload 0 bytes; $(h1of "$wf") valid, $rf invalid"
wait_log 30 "c_false's false chain refused" "validator: $rx rejected: false_chain"
wait_log 30 "the state after step 4 asked of h1" "$wl: .* part at link 2 (steps 4..6 of 6): asked host $(cat "$T/host.h1")"
wait_for 30 "h1's reply asks for a state" state_asked h1
check "the state asked is of h1's replica of c_last's WU" \
	"$(xp 'string(/scheduler_reply/state_request/name)')" "$(h1of "$wl")"
check "after step 4" "$(xp 'string(/scheduler_reply/state_request/step)')" 4
# another host cannot send it: the token is h1's, the MAC is not
cp "$T/reply.h1" "$T/reply.xml"
stok=$(xp 'string(/scheduler_reply/state_request[1]/upload_token)')
printf 'not a state' >"$T/junk"
c=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Upload-Token: $stok" \
	-H "X-Upload-MAC: $(upload_mac "$(h1of "$wl").state" "$stok" "$T/junk" \
	    "$(host_secret "$(cat "$T/host.c_last")")")" \
	--data-binary @"$T/junk" "$URL/upload/$(h1of "$wl").state")
check "c_last cannot upload the state asked of h1" "$c" 401
send_state h1
wait_log 30 "c_last's WU settled from the uploaded state" \
	"$wl: dispute settled by bisection at link 2: recomputed 2 of 6 steps .*; $(h1of "$wl") valid, $rl invalid"
check "no third replica for the bisected WUs" \
	"$(grep -c -e "$wl: no agreement" -e "$wf: no agreement" "$T/server.log")" 0
wait_for 60 "h2 takes the third replica of c_false's WU" third h2
wait_for 60 "job 1 done" job_done 1
show 1
cat "$T/show1.txt"
check "job 1: 4 honest results valid" "$(count 1 success valid)" 4
check "job 1: c_last and c_first out-computed (success, invalid)" "$(count 1 success invalid)" 2
check "job 1: c_false refused (validate_error)" "$(count 1 validate_error invalid)" 1
check "job 1: 7 results: a third only for the false chain's WU" \
	"$(awk '$1 == "over" {n += $4} END {print n + 0}' "$T/show1.txt")" 7

# ---- job 1's receipt: the bisected WUs' chains, checked by ctune verify ---------
wait_for 60 "job 1's receipt" curl -sf -o "$T/rc1.txt" "$URL/job/1/round/1/receipt"
# chain_line SHARD: the line after shard SHARD's wu line in the receipt
chain_line() { awk -v s="$1" 'w { print; exit } $1 == "wu" && $2 == s { w = 1 }' "$T/rc1.txt"; }
hsha() { printf '%s' "$(cat "$1")" | sha256sum | cut -d' ' -f1; }
for u in "$wf" "$wl"; do
	check "the receipt states the chain of $u's winner" "$(chain_line "${u##*-s}")" \
		"chain 2 $(hsha "$T/work/$(h1of "$u").chain")"
done
check "the receipt states 3 chains" "$(grep -c '^chain 2 [0-9a-f]\{64\}$' "$T/rc1.txt")" 3
V() { "$CTUNE" --dir "$T/verifier" verify "$URL" "$@"; }
V 1 --all >"$T/v1.log" 2>&1 || fail "verify --all of job 1: $(cat "$T/v1.log")"
check "verify compares the 3 chains link by link" \
	"$(grep -c 'hash chain of 3 links (a link every 2 steps) equal to the receipt' "$T/v1.log")" 3
check "verify recomputes the 3 WUs and the aggregate" "$(grep -c 'matches the receipt' "$T/v1.log")" 4
# a receipt signed with the project's key stating another chain for
# c_last's WU (its second link changed) fails, naming where it parts
if command -v openssl >/dev/null; then
	store_file() { echo "$P/download/$(printf '%s' "$1" | cut -c1-2)/$1"; }
	sl=${wl##*-s}
	good=$(cat "$T/work/$(h1of "$wl").chain")
	printf '%s%064d%s' "$(printf '%s' "$good" | cut -c1-64)" 0 "$(printf '%s' "$good" | cut -c129-192)" \
		>"$T/other.chain"
	OC=$(sha "$T/other.chain")
	mkdir -p "$(dirname "$(store_file "$OC")")"
	cp "$T/other.chain" "$(store_file "$OC")"
	R=$(store_file "$(sha "$T/rc1.txt")")
	cp "$R" "$T/saved"
	awk -v s="$sl" -v c="$OC" 'w { $0 = "chain 2 " c; w = 0 } $1 == "wu" && $2 == s { w = 1 } { print }' \
		"$T/rc1.txt" | sed '$d' >"$T/forged.txt"
	openssl pkeyutl -sign -inkey "$P/signing.key" -rawin -in "$T/forged.txt" -out "$T/fsig.bin" ||
		die "openssl sign"
	echo "signature $(xxd -p "$T/fsig.bin" | tr -d '\n')" >>"$T/forged.txt"
	cp "$T/forged.txt" "$R"
	V 1 --all >"$T/bad.log" 2>&1
	check "verify refuses a receipt stating another chain" "$?" 1
	check "and names where it parts" "$(grep -q "round 1 shard $sl: the recomputed hash chain parts from the receipt's at link 1: they agree up to step 2, differ by step 4" \
		"$T/bad.log" && echo named)" named
	cp "$T/saved" "$R"
else
	echo "# no openssl: the forged receipt is not tried"
fi

# ---- job 2: the asked host never sends the state -------------------------------
submit 1
ask c_mute 1
check "c_mute gets the first replica" "$(xp 'count(/scheduler_reply/result)')" 1
ask h1 1
work c_mute nudge last
work h1 honest honest
wm=$(cut -d' ' -f2 "$T/got.c_mute")
wait_log 30 "the state is asked of c_mute" "$wm: .* asked host $(cat "$T/host.c_mute")"
wait_log 30 "no state before the deadline: a third replica" \
	"$wm: no state from host $(cat "$T/host.c_mute") before its deadline: a third replica"
wait_for 60 "h2 takes the third replica" third h2
wait_for 60 "job 2 done" job_done 2
show 2
check "job 2: h1 and h2 valid" "$(count 2 success valid)" 2
check "job 2: c_mute out-voted" "$(count 2 success invalid)" 1

# ---- job 3: the asked host sends a state that is not the agreed one ------------
submit 1
ask c_bad 1
ask h1 1
work c_bad nudge last
work h1 honest honest
wb=$(cut -d' ' -f2 "$T/got.c_bad")
rb=$(cut -d' ' -f1 "$T/got.c_bad")
wait_for 30 "c_bad's reply asks for a state" state_asked c_bad
send_state c_bad lr=0.002
wait_log 30 "the state is refused and c_bad invalid" \
	"$wb: the state $rb sent is not the agreed one .*: $rb invalid"
wait_for 60 "h2 takes the third replica" third h2
wait_for 60 "job 3 done" job_done 3
show 3
check "job 3: h1 and h2 valid" "$(count 3 success valid)" 2
check "job 3: c_bad invalid" "$(count 3 success invalid)" 1

# ---- job 4: a real client answers the state request ------------------------------
submit 1
"$CTUNE" --dir "$T/real" attach "$URL" --key "$(cat "$T/key.real")" >/dev/null || die "attach"
"$CTUNE" --dir "$T/real" -v run --always --device cpu --no-selftest --backoff-base 0.5 \
	>"$T/real.log" 2>&1 &
CL_PID=$!
reported() { grep -q "reported j4-r1-s0-0 (success)" "$T/server.log"; }
wait_for 60 "the real client reports the first replica" reported
ask c_late 1
check "c_late gets the second replica" "$(xp 'string(/scheduler_reply/result/name)')" j4-r1-s0-1
work c_late nudge last
wait_log 30 "the state is asked of the real client" "j4-r1-s0: .* asked host"
wait_log 60 "the real client uploads the state" "upload j4-r1-s0-0.state: the state asked for WU"
wait_log 30 "settled from the real client's state" \
	"j4-r1-s0: dispute settled by bisection at link 2: recomputed 2 of 6 steps .*; j4-r1-s0-0 valid, j4-r1-s0-1 invalid"
wait_for 30 "the real client reported its state task" grep -q "reported j4-r1-s0-0.state (success)" \
	"$T/server.log"
wait_for 60 "job 4 done" job_done 4
show 4
check "job 4: the real client's result valid" "$(count 4 success valid)" 1
check "job 4: c_late invalid" "$(count 4 success invalid)" 1
check "job 4: two results" "$(awk '$1 == "over" {n += $4} END {print n + 0}' "$T/show4.txt")" 2
grep -q "abort" "$T/real.log" && grep "j4-r1-s0-0.state" "$T/real.log" | grep -qi abort &&
	fail "the state task was aborted: $(grep -i abort "$T/real.log")"
kill "$CL_PID"; wait "$CL_PID"; CL_PID=

# ---- credit: the honest hosts only --------------------------------------------------
wait_for 30 "h1 and h2 get credit" credits_of h1 h2 'a > 0 && b > 0'
check_no_credit $CHEATS
[ "$fails" = 0 ] || { tail -40 "$T/server.log"; exit 1; }
echo "PASS: disputes settled by bisection (from the start, from a state a scripted and a real client uploaded), false chains and states refused, a silent host falls back to a third replica"
