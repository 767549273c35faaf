#!/bin/sh
# test/server_hoarding.sh - free accounts can neither fail a job with
# errors nor stall it by holding work (server/validate/worklimit.c):
#  - errors: a job of 1 shard, 2 replicas (max_error_results 4); six
#    fresh accounts, each on its own /24, take replicas of the WU and
#    report "error" without computing: the job is not failed (their hosts
#    have no valid history, so their errors do not count), and two honest
#    hosts finish round 1;
#  - daily quota: a fresh host that reports errors gets less each time
#    (quota 4 halves per error: after two errors it gets nothing; a second
#    job of 4 shards gives it WUs it has no replica of);
#  - hoarding: one account with two hosts on two networks asks for 4 on
#    each: a new account gets 1 result in progress in all; it never
#    reports (sched.new_host_in_progress = 1); its new-host deadline (sched.new_host_deadline = 3 s) passes
#    and the transitioner re-issues the replica at once to an honest host;
#  - two honest accounts finish a 4-shard round that the round rules
#    (eligibility.h) would keep them from sharing beyond one WU: the other
#    accounts asked lately, so the rules hold, but a replica that waited
#    sched.placement_grace (2 s here) goes under the per-WU rules only;
#  - a proven host's deadline comes from the job's measured compute time,
#    not a flat day: it is far below the WU's delay_bound (86400 s).
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-hoard
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/attack_lib.sh"

attack_project "hoarding" \
	"separate_loopback = 1\ndaily_quota = 4\nnew_host_deadline = 3\nmin_deadline = 3\nnew_host_in_progress = 1\nplacement_grace = 2"
sed -i 's/^max_in_progress = .*/max_in_progress = 8/; s/^max_wus_per_rpc = .*/max_wus_per_rpc = 8/' \
	"$P/ctune-server.conf"
ERR="e1 e2 e3 e4 e5 e6"
mkuser $ERR q x h1 h2
n=10
for u in $ERR q x.a x.b h1 h2; do echo "127.0.$n.1" >"$T/ip.$u"; n=$((n + 1)); done
submit --shards 1 --rounds 2 --replicas 2 --quorum 2 --no-adaptive --name hoard
start_server http,transitioner,validator,assimilator

# ---- errors from fresh accounts do not fail the job -----------------------
got=0
for u in $ERR; do
	# the transitioner makes a replacement replica after each error
	for i in $(seq 1 50); do [ "$(ask "$u" 1)" = 1 ] && break; sleep 0.2; done
	[ "$(xp 'count(/scheduler_reply/result)')" = 1 ] || continue
	errors "$u"
	got=$((got + 1))
done
check "the six fresh accounts each got a replica and reported an error" "$got" 6
job_status() { "$S" job show "$P" 1 2>/dev/null | head -1; }
sleep 1
check "the job is not failed" "$(job_status | grep -c -i 'error\|fail')" 0
check "its one WU has 6 client errors, more than max_error_results (4)" \
	"$("$S" job show "$P" 1 | awk '$1 == "over" && $2 == "client_error" {n += $4} END {print n + 0}')" 6
submit --shards 4 --rounds 1 --replicas 2 --quorum 2 --no-adaptive --name more

# ---- the daily quota shrinks on errors -------------------------------------
getone() { for i in $(seq 1 50); do [ "$(ask "$1" "$2")" -gt 0 ] && break; sleep 0.2; done
	xp 'count(/scheduler_reply/result)'; }
check "q (fresh) gets 1 result" "$(getone q 1)" 1
errors q
check "after one error q still gets 1 (quota 4 -> 2, 1 sent)" "$(getone q 1)" 1
errors q
sleep 1
check "after two errors q gets nothing (quota 1, 2 sent)" "$(ask q 4)" 0

# ---- a new account's two hosts hold one result in all ----------------------
a=$(getone x.a 4)
b=$(ask x.b 4)
check "a new account with two hosts gets 1 result in progress in all" "$((a + b))" 1
[ "$a" = 1 ] && hoarded=x.a || hoarded=x.b
hwu=$(xmllint --xpath 'string(/scheduler_reply/result/wu_name)' "$T/reply.$hoarded")
dl=$(xmllint --xpath 'string(/scheduler_reply/result/deadline)' "$T/reply.$hoarded")
now=$(date +%s)
check "its deadline is short (no estimate yet: the job's size, at least min_deadline 3 s)" \
	"$([ -n "$dl" ] && [ $((dl - now)) -le 4 ] && echo short || echo "${dl:-none} (now $now)")" short

# ---- honest hosts finish round 1; the hoarded replica comes back -------------
note_r2() {	# the deadline of a round-2 result of job 1 in VOL's reply, and now
	d=$(xmllint --xpath "string(/scheduler_reply/result[starts-with(wu_name,'j1-r2')]/deadline)" \
		"$T/reply.$1" 2>/dev/null)
	[ -n "$d" ] && echo "$d $(date +%s)" >>"$T/dl_r2"
	return 0
}
honest_round() {	# both honest hosts ask, compute and deliver what they got
	for u in h1 h2; do
		[ "$(ask "$u" 8)" -gt 0 ] && note_r2 "$u" && work "$u" honest
	done
	[ "$(wc -l <"$T/got.h1")" -le 12 ] || die "h1 got more than all the work"
	round_done 1 1 && round_done 2 1
}
wait_for 90 "round 1 of both jobs completes despite the errors and the hoarder" honest_round
check "the hoarded WU was computed by both honest hosts (re-issued)" \
	"$(cat "$T/got.h1" "$T/got.h2" | awk '{print $2}' | grep -c -x "$hwu")" 2
check "the hoarder's result timed out (no_reply)" \
	"$(grep -c "transitioner: result $(xmllint --xpath 'string(/scheduler_reply/result/name)' \
	   "$T/reply.$hoarded") timed out" "$T/server.log")" 1
check "the job is running, not failed" "$(job_status | grep -c -i 'error\|fail')" 0

# ---- a proven host's deadline comes from the measured compute time --------
# (the hosts are proven and job 1 has valid results once round 2 opens)
[ -s "$T/dl_r2" ] || { getone h1 1 >/dev/null; note_r2 h1; }
read -r dl now <"$T/dl_r2"
check "a proven host's round-2 deadline is minutes, not a day" \
	"$([ -n "$dl" ] && [ $((dl - now)) -lt 3600 ] && echo minutes || echo "${dl:-none} (now $now)")" minutes
exit $((fails > 0))
