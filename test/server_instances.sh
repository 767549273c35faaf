#!/bin/sh
# test/server_instances.sh - instances with the real binary on a
# private mariadbd: two `run` of one instance name on one project are
# refused (the error names the PID holding it); a second instance gets its
# own admin socket and server.url and the default one keeps admin.sock and
# server.url; `status` lists every instance and role with its heartbeat,
# an hourly role (credit_decay) keeps beating between its runs, and a clean
# stop removes the stopped instance's rows.
#
# Exit 0 = pass, 77 = skipped (no mariadbd), anything else = failure.
CT_TMP_PREFIX=ctune-inst
. "$(dirname "$0")/server_lib.sh"

start_mariadbd
"$S" init "$P" --listen 127.0.0.1:0 --name "instances" $DBOPT >/dev/null || die "init"
sed -i "s/^log_level = .*/&\ninstance = alpha/" "$P/ctune-server.conf"

start_server http,validator,credit_decay
check "the default instance writes server.url" "$(cat "$P/server.url")" "$URL"
check "the default instance listens on admin.sock" "$([ -S "$P/admin.sock" ] && echo y)" y

out=$("$S" run "$P" --roles validator 2>&1); rc=$?
check "a second process of instance alpha is refused" "$rc" 1
check "the refusal names the instance and the PID holding it" \
	"$(echo "$out" | grep -c "instance 'alpha' already runs on this project (pid $SRV_PID ")" 1
check "on an external database it suggests another --instance NAME" \
	"$(echo "$out" | grep -c "give this one another --instance NAME")" 1
check "the first process still serves" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/")" 200
check "a bad instance name is refused" \
	"$("$S" run "$P" --instance 'a/b' >/dev/null 2>&1; echo $?)" 1

"$S" run "$P" --instance beta --roles http,validator >>"$T/beta.log" 2>&1 &
BETA_PID=$!
for i in $(seq 1 100); do [ -s "$P/server-beta.url" ] && break; sleep 0.1; done
check "instance beta writes server-beta.url" "$([ -s "$P/server-beta.url" ] && echo y)" y
check "instance beta listens on admin-beta.sock" "$([ -S "$P/admin-beta.sock" ] && echo y)" y
check "server.url is still alpha's" "$(cat "$P/server.url")" "$URL"
BURL=$(cat "$P/server-beta.url")
check "beta serves on its own address" "$(curl -s -o /dev/null -w '%{http_code}' "$BURL/")" 200
[ "$BURL" != "$URL" ] || fail "beta has alpha's URL"

# every role beats within 5 s of starting and then every 5 s, even
# credit_decay, which runs once an hour
sleep 12
"$S" status "$P" >"$T/status.txt" || die "status"
for r in "alpha *http" "alpha *validator" "alpha *credit_decay" "beta *http" \
	 "beta *validator"; do
	check "status shows $r up" \
		"$(grep -c "^  $r  *up (host [^ ]* pid [0-9]*, last seen [0-8] s ago" "$T/status.txt")" 1
done
check "status shows beta's pid" "$(grep -c "^  beta .*pid $BETA_PID," "$T/status.txt")" 2
check "status shows nothing else" "$(grep -c '^  [a-z]' "$T/status.txt")" 5

kill "$BETA_PID"; wait "$BETA_PID"; brc=$?
check "beta stops cleanly" "$brc" 0
check "beta's socket is gone" "$([ -e "$P/admin-beta.sock" ] && echo y)" ""
"$S" status "$P" >"$T/status.txt" || die "status"
check "a clean stop removes the instance from status" "$(grep -c '^  beta ' "$T/status.txt")" 0
check "the other instance stays" "$(grep -c '^  alpha ' "$T/status.txt")" 3

# beta comes back on the lock it left behind
"$S" run "$P" --instance beta --roles validator,transitioner >>"$T/beta.log" 2>&1 &
BETA_PID=$!
sleep 2
check "an instance restarts after a clean stop" "$(kill -0 "$BETA_PID" 2>/dev/null && echo y)" y
# killed, it leaves its rows (shown down later); the kernel drops its lock,
# and its next start with other roles clears the rows of the old process
kill -9 "$BETA_PID"; wait "$BETA_PID"
check "a killed instance's rows stay" \
	"$("$S" status "$P" | grep -c "^  beta .*pid $BETA_PID,")" 2
"$S" run "$P" --instance beta --roles validator >>"$T/beta.log" 2>&1 &
OLD_PID=$BETA_PID; BETA_PID=$!
sleep 2
check "an instance restarts after kill -9" "$(kill -0 "$BETA_PID" 2>/dev/null && echo y)" y
"$S" status "$P" >"$T/status.txt" || die "status"
check "the killed process's rows are gone" "$(grep -c "pid $OLD_PID," "$T/status.txt")" 0
check "the new one shows its one role" "$(grep -c "^  beta  *validator .*pid $BETA_PID," \
	"$T/status.txt")" 1
check "and only that" "$(grep -c '^  beta ' "$T/status.txt")" 1
kill "$BETA_PID"; wait "$BETA_PID"
stop_server
"$S" status "$P" >"$T/status.txt" || die "status without a server"
check "no instance left after both stopped" "$(grep -c '^  [a-z]' "$T/status.txt")" 0

[ "$fails" = 0 ] && echo "all instance checks passed"
exit $((fails > 0))
