#!/bin/sh
# test/server_trust.sh - a host earns trust for adaptive replication with
# honest results, then cheats on the work it gets alone:
#  - sched.trust_min_valid 3, trust_min_rounds 2, trust_min_age 0 (the
#    defaults, 10 / 5 / a day, would make the test slow); a job of 3
#    shards, 6 rounds, 2 replicas, adaptive replication on, seed 7;
#  - a (127.0.7.1) takes one replica of every WU in rounds 1-2 and reports
#    honest results: 6 valid in 2 rounds, so it is trusted from round 3,
#    where it asks for one result at a time;
#  - from then on it plays the best a cheater can: honest while its WU is
#    replicated (it reads the server's log, which a real cheater cannot),
#    sign-flipped as soon as one goes to it alone, and sign-flipped
#    everywhere after that; h1, h2, h3 (other networks) are honest;
#  - its unreplicated flipped result is set aside by the cross-shard check
#    (never averaged), that catches it: no WU goes to it alone again, and
#    its later flips lose their quorums;
#  - the job finishes; its final model is byte for byte that of job 2,
#    the same job (same seed) run by the honest hosts alone without
#    adaptive replication; a's credit never grows after round 2.
#
# NOT YET IN make check. Last run: the trusted cheater's flip alone
# (round 3) was set aside and it was never alone again (as wanted); but
# an honest host (h1) was trusted too, and in round 6 its unreplicated
# honest shard had cosine -0.009 (2-step WUs at K=3 sit near 0) and was
# set aside: that lowers h1's credit, so the credit bound below (h1's
# credit per result) is wrong, and job 1 was still waiting for that WU's
# replicas at 240 s.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-trust
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/attack_lib.sh"

make_data
"$S" init "$P" --listen 127.0.0.1:0 --name "trust" >/dev/null || die "init"
sed -i 's/^\[sched\]$/[sched]\nseparate_loopback = 1\ntrust_min_valid = 3\ntrust_min_rounds = 2\ntrust_min_age = 0/' \
	"$P/ctune-server.conf"
mkuser a h1 h2 h3
echo 127.0.7.1 >"$T/ip.a"
echo 127.0.8.1 >"$T/ip.h1"
echo 127.0.9.1 >"$T/ip.h2"
echo 127.0.10.1 >"$T/ip.h3"
R=6
submit --shards 3 --rounds $R --replicas 2 --quorum 2 --seed 7 --name trusted
start_server http,transitioner,validator,assimilator

credit_of() {
	curl -sf -o "$T/users.json" "$URL/api/v1/users" || return 1
	tr '{' '\n' <"$T/users.json" |
		sed -n "s/.*\"name\":\"$1\".*\"total_credit\":\([0-9.eE+-]*\).*/\1/p"
}
alone() { grep -q "work unit $1 goes to host $(cat "$T/host.a") alone" "$T/server.log"; }
job_done() { "$S" job show "$P" "$1" 2>/dev/null | head -1 | grep -q ': done'; }
# one pass of every volunteer: a first (the attacker), then h1..h3 honest
caught=0
nalone=0
nflip=0
nhon=0
step() {
	if [ -n "${1:-}" ]; then
		rnd=$("$S" job show "$P" 1 | sed -n 's/.*round \([0-9]*\) of.*/\1/p')
		want=4
		[ "${rnd:-0}" -ge 3 ] && want=1
		n=$(ask a $want)
		if [ "$n" -gt 0 ]; then
			wu=$(xmllint --xpath 'string(/scheduler_reply/result/wu_name)' "$T/reply.a")
			mode=honest
			if [ "$rnd" -ge 3 ] && { [ $caught = 1 ] || alone "$wu"; }; then
				mode=flip
				alone "$wu" && nalone=$((nalone + 1))
				caught=1
			fi
			work a $mode
			[ $mode = flip ] && nflip=$((nflip + n)) || nhon=$((nhon + n))
			echo "# round $rnd: a reports $n result(s) ($mode)"
		fi
	fi
	for v in h1 h2 h3; do
		[ "$(ask $v 4)" -gt 0 ] && work $v honest
	done
	job_done "${2:-1}"
}
wait_for 240 "job 1 finishes" step a 1
echo "# a's results: $nhon honest, $nflip flipped, $nalone of them alone"
check "a got a WU alone once trusted, and flipped it" "$([ $nalone -ge 1 ] && echo yes)" yes
check "none of its WUs alone after that" "$nalone" 1
check "the flipped result alone was set aside" \
	"$(grep -c 'job 1: round [3-6], shard [0-2]: canonical result set aside' "$T/server.log")" 1
nh1=$(wc -l <"$T/got.h1")
check "a has no credit for its flipped results (at most its $nhon honest ones')" \
	"$(awk -v a="$(credit_of a)" -v h="$(credit_of h1)" -v nh="$nh1" -v na="$nhon" \
		'BEGIN { print (a <= na * h / nh * (1 + 1e-9)) ? "none" : a " > " na * h / nh }')" none

# the same job, honest hosts only, no adaptive replication
submit --shards 3 --rounds $R --replicas 2 --quorum 2 --seed 7 --no-adaptive --name honest
wait_for 240 "job 2 (honest only) finishes" step "" 2
"$S" job export "$P" 1 --out "$T/final1.bin" >/dev/null 2>&1 || fail "job export 1"
"$S" job export "$P" 2 --out "$T/final2.bin" >/dev/null 2>&1 || fail "job export 2"
check "job 1's final model is the honest-only run's, byte for byte" \
	"$(cmp -s "$T/final1.bin" "$T/final2.bin" && echo same)" same
[ $fails -gt 0 ] && grep -E "cross-shard|alone|set aside" "$T/server.log"
exit $((fails > 0))
