#!/bin/bash
# A hostile project server cannot touch the volunteer's files: a proxy
# (test/hostile_proxy) between a real `ctune run` and a real ctune-server
# rewrites the server's real scheduler replies, one field that names a
# file at a time (result and workunit names, file roles, sha256s, download
# and upload URLs; ../ climbs and absolute paths), announces a huge size,
# sends more bytes than announced; a state file is edited to name ../
# paths. In every case:
#  - 0 files created, changed or deleted outside the client's directory
#    (a snapshot of the volunteer's tree around it, find + sha256sum,
#    before and after), and nothing of the reply in the client's own slots;
#  - the client keeps running (the state-file case: refuses to start), its
#    log says which field it refused and why, and the server gets the
#    refused result as an error report (so it can send it elsewhere).
# A pass-through case first shows that the proxy and the job work: the
# same client computes, uploads and reports a result through it.
. "$(dirname "$0")/client_lib.sh"
SERVER="$top_builddir/ctune-server"
CORPUS="$top_builddir/bench/ctune-corpus"
PROXY="$top_builddir/test/hostile_proxy"
need_built "$SERVER" "$CORPUS" "$PROXY"

# the volunteer's tree: client directories go in $VOL/home/, their files
# beside them (keep/ is the volunteer's own: ../ climbs aim there)
VOL="$T/vol"
mkdir -p "$VOL/home" "$VOL/keep" "$VOL/x"
echo "the volunteer's own file" >"$VOL/keep/state"
echo "notes" >"$VOL/keep/notes.txt"
echo "x" >"$VOL/x/old"

# ctune-server behind the proxy: the replies' URLs name the proxy
start_fake probe
SPORT=$(cat "$T/probe/port")
stop "$FAKE_PID"
mkdir -p "$T/px"
"$PROXY" "$T/px" "http://127.0.0.1:$SPORT" >"$T/proxy.log" 2>&1 &
PIDS="$PIDS $!"
wait_for 20 "proxy up" test -s "$T/px/port"
URL="http://127.0.0.1:$(cat "$T/px/port")"
P="$T/proj"
"$SERVER" init "$P" --listen "127.0.0.1:$SPORT" --url "$URL" >"$T/init.log" 2>&1 || fail "server init"
sed -i "s/^request_delay = .*/request_delay = 1/" "$P/ctune-server.conf"
corpus_data 1 2 32
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" --eval "$T/eval.bin" \
	--shards 16 --rounds 1 --steps 5 --batch 2 --seq 8 --lr 0.001 --quorum 2 \
	>"$T/submit.log" 2>&1 || fail "job submit"
"$SERVER" run "$P" >"$T/server.log" 2>&1 &
SPID=$!
PIDS="$PIDS $SPID"
wait_for 60 "server up" curl -sf "$URL/api/v1/status"

# snap NAME: every path of $VOL but the client's directory NAME, with type,
# size, mode and the SHA-256 of every file
snap() {
	(cd "$VOL" && find . -path "./home/$1" -prune -o -printf '%p %y %s %m\n' | sort &&
		find . -path "./home/$1" -prune -o -type f -print0 | sort -z | xargs -0 sha256sum)
}

N=0
# new_client [PREFS]: an account and a client directory $VOL/home/cN
# attached to the proxy (CDIR, CNAME); PREFS go into its prefs.conf
new_client() {
	local key
	N=$((N + 1))
	: >"$T/px/rules"	# attach goes through the proxy too
	CNAME=c$N
	CDIR="$VOL/home/$CNAME"
	key=$("$SERVER" user create "$P" --name "user$N" --email "user$N@example.org" \
		--password "password-$N" 2>/dev/null | sed -n 's/.*account key //p')
	[ -n "$key" ] || fail "user create $N"
	"$CTUNE" --dir "$CDIR" attach "$URL" --key "$key" >/dev/null || fail "attach $CNAME"
	[ $# -gt 0 ] && printf '%s\n' "$@" >"$CDIR/prefs.conf"
	return 0
}

run_client() {
	"$CTUNE" --dir "$CDIR" -v run --no-selftest --always --device cpu --backoff-base 0.5 \
		>>"$T/$CNAME.log" 2>&1 &
	CPID=$!
	PIDS="$PIDS $CPID"
}

# same_outside BEFORE: nothing outside the client's directory changed
same_outside() {
	snap "$CNAME" >"$T/after"
	diff "$1" "$T/after" >"$T/diff" || fail "$2: files outside the client's directory changed:
$(cat "$T/diff")"
}

# hostile WHAT EXPECT RULE...: rewrite with RULE(s); the client must log
# EXPECT, keep running and leave everything outside its directory alone
hostile() {
	local what=$1 expect=$2 n0 e0
	shift 2
	new_client
	snap "$CNAME" >"$T/before"
	printf '%s\n' "$@" >"$T/px/rules"
	n0=$(cat "$T/px/rewrites" 2>/dev/null | wc -l)
	e0=$(grep -c "(error)" "$T/server.log")
	run_client
	wait_for 60 "$what: the client refuses ($expect)" grep -q -- "$expect" "$T/$CNAME.log"
	[ "$(wc -l <"$T/px/rewrites")" -gt "$n0" ] || fail "$what: the proxy rewrote nothing"
	errors_more() { [ "$(grep -c "(error)" "$T/server.log")" -gt "$e0" ]; }
	wait_for 30 "$what: the refused result reported to the server as an error" errors_more
	sleep 1
	kill -0 "$CPID" 2>/dev/null || fail "$what: the client stopped"
	stop "$CPID"
	[ -z "$(ls -A "$CDIR/slots" 2>/dev/null)" ] || fail "$what: slots made: $(ls "$CDIR/slots")"
	same_outside "$T/before" "$what"
	echo "ok: $what: $(grep -m1 -o -- "$expect.*" "$T/$CNAME.log" | cut -c1-150)"
}

# 0. pass-through: a result computed, uploaded and reported through the proxy
: >"$T/px/rules"
new_client
snap "$CNAME" >"$T/before"
run_client
wait_for 120 "pass-through: a result reported" grep -q "1 reported" "$T/$CNAME.log"
stop "$CPID"
same_outside "$T/before" "pass-through"
echo "ok: pass-through: computed, uploaded and reported through the proxy"

SHA_OUT="../../../keep/state"	# from cache/: the volunteer's file
R="in the scheduler reply"
hostile "result name ../../x/r0" "refused result name $R '../../x/r0'" \
	"set result name ../../x/r0"
hostile "result name climbing to the volunteer's dir" "refused result name $R '../../../keep'" \
	"set result name ../../../keep"
hostile "absolute result name" "refused result name $R" "set result name $VOL/keep"
hostile "result name '..'" "refused result name $R '..'" "set result name .."
hostile "workunit name" "refused workunit name $R" \
	"set workunit name ../../x/w" "set result wu_name ../../x/w"
hostile "result's workunit name" "refused result's workunit name $R" "set result wu_name ../x"
hostile "file sha256 climbing" "refused file sha256 $R" "set file sha256 $SHA_OUT"
hostile "absolute file sha256" "refused file sha256 $R" "set file sha256 $VOL/keep/state"
hostile "file URL to a local file" "refused file URL $R" "set file url file://$VOL/keep/state"
hostile "file URL path only" "refused file URL $R" "set file url ../../../keep/state"
hostile "upload URL to a local file" "refused upload URL $R" \
	"set result upload_url file://$VOL/keep/state"
hostile "file role" "refused file role $R" "attr file role ../../x"

# sizes: refused before the download starts, the task reported as failed
hostile "announced size 2^63-1" "download failed for good: the inputs need .* disk_max_gb" \
	"set file size 9223372036854775807"
new_client "disk_max_gb = 0.00001"
snap "$CNAME" >"$T/before"
: >"$T/px/rules"
run_client
wait_for 60 "real sizes over disk_max_gb" grep -q "failed for good: .*disk_max_gb is 1e-05" \
	"$T/$CNAME.log"
sleep 1
kill -0 "$CPID" 2>/dev/null || fail "disk_max_gb: the client stopped"
stop "$CPID"
[ -z "$(ls -A "$CDIR/cache")" ] || fail "disk_max_gb: downloaded anyway: $(ls "$CDIR/cache")"
same_outside "$T/before" "disk_max_gb"
echo "ok: real sizes over disk_max_gb = 0.00001: refused before downloading"

# more bytes than announced: the download stops there, the partial file goes
new_client
snap "$CNAME" >"$T/before"
printf 'pad 4096\n' >"$T/px/rules"
run_client
wait_for 60 "more bytes than announced" grep -q "sent more than the .* bytes it announced" \
	"$T/$CNAME.log"
wait_for 60 "more bytes than announced: given up" grep -q "download failed for good" "$T/$CNAME.log"
kill -0 "$CPID" 2>/dev/null || fail "padded download: the client stopped"
stop "$CPID"
[ -z "$(ls -A "$CDIR/cache")" ] || fail "padded download left files: $(ls -l "$CDIR/cache")"
same_outside "$T/before" "padded download"
echo "ok: more bytes than announced: stopped, partial file removed"
: >"$T/px/rules"

# a state file edited to name paths outside: refused when loaded
state_case() {
	local what=$1 expect=$2 name=$3 sha=$4
	new_client
	sed -i "s|</project>|<task><name>$name</name><wu_name>w</wu_name><state>reported</state><file><name>model</name><url>$URL/download/x</url><sha256>$sha</sha256><size>1</size></file></task></project>|" \
		"$CDIR/client_state.xml"
	grep -q "<task>" "$CDIR/client_state.xml" || fail "$what: state not edited"
	snap "$CNAME" >"$T/before"
	if "$CTUNE" --dir "$CDIR" -v run --no-selftest --always --device cpu --exit-after 20 \
		>"$T/$CNAME.log" 2>&1; then
		fail "$what: ctune run accepted the state file"
	fi
	grep -q -- "$expect" "$T/$CNAME.log" || fail "$what: no '$expect' in the log"
	same_outside "$T/before" "$what"
	echo "ok: $what: $(grep -m1 -o -- "$expect.*" "$T/$CNAME.log" | cut -c1-150)"
}
GOOD_SHA=$(sha256sum "$T/base.bin" | cut -d' ' -f1)
state_case "state file: task ../../../keep" "refused task name in the state file" \
	"../../../keep" "$GOOD_SHA"
state_case "state file: absolute task name" "refused task name in the state file" \
	"$VOL/keep" "$GOOD_SHA"
state_case "state file: sha256 ../" "refused file sha256 in the state file" "r0" "$SHA_OUT"

# the volunteer's own files, byte for byte
[ "$(cat "$VOL/keep/state")" = "the volunteer's own file" ] || fail "keep/state changed"
[ -e "$VOL/home/x" ] && fail "$VOL/home/x was created"
kill -0 "$SPID" 2>/dev/null || fail "the server stopped"
echo "PASS: $((N - 1)) hostile cases refused, 0 files created, changed or deleted outside the client's directory"
