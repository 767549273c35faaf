#!/bin/sh
# test/server_round_fail.sh - the round check: a round whose
# average makes the job's held-out loss worse than its input model's by
# more than the job's loss margin is not applied:
#  - the round rules are off here (max_shared_per_round = 0, shares 0), so
#    two colluding accounts c1 (127.0.40.1) and c2 (127.0.41.1) take every
#    replica of a 2-shard round (too few shards for the cross-shard check)
#    and report the same sign-flipped updates: every WU agrees by hash;
#  - the average raises the eval loss by more than --loss-margin 0.02: the
#    round is not applied (no round 2, no final model), the job's notice
#    says so in `job show` and on the job page, the colluders' results are
#    set aside and their credit revoked;
#  - the WUs go out again, never to c1 or c2: honest h1 and h2 compute
#    them, the round passes, and the final model is byte for byte the mean
#    of the honest results.
# The losses are printed.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-roundfail
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/attack_lib.sh"

attack_project "round check" \
	"separate_loopback = 1\nmax_shared_per_round = 0\nmax_net_share = 0\nmax_account_share = 0"
mkuser c1 c2 h1 h2
echo 127.0.40.1 >"$T/ip.c1"
echo 127.0.41.1 >"$T/ip.c2"
echo 127.0.42.1 >"$T/ip.h1"
echo 127.0.43.1 >"$T/ip.h2"
submit --shards 2 --rounds 2 --replicas 2 --quorum 2 --no-adaptive --loss-margin 0.02 \
	--name roundfail
start_server http,transitioner,validator,assimilator

check "c1 takes one replica of each WU" "$(ask c1 4)" 2
check "c2 takes the other replicas" "$(ask c2 4)" 2
work c1 flip
work c2 flip
check "the colluders' flipped reports are accepted" "$acks" 2
failed() { grep -q 'job 1: round 1 not applied' "$T/server.log"; }
wait_for 60 "the round check fails round 1" failed
grep 'round 1 not applied' "$T/server.log" | sed 's/.*job 1: /figures: /'
"$S" job show "$P" 1 >"$T/show.txt"
check "job show reports the failed round" \
	"$(grep -c '^error: round 1 not applied: its average raised the eval loss from [0-9.]* to [0-9.]* (margin 0.0200); its 2 work units re-issued' "$T/show.txt")" 1
check "the round is not applied: still open, no round 2" \
	"$(awk '$1 == "1" && $2 == "open" {o++} $1 == "2" {t++} END {print o + 0, t + 0}' "$T/show.txt")" "1 0"
curl -s -o "$T/job.html" "$URL/job/1"
check "the job page reports it" "$(grep -c 'round 1 not applied' "$T/job.html")" 1
check "c1 gets none of the WUs again" "$(ask c1 4)" 0
check "c2 neither" "$(ask c2 4)" 0
again() {
	for v in h1 h2; do
		[ "$(ask $v 4)" -gt 0 ] && work $v honest
	done
	round_done 1 1
}
wait_for 90 "h1 and h2 compute round 1 again and it passes" again
"$S" job show "$P" 1 | awk '$1 == "1" && $2 == "done" {print "round 1 applied: base loss " $4 ", eval loss " $5}'
check "the passing round's loss is not worse" \
	"$("$S" job show "$P" 1 | awk '$1 == "1" && $2 == "done" {print ($5 <= $4 + 0.02) ? "yes" : $5 " > " $4}')" yes
# the honest mean of round 1, as an honest-only run would have averaged
set --
for s in 0 1; do set -- "$@" "$T/work/$(awk -v s="$s" '$3 == s {print $1; exit}' "$T/got.h1").weights"; done
"$CRAFT" mean "$T/base.bin" "$T/honest.bin" "$@" || die "craft mean"
r1=$("$S" job show "$P" 1 | awk '$1 == "1" && $2 == "done" {print $6}')
check "round 1's model is the honest mean, byte for byte (as an honest-only run's)" \
	"$(sha256sum <"$T/honest.bin" | cut -c1-16)" "$r1"
page_row() {	# the page is cached for up to 5 s (web.cache_ttl)
	curl -s -o "$T/job.html" "$URL/job/1" && grep -q '<td>done (not applied 1x)</td>' "$T/job.html"
}
wait_for 15 "the job page's rounds table says round 1 was not applied once" page_row
credits() {
	users_json || return 1
	a=$(credit_of h1); b=$(credit_of h2)
	[ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && a == b) }'
}
wait_for 30 "h1 and h2 get equal, non-zero credit" credits
for v in c1 c2; do
	check "$v's credit is revoked" \
		"$(awk -v c="$(credit_of $v)" 'BEGIN { print c == "" || c == 0 ? "none" : c }')" none
done
exit $((fails > 0))
