#!/bin/sh
# test/server_ratelimit.sh - web sign-in, sign-up and the account RPC are
# rate-limited per address and per account, exactly, before any password
# is hashed (server/rpc/ratelimit.c); limits.loopback = 1 makes 127.x.y.z
# addresses count as the outside world's:
#  - 25 password guesses at one account, each from another address: 5
#    are answered ("Wrong e-mail address or password"), the other 20 get
#    the 429 page "Too many sign-in attempts", and the right password is
#    refused too until the bucket refills;
#  - 15 sign-ups from one address: 3 accounts made, 12 refused with 429;
#  - the account RPC: 10 lookups from one address, then 429 with the
#    wait; a request from another address does not reset that counter
#    (the old 256-slot table's flaw), and is answered itself;
#  - every refusal is logged, and no refused attempt reached PBKDF2 (the
#    log's "account lookup" lines count only the answered ones).
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-rl
. "$(dirname "$0")/server_lib.sh"
[ -x "$S" ] || { echo "skip: $S not built"; exit 77; }

"$S" init "$P" --listen 127.0.0.1:0 --name "rate limits" >/dev/null || die "init"
printf '\n[limits]\nloopback = 1\n' >>"$P/ctune-server.conf"
"$S" user create "$P" --name alice --email alice@example.org --password right-password \
	>/dev/null || die "user create"
start_server http

# form IP PATH FIELDS: GET the form, POST it with its CSRF token from IP;
# prints the HTTP code, page in $T/page.html
form() {
	curl -s --interface "$1" -c "$T/jar.$1" -b "$T/jar.$1" -o "$T/form.html" "$URL$2"
	csrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/form.html" | head -1)
	curl -s --interface "$1" -c "$T/jar.$1" -b "$T/jar.$1" -o "$T/page.html" \
		-w '%{http_code}' --data "csrf=$csrf&$3" "$URL$2"
}

# ---- 25 guesses at alice's password, from 25 addresses ------------------
answered=0 limited=0 pages=0
for i in $(seq 1 25); do
	c=$(form "127.0.20.$i" /account/login "email=alice@example.org&password=guess-$i")
	case $c in
	403) answered=$((answered + 1)) ;;
	429) limited=$((limited + 1))
	     grep -q 'id="rate-limited"' "$T/page.html" && pages=$((pages + 1)) ;;
	*) fail "guess $i: HTTP $c" ;;
	esac
done
check "5 of 25 guesses at one account are answered" "$answered" 5
check "20 are refused with 429" "$limited" 20
check "... each with the page that says to wait" "$pages" 20
check "the right password is refused too while the account is limited" \
	"$(form 127.0.21.1 /account/login 'email=alice@example.org&password=right-password')" 429
check "the 429 page says when to try again" \
	"$(grep -c 'try again in [0-9]* minute' "$T/page.html")" 1

# ---- 15 sign-ups from one address -----------------------------------------
made=0 limited=0
for i in $(seq 1 15); do
	c=$(form 127.0.22.1 /account/create "name=u$i&email=u$i@example.org&password=password-$i")
	case $c in
	200) made=$((made + 1)) ;;
	429) limited=$((limited + 1)) ;;
	*) fail "sign-up $i: HTTP $c" ;;
	esac
done
check "3 of 15 sign-ups from one address make an account" "$made" 3
check "12 are refused with 429" "$limited" 12

# ---- the account RPC: exact per address ------------------------------------
arpc() {	# arpc IP EMAIL -> HTTP code, reply in $T/arpc.xml
	curl -s --interface "$1" -o "$T/arpc.xml" -w '%{http_code}' --data-binary \
		"<account_request><action>lookup</action><email>$2</email><password>wrong-password</password></account_request>" \
		"$URL/rpc/account"
}
ok10=0
for i in $(seq 1 10); do
	[ "$(arpc 127.0.30.1 "x$i@example.org")" = 200 ] && ok10=$((ok10 + 1))
done
check "10 account lookups from one address are answered" "$ok10" 10
check "the 11th gets 429" "$(arpc 127.0.30.1 x11@example.org)" 429
check "... saying how long to wait" "$(grep -c 'try again in [0-9]* s' "$T/arpc.xml")" 1
for i in $(seq 1 20); do arpc "127.0.31.$i" "y$i@example.org" >/dev/null; done
check "20 other addresses' requests did not reset the first one's counter" \
	"$(arpc 127.0.30.1 x12@example.org)" 429
check "another address is answered" "$(arpc 127.0.32.1 z@example.org)" 200

# ---- the refused never reached PBKDF2 ---------------------------------------
check "the refusals are logged" "$(grep -c 'rate-limited' "$T/server.log")" \
	$((20 + 1 + 12 + 2))
check "only the answered lookups ran (RPC: 10 + 20 + 1)" \
	"$(grep -c 'account lookup .* from 127' "$T/server.log")" 31
exit $((fails > 0))
