#!/bin/sh
# test/test_web_browser.sh - the web pages in a real browser against a real
# server: test/web_seed populates a fresh project (accounts, a job, hosts
# through scheduler RPCs, credit through the validator's call), then
# `ctune-server run` serves it on a free loopback port and
# test/browser/web.mjs drives headless Chromium (JavaScript disabled)
# through leaderboards, user/host/job pages, the JSON API and the account
# and team forms, saving a screenshot of each page under
# $top_builddir/test/artifacts/web/. Then two real `ctune` clients (one
# attached with the key the account page showed, one creating its own
# account) compute the seeded "e2e" job, and the browser checks its loss
# curve, the new credit on the leaderboard and the served stats export.
#
# Skips (77) only when chromium, node or test/node_modules is missing.
set -u

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$(pwd)}
chromium=${CHROMIUM:-/usr/bin/chromium}
server="$top_builddir/ctune-server"
seed="$top_builddir/test/web_seed"
art="$top_builddir/test/artifacts/web"

if [ ! -x "$chromium" ] || ! command -v node >/dev/null 2>&1 ||
   [ ! -d "$top_srcdir/test/node_modules/playwright-core" ]; then
	echo "SKIP: needs $chromium, node and test/node_modules (tools/setup installs them)"
	exit 77
fi
for f in "$server" "$seed"; do
	[ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctune-web-XXXXXX")
pid=""
c1_pid=""
c2_pid=""
cleanup() {
	for p in $c1_pid $c2_pid; do
		kill "$p" 2>/dev/null
	done
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		# the server stops its roles and the embedded database: give it time
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
			sleep 0.1; i=$((i + 1))
		done
		kill -9 "$pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

"$seed" "$tmp/project" >"$tmp/seed.tsv" || { echo "FAIL: web_seed"; exit 1; }

port=$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
base="http://127.0.0.1:$port"
"$server" run "$tmp/project" --listen "127.0.0.1:$port" >"$tmp/server.log" 2>&1 &
pid=$!

# Wait (at most 60 s) for the web pages to answer.
i=0
until curl -sf -o /dev/null "$base/api/v1/status"; do
	if ! kill -0 "$pid" 2>/dev/null || [ $i -ge 600 ]; then
		echo "FAIL: server did not come up"; cat "$tmp/server.log"; exit 1
	fi
	sleep 0.1; i=$((i + 1))
done

rm -rf "$art"
mkdir -p "$art"
browser() {
	(cd "$top_srcdir/test" && node browser/web.mjs "$base" "$tmp/seed.tsv" "$art" "$1")
}
browser before || { cp "$tmp/server.log" "$art/" 2>/dev/null; exit 1; }

# A real job run by real clients: one attached with the key the account
# page showed, one that makes its own account through the client.
client="$top_builddir/ctune"
[ -x "$client" ] || { echo "FAIL: $client not built"; exit 1; }
key=$(sed -n 's/.*--key \([0-9a-f]\{32\}\).*/\1/p' "$art/attach-command.txt")
"$client" --dir "$tmp/c1" attach "$base" --key "$key" >"$tmp/c1.log" 2>&1 ||
	{ echo "FAIL - ctune attach with the key from the account page"; cat "$tmp/c1.log"; exit 1; }
echo "ok - ctune attach with the key from the account page"
CTUNE_PASSWORD=client-b-password "$client" --dir "$tmp/c2" attach "$base" \
	--name "Client B" --email client-b@example.org >"$tmp/c2.log" 2>&1 ||
	{ echo "FAIL - ctune attach creating an account"; cat "$tmp/c2.log"; exit 1; }
for c in c1 c2; do
	"$client" --dir "$tmp/$c" run --always --device cpu --no-selftest \
		--backoff-base 1 --exit-after 170 >>"$tmp/$c.log" 2>&1 &
	eval "${c}_pid=\$!"
done
e2e=$(sed -n 's/^e2e\t//p' "$tmp/seed.tsv")
i=0
job_status() {
	curl -sf "$base/api/v1/job/$e2e" |
		sed -n 's/^{"job":{"id":[0-9]*,"name":"[^"]*","status":"\([a-z]*\)".*/\1/p'
}
until [ "$(job_status)" = done ]; do
	if [ $i -ge 1500 ]; then
		echo "FAIL: job $e2e not done after 150 s"
		tail -20 "$tmp/c1.log" "$tmp/c2.log"; curl -s "$base/api/v1/job/$e2e"
		exit 1
	fi
	sleep 0.1; i=$((i + 1))
done
echo "ok - real clients computed job $e2e"
kill "$c1_pid" "$c2_pid" 2>/dev/null
wait "$c1_pid" "$c2_pid" 2>/dev/null
c1_pid=""
c2_pid=""
browser after
rc=$?
cp "$tmp/server.log" "$tmp/c1.log" "$tmp/c2.log" "$art/" 2>/dev/null
exit $rc
