#!/bin/sh
# test/test_web_browser.sh - the web pages in a real browser against a real
# server: test/web_seed populates a fresh project (accounts, a job, hosts
# through scheduler RPCs, credit through the validator's call), then
# `ctune-server run` serves it on a free loopback port and
# test/browser/web.mjs drives headless Chromium (JavaScript disabled)
# through leaderboards, user/host/job pages, the JSON API and the account
# and team forms, saving a screenshot of each page under
# $top_builddir/test/artifacts/web/. When the client is built, the key the
# account page showed is used to attach a real `ctune` client.
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
cleanup() {
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
(cd "$top_srcdir/test" && node browser/web.mjs "$base" "$tmp/seed.tsv" "$art")
rc=$?

# The key from the account page attaches a real client, when one is built.
client="$top_builddir/ctune"
if [ $rc -eq 0 ] && [ -x "$client" ] && [ -s "$art/attach-command.txt" ]; then
	key=$(sed -n 's/.*--key \([0-9a-f]*\).*/\1/p' "$art/attach-command.txt")
	if HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" \
	   XDG_DATA_HOME="$tmp/home/.local/share" XDG_STATE_HOME="$tmp/home/.local/state" \
	   "$client" attach "$base" --key "$key" >"$tmp/attach.log" 2>&1; then
		echo "ok - ctune attach with the key from the account page"
	else
		echo "FAIL - ctune attach with the key from the account page"
		cat "$tmp/attach.log"; rc=1
	fi
fi
cp "$tmp/server.log" "$art/server.log" 2>/dev/null
exit $rc
