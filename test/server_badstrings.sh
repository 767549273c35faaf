#!/bin/sh
# test/server_badstrings.sh - peer strings that do not fit a column never
# lock a host or an account out, and never reach the database as bytes
# utf8mb4 refuses:
#  - a host whose hostname, os and cpu_model are 254 ASCII bytes + one
#    2-byte character (the column holds 255 bytes' worth; cutting at byte
#    255 split the character, MariaDB refused the row with error 1366 and
#    every RPC answered 503) gets work, and its stored strings are the 254
#    bytes, cut on the character boundary;
#  - a 4-byte character (emoji) straddling the limit is dropped whole;
#    <error_message> of 300 bytes ending in multibyte characters is stored;
#  - the web sign-up answers a clear error (not 500) for a name that is not
#    UTF-8, and accepts one with 4-byte characters.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-badstr
. "$(dirname "$0")/server_lib.sh"
CTUNE="$B/ctune"
CORPUS="$B/bench/ctune-corpus"
for x in "$S" "$CTUNE" "$CORPUS"; do
	[ -x "$x" ] || { echo "skip: $x not built"; exit 77; }
done
command -v xmllint >/dev/null 2>&1 || { echo "skip: no xmllint"; exit 77; }

"$CTUNE" model init --layers 1 --heads 2 --channels 32 --max-seq 32 --vocab 29 --seed 1 \
	--out "$T/base.bin" >/dev/null || die "model init"
"$CORPUS" --lang 1 --tokens 20000 --out "$T/train.bin" >/dev/null || die "corpus"
"$CORPUS" --lang 1 --tokens 4000 --seed 2 --out "$T/eval.bin" >/dev/null || die "corpus"
"$S" init "$P" --listen 127.0.0.1:0 --name "bad strings" >/dev/null || die "init"
key=$("$S" user create "$P" --name alice --email alice@example.org --password password-a |
	sed -n 's/.* account key \([0-9a-f]*\)$/\1/p')
"$S" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" --eval "$T/eval.bin" \
	--shards 4 --rounds 1 --steps 2 --batch 2 --seq 16 --lr 0.001 --replicas 2 --quorum 2 \
	--no-adaptive --name badstr >/dev/null || die "job submit"
start_server http

a254=$(printf '%254s' '' | tr ' ' a)
b253=$(printf '%253s' '' | tr ' ' b)
e=$(printf '\303\251')		# é, 2 bytes
smile=$(printf '\360\237\230\200')	# 😀, 4 bytes
# strhost CPID HOSTNAME OS CPU WANT [EXTRA]: a scheduler RPC with these strings
strhost() {
	sched_rpc "$key" 0 "$1" "$5" "<hostname>$2</hostname><os>$3</os><cpu_model>$4</cpu_model>" \
		"${6:-}"
}

strhost 0123456789abcdef0123456789abcdef "$a254$e" "$a254$e" "$a254$e" 1
check "254 ASCII bytes + 'é' host: RPC answers 200" "$code" 200
check "... and gets work" "$(xp 'count(/scheduler_reply/result)')" 1
hid=$(xp 'string(/scheduler_reply/host_id)')
curl -s -o "$T/host.json" "$URL/api/v1/host/$hid"
os=$(sed -n 's/.*"os":"\([^"]*\)".*/\1/p' "$T/host.json")
check "stored os is cut on the character boundary (254 bytes)" "${#os}" 254
check "stored os is the 254 ASCII bytes" "$os" "$a254"

strhost fedcba9876543210fedcba9876543210 "$b253$smile" "$b253$smile" "x$e$e" 1
check "253 bytes + a 4-byte emoji: RPC answers 200" "$code" 200
check "... and gets work" "$(xp 'count(/scheduler_reply/result)')" 1
hid2=$(xp 'string(/scheduler_reply/host_id)')
curl -s -o "$T/host2.json" "$URL/api/v1/host/$hid2"
check "the emoji that would cross the limit is dropped whole" \
	"$(sed -n 's/.*"os":"\([^"]*\)".*/\1/p' "$T/host2.json")" "$b253"
check "a short multibyte cpu_model is kept" \
	"$(sed -n 's/.*"cpu_model":"\([^"]*\)".*/\1/p' "$T/host2.json")" "x$e$e"

# an error report whose message is 298 ASCII bytes + é: cut, stored, acked
r=$(xp 'string(/scheduler_reply/result[1]/name)')
msg="$(printf '%298s' '' | tr ' ' m)$e"
strhost fedcba9876543210fedcba9876543210 "$b253$smile" "os" "cpu" 0 \
	"<result><name>$r</name><status>error</status><error_code>-5</error_code><error_message>$msg</error_message></result>"
check "error report with a long multibyte message: RPC answers 200" "$code" 200
check "... and it is acked" "$(xp 'count(/scheduler_reply/ack)')" 1
grep -q "1366\|Incorrect string value" "$T/server.log" &&
	fail "the database refused a string (error 1366)"

# web sign-up: a name that is not UTF-8 gets a clear answer, not 500
signup() {	# signup NAME EMAIL -> HTTP code; page in $T/create.html
	curl -s -c "$T/jar" -b "$T/jar" -o "$T/form.html" "$URL/account/create"
	csrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/form.html" | head -1)
	curl -s -c "$T/jar" -b "$T/jar" -o "$T/create.html" -w '%{http_code}' \
		--data "csrf=$csrf&name=$1&email=$2&password=password-x" "$URL/account/create"
}
c=$(signup 'bad%FF%FEname' bad@example.org)
check "sign-up with a name that is not UTF-8 is refused (not 500)" \
	"$([ "$c" != 500 ] && [ "$c" != 200 ] && echo refused || echo "$c")" refused
check "... and says why" "$(grep -c 'not UTF-8' "$T/create.html")" 1
c=$(signup 'smile%F0%9F%98%80' smile@example.org)
check "sign-up with a 4-byte character in the name works" "$c" 200
grep -q "web: .*Incorrect string\|1366" "$T/server.log" && fail "database refused a web string"
exit $((fails > 0))
