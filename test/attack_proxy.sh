#!/bin/sh
# test/attack_proxy.sh - the real address behind a reverse proxy (issue
# 27), with http.trusted_proxies = 127.0.0.1 (the "proxy": curl from
# 127.0.0.1 with an X-Forwarded-For header as nginx writes it):
#  - from the proxy, the server sees the rightmost untrusted hop (the
#    scheduler's log line names it; a spoofed left entry is not used);
#  - from an untrusted peer (127.0.0.5) the header is ignored: the peer's
#    own address is seen, and the header's address appears nowhere;
#  - a Forwarded header is not read when the operator named X-Forwarded-For;
#  - the account rate limit counts the forwarded address: 10 lookups from
#    one client behind the proxy, then 429, while another client behind
#    the same proxy is answered; from an untrusted peer a changing header
#    does not escape the limit;
#  - http.max_conns_per_ip counts requests of a client behind the proxy:
#    with 2 of its requests held open (headers sent, body not), its third
#    gets 503 while another client's request is answered.
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-proxy
. "$(dirname "$0")/server_lib.sh"
[ -x "$S" ] || { echo "skip: $S not built"; exit 77; }
command -v bash >/dev/null 2>&1 || { echo "skip: no bash for /dev/tcp"; exit 77; }

"$S" init "$P" --listen 127.0.0.1:0 --name "behind a proxy" >/dev/null || die "init"
sed -i 's/^\[http\]$/[http]\ntrusted_proxies = "127.0.0.1"\nmax_conns_per_ip = 2/' \
	"$P/ctune-server.conf"
printf '\n[limits]\nloopback = 1\n' >>"$P/ctune-server.conf"
start_server http
PORT=${URL##*:}

badkey() {	# badkey FROM [CURL-ARGS...]: a scheduler RPC with an unknown key
	from=$1
	shift
	sched_rpc 0123456789abcdef0123456789abcdef 0 "$(printf 'b%.0s' $(seq 32))" 0 \
		"<hostname>p</hostname>" "" "" --interface "$from" "$@"
}
seen() { grep -c "sched: $1: refused" "$T/server.log"; }

badkey 127.0.0.1 -H 'X-Forwarded-For: 6.6.6.6, 198.51.100.7'
check "behind the proxy: the client's address is seen" "$(seen 198.51.100.7)" 1
check "... not the spoofed left entry" "$(grep -c '6\.6\.6\.6' "$T/server.log")" 0
badkey 127.0.0.1 -H 'X-Forwarded-For: 198.51.100.9' -H 'X-Forwarded-For: 198.51.100.10'
check "two header lines: the last hop of the last line" "$(seen 198.51.100.10)" 1
badkey 127.0.0.5 -H 'X-Forwarded-For: 198.51.100.8'
check "from an untrusted peer: its own address" "$(seen 127.0.0.5)" 1
check "... and the header's nowhere" "$(grep -c '198\.51\.100\.8' "$T/server.log")" 0
badkey 127.0.0.1 -H 'Forwarded: for=203.0.113.1'
check "a Forwarded header is not read in X-Forwarded-For mode" "$(seen 127.0.0.1)" 1
badkey 127.0.0.1 -H 'X-Forwarded-For: garbage, [2001:db8::5]:443'
check "an IPv6 hop with a port" "$(seen 2001:db8::5)" 1

# ---- rate limits key on the resolved address ----------------------------------
arpc() {	# arpc FROM XFF WHO -> HTTP code (WHO@example.org: per-account limits too)
	curl -s --interface "$1" -H "X-Forwarded-For: $2" -o "$T/arpc.xml" -w '%{http_code}' \
		--data-binary "<account_request><action>lookup</action><email>$3@example.org</email><password>wrong-password</password></account_request>" \
		"$URL/rpc/account"
}
ok10=0
for i in $(seq 1 10); do [ "$(arpc 127.0.0.1 198.51.100.20 "a$i")" = 200 ] && ok10=$((ok10 + 1)); done
check "10 lookups of one client behind the proxy are answered" "$ok10" 10
check "its 11th gets 429" "$(arpc 127.0.0.1 198.51.100.20 a11)" 429
check "another client behind the same proxy is answered" "$(arpc 127.0.0.1 198.51.100.21 b1)" 200
for i in $(seq 1 10); do arpc 127.0.0.6 "198.51.100.$((100 + i))" "c$i" >/dev/null; done
check "an untrusted peer changing the header is still limited" \
	"$(arpc 127.0.0.6 198.51.100.99 c11)" 429

# ---- per-address connection limit on the forwarded address ---------------------
hold() {	# hold XFF: a request whose body never comes, for 20 s
	bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT || exit 1
		printf 'POST /rpc/scheduler HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: $1\r\nContent-Length: 100\r\n\r\n' >&3
		exec sleep 20" &
}
hold 198.51.100.30
H1=$!
hold 198.51.100.30
H2=$!
sleep 1
check "a third request of a client holding 2 gets 503" \
	"$(curl -s --interface 127.0.0.1 -H 'X-Forwarded-For: 198.51.100.30' -o "$T/held.xml" \
	   -w '%{http_code}' --data-binary x "$URL/rpc/scheduler")" 503
check "... saying why" "$(grep -c 'too many requests from your address' "$T/held.xml")" 1
check "another client behind the proxy is answered meanwhile" \
	"$(arpc 127.0.0.1 198.51.100.31 d1)" 200
kill "$H1" "$H2" 2>/dev/null
wait "$H1" "$H2" 2>/dev/null
exit $((fails > 0))
