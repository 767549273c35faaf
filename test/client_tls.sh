#!/bin/bash
# TLS without a CA: `ctune-server init --tls` makes a
# self-signed certificate and key, the server serves https with them, and
# a real client attaches with --pin-self-signed, which pins the server's
# public key (curl's sha256// form, kept with the project in the client
# state), gets work over https and completes a 1-WU job. Then the server's
# key is replaced by another self-signed one (same host): the running
# client and a new `ctune attach` refuse it, saying the key changed; a
# plain attach without --pin-self-signed is refused as untrusted.
# init with --tls and an http:// URL, or --tls-cert without --tls-key, is
# refused and leaves nothing; --tls-cert/--tls-key are kept by absolute path.
. "$(dirname "$0")/client_lib.sh"
SERVER="$top_builddir/ctune-server"
CORPUS="$top_builddir/bench/ctune-corpus"
need_built "$SERVER" "$CORPUS"

start_fake probe
PORT=$(cat "$T/probe/port")
stop "$FAKE_PID"
URL="https://127.0.0.1:$PORT"
P="$T/proj"
"$SERVER" init "$P" --tls --listen "127.0.0.1:$PORT" --url "$URL" >"$T/init.log" 2>&1 ||
	fail "server init --tls: $(cat "$T/init.log")"
sed -i "s/^request_delay = .*/request_delay = 1/" "$P/ctune-server.conf"
grep -q "^tls_cert = \"$P/tls.crt\"" "$P/ctune-server.conf" || fail "tls_cert not set"
[ "$(stat -c %a "$P/tls.key")" = 600 ] || fail "tls.key mode $(stat -c %a "$P/tls.key")"
openssl x509 -in "$P/tls.crt" -noout -ext subjectAltName 2>/dev/null | grep -q "IP Address:127.0.0.1" ||
	fail "certificate lacks subjectAltName IP:127.0.0.1"
echo "ok - init --tls: certificate for 127.0.0.1, key 0600, config set"

# init's TLS options: an http:// URL or half a pair is refused and leaves
# nothing; a DNS host goes in the SAN; the operator's own files are used
# by absolute path
"$SERVER" init "$T/bad1" --tls --url "http://127.0.0.1:$PORT" >"$T/bad1.log" 2>&1 &&
	fail "init --tls with an http:// URL succeeded"
grep -q "https://" "$T/bad1.log" || fail "no https hint: $(cat "$T/bad1.log")"
"$SERVER" init "$T/bad2" --tls-cert "$P/tls.crt" >"$T/bad2.log" 2>&1 &&
	fail "init --tls-cert without --tls-key succeeded"
[ ! -e "$T/bad1" ] && [ ! -e "$T/bad2" ] || fail "a refused init left a directory"
"$SERVER" init "$T/dns" --tls --url "https://localhost:$PORT" >"$T/dns.log" 2>&1 ||
	fail "init --tls (DNS): $(cat "$T/dns.log")"
openssl x509 -in "$T/dns/tls.crt" -noout -ext subjectAltName 2>/dev/null | grep -q "DNS:localhost" ||
	fail "certificate lacks subjectAltName DNS:localhost"
cp "$P/tls.crt" "$T/own.crt" && cp "$P/tls.key" "$T/own.key"
(cd "$T" && "$SERVER" init own --tls-cert own.crt --tls-key own.key \
	--url "https://127.0.0.1:$PORT") >"$T/own.log" 2>&1 || fail "init --tls-cert: $(cat "$T/own.log")"
grep -q "^tls_key = \"$T/own.key\"" "$T/own/ctune-server.conf" || fail "own key path not absolute"
[ ! -e "$T/own/tls.key" ] || fail "init made a key although the operator gave one"
echo "ok - init refuses http:// with TLS and half a pair; DNS SAN; own files by absolute path"

corpus_data 1 2 32
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" \
	--eval "$T/eval.bin" --shards 1 --rounds 1 --steps 20 --batch 4 --seq 16 \
	--lr 0.001 --quorum 1 --replicas 1 >"$T/submit.log" 2>&1 || fail "job submit"
"$SERVER" run "$P" >"$T/server.log" 2>&1 &
SPID=$!
PIDS="$PIDS $SPID"
wait_for 60 "server up on https" curl -sf --cacert "$P/tls.crt" "$URL/api/v1/status"
curl -s "$URL/api/v1/status" >/dev/null 2>&1 && fail "the self-signed certificate verified against the system CAs"
KEY=$("$SERVER" user create "$P" --name alice --email alice@example.org \
	--password alice-password 2>/dev/null | sed -n 's/.*account key //p')
[ -n "$KEY" ] || fail "user create"

# without --pin-self-signed: refused, nothing written
"$CTUNE" --dir "$T/nopin" attach "$URL" --key "$KEY" >"$T/nopin.out" 2>"$T/nopin.err" &&
	fail "attach to a self-signed server without a pin succeeded"
grep -q "TLS" "$T/nopin.err" || fail "no TLS in '$(cat "$T/nopin.err")'"
[ ! -e "$T/nopin" ] || fail "a refused attach wrote $T/nopin"
echo "ok - plain attach refused: $(cat "$T/nopin.err")"

# the pin is the SHA-256 of the certificate's public key
WANT="sha256//$(openssl x509 -in "$P/tls.crt" -noout -pubkey | openssl pkey -pubin -outform der |
	openssl dgst -sha256 -binary | base64)"
"$CTUNE" --dir "$T/c1" attach "$URL" --key "$KEY" --pin-self-signed >"$T/attach.out" 2>&1 ||
	fail "attach --pin-self-signed: $(cat "$T/attach.out")"
grep -qF "$WANT" "$T/attach.out" || fail "attach did not show the pin $WANT: $(cat "$T/attach.out")"
grep -qF "$WANT" "$T/c1/client_state.xml" || fail "pin not in the client state"
echo "ok - pinned $WANT"
"$CTUNE" --dir "$T/nv" attach "$URL" --key "$KEY" --no-verify --pin-self-signed \
	>"$T/nv.out" 2>&1 || fail "attach --no-verify --pin-self-signed: $(cat "$T/nv.out")"
grep -qF "$WANT" "$T/nv/client_state.xml" || fail "--no-verify did not pin the key"

start_client c1 --always --device cpu --backoff-base 0.5 --checkpoint-seconds 0.3
C1=$CPID
job_done() { "$SERVER" job show "$P" 1 2>/dev/null | head -1 | grep -q ': done'; }
wait_for 240 "the job completes over https" job_done
echo "ok - the client got work over https and the job is done"

# another self-signed key for the same host: refused, saying the key changed
stop "$SPID"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
	-keyout "$P/tls.key" -out "$P/tls.crt" >/dev/null 2>&1 || fail "openssl req"
"$SERVER" run "$P" >>"$T/server.log" 2>&1 &
SPID=$!
PIDS="$PIDS $SPID"
wait_for 60 "server up with the new key" curl -sf --cacert "$P/tls.crt" "$URL/api/v1/status"
mark=$(wc -l <"$T/c1.log")
wait_for 60 "the running client refuses the new key" bash -c \
	"tail -n +$((mark + 1)) '$T/c1.log' | grep -q \"key changed\""
echo "ok - running client: $(tail -n +$((mark + 1)) "$T/c1.log" | grep -m1 'key changed' | cut -c1-200)"
stop "$C1"
# a fresh state directory pins the new key (the operator announced it)
"$CTUNE" --dir "$T/c2" attach "$URL" --key "$KEY" --pin-self-signed >"$T/attach2.out" 2>&1 ||
	fail "attach to the new key: $(cat "$T/attach2.out")"
grep -qF "$WANT" "$T/c2/client_state.xml" && fail "the new attach pinned the old key"
echo "ok - a new attach pins the new key, not the old one"
