#!/bin/bash
# client_web_projects.sh - projects on the client's local control page in
# a real browser: a ctune-server project with a job of three long WUs and
# an account (user1, e-mail and password), one `ctune run --web` attached
# to nothing, and test/browser/control_projects.mjs driving headless
# Chromium through the address `ctune web` prints: attach by e-mail and
# password, the client then fetches a task from that server and computes
# it; suspend and resume the project; detach; at 390 px attach again with
# the account key and the client fetches another task. Screenshots under
# $top_builddir/test/artifacts/control-projects/, checked for the badge's
# pixels. Before that, curl checks the new POSTs refuse a request without
# the page's CSRF value and that the page still listens on 127.0.0.1 only.
#
# Skips (77) when chromium, node or test/node_modules is missing.
. "$(dirname "$0")/client_lib.sh"
SERVER="$top_builddir/ctune-server"
CORPUS="$top_builddir/bench/ctune-corpus"
need_built "$SERVER" "$CORPUS" "$CTUNE"
need_browser
art="$top_builddir/test/artifacts/control-projects"
rm -rf "$art"
mkdir -p "$art"

# Three WUs that each run for minutes: one for the first attach, one for
# the second (the first stays in progress on the server after the detach).
server_project
corpus_data 1 2 32
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" \
	--eval "$T/eval.bin" --shards 3 --rounds 1 --steps 100000 --batch 4 --seq 16 --lr 0.001 \
	--quorum 1 --replicas 1 >"$T/submit.log" 2>&1 || fail "job submit"
server_and_clients 0
KEY=$("$SERVER" user create "$P" --name user1 --email user1@example.org \
	--password password-1 2>/dev/null | sed -n 's/.*account key //p')
[ -n "$KEY" ] || fail "user create"
start_client c1 --always --device cpu --backoff-base 0.5 --checkpoint-seconds 5 \
	--web --web-port 0 --exit-after 600
C1=$CPID

control_page c1
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
for p in attach detach project_suspend project_resume; do
	[ "$(code -X POST -H "Cookie: ctune_$PAGE_PORT=$TOKEN" -H "Origin: $BASE" \
		--data-urlencode "url=$URL" --data-urlencode "key=$KEY" "$BASE/api/$p")" = 403 ] ||
		fail "POST /api/$p without the CSRF value: 403"
done
"$CTUNE" --dir "$T/c1" status | grep -q "not attached to any project" ||
	fail "a refused POST attached the client"
if command -v ss >/dev/null 2>&1; then
	addrs=$(ss -ltnH "sport = :$PAGE_PORT" | awk '{ print $4 }')
	[ -n "$addrs" ] && [ -z "$(echo "$addrs" | grep -v "^127\.0\.0\.1:$PAGE_PORT\$")" ] ||
		fail "the page listens on 127.0.0.1 only (ss: $addrs)"
fi
echo "ok - the project POSTs refuse requests without the CSRF value; loopback only"

(cd "$top_srcdir/test" && node browser/control_projects.mjs "$PAGE" "$art" "$CTUNE" "$T/c1" "$URL" \
	user1@example.org password-1 "$KEY") >"$T/browser.out" 2>&1
rc=$?
cat "$T/browser.out"
[ $rc = 0 ] || fail "the control page's projects in Chromium (test/browser/control_projects.mjs)"
grep -q "control page: attached to $URL" "$T/c1.log" || fail "the daemon logs the page's attach"
grep -q "$URL: suspended by user" "$T/c1.log" || fail "the daemon logs the project's suspend"
echo "ok - projects on the control page in Chromium"
exit 0
