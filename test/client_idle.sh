#!/bin/bash
# Idle-time computing with the idle source driven by the test (--idle-file):
# no computing while the user is active; computing starts once the idle time
# passes idle_minutes; user activity suspends it within two seconds with a
# checkpoint written; it resumes from there later and the result is still
# bit-identical to an uninterrupted run. `ctune suspend/resume` work too.
. "$(dirname "$0")/client_lib.sh"

# long enough that the WU cannot end between "computing starts" and the
# user's return (600 steps ran in 1.2 s at 3% on a fast CPU: it finished
# before the test could suspend it)
STEPS=2400
start_fake srv --results 1 --steps $STEPS
reference srv $STEPS
"$CTUNE" --dir "$T/c" attach "$FAKE_URL" --key k >/dev/null || fail "attach"
IDLE="$T/idle"
echo 0 >"$IDLE"
step_of() { sed -n 's:.*<step>\([0-9]*\)</step>.*:\1:p' "$T/c/client_state.xml" 2>/dev/null | head -1; }
status_says() { "$CTUNE" --dir "$T/c" status 2>/dev/null | grep -q "$1"; }

# idle_minutes = 1 from prefs.conf (the file format volunteers edit)
printf 'idle_minutes = 1\nmax_cpu_percent = 3\ncheckpoint_seconds = 30\n' >"$T/c/prefs.conf"
start_client c --device cpu --idle-file "$IDLE"
wait_for 30 "task downloaded" state_has c '<state>ready</state>'
sleep 2
state_has c '<state>ready</state>' || fail "computed while the user was active"
status_says "suspended: user active" || fail "status does not say why it waits"

echo 59 >"$IDLE"
sleep 1.5
state_has c '<state>ready</state>' || fail "computed before idle_minutes"

echo 61 >"$IDLE"
wait_for 20 "computing starts" status_says "activity: computing"
sleep 1
# the user comes back: suspended within 2 s, with a checkpoint
echo 0 >"$IDLE"
T0=$(date +%s.%N)
wait_for 5 "suspend" grep -q "r0: suspending (user active)" "$T/c.log"
DT=$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
awk -v d="$DT" 'BEGIN { exit !(d < 2.0) }' || fail "suspend took ${DT}s"
wait_for 5 "checkpoint recorded" state_has c '<checkpoint>state</checkpoint>'
[ -s "$T/c/slots/r0/state" ] || fail "no checkpoint file on suspend"
S1=$(step_of)
[ "$S1" -gt 0 ] && [ "$S1" -lt $STEPS ] || fail "suspended at step '$S1'"
sleep 1.5
[ "$(step_of)" = "$S1" ] || fail "kept computing while suspended"

# a user suspension overrides idleness
"$CTUNE" --dir "$T/c" suspend >/dev/null || fail "ctune suspend"
echo 1000 >"$IDLE"
sleep 1.5
status_says "suspended by user" || fail "ctune suspend ignored"
[ "$(step_of)" = "$S1" ] || fail "computed while suspended by the user"
"$CTUNE" --dir "$T/c" resume >/dev/null || fail "ctune resume"

# resumes from the checkpoint (in memory state was dropped) and finishes
wait_for 60 "result reported" reported srv r0
grep -q "r0: resuming on cpu at step $S1 of $STEPS" "$T/c.log" || fail "did not resume at step $S1"
cmp -s "$T/ref.bin" "$T/srv/upload/r0.bin" || fail "suspended WU is not bit-identical"
stop "$CPID"
echo "PASS: waited for idle, suspended in ${DT}s at step $S1, resumed, result bit-identical"
