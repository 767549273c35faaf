#!/bin/bash
# Bad input from a server: malformed scheduler replies are refused and
# backed off from without touching the state; an input file that never
# matches its announced SHA-256 is retried, then reported to the server as
# an error (CT_EHASH, -10) instead of being computed on; the state file
# stays loadable throughout. A scheduler reply lost after the server took
# the report: the client reports again, the server answers DUP, and the
# client counts the result once and forgets it.
. "$(dirname "$0")/client_lib.sh"

start_fake srv --results 1 --steps 20 --garbage 3 --bad-hash
"$CTUNE" --dir "$T/c" attach "$FAKE_URL" --key k --no-verify >/dev/null || fail "attach"
start_client c --always --device cpu --backoff-base 0.1

wait_for 30 "malformed replies refused" bash -c "[ \$(grep -c 'scheduler RPC failed' '$T/c.log') -ge 3 ]"
grep -q "scheduler RPC failed (.*host_id" "$T/c.log" || grep -q "scheduler RPC failed (.*line" "$T/c.log" ||
	fail "the XML error is not in the log"
wait_for 60 "the hash failure is reported as an error" grep -q "^r0 error -10 " "$T/srv/reports.log"
[ "$(grep -c 'download failed' "$T/c.log")" -ge 2 ] || fail "the download was not retried"
grep -q "starting on" "$T/c.log" && fail "computed on an unverified input"
wait_for 20 "the failed task is forgotten after the ack" bash -c "! grep -q '<task>' '$T/c/client_state.xml'"
# what stays in the cache (kept by hash for later tasks) is verified: each
# file's SHA-256 is its name; nothing partial is left
for f in "$T"/c/cache/*; do
	[ -e "$f" ] || continue
	[ "$(sha256sum <"$f" | cut -c1-64)" = "$(basename "$f")" ] ||
		fail "unverified data left in the cache: $(basename "$f")"
done
"$CTUNE" --dir "$T/c" status >/dev/null || fail "status after bad input"
stop "$CPID"

start_fake srv2 --results 1 --steps 20 --lose-acks 1
"$CTUNE" --dir "$T/c2" attach "$FAKE_URL" --key k >/dev/null || fail "attach c2"
start_client c2 --always --device cpu --backoff-base 0.1
wait_for 60 "the repeated report" grep -q "^DUP r0" "$T/srv2/reports.log"
[ "$(grep -c '^r0 success' "$T/srv2/reports.log")" = 1 ] || fail "r0 not recorded exactly once"
wait_for 20 "the task is forgotten after the DUP ack" bash -c "! grep -q '<task>' '$T/c2/client_state.xml'"
state_has c2 '<results_reported>1</results_reported>' || fail "the result was counted twice"
stop "$CPID"
echo "PASS: malformed replies backed off, hash mismatch reported as error -10, lost ack handled"
