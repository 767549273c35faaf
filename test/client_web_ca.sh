#!/bin/bash
# client_web_ca.sh - the control page attaches to a project whose server
# has a certificate from a private CA (made here with openssl: a CA, and
# a server certificate for 127.0.0.1 it signs), given the CA file's path
# in the attach form, as `ctune attach --ca-file` takes it. A real
# ctune-server serves https with that certificate; one `ctune run --web`
# attached to nothing; curl speaks to the page as the page's script does
# (the token's cookie, the CSRF value, a form body):
#  - the form has the CA file field;
#  - an attach with a CA file but without the CSRF value is refused (403)
#    and attaches nothing;
#  - without a CA file the project's certificate is refused (the system's
#    CAs do not know it), saying TLS;
#  - a CA file that is relative, missing, a directory, not PEM, over the
#    1 MiB cap, or whose path has a space is refused (400), naming why;
#  - with the CA file, by account key: attached, the file kept with the
#    project in the client state, and the daemon's own scheduler RPCs over
#    TLS with it get a task; detached, then by e-mail and password (the
#    account look-up over TLS with the CA file too): attached again.
#
# Skips (77) without openssl.
. "$(dirname "$0")/client_lib.sh"
SERVER="$top_builddir/ctune-server"
CORPUS="$top_builddir/bench/ctune-corpus"
need_built "$SERVER" "$CORPUS" "$CTUNE"
command -v openssl >/dev/null || { echo "SKIP: no openssl"; exit 77; }

# the private CA and the server's certificate it signs
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=ctune test CA" \
	-keyout "$T/ca.key" -out "$T/ca.crt" >/dev/null 2>&1 || fail "openssl: the CA"
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$T/srv.key" \
	-out "$T/srv.csr" >/dev/null 2>&1 || fail "openssl: the request"
printf 'subjectAltName=IP:127.0.0.1\n' >"$T/san.ext"
openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.crt" -CAkey "$T/ca.key" -CAcreateserial \
	-days 2 -extfile "$T/san.ext" -out "$T/srv.crt" >/dev/null 2>&1 || fail "openssl: signing"

start_fake probe
PORT=$(cat "$T/probe/port")
stop "$FAKE_PID"
URL="https://127.0.0.1:$PORT"
P="$T/proj"
"$SERVER" init "$P" --tls-cert "$T/srv.crt" --tls-key "$T/srv.key" --listen "127.0.0.1:$PORT" \
	--url "$URL" >"$T/init.log" 2>&1 || fail "server init: $(cat "$T/init.log")"
sed -i "s/^request_delay = .*/request_delay = 1/" "$P/ctune-server.conf"
corpus_data 1 2 32
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" \
	--eval "$T/eval.bin" --shards 2 --rounds 1 --steps 100000 --batch 4 --seq 16 --lr 0.001 \
	--quorum 1 --replicas 1 >"$T/submit.log" 2>&1 || fail "job submit"
"$SERVER" run "$P" >"$T/server.log" 2>&1 &
SPID=$!
PIDS="$PIDS $SPID"
wait_for 60 "server up on https" curl -sf --cacert "$T/ca.crt" "$URL/api/v1/status"
KEY=$("$SERVER" user create "$P" --name alice --email alice@example.org \
	--password alice-password 2>/dev/null | sed -n 's/.*account key //p')
[ -n "$KEY" ] || fail "user create"

start_client c1 --always --device cpu --backoff-base 0.5 --checkpoint-seconds 5 \
	--web --web-port 0 --exit-after 300
C1=$CPID
control_page c1
COOKIE="Cookie: ctune_$PAGE_PORT=$TOKEN"
curl -sf -H "$COOKIE" "$BASE/" >"$T/page.html" || fail "GET the page"
grep -q 'name="ca_file"' "$T/page.html" || fail "the attach form has no CA file field"
CSRF=$(sed -n 's/.*<meta name="csrf" content="\([0-9a-f]*\)".*/\1/p' "$T/page.html")
[ ${#CSRF} = 64 ] || fail "no CSRF value in the page"

# attach [CURL ARGS...]: POST /api/attach as the page does; the status in
# $code, the reply in $T/reply.json
attach() {
	code=$(curl -s -o "$T/reply.json" -w '%{http_code}' -X POST -H "$COOKIE" \
		-H "Origin: $BASE" -H "X-Ctune-Csrf: $CSRF" --data-urlencode "url=$URL" "$@" \
		"$BASE/api/attach")
}
attached() { "$CTUNE" --dir "$T/c1" status | grep -q "$URL"; }
# refused WHAT PATTERN [CURL ARGS...]: a 400 whose error says PATTERN
refused() {
	local what=$1 pat=$2
	shift 2
	attach "$@"
	[ "$code" = 400 ] || fail "$what: HTTP $code, not 400: $(cat "$T/reply.json")"
	grep -q "$pat" "$T/reply.json" || fail "$what: not '$pat': $(cat "$T/reply.json")"
	attached && fail "$what: attached all the same"
	return 0
}

code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "$COOKIE" -H "Origin: $BASE" \
	--data-urlencode "url=$URL" --data-urlencode "key=$KEY" \
	--data-urlencode "ca_file=$T/ca.crt" "$BASE/api/attach")
[ "$code" = 403 ] || fail "an attach without the CSRF value: HTTP $code, not 403"
attached && fail "an attach without the CSRF value attached"
echo "ok - the form has the CA file field; without the CSRF value: 403, nothing attached"

refused "no CA file" "TLS with $URL failed" --data-urlencode "key=$KEY"
refused "a relative path" "give its absolute path" --data-urlencode "key=$KEY" \
	--data-urlencode "ca_file=ca.crt"
refused "a missing file" "CA file $T/none.crt: not a readable file" --data-urlencode "key=$KEY" \
	--data-urlencode "ca_file=$T/none.crt"
mkdir "$T/dir.crt"
refused "a directory" "not a regular file" --data-urlencode "key=$KEY" \
	--data-urlencode "ca_file=$T/dir.crt"
refused "not PEM" "no PEM certificate in it" --data-urlencode "key=$KEY" \
	--data-urlencode "ca_file=$T/san.ext"
{ cat "$T/ca.crt"; head -c 1100000 /dev/zero | tr '\0' '#'; } >"$T/big.crt"
refused "over the cap" "over 1048576 bytes" --data-urlencode "key=$KEY" \
	--data-urlencode "ca_file=$T/big.crt"
mkdir "$T/a b" && cp "$T/ca.crt" "$T/a b/ca.crt"
refused "a path with a space" "without spaces" --data-urlencode "key=$KEY" \
	--data-urlencode "ca_file=$T/a b/ca.crt"
if [ "$(id -u)" != 0 ]; then	# root reads any file
	cp "$T/ca.crt" "$T/locked.crt" && chmod 000 "$T/locked.crt"
	refused "an unreadable file" "not a readable file" --data-urlencode "key=$KEY" \
		--data-urlencode "ca_file=$T/locked.crt"
fi
echo "ok - refused: no CA file (TLS), relative, missing, a directory, not PEM, over 1 MiB, a space"

attach --data-urlencode "key=$KEY" --data-urlencode "ca_file=$T/ca.crt"
[ "$code" = 200 ] || fail "attach with the CA file: HTTP $code: $(cat "$T/reply.json")"
wait_for 10 "the daemon attached" attached
state_has c1 "<ca_file>$T/ca.crt</ca_file>" || fail "the CA file is not kept with the project"
grep -q "control page: attached to $URL (user alice, CA file $T/ca.crt)" "$T/c1.log" ||
	fail "the daemon does not log the page's attach"
wait_for 60 "a task from the project over TLS" \
	grep -Eq "$URL: scheduler RPC ok: [0-9]+ reported, [1-9][0-9]* new task" "$T/c1.log"
echo "ok - attached with the CA file by key; the daemon gets a task over TLS with it"

code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "$COOKIE" -H "Origin: $BASE" \
	-H "X-Ctune-Csrf: $CSRF" --data-urlencode "url=$URL" "$BASE/api/detach")
[ "$code" = 200 ] || fail "detach: HTTP $code"
wait_for 10 "detached" sh -c "! \"$CTUNE\" --dir \"$T/c1\" status | grep -q \"$URL\""
refused "e-mail and password, no CA file" "TLS with $URL failed" \
	--data-urlencode "email=alice@example.org" --data-urlencode "password=alice-password"
attach --data-urlencode "email=alice@example.org" --data-urlencode "password=alice-password" \
	--data-urlencode "ca_file=$T/ca.crt"
[ "$code" = 200 ] || fail "attach by e-mail with the CA file: HTTP $code: $(cat "$T/reply.json")"
wait_for 10 "attached again" attached
echo "ok - by e-mail and password with the CA file (refused without it)"
stop "$C1"
stop "$SPID"
echo "PASS: the control page attaches to a private CA's project with a checked CA file"
