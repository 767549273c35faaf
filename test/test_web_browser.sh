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
# Last the browser sets computing preferences on the web (run hours that
# exclude the present): a running client gets them at its scheduler call,
# `ctune status` says it is outside its run hours, and, restarted while a
# job waits for a second replica, it asks for no work. Then the account's
# name, profile and, through `ctune-server user reset-link`, its password.
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
browser after || { cp "$tmp/server.log" "$tmp/c1.log" "$tmp/c2.log" "$art/" 2>/dev/null; exit 1; }

# Computing preferences set on the web reach a running client: run hours
# that exclude the present (the clients run in UTC, as the browser chose
# them), then the client asks for no work although there is some.
browser prefs || { cp "$tmp/server.log" "$art/" 2>/dev/null; exit 1; }
win=$(cat "$art/run-hours.txt")
fail() { echo "FAIL - $1"; cp "$tmp/server.log" "$tmp"/c*.log "$art/" 2>/dev/null; exit 1; }
wait_until() {	# wait_until CMD...: at most 60 s for CMD to succeed
	i=0
	until "$@" >/dev/null 2>&1; do
		[ $i -ge 600 ] && return 1
		sleep 0.1; i=$((i + 1))
	done
}
wait_log() { wait_until grep -q "$2" "$1"; }	# wait_log FILE PATTERN
c1_suspended() { TZ=UTC "$client" --dir "$tmp/c1" status | grep -q "outside run hours"; }
one_unsent() { curl -sf "$base/api/v1/job/$pj" | grep -q '"results_unsent":1,'; }
TZ=UTC "$client" --dir "$tmp/c1" run --always --device cpu --no-selftest --backoff-base 1 \
	--exit-after 120 >"$tmp/c1-prefs.log" 2>&1 &
c1_pid=$!
wait_log "$tmp/c1-prefs.log" "preferences read (set on the web)" ||
	fail "the running client got the web's preferences at its scheduler call"
grep -q "^run_hours = $win\$" "$tmp/c1/prefs_web.conf" ||
	fail "the client kept the web's run hours ($win)"
echo "ok - the running client got the web's preferences ($win) at its scheduler call"
wait_log "$tmp/c1-prefs.log" "asking for no work: outside run hours" ||
	fail "the client asks for no work outside the web's run hours"
wait_until c1_suspended || fail "ctune status says outside run hours"
echo "ok - the client is suspended by the web's run hours (ctune status)"
"$client" --dir "$tmp/c1" quit >/dev/null 2>&1
wait "$c1_pid" 2>/dev/null
c1_pid=""

# Now there is work: Client B (no web preferences) takes one replica; c1,
# started again with the web's preferences kept, asks for none.
"$server" job submit "$tmp/project" --name prefs --model "$tmp/project/text-model.bin" \
	--train-text /usr/share/common-licenses/BSD --eval-fraction 0.2 --shards 1 \
	--rounds 1 --steps 2 --batch 1 --seq 8 --lr 1e-3 --quorum 2 --replicas 2 \
	--allow-random-base >"$tmp/submit.log" 2>&1 || { cat "$tmp/submit.log"; fail "job submit"; }
pj=$(sed -n 's/^job \([0-9]*\).*/\1/p' "$tmp/submit.log" | head -1)
"$client" --dir "$tmp/c2" run --always --device cpu --no-selftest --backoff-base 1 \
	--exit-after 120 >"$tmp/c2-prefs.log" 2>&1 &
c2_pid=$!
wait_until one_unsent || fail "Client B took one replica of job $pj"
TZ=UTC "$client" --dir "$tmp/c1" run --always --device cpu --no-selftest --backoff-base 1 \
	--exit-after 120 >"$tmp/c1-prefs2.log" 2>&1 &
c1_pid=$!
wait_log "$tmp/c1-prefs2.log" "asking for no work: outside run hours" ||
	fail "the restarted client asks for no work"
one_unsent || fail "the other replica of job $pj stays for a computer that will run it"
TZ=UTC "$client" --dir "$tmp/c1" status 2>/dev/null | grep -q "j$pj-" &&
	fail "the client outside its run hours holds no task of job $pj"
echo "ok - outside the web's run hours the client holds no task while work waits"

# Account settings, and a forgotten password through the operator's link.
"$server" user reset-link "$tmp/project" Browser@Example.org >"$art/reset-url.txt" 2>"$tmp/reset.err" ||
	{ cat "$tmp/reset.err"; fail "ctune-server user reset-link"; }
browser account || fail "account settings and recovery in the browser"
cp "$tmp/server.log" "$tmp"/c*.log "$art/" 2>/dev/null
exit 0
