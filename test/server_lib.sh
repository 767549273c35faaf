# test/server_lib.sh - shell helpers of the ctune-server integration tests
# (test/server_flow.sh, test/server_crafted.sh), sourced by them: a private
# temp dir cleaned up on exit, check/fail reporting, a private mariadbd on a
# socket, starting and stopping `ctune-server run` by its recorded PID, and
# the protocol's scheduler RPC, upload and report.
#
# Before sourcing, a test may set CT_TMP_PREFIX (temp dir name). After it:
# $S the server binary, $T the temp dir, $P the project dir, $fails.
# Only what this file started is killed (by PID), and only $T is removed.
set -u

B=${top_builddir:-.}
S="$B/ctune-server"
T=$(mktemp -d "${TMPDIR:-/tmp}/${CT_TMP_PREFIX:-ctune-flow}-XXXXXX")
P="$T/proj"
SRV_PID=
MDB_PID=
URL=
fails=0

cleanup() {
	st=$?
	[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null && wait "$SRV_PID" 2>/dev/null
	[ -n "$MDB_PID" ] && kill "$MDB_PID" 2>/dev/null && wait "$MDB_PID" 2>/dev/null
	# CT_KEEP_TMP=1: a failed test leaves $T (its logs, replies,
	# database); CT_KEEP_TMP=all: every test does
	if { [ "$st" != 0 ] && [ -n "${CT_KEEP_TMP:-}" ]; } || [ "${CT_KEEP_TMP:-}" = all ]; then
		echo "# kept $T" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT INT TERM
# die inside $(...) ends that subshell only; it signals the test itself
trap 'exit 1' USR1

ok() { echo "ok - $1"; }
fail() { echo "FAIL - $1"; fails=$((fails + 1)); }
check() {	# check DESCRIPTION GOT WANT
	if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: got '$2', want '$3'"; fi
}
# die MESSAGE: the test ends, failed, with MESSAGE and the server log's
# tail (on stderr, so that a die inside $(...) is seen too, and the test
# itself ends: the subshell's parent is told by SIGUSR1)
die() {
	{ echo "FATAL - $*"; [ -f "$T/server.log" ] && tail -20 "$T/server.log"; } >&2
	[ "$(sh -c 'echo $PPID')" = "$$" ] || kill -USR1 $$
	exit 1
}

# start_mariadbd: a private mariadbd on $T/mdb.sock with database ctune_test;
# sets DBOPT (the --db option for `ctune-server init`). Exits 77 (skip)
# when there is no mariadbd. MDB_OPTS: more mariadbd options (a benchmark's
# server settings; word-split).
start_mariadbd() {
	command -v mariadbd >/dev/null 2>&1 || command -v /usr/sbin/mariadbd >/dev/null 2>&1 ||
		{ echo "skip: no mariadbd"; exit 77; }
	MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
	user_opt=
	[ "$(id -u)" = 0 ] && user_opt=--user=root
	mariadb-install-db --no-defaults --datadir="$T/mdb" $user_opt \
		--auth-root-authentication-method=normal >"$T/mdb-install.log" 2>&1 ||
		die "mariadb-install-db failed"
	"$MARIADBD" --no-defaults --datadir="$T/mdb" --socket="$T/mdb.sock" --skip-networking \
		--pid-file="$T/mdb.pid" --log-error="$T/mdb.log" $user_opt ${MDB_OPTS:-} &
	MDB_PID=$!
	for i in $(seq 1 100); do [ -S "$T/mdb.sock" ] && break; sleep 0.1; done
	[ -S "$T/mdb.sock" ] || die "mariadbd did not start"
	mariadb --no-defaults -S "$T/mdb.sock" -u root -e "CREATE DATABASE ctune_test" ||
		die "create database"
	DBOPT="--db=mysql://root@localhost/ctune_test?socket=$T/mdb.sock"
}

# start_server [ROLES]: `ctune-server run $P` (default roles: http only) in
# the background, logging to $T/server.log; sets SRV_PID and URL.
start_server() {
	rm -f "$P/server.url"
	"$S" run "$P" --roles "${1:-http}" >>"$T/server.log" 2>&1 &
	SRV_PID=$!
	for i in $(seq 1 100); do [ -s "$P/server.url" ] && break; sleep 0.1; done
	[ -s "$P/server.url" ] || die "server did not start"
	URL=$(cat "$P/server.url")
}
stop_server() {
	kill "$SRV_PID"; wait "$SRV_PID"; SRV_PID=
}

# sched_rpc KEY HOSTID CPID WANT HOST-XML [EXTRA-XML [WORK-XML [CURL-ARGS...]]]
# -> reply in $T/reply.xml, status in $code. HOST-XML opens the <host>
# element (before its ncpus, ram and cpu device), WORK-XML ends <work_req>.
sched_rpc() {
	cat >"$T/req.xml" <<EOR
<scheduler_request>
<authenticator>$1</authenticator><host_id>$2</host_id><host_cpid>$3</host_cpid>
<host>$5<ncpus>2</ncpus><ram_bytes>1000</ram_bytes>
<device><name>cpu</name><vendor>x</vendor><type>cpu</type><conforming>1</conforming></device></host>
${6:-}
<work_req><want_results>$4</want_results>${7:-}</work_req>
</scheduler_request>
EOR
	shift 4; shift $(($# < 3 ? $# : 3))
	code=$(curl -s "$@" -o "$T/reply.xml" -w '%{http_code}' --data-binary @"$T/req.xml" \
		"$URL/rpc/scheduler")
}
# rpc KEY HOSTID CPID WANT [EXTRA-XML] -> reply in $T/reply.xml, status in $code
rpc() { sched_rpc "$1" "$2" "$3" "$4" "<hostname>h-$3</hostname><os>Linux</os>" "${5:-}"; }
# users_json: the users' list (/api/v1/users) into $T/users.json;
# credit_of NAME: NAME's total credit there (empty when NAME is not listed)
users_json() { curl -sf -o "$T/users.json" "$URL/api/v1/users"; }
credit_of() { tr '{' '\n' <"$T/users.json" |
	sed -n "s/.*\"name\":\"$1\".*\"total_credit\":\([0-9.eE+-]*\).*/\1/p"; }
xp() { xmllint --xpath "$1" "$T/reply.xml" 2>/dev/null; }
# credits_of A B TEST: the users' list has credit for A and B and awk's
# TEST on them (a, b) holds, e.g. 'a > 0 && a == b'
credits_of() {
	users_json || return 1
	c1=$(credit_of "$1"); c2=$(credit_of "$2")
	[ -n "$c1" ] && [ -n "$c2" ] && awk -v a="$c1" -v b="$c2" "BEGIN { exit !($3) }"
}
# check_no_credit USER...: each USER is listed with no credit
check_no_credit() {
	for u in "$@"; do
		c=$(credit_of "$u")
		check "$u is listed with no credit" \
			"$(awk -v c="$c" 'BEGIN { print c == "" ? "not listed" : c == 0 ? "none" : c }')" none
	done
}

# hmac_hex KEYOPT: the hex HMAC-SHA256 of stdin (KEYOPT: hexkey:H or key:S)
hmac_hex() { openssl dgst -sha256 -mac HMAC -macopt "$1" | awk '{print $NF}'; }
# host_secret HOSTID: the host's upload secret, derived from the project's
# secret as the server does (doc/protocol.md); scripted hosts use it
host_secret() {
	printf 'ctune-host-secret\n%s' "$1" |
		hmac_hex "hexkey:$(od -An -v -tx1 "$P/secret" | tr -d ' \n')"
}
# upload_mac RESULT TOKEN FILE [SECRET]: the X-Upload-MAC of FILE for
# RESULT, under SECRET (default: that of the token's host)
upload_mac() {
	_sec=${4:-$(host_secret "$(echo "$2" | cut -d. -f2)")}
	printf 'ctune-upload-mac\n%s\n%s' "$1" "$(sha256sum <"$3" | cut -d' ' -f1)" |
		hmac_hex "key:$_sec"
}
up() {	# up RESULT TOKEN FILE [extra curl args] -> HTTP code (with its host's MAC)
	f=$3; r=$1; t=$2; shift 3
	curl -s -o "$T/up.xml" -w '%{http_code}' -H "X-Upload-Token: $t" \
		-H "X-Upload-MAC: $(upload_mac "$r" "$t" "$f")" "$@" \
		--data-binary @"$f" "$URL/upload/$r"
}

report() {	# report NAME SHA SIZE -> the <result> element of a success report
	echo "<result><name>$1</name><status>success</status><sha256>$2</sha256><size>$3</size><elapsed_s>1.5</elapsed_s><final_loss>3.25</final_loss><conforming>1</conforming></result>"
}

wait_for() {	# wait_for SECONDS DESCRIPTION COMMAND...: poll until COMMAND succeeds
	secs=$1; what=$2; shift 2
	i=0
	while ! "$@"; do
		i=$((i + 1))
		[ "$i" -ge $((secs * 5)) ] && { fail "timed out: $what"; return 1; }
		sleep 0.2
	done
	ok "$what"
}

# ---- scripted volunteers that compute with test/craft_result ---------------
# craft_tools: set CRAFT, CTUNE, CORPUS; skip (77) when they or xmllint are
# missing; make $T/cache and $T/work.
craft_tools() {
	CRAFT="$B/test/craft_result"
	CTUNE="$B/ctune"
	CORPUS="$B/bench/ctune-corpus"
	for x in "$S" "$CRAFT" "$CTUNE" "$CORPUS"; do
		[ -x "$x" ] || { echo "skip: $x not built"; exit 77; }
	done
	command -v xmllint >/dev/null 2>&1 || { echo "skip: no xmllint"; exit 77; }
	mkdir -p "$T/cache" "$T/work"
}
# make_data: a tiny model and token files in $T (after craft_tools)
make_data() {
	"$CTUNE" model init --layers 1 --heads 2 --channels 32 --max-seq 32 --vocab 29 \
		--seed 1 --out "$T/base.bin" >/dev/null || die "model init"
	"$CORPUS" --lang 1 --tokens 20000 --out "$T/train.bin" >/dev/null || die "corpus"
	"$CORPUS" --lang 1 --tokens 4000 --seed 2 --out "$T/eval.bin" >/dev/null || die "corpus"
}
# mkuser NAME...: accounts; keys in $T/key.NAME
mkuser() {
	for u in "$@"; do
		k=$("$S" user create "$P" --name "$u" --email "$u@example.org" \
			--password "password-$u" | sed -n 's/.* account key \([0-9a-f]*\)$/\1/p')
		[ ${#k} = 32 ] || die "user create $u"
		echo "$k" >"$T/key.$u"
	done
}
fetch() {	# fetch URL SHA: into the cache once, checked against its hash
	[ -f "$T/cache/$2" ] && return 0
	curl -sf -o "$T/cache/$2.part" "$1" || die "download $1"
	[ "$(sha256sum <"$T/cache/$2.part" | cut -d' ' -f1)" = "$2" ] || die "hash of $1"
	mv "$T/cache/$2.part" "$T/cache/$2"
}
# wu_hp REPLY WU: craft_result's HP arguments for work unit WU of the
# scheduler reply file REPLY (with its LoRA parameters when it has them)
wu_hp() {
	for k in steps batch seq lr beta1 beta2 eps weight_decay grad_clip seed lora_rank \
		lora_alpha lora_targets; do
		v=$(xmllint --xpath "string(/scheduler_reply/workunit[name='$2']/$k)" "$1" 2>/dev/null)
		[ -n "$v" ] && printf ' %s=%s' "$k" "$v"
	done
}
# craft_item REPLY I MODE: result I of the scheduler reply file REPLY made
# as MODE (craft_result) into $T/work/RESULT, its model and data fetched;
# sets r (result), wu, tok (upload token), shard and w() (XPath on REPLY)
craft_item() {
	_reply=$1
	w() { xmllint --xpath "$1" "$_reply" 2>/dev/null; }
	r=$(w "string(/scheduler_reply/result[$2]/name)")
	wu=$(w "string(/scheduler_reply/result[$2]/wu_name)")
	tok=$(w "string(/scheduler_reply/result[$2]/upload_token)")
	W="/scheduler_reply/workunit[name='$wu']"
	msha=$(w "string($W/file[@role='model']/sha256)")
	dsha=$(w "string($W/file[@role='data']/sha256)")
	fetch "$(w "string($W/file[@role='model']/url)")" "$msha"
	fetch "$(w "string($W/file[@role='data']/url)")" "$dsha"
	hp=$(wu_hp "$_reply" "$wu")
	"$CRAFT" "$3" "$T/cache/$msha" "$T/cache/$dsha" "$T/work/$r" $hp || die "craft $3 $r"
	shard=$(w "string($W/shard)")
}
