#!/bin/bash
# client_web_browser.sh - the client's local control page in a real browser:
# a ctune-server project with a long job, one `ctune run --web` computing
# it, and test/browser/control.mjs driving headless Chromium (JavaScript on:
# the page is a small script polling /api/state) through the address `ctune
# web` prints: status, tasks, projects and the loss chart appear; Suspend
# suspends the daemon (`ctune status` says so) and Resume resumes it; a
# preference set in the form reaches prefs.conf and changes what the daemon
# does; a form on another origin cannot suspend it; at desktop and 390 px
# width, with screenshots under $top_builddir/test/artifacts/control/ that
# the script checks for the chart's and the badge's pixels. Before that,
# curl checks what a browser cannot be made to send: another Host (DNS
# rebinding), no token, a wrong token, a POST without the CSRF value.
#
# Skips (77) when chromium, node or test/node_modules is missing.
. "$(dirname "$0")/client_lib.sh"
SERVER="$top_builddir/ctune-server"
CORPUS="$top_builddir/bench/ctune-corpus"
need_built "$SERVER" "$CORPUS" "$CTUNE"
need_browser
art="$top_builddir/test/artifacts/control"
rm -rf "$art"
mkdir -p "$art"

# A job whose one WU runs for minutes, so the page sees it running.
server_project
corpus_data 1 2 32
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" \
	--eval "$T/eval.bin" --shards 1 --rounds 1 --steps 100000 --batch 4 --seq 16 --lr 0.001 \
	--quorum 1 --replicas 1 >"$T/submit.log" 2>&1 || fail "job submit"
export TZ=UTC			# the run hours the browser sets are in UTC
server_and_clients 1 --always --device cpu --backoff-base 0.5 --checkpoint-seconds 5 \
	--web --web-port 0 --exit-after 400

page_url() { "$CTUNE" --dir "$T/c1" web; }
wait_for 30 "ctune web prints the address" page_url
PAGE=$(page_url)
case "$PAGE" in
http://127.0.0.1:[0-9]*/\?token=[0-9a-f]*) ;;
*) fail "ctune web printed '$PAGE'" ;;
esac
"$CTUNE" --dir "$T/c1" status | grep -qF "control page: $PAGE" || fail "ctune status shows the address"
grep -qF "control page: $PAGE" "$T/c1.log" || fail "the daemon logs the address"
[ "$(tr -d '\n' <"$T/c1/web_token")" = "${PAGE#*token=}" ] || fail "DIR/web_token holds the token"
echo "ok - ctune web, ctune status and the log give the page's address"

PAGE_PORT=${PAGE#http://127.0.0.1:}
PAGE_PORT=${PAGE_PORT%%/*}
BASE="http://127.0.0.1:$PAGE_PORT"
TOKEN=${PAGE#*token=}
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "$BASE/api/state")" = 403 ] || fail "no token: 403"
case "$TOKEN" in 0*) WRONG=1${TOKEN#?} ;; *) WRONG=0${TOKEN#?} ;; esac
[ "$(code "$BASE/?token=$WRONG")" = 403 ] || fail "a wrong token: 403"
[ "$(code -H "Cookie: ctune_$PAGE_PORT=$TOKEN" "$BASE/api/state")" = 200 ] || fail "the cookie: 200"
[ "$(code -H "Host: rebind.example:$PAGE_PORT" -H "Cookie: ctune_$PAGE_PORT=$TOKEN" "$BASE/api/state")" = 403 ] ||
	fail "another Host (DNS rebinding): 403"
[ "$(code -X POST -H "Cookie: ctune_$PAGE_PORT=$TOKEN" -H "Origin: $BASE" -d x=1 "$BASE/api/suspend")" = 403 ] ||
	fail "a POST without the CSRF value: 403"
"$CTUNE" --dir "$T/c1" status | grep -q "suspended by user" && fail "a refused POST suspended the client"
echo "ok - the page refuses other hosts, missing or wrong tokens and POSTs without the CSRF value"

# The browser, once the WU has step losses to draw.
has_losses() { [ "$("$CTUNE" --dir "$T/c1" status --xml | grep -o '<l>' | wc -l)" -ge 3 ]; }
wait_for 240 "the client computes the WU (step losses)" has_losses
(cd "$top_srcdir/test" && node browser/control.mjs "$PAGE" "$art" "$CTUNE" "$T/c1" "$URL") \
	>"$T/browser.out" 2>&1
rc=$?
cat "$T/browser.out"
[ $rc = 0 ] || fail "the control page in Chromium (test/browser/control.mjs)"
grep -q '^run_hours = ' "$T/c1/prefs.conf" || fail "the form's run hours are in prefs.conf"
grep -q "control page: prefs set" "$T/c1.log" || fail "the daemon logs the page's prefs set"
echo "ok - the control page in Chromium"
exit 0
