#!/bin/sh
# `ctune-server init` as a new operator meets it: a failed init leaves
# nothing behind (a second init with the cause fixed succeeds), an existing
# non-empty directory keeps exactly what it held, a database that another
# project already uses is refused by name, and a project is never
# initialised twice. Runs the real binary on the embedded database and on a
# private mariadbd with a password account (skips, 77, without mariadbd).
CT_TMP_PREFIX=ctune-init
. "${top_srcdir:-.}/test/server_lib.sh"

listing() { (cd "$1" && ls -A | sort | tr '\n' ' '); }

# -- embedded: a forced failure (DIR/db is a file) in a non-empty directory
mkdir "$T/pre"
echo notes >"$T/pre/notes.txt"
echo x >"$T/pre/db"
"$S" init "$T/pre" >"$T/out" 2>"$T/err"
check "init over a file named db fails" "$?" 1
check "the directory holds what it held" "$(listing "$T/pre")" "db notes.txt "
grep -q "nothing was kept" "$T/err" || fail "the error says nothing was kept: $(cat "$T/err")"
rm "$T/pre/db"
"$S" init "$T/pre" >"$T/out" 2>"$T/err"
check "init again with the cause removed" "$?" 0
grep -q "project created in" "$T/out" || fail "init prints where: $(cat "$T/out")"
"$S" init "$T/pre" >"$T/out" 2>"$T/err"
check "a second init of a project is refused" "$?" 1
grep -q "already a project" "$T/err" || fail "says already a project: $(cat "$T/err")"
"$S" status "$T/pre" >"$T/out" 2>&1
check "the project still opens" "$?" 0
grep -q "database embedded" "$T/out" || fail "status of the kept project: $(cat "$T/out")"

# -- a fresh directory (and its parents) vanish when init fails
"$S" init "$T/new/a/b" --db "mysql://u:p@localhost/nodb?socket=$T/no.sock" >"$T/out" 2>"$T/err"
check "init against a database that is not there fails" "$?" 1
[ -e "$T/new" ] && fail "a failed init left $T/new: $(find "$T/new")"

# -- a private mariadbd with an account that has a password
start_mariadbd
mariadb --no-defaults -S "$T/mdb.sock" -u root -e \
	"CREATE USER ct@localhost IDENTIFIED BY 'right'; GRANT ALL ON *.* TO ct@localhost;" ||
	die "create user"
db="ctune_test?socket=$T/mdb.sock"
"$S" init "$P" --db "mysql://ct:wrong@localhost/$db" >"$T/out" 2>"$T/err"
check "init with a wrong password fails" "$?" 1
grep -q "denied" "$T/err" || fail "the error says access denied: $(cat "$T/err")"
[ -e "$P" ] && fail "a failed init left $P: $(find "$P")"
"$S" init "$P" --db "mysql://ct:right@localhost/$db" >"$T/out" 2>"$T/err"
check "the same init with the right password" "$?" 0
"$S" init "$T/other" --db "mysql://ct:right@localhost/$db" >"$T/out" 2>"$T/err"
check "init on a database that holds a project is refused" "$?" 1
grep -q "database 'ctune_test'.*already holds a crowdtune project" "$T/err" ||
	fail "the error names the database: $(cat "$T/err")"
grep -q -- "--db" "$T/err" || fail "the error says how to choose another: $(cat "$T/err")"
[ -e "$T/other" ] && fail "a refused init left $T/other"
"$S" status "$P" >"$T/out" 2>&1
check "the first project is untouched" "$?" 0
grep -q "database external" "$T/out" || fail "status: $(cat "$T/out")"

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"
