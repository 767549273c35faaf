#!/bin/bash
# kill -9 in the middle of a work unit, twice, then restart: the client
# resumes from its last checkpoint (on a different device each time: the C
# reference, then OpenCL through PoCL, then the reference again), finishes,
# and uploads weights bit-identical to an uninterrupted `ctune train`; the
# result is reported exactly once and nothing is lost.
. "$(dirname "$0")/client_lib.sh"

STEPS=600
start_fake srv --results 1 --steps $STEPS
reference srv $STEPS
"$CTUNE" --dir "$T/c" attach "$FAKE_URL" --key k >/dev/null || fail "attach"

step_of() { sed -n 's:.*<step>\([0-9]*\)</step>.*:\1:p' "$T/c/client_state.xml" 2>/dev/null | head -1; }
checkpointed_past() {
	state_has c '<checkpoint>state</checkpoint>' && [ "$(step_of)" -ge "$1" ] 2>/dev/null
}

# 1: the C reference, throttled so the WU takes seconds; killed mid-way
start_client c --always --device cpu --max-cpu-percent 3 --checkpoint-seconds 0.3
wait_for 60 "a checkpoint past step 50" checkpointed_past 50
kill -9 "$CPID"; wait "$CPID" 2>/dev/null
S1=$(step_of)
state_has c '<state>running</state>' || fail "task not recorded as running"
[ "$S1" -lt $STEPS ] || fail "WU finished before the kill"

# 2: resumed on OpenCL (PoCL), killed again after progress
DEV=cpu
if "$CTUNE" devices --no-selftest 2>/dev/null | grep -q 'opencl:0'; then DEV=opencl:0; fi
start_client c --always --device $DEV --max-cpu-percent 20 --checkpoint-seconds 0.3
wait_for 60 "a checkpoint past step $((S1 + 20))" checkpointed_past $((S1 + 20))
kill -9 "$CPID"; wait "$CPID" 2>/dev/null
S2=$(step_of)
grep -q "r0: resuming on $DEV at step $S1 of $STEPS" "$T/c.log" ||
	fail "second run did not resume at step $S1 on $DEV"

# 3: the reference again, to the end
start_client c --always --device cpu --checkpoint-seconds 0.3
wait_for 60 "the result is reported" reported srv r0
grep -q "r0: resuming on cpu at step $S2 of $STEPS" "$T/c.log" ||
	fail "third run did not resume at step $S2"
cmp -s "$T/ref.bin" "$T/srv/upload/r0.bin" || fail "resumed WU is not bit-identical"
[ "$(grep -c '^r0 ' "$T/srv/reports.log")" = 1 ] || fail "r0 reported more than once"
grep -q DUP "$T/srv/reports.log" && fail "duplicate report"

stop "$CPID"
echo "PASS: killed at steps $S1 ($DEV next) and $S2; result bit-identical, reported once"
