#!/bin/bash
# A server that is down at first: the client's scheduler RPCs fail, it
# backs off exponentially with jitter (each wait in [base*2^(n-1)/2,
# base*2^(n-1)), so the waits grow), keeps its state intact, and
# once the server is up it gets work, computes, uploads and reports.
. "$(dirname "$0")/client_lib.sh"

# find a free port: let the fake server pick one, then stop it
start_fake probe
PORT=$(cat "$T/probe/port")
stop "$FAKE_PID"
URL="http://127.0.0.1:$PORT"
"$CTUNE" --dir "$T/c" attach "$URL" --key k --no-verify >/dev/null || fail "attach"

start_client c --always --device cpu --backoff-base 0.3
wait_for 30 "four failed RPCs" bash -c "[ \$(grep -c 'scheduler RPC failed' '$T/c.log') -ge 4 ]"
"$CTUNE" --dir "$T/c" status | grep -q "failed attempts" || fail "status does not show the failures"
# the n-th wait is min(0.3 * 2^(n-1), cap) * U(0.5, 1): in [0.15, 0.3),
# [0.3, 0.6), [0.6, 1.2), [1.2, 2.4)
grep -o 'retry in [0-9.]* s' "$T/c.log" | head -4 | awk '{ print $3 }' >"$T/waits"
awk '{ lo = 0.15 * 2 ^ (NR - 1); if ($1 < lo - 0.001 || $1 > 2 * lo + 0.001) bad = 1 }
     END { exit bad || NR != 4 }' "$T/waits" ||
	fail "backoff waits out of range: $(tr '\n' ' ' <"$T/waits")"
grep -q '<nfailures>[1-9]' "$T/c/client_state.xml" || fail "failures not in the state file"

start_fake srv --port "$PORT" --results 1 --steps 20
wait_for 60 "result reported once the server is up" reported srv r0
wait_for 10 "failure count reset" state_has c '<nfailures>0</nfailures>'
stop "$CPID"
echo "PASS: backed off ($(tr '\n' ' ' <"$T/waits")s) and succeeded once the server was up"
