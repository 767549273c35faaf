#!/bin/bash
# A job canceled while a real client holds its work: the client obeys the
# abort once and goes on to other work (before, the lost-result resend
# met the abort and looped, 1,270 scheduler calls a minute).
#  - one `ctune run` with a work buffer of 4 holds job 1's tasks, one of
#    them running, when `job cancel` comes;
#  - within the next calls it drops them, and job 2's work reaches it;
#  - over the 20 s after the cancel its scheduler calls stay few (it waits
#    request_delay between them) and every task of job 1 is aborted once;
#  - no result of job 1 is still in progress on the server, none was sent
#    twice, and none counts as the host's error.
. "$(dirname "$0")/client_lib.sh"
SERVER="$top_builddir/ctune-server"
CORPUS="$top_builddir/bench/ctune-corpus"
need_built "$SERVER" "$CORPUS"

server_project 2
corpus_data 1 2 32
submit() {
	"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" \
		--eval "$T/eval.bin" --shards 4 --rounds 1 --steps "$1" --batch 4 --seq 16 \
		--lr 0.001 --quorum 1 --replicas 1 >>"$T/submit.log" 2>&1 || fail "job submit"
}
submit 1500		# a few seconds a task: running and queued at the cancel
server_and_clients 1 --always --device cpu --work-buffer 4 --backoff-base 0.5 \
	--checkpoint-seconds 0.3
held() { [ "$(grep -o 'j1-r1-s[0-9]-0' "$T/c1/client_state.xml" 2>/dev/null | sort -u | wc -l)" -ge 2 ]; }
wait_for 60 "the client holds job 1's tasks" held
"$SERVER" job cancel "$P" 1 >"$T/cancel.log" 2>&1 || fail "job cancel"
mark=$(wc -l <"$T/c1.log")
submit 20		# other work, after the cancel
# the client hears of the cancel at its next call (when its running task
# is done): job 2's work must follow
t0=$(date +%s)
wait_for 90 "job 2's work reaches the client" grep -q 'j2-r1-s.*starting' "$T/c1.log"
sleep 5
secs=$(($(date +%s) - t0))
after=$(tail -n +"$((mark + 1))" "$T/c1.log")
rpcs=$(printf '%s\n' "$after" | grep -c 'scheduler RPC ok')
aborts=$(printf '%s\n' "$after" | grep -c 'aborted by the server')
echo "after the cancel: $rpcs scheduler calls and $aborts aborts in $secs s"
# request_delay is 2 s; job 2's four tasks add a report each
[ "$rpcs" -le $((secs / 2 + 8)) ] || fail "$rpcs scheduler calls in $secs s after the cancel"
[ "$aborts" -ge 1 ] || fail "no task of job 1 was aborted"
[ "$aborts" -le 4 ] || fail "$aborts aborts for at most 4 tasks"
grep -q 'j1-r1-s' "$T/c1/client_state.xml" && fail "job 1's tasks are still in the client's state"
echo "ok - the canceled job's tasks were dropped once and other work arrived"
