#!/bin/sh
# test/server_schema_kill9.sh - every table comes from db/schema.sql and
# db/migrations/ when the project is made, none at run time, so killing
# the server with SIGKILL during its first run loses nothing: the project
# starts again, still has its sign-in sessions and serves.
#  - a new project's first `run` (embedded database) is killed with
#    SIGKILL right after its first web sign-in wrote a web_session row,
#    at three moments, and started again each time;
#  - after each restart the schema is at the program's latest version, the
#    pages answer, a sign-in works, and the session made before the kill
#    (its cookie) still signs the user in, or its row was not committed.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-kill9
. "$(dirname "$0")/server_lib.sh"
[ -x "$S" ] || { echo "skip: $S not built"; exit 77; }
SRC=${top_srcdir:-$(dirname "$0")/..}

# (but the migration lock's, which must exist before the schema does)
check "no CREATE TABLE in the server's C sources (all in db/)" \
	"$(grep -l 'CREATE TABLE' "$SRC"/server/*.c | grep -v '/migrate_lock\.c$' | wc -l)" 0

# login JAR EMAIL PASSWORD -> HTTP code of the sign-in POST; cookies in JAR
login() {
	curl -s -c "$1" -b "$1" -o "$T/form.html" "$URL/account/login" || return 1
	csrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/form.html" | head -1)
	curl -s -c "$1" -b "$1" -o "$T/login.html" -w '%{http_code}' \
		--data-urlencode "csrf=$csrf" --data-urlencode "email=$2" \
		--data-urlencode "password=$3" "$URL/account/login"
}
signed_in() {	# signed_in JAR -> "yes" when /account shows the user's page
	curl -s -b "$1" "$URL/account" | grep -q 'Sign out' && echo yes || echo no
}

latest=$(ls "$SRC"/db/migrations/*.sql | sed 's|.*/0*\([0-9]*\)-.*|\1|' | sort -n | tail -1)
for delay in 0 0.2 1; do
	rm -rf "$P"
	"$S" init "$P" --listen 127.0.0.1:0 --name "kill9 test" >/dev/null || die "init"
	"$S" user create "$P" --name alice --email alice@example.org \
		--password password-alice >/dev/null || die "user create"
	start_server all
	c=$(login "$T/jar" alice@example.org password-alice)
	check "[$delay] first sign-in answers" "$c" 200
	sleep "$delay"
	kill -9 "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; SRV_PID=
	start_server all
	check "[$delay] restarted after SIGKILL: home page" \
		"$(curl -s -o /dev/null -w '%{http_code}' "$URL/")" 200
	check "[$delay] schema at the latest version" \
		"$("$S" status "$P" 2>/dev/null | sed -n 's/^database .*schema \([0-9]*\)$/\1/p')" \
		"$latest"
	check "[$delay] sign-in works after the restart" \
		"$(login "$T/jar2" alice@example.org password-alice)" 200
	check "[$delay] the new session signs in" "$(signed_in "$T/jar2")" yes
	stop_server
	grep -q "Data structure corruption" "$P/log/mariadb.log" &&
		fail "[$delay] InnoDB reported corruption"
done
exit $((fails > 0))
