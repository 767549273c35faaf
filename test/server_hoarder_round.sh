#!/bin/sh
# test/server_hoarder_round.sh - a hoarder cannot stretch a new job's round
# (before: one account with two hosts took one replica of each WU of a
# new job and never reported; the round waited for the default deadline,
# 86,400 s):
#  - a new job of 4 shards, 2 replicas; account x with hosts x.a
#    (127.0.50.1) and x.b (127.0.51.1) asks for 4 on each, first: the
#    account's share of the round in progress is capped
#    (sched.max_account_share 0.25: 2 of the 8 replicas), and their
#    deadlines come from the job's size at a conservative speed (here the
#    floor, sched.new_host_deadline, set to 120 s), not a day;
#  - x never reports; honest h1..h8 (127.0.52-59.1) ask, compute and
#    report in a loop (the round rules need accounts that share no WU of
#    the round with x or the re-issued WU's other holder: a few idle
#    hosts, as a project has);
#  - a hoarded replica whose WU's other replica is done is re-issued early
#    (sched.reissue_factor 3 x that replica's time, sched.reissue_min 1 s
#    here) and the round finishes: its delay after the honest hosts had
#    done their share is at most 10x the honest hosts' WU time plus 3 s
#    (printed): the fixed part is reissue_min's 1 s and the daemons'
#    passes (transitioner, validator, assimilator), which with WUs of a
#    few tenths of a second are most of the delay (measured 1.6-5.7 s, i.e.
#    4.6-19x alone, under load); a round that waited for the hoarder's
#    deadline would take 120 s.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-hoardround
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/attack_lib.sh"

attack_project "hoarder" "separate_loopback = 1\nreissue_min = 1\nnew_host_deadline = 120"
mkuser x h1 h2 h3 h4 h5 h6 h7 h8
n=50
for v in x.a x.b h1 h2 h3 h4 h5 h6 h7 h8; do echo "127.0.$n.1" >"$T/ip.$v"; n=$((n + 1)); done
start_server http,transitioner,validator,assimilator
for v in x.a x.b h1 h2 h3 h4 h5 h6 h7 h8; do ask "$v" 0 >/dev/null; done	# attached before the job
submit --shards 4 --rounds 1 --replicas 2 --quorum 2 --no-adaptive --name hoard --steps 300
now=$(date +%s)
a=$(ask x.a 4)
la=$(xmllint --xpath 'string(/scheduler_reply/result[1]/deadline)' "$T/reply.x.a")
b=$(ask x.b 4)
held=$((a + b))
echo "the hoarder's two hosts got $a + $b of the round's 8 replicas; deadline in $((la - now)) s"
check "the account holds at most its share of the round (2 of 8)" \
	"$([ "$held" -ge 1 ] && [ "$held" -le 2 ] && echo yes || echo "$held")" yes
check "its deadline comes from the job's size (its 120 s floor), not a day" \
	"$([ $((la - now)) -le 125 ] && echo yes || echo "$((la - now)) s")" yes
: >"$T/times"
honest() {
	for v in h1 h2 h3 h4 h5 h6 h7 h8; do
		s=$(date +%s.%N)
		[ "$(ask "$v" 4)" -gt 0 ] || continue
		work "$v" honest
		awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f\n", e - s }' >>"$T/times"
	done
	# the honest share: every replica not held by the hoarder, reported
	[ -f "$T/share" ] || [ "$(cat "$T"/got.h* 2>/dev/null | wc -l)" -lt $((8 - held)) ] ||
		date +%s.%N >"$T/share"
	round_done 1 1
}
wait_for 120 "the round finishes despite the hoarder" honest
done_t=$(date +%s.%N)
wu=$(sort -n "$T/times" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
delay=$(awk -v s="$(cat "$T/share")" -v e="$done_t" 'BEGIN { printf "%.2f", e - s }')
echo "honest WU time (ask to report, median of $(wc -l <"$T/times")): $wu s; the round's delay after the honest share: $delay s ($(awk -v d="$delay" -v w="$wu" 'BEGIN { printf "%.1f", d / w }')x)"
check "the hoarder delays the round by at most 10x the honest WU time + 3 s" \
	"$(awk -v d="$delay" -v w="$wu" 'BEGIN { print d <= 10 * w + 3 ? "yes" : "no" }')" yes
check "the hoarded replicas were re-issued early" \
	"$([ "$(grep -c 're-issued early' "$T/server.log")" -ge 1 ] && echo yes || echo no)" yes
exit $((fails > 0))
