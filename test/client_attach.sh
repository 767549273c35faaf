#!/bin/bash
# `ctune attach` checks URL, TLS and key (or makes the account) with one RPC
# to a real ctune-server before it writes anything. Each wrong input fails
# with exit status != 0, ONE line on stderr naming the problem, and no state
# directory: an unreachable URL, a server that is not crowdtune (a wrong
# path on a real HTTP server), an
# unknown key, a password that is too short (the line says how long it must
# be). The server behind a self-signed TLS front is refused until --ca-file
# (or CURL_CA_BUNDLE) names its certificate. The right key and a new account
# attach.
. "$(dirname "$0")/client_lib.sh"
SERVER="$top_builddir/ctune-server"
need_built "$SERVER"

server_project
"$SERVER" run "$P" >"$T/server.log" 2>&1 &
SPID=$!
PIDS="$PIDS $SPID"
wait_for 60 "server up" curl -sf "$URL/api/v1/status"
KEY=$("$SERVER" user create "$P" --name alice --email alice@example.org \
	--password alice-password 2>/dev/null | sed -n 's/.*account key //p')
[ -n "$KEY" ] || fail "user create"

# refused NAME PATTERN ARGS...: attach fails, one line matching PATTERN,
# nothing written
refused() {
	local name=$1 pat=$2 rc=0
	shift 2
	"$CTUNE" --dir "$T/$name" attach "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
	[ "$rc" -ne 0 ] || fail "$name: attach succeeded"
	[ "$(wc -l <"$T/$name.err")" -eq 1 ] || fail "$name: not one line: $(cat "$T/$name.err")"
	grep -Eq "$pat" "$T/$name.err" || fail "$name: message '$(cat "$T/$name.err")' lacks /$pat/"
	[ ! -e "$T/$name" ] || fail "$name: wrote $(ls -A "$T/$name")"
	echo "ok - $name: $(cat "$T/$name.err")"
}

start_fake probe2
DEAD=$(cat "$T/probe2/port")
stop "$FAKE_PID"
refused unreachable "cannot reach http://127.0.0.1:$DEAD" "http://127.0.0.1:$DEAD" --key "$KEY"
refused notcrowdtune "is not a crowdtune server" "$URL/no/such/place" --key "$KEY"
refused unknownkey "does not know this account key" "$URL" --key 0123456789abcdef0123456789abcdef
refused malformedkey "this is not an account key: malformed account key \(want 32 hex digits\)" \
	"$URL" --key 0123456789abcdefXYZ
refused shortpw "password.*8 to 256 bytes.*yours has 5" "$URL" --name bob \
	--email bob@example.org --password short
refused badlookup "no account with that email and password" "$URL" \
	--email alice@example.org --password wrong-password

# TLS: a TLS front (socat) to the real server with a self-signed
# certificate: refused until --ca-file or CURL_CA_BUNDLE names it
if command -v socat >/dev/null 2>&1; then
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
		-addext "subjectAltName=IP:127.0.0.1" -keyout "$T/tls.key" -out "$T/tls.crt" \
		>/dev/null 2>&1 || fail "openssl req"
	start_fake probe3
	TPORT=$(cat "$T/probe3/port")
	stop "$FAKE_PID"
	socat "OPENSSL-LISTEN:$TPORT,bind=127.0.0.1,reuseaddr,fork,verify=0,cert=$T/tls.crt,key=$T/tls.key" \
		"TCP:127.0.0.1:$PORT" >"$T/socat.log" 2>&1 &
	PIDS="$PIDS $!"
	TURL="https://127.0.0.1:$TPORT"
	wait_for 20 "TLS front" curl -sf --cacert "$T/tls.crt" "$TURL/api/v1/status"
	refused tlsbad "TLS with $TURL failed.*--ca-file" "$TURL" --key "$KEY"
	"$CTUNE" --dir "$T/tls" attach "$TURL" --key "$KEY" --ca-file "$T/tls.crt" >"$T/tls.out" 2>&1 ||
		fail "TLS with --ca-file: $(cat "$T/tls.out")"
	grep -q "<ca_file>$T/tls.crt</ca_file>" "$T/tls/client_state.xml" || fail "ca_file not stored"
	CURL_CA_BUNDLE="$T/tls.crt" "$CTUNE" --dir "$T/tlsenv" attach "$TURL" --key "$KEY" \
		>"$T/tlsenv.out" 2>&1 || fail "TLS with CURL_CA_BUNDLE: $(cat "$T/tlsenv.out")"
	# the daemon talks TLS to the project with the stored CA file
	start_client tls --always --device cpu
	wait_for 60 "the daemon's scheduler RPC over TLS" grep -q "$TURL: scheduler RPC ok" "$T/tls.log"
	stop "$CPID"
	echo "ok - TLS: refused without the CA, attached with --ca-file and with CURL_CA_BUNDLE; the daemon uses the stored CA"
else
	echo "# no socat: TLS part skipped"
fi

# the right key: verified, then written; the daemon's RPC uses the same host
"$CTUNE" --dir "$T/good" attach "$URL" --key "$KEY" >"$T/good.out" 2>&1 || fail "good key: $(cat "$T/good.out")"
grep -q "verified: $URL knows this key (user alice)" "$T/good.out" || fail "no verification line"
grep -q "<key>$KEY</key>" "$T/good/client_state.xml" || fail "key not written"
"$CTUNE" --dir "$T/good" attach "$URL" --key "$KEY" >/dev/null 2>"$T/twice.err" && fail "attached twice"
grep -q "already attached" "$T/twice.err" || fail "second attach: $(cat "$T/twice.err")"
# a new account: one RPC, attached
"$CTUNE" --dir "$T/new" attach "$URL" --name carol --email carol@example.org \
	--password carol-password >"$T/new.out" 2>&1 || fail "new account: $(cat "$T/new.out")"
grep -q "created account 'carol'" "$T/new.out" || fail "no account line"
grep -q "<key>[0-9a-f]\{32\}</key>" "$T/new/client_state.xml" || fail "new key not written"
echo "PASS: four wrong inputs refused in one line with nothing written; TLS CA honoured; good key and new account attach"
