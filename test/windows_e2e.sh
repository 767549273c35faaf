#!/bin/bash
# Cross-OS replicas: a Linux ctune-server project, one Linux `ctune run
# --always` and one `wine64 ctune.exe run --always` (the Windows build)
# complete a job at quorum 2, so every WU has one replica from each OS.
#  - both replicas of every WU are bit-identical (same upload SHA-256) and
#    valid by hash, and both volunteers get credit;
#  - the Windows client is killed with SIGKILL in the middle of a WU and
#    started again: it resumes from its checkpoint and the job completes.
# It says which device each client computed on: OpenCL under Wine goes
# through Wine's opencl.dll to the host's libOpenCL (PoCL here); without
# it both clients use the C reference, as the results must agree bit for
# bit across the two either way.
# Environment: top_builddir (a Linux build: ctune, ctune-server, the corpus
# tool), CT_WIN_BUILD (the Windows build folder, default
# $top_srcdir/build-win), WINE (default wine64), WINEPREFIX.
. "$(dirname "$0")/client_lib.sh"
SERVER="$top_builddir/ctune-server"
CORPUS="$top_builddir/bench/ctune-corpus"
WBUILD=${CT_WIN_BUILD:-$top_srcdir/build-win}
CTUNE_EXE="$WBUILD/ctune.exe"
WINE=${WINE:-$(command -v wine64 || echo /usr/lib/wine/wine64)}
need_built "$SERVER" "$CORPUS" "$CTUNE" "$CTUNE_EXE" "$WINE"
export WINEDEBUG=-all WINEPATH="$WBUILD"
: "${WINEPREFIX:=$WBUILD/wine}"
export WINEPREFIX
# long enough to kill the Wine client mid-WU; a small lr keeps the update
# within the validator's limits
STEPS=${CT_WIN_STEPS:-3000}

wctune() { "$WINE" "$CTUNE_EXE" "$@"; }

server_project 1
sed -i 's/^file_grace = .*/&\nupload_grace = 3600/' "$P/ctune-server.conf"
corpus_data 1 2 32
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" --eval "$T/eval.bin" \
	--shards 2 --rounds 2 --steps $STEPS --batch 4 --seq 16 --lr 0.00003 --quorum 2 \
	>"$T/submit.log" 2>&1 || fail "job submit"

# one device for both: OpenCL when both see it (Wine forwards to PoCL)
wctune --version >"$T/wversion.log" 2>&1 || fail "ctune.exe --version under wine"
"$CTUNE" devices --no-selftest >"$T/ldevices.log" 2>&1
wctune devices --no-selftest >"$T/wdevices.log" 2>&1
DEV=${CT_E2E_DEVICE:-cpu}
if [ -z "${CT_E2E_DEVICE:-}" ] && grep -q 'opencl:0' "$T/ldevices.log" &&
	grep -q 'opencl:0' "$T/wdevices.log"; then
	DEV=opencl:0
fi
echo "devices: Linux $(grep -c 'opencl:' "$T/ldevices.log") OpenCL, Wine $(grep -c 'opencl:' "$T/wdevices.log") OpenCL; both compute on $DEV"
COMMON="--always --device $DEV --backoff-base 0.5 --checkpoint-seconds 0.3"
SELFTEST_OPT=""

"$SERVER" run "$P" >"$T/server.log" 2>&1 &
SPID=$!
PIDS="$PIDS $SPID"
wait_for 60 "server up" curl -sf "$URL/api/v1/status"
for i in 1 2; do
	KEY=$("$SERVER" user create "$P" --name "user$i" --email "user$i@example.org" \
		--password "password-$i" 2>/dev/null | sed -n 's/.*account key //p')
	[ -n "$KEY" ] || fail "user create $i"
	eval KEY$i=\$KEY
done
"$CTUNE" --dir "$T/c1" attach "$URL" --key "$KEY1" >/dev/null || fail "attach c1"
wctune --dir "$T/w2" attach "$URL" --key "$KEY2" >"$T/wattach.log" 2>&1 || fail "attach w2 (wine)"

start_client c1 $COMMON; C1=$CPID
start_wine() {	# wine itself in the background: W2 is the Windows process
	"$WINE" "$CTUNE_EXE" --dir "$T/w2" -v run $COMMON >>"$T/w2.log" 2>&1 &
	W2=$!
	PIDS="$PIDS $W2"
}
start_wine

# kill -9 the Windows client once it has checkpointed part of a WU
step_of() { sed -n 's:.*<step>\([0-9]*\)</step>.*:\1:p' "$T/w2/client_state.xml" 2>/dev/null | head -1; }
running_ckpt() {
	state_has w2 '<state>running</state>' && state_has w2 '<checkpoint>state</checkpoint>' &&
		[ "$(step_of)" -ge 10 ] 2>/dev/null
}
wait_for 300 "the Wine client checkpoints a running WU past step 10" running_ckpt
kill -9 "$W2"; wait "$W2" 2>/dev/null
echo "killed the Wine client at step $(step_of)"
start_wine
wait_for 120 "the Wine client resumes" grep -q "resuming on $DEV at step [1-9][0-9]" "$T/w2.log"
# the control channel (loopback + token on Windows): ctune.exe status
wait_for 60 "ctune.exe status answers" sh -c "'$WINE' '$CTUNE_EXE' --dir '$T/w2' status | grep -q j1-r"

job_done() { "$SERVER" job show "$P" 1 2>/dev/null | head -1 | grep -q ': done'; }
wait_for 900 "the job completes" job_done
"$SERVER" job show "$P" 1 >"$T/job.txt" 2>&1
grep -Eq 'over +success +valid +8$' "$T/job.txt" || fail "not 8 valid results: $(cat "$T/job.txt")"

# both replicas of every WU uploaded the same bytes, one from each OS
for wu in $(ls "$P/upload" | sed 's/-[0-9]*$//' | sort -u); do
	n=$(sha256sum "$P/upload/$wu"-* | cut -d' ' -f1 | sort -u | wc -l)
	[ "$n" = 1 ] || fail "replicas of $wu differ"
done
[ "$(ls "$P/upload" | wc -l)" = 8 ] || fail "expected 8 uploads, got $(ls "$P/upload" | wc -l)"

credit_both() {
	{ curl -sf "$URL/api/v1/users"; echo; } | tr '{' '\n' |
		sed -n 's/.*"name":"\([^"]*\)".*"total_credit":\([0-9.eE+-]*\).*/\1 \2/p' >"$T/credit"
	[ "$(wc -l <"$T/credit")" = 2 ] && awk '!($2 > 0) { bad = 1 } END { exit bad }' "$T/credit"
}
wait_for 120 "credit for both volunteers ($(cat "$T/credit" 2>/dev/null))" credit_both
grep -q "computing on $DEV" "$T/w2.log" || fail "the Wine client did not compute on $DEV"
for c in $C1 $W2 $SPID; do stop "$c"; done
echo "PASS: job done, Linux and Wine on $DEV, 8 valid results, replicas identical, credit $(tr '\n' ' ' <"$T/credit")"
