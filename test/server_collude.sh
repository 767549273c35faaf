#!/bin/sh
# test/server_collude.sh - two accounts of one person on one network try
# to hold both replicas of WUs and report the same sign-flipped update:
#  - sched.separate_loopback = 1 (127.x.y.z count as networks); a job of
#    2 shards, 2 replicas, 1 round;
#  - c1 (127.0.7.1) takes one replica of each WU; c2, the same person's
#    second account (127.0.7.2), gets none: the network rule;
#  - c1 reports sign-flipped updates (they pass every single-result check);
#    h1 (127.0.8.1) reports honest ones: no agreement, a third replica of
#    each WU goes to h2 (127.0.9.1), honest;
#  - the job finishes; its final model is byte for byte the mean of the
#    honest results (what an honest-only run gives); c1 has no credit and
#    h1 and h2 have equal credit.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-collude
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/attack_lib.sh"

attack_project "collusion" "separate_loopback = 1"
mkuser c1 c2 h1 h2
echo 127.0.7.1 >"$T/ip.c1"
echo 127.0.7.2 >"$T/ip.c2"
echo 127.0.8.1 >"$T/ip.h1"
echo 127.0.9.1 >"$T/ip.h2"
submit --shards 2 --rounds 1 --replicas 2 --quorum 2 --no-adaptive --name collude
start_server http,transitioner,validator,assimilator

check "c1 takes one replica of each WU" "$(ask c1 4)" 2
check "c2 (same person, same /24) gets none" "$(ask c2 4)" 0
check "h1 gets the other replicas" "$(ask h1 4)" 2
work c1 flip
check "c1's flipped uploads are taken (they pass the single checks)" "$up_codes" "200 200"
work h1 honest
h2_all() {
	[ "$(ask h2 4)" -gt 0 ] && work h2 honest
	[ -f "$T/got.h2" ] && [ "$(wc -l <"$T/got.h2")" -ge 2 ]
}
wait_for 60 "h2 gets the third replica of both WUs" h2_all
job_done() { "$S" job show "$P" 1 2>/dev/null | head -1 | grep -q ': done'; }
wait_for 60 "the job finishes" job_done
"$S" job export "$P" 1 --out "$T/final.bin" >/dev/null 2>&1 || fail "job export"
set --
for s in 0 1; do set -- "$@" "$T/work/$(awk -v s="$s" '$3 == s {print $1}' "$T/got.h1").weights"; done
"$CRAFT" mean "$T/base.bin" "$T/honest.bin" "$@" || die "craft mean"
check "the final model is the honest-only mean, byte for byte" \
	"$(cmp -s "$T/final.bin" "$T/honest.bin" && echo same)" same
credits() {
	users_json || return 1
	a=$(credit_of h1); b=$(credit_of h2)
	[ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && a == b) }'
}
wait_for 30 "h1 and h2 get equal, non-zero credit" credits
check "c1 has no credit" "$(awk -v c="$(credit_of c1)" 'BEGIN { print c == "" || c == 0 ? "none" : c }')" none
exit $((fails > 0))
