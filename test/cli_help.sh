#!/bin/sh
# Every command and subcommand of ctune and ctune-server, tried as a new
# user would: `PROG WORDS --help` and `PROG help WORDS` print the usage on
# stdout and exit 0; `PROG WORDS --bogus-opt` exits 2 naming the option;
# a group with an unknown subcommand exits 2 naming it. The list of
# commands comes from the programs' own help ("commands:" sections), so a
# new command is covered without touching this test.
CT_TMP_PREFIX=ctune-help
. "${top_srcdir:-.}/test/server_lib.sh"

C="$B/ctune"
"$S" init "$P" >"$T/init.out" 2>&1 || die "init: $(cat "$T/init.out")"
ncmds=0

# The names listed under "commands:" in file $1.
commands_in() {
	sed -n '/^commands:$/,/^$/{/^  [a-z]/s/^  \([a-z][a-z0-9-]*\).*/\1/p}' "$1"
}

# try PROG WORDS...: the checks for one command, then queue its children.
try() {
	prog=$1
	shift
	name=$(basename "$prog")
	"$prog" "$@" --help >"$T/h.out" 2>"$T/h.err"
	check "$name $* --help exits 0" "$?" 0
	head -1 "$T/h.out" | grep -q "^usage: $name $*" ||
		fail "$name $* --help: no usage line: $(head -2 "$T/h.out")"
	"$prog" help "$@" >"$T/h2.out" 2>&1
	cmp -s "$T/h.out" "$T/h2.out" || fail "$name help $* differs from --help"
	ncmds=$((ncmds + 1))
	dir=
	# a project command's first argument is DIR: give it one, so that
	# the option is what is wrong
	head -1 "$T/h.out" | grep -q "^usage: $name $* DIR" && dir=$P
	"$prog" "$@" $dir --bogus-opt >"$T/b.out" 2>"$T/b.err"
	check "$name $* --bogus-opt exits 2" "$?" 2
	grep -q -- "--bogus-opt" "$T/b.err" ||
		fail "$name $* --bogus-opt: the error does not name it: $(cat "$T/b.err")"
	if grep -q "^commands:$" "$T/h.out"; then
		"$prog" "$@" no-such-cmd >"$T/u.out" 2>"$T/u.err"
		check "$name $* no-such-cmd exits 2" "$?" 2
		grep -q "no-such-cmd" "$T/u.err" || fail "$name $* no-such-cmd: $(cat "$T/u.err")"
		"$prog" "$@" >"$T/g.out" 2>"$T/g.err"
		check "$name $* (no subcommand) exits 2" "$?" 2
		grep -q "^usage: $name $*" "$T/g.err" || fail "$name $*: no usage on stderr"
		for sub in $(commands_in "$T/h.out"); do
			echo "$prog $* $sub" >>"$T/queue"
		done
	fi
}

for prog in "$C" "$S"; do
	"$prog" --help >"$T/top.out" 2>&1
	check "$(basename "$prog") --help exits 0" "$?" 0
	[ -n "$(commands_in "$T/top.out")" ] || fail "$(basename "$prog") --help lists no commands"
	for cmd in $(commands_in "$T/top.out"); do
		echo "$prog $cmd" >>"$T/queue"
	done
	"$prog" no-such-cmd >"$T/u.out" 2>"$T/u.err"
	check "$(basename "$prog") no-such-cmd exits 2" "$?" 2
	grep -q "no-such-cmd" "$T/u.err" || fail "$(basename "$prog") no-such-cmd: $(cat "$T/u.err")"
done
i=1
while [ "$i" -le "$(wc -l <"$T/queue")" ]; do
	# shellcheck disable=SC2046 # words are single tokens
	try $(sed -n "${i}p" "$T/queue")
	i=$((i + 1))
done
# too few arguments, a required option left out, an option without its value
"$S" job show "$P" >"$T/o" 2>"$T/e"
check "job show without ID exits 2" "$?" 2
grep -q "missing argument" "$T/e" || fail "job show without ID: $(cat "$T/e")"
"$C" model merge a.bin --out >"$T/o" 2>"$T/e"
check "model merge --out without a value exits 2" "$?" 2
grep -q "'--out' needs a value" "$T/e" || fail "merge --out: $(cat "$T/e")"
"$S" job export "$P" 1 >"$T/o" 2>"$T/e"
check "job export without --out exits 2" "$?" 2
grep -q "required option '--out' is missing" "$T/e" || fail "export without --out: $(cat "$T/e")"
"$C" tokens encode --out x.bin in.txt >"$T/o" 2>"$T/e"
check "tokens encode without --tokenizer exits 2" "$?" 2
grep -q "'--tokenizer' is missing" "$T/e" || fail "encode without --tokenizer: $(cat "$T/e")"
"$S" status "$P" extra >"$T/o" 2>"$T/e"
check "status with an extra argument exits 2" "$?" 2
grep -q "unexpected argument 'extra'" "$T/e" || fail "status extra: $(cat "$T/e")"
# job submit judges every option and value before it opens the project:
# a DIR that is no project shows that nothing was opened
for bad in "--shards abc|--shards: 'abc' is not a number" \
	   "--aggregate foo|--aggregate: 'foo'" "--tok bytes|spell the text options out" \
	   "--probe-tokens 99999999|--probe-tokens: '99999999' is not a number in 0..16777216" \
	   "--bogus-opt|unknown option '--bogus-opt'" "stray|unexpected argument 'stray'"; do
	# shellcheck disable=SC2086 # the options are words
	"$S" job submit "$T/no-project" ${bad%%|*} >"$T/o" 2>"$T/e"
	check "job submit ${bad%%|*} exits 2" "$?" 2
	grep -q -- "${bad#*|}" "$T/e" || fail "job submit ${bad%%|*}: $(cat "$T/e")"
done
"$S" job submit "$T/no-project" --train-text a b --eval-fraction 0.1 >"$T/o" 2>"$T/e"
check "job submit with two text files reaches the project" "$?" 1
grep -q "no-project" "$T/e" || fail "job submit --train-text a b: $(cat "$T/e")"

echo "$ncmds commands tried"
[ "$ncmds" -ge 30 ] || fail "only $ncmds commands found in the help"
[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"
