#!/bin/sh
# test/server_request_delay.sh - request_delay enforced by the server
# (before: 30 scheduler RPCs in 0.9 s were all answered, so colluders
# polling fast were first whenever a round opened):
#  - request_delay = 10; p asks for work before there is any: none, and it
#    is told 10 s;
#  - a job of 2 shards, 2 rounds opens; p polls 30 times as fast as it can:
#    every RPC is answered (HTTP 200, told what is left of the 10 s), none
#    gets work; h, asking once meanwhile, gets a replica of each WU;
#  - once p's 10 s have passed, p gets the other replicas;
#  - told "no work" again, p reports its results in an RPC that asks for
#    more too soon: the reports are accepted, no new work comes;
#  - reply_delay's turnover hint still works: when round 1 is all back, h
#    asking for work is told 1 s (or gets round 2 at once) and gets round 2
#    work within a few seconds, not after 10.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-reqdelay
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/attack_lib.sh"

attack_project "request delay"
sed -i 's/^request_delay = .*/request_delay = 10/' "$P/ctune-server.conf"
mkuser p h
start_server http,transitioner,validator,assimilator
told() { xp 'string(/scheduler_reply/request_delay)'; }

check "p asks before there is work: none" "$(ask p 4)" 0
t0=$(date +%s)
check "... and is told 10 s" "$(told)" 10
submit --shards 2 --rounds 2 --replicas 2 --quorum 2 --no-adaptive --name delay
s=$(date +%s.%N)
got=0 ok200=0 delays=
for i in $(seq 1 30); do
	vrpc p 4
	[ "$code" = 200 ] && ok200=$((ok200 + 1))
	got=$((got + $(xp 'count(/scheduler_reply/result)')))
	delays="$delays $(told)"
done
el=$(awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
echo "30 RPCs of p in $el s: $ok200 answered, $got result(s); told:$delays"
check "all 30 early RPCs are answered" "$ok200" 30
check "none of them gets work" "$got" 0
check "each is told to wait at most 10 s and at least 1" \
	"$(echo $delays | tr ' ' '\n' | awk '$1 < 1 || $1 > 10 {n++} END {print n + 0}')" 0
check "h, asking once meanwhile, gets a replica of each WU" "$(ask h 4)" 2
while [ $(($(date +%s) - t0)) -lt 11 ]; do sleep 0.5; done
check "after its 10 s, p gets the other replicas" "$(ask p 4)" 2
compute p honest
ask p 4 >/dev/null	# its own results come again (the client did not list them)
check "p asks again at once: no new work left" \
	"$(xmllint --xpath '/scheduler_reply/result/name/text()' "$T/reply.p" 2>/dev/null |
	   grep -cvxF -f "$(awk '{print $1}' "$T/got.p" >"$T/mine"; echo "$T/mine")")" 0
deliver p 4
check "p's reports in an early RPC asking for more are accepted" "$acks" 2
check "... and it gets no work in that reply" "$(xp 'count(/scheduler_reply/result)')" 0
work h honest
check "h's reports are accepted" "$acks" 2
s=$(date +%s)
hint=none
turn() {
	n=$(ask h 4)
	[ "$n" -gt 0 ] && return 0
	d=$(told)
	[ "$d" = 1 ] && hint=1
	sleep "$d"
	return 1
}
wait_for 20 "h gets round 2 work" turn
w=$(($(date +%s) - s))
echo "round 2 work reached h $w s after round 1 was back (turnover hint told: $hint)"
check "h gets round 2 sooner than a whole request_delay (10 s)" "$([ "$w" -lt 10 ] && echo yes || echo "$w s")" yes
exit $((fails > 0))
