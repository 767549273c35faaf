#!/bin/sh
# test/test_web_mail.sh - password recovery by e-mail, end to end: a local
# SMTP sink (test/smtp_sink.py) keeps every message it gets, test/web_seed
# makes a project whose config sends mail through it ([mail] smtp_url,
# from; the recovery limits tightened, loopback included), `ctune-server
# run` serves it, and test/browser/web.mjs's "mail" phase drives headless
# Chromium: make an account, ask for a link for it and for an address no
# account has (the same answer, one mail), read the link from the mail,
# set a new password, sign in with it; a second ask for either address is
# refused. Screenshots and the mail go to $top_builddir/test/artifacts/mail/.
#
# Skips (77) only when chromium, node, test/node_modules or python3 is missing.
set -u

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$(pwd)}
chromium=${CHROMIUM:-/usr/bin/chromium}
server="$top_builddir/ctune-server"
seed="$top_builddir/test/web_seed"
art="$top_builddir/test/artifacts/mail"

if [ ! -x "$chromium" ] || ! command -v node >/dev/null 2>&1 ||
   ! command -v python3 >/dev/null 2>&1 ||
   [ ! -d "$top_srcdir/test/node_modules/playwright-core" ]; then
	echo "SKIP: needs $chromium, node, python3 and test/node_modules"
	exit 77
fi
for f in "$server" "$seed"; do
	[ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctune-mail-XXXXXX")
pid=""
sink_pid=""
cleanup() {
	[ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
			sleep 0.1; i=$((i + 1))
		done
		kill -9 "$pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL - $1"; cp "$tmp/server.log" "$tmp/sink.log" "$art/" 2>/dev/null; exit 1; }

"$seed" "$tmp/project" >"$tmp/seed.tsv" 2>"$tmp/seed.log" || { cat "$tmp/seed.log"; fail "web_seed"; }

python3 "$top_srcdir/test/smtp_sink.py" "$tmp/mail" "$tmp/sink.port" >"$tmp/sink.log" 2>&1 &
sink_pid=$!
i=0
until [ -s "$tmp/sink.port" ]; do
	[ $i -ge 100 ] && fail "the SMTP sink did not start"
	sleep 0.1; i=$((i + 1))
done
sport=$(cat "$tmp/sink.port")

port=$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
base="http://127.0.0.1:$port"
conf="$tmp/project/ctune-server.conf"
# the links in the mails name the URL volunteers reach the project by
sed -i "s|^url = .*|url = \"$base\"|" "$conf"
cat >>"$conf" <<CONF

[mail]
smtp_url = smtp://127.0.0.1:$sport
from = "Web test project <noreply@example.org>"

[limits]
loopback = 1
reset_acct_burst = 1
reset_ip_burst = 20
CONF
"$server" run "$tmp/project" --listen "127.0.0.1:$port" >"$tmp/server.log" 2>&1 &
pid=$!
i=0
until curl -sf -o /dev/null "$base/api/v1/status"; do
	if ! kill -0 "$pid" 2>/dev/null || [ $i -ge 600 ]; then
		cat "$tmp/server.log"; fail "server did not come up"
	fi
	sleep 0.1; i=$((i + 1))
done

rm -rf "$art"
mkdir -p "$art"
(cd "$top_srcdir/test" && MAIL_DIR="$tmp/mail" node browser/web.mjs "$base" "$tmp/seed.tsv" \
	"$art" mail) || fail "the browser's recovery by e-mail"
grep -q "mail: sent to mail.tester@example.org" "$tmp/server.log" ||
	fail "the server logs the mail it sent"
echo "ok - the server logs the mail it sent"
exit 0
