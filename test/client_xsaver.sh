#!/bin/bash
# `ctune saver --x11` under Xvfb: a daemon computes a WU from the stand-in
# server; the saver draws into a window of its own; a screenshot of the
# display (test/x11_shot, kept as $T/saver.ppm) must show the view: text in
# the title row and in the job, speed, credit/rank and ETA/pending rows, and
# the green loss curve below them. With the daemon gone the same screenshot
# shows the title and "no daemon" only: the rows and the curve are empty, so
# the first check cannot pass on a blank or fixed picture.
. "$(dirname "$0")/client_lib.sh"
SHOT="$top_builddir/test/x11_shot"
command -v Xvfb >/dev/null 2>&1 || { echo "SKIP: no Xvfb (tools/setup installs xvfb)"; exit 77; }
[ -x "$SHOT" ] || { echo "SKIP: ctune built without X11 (configure --with-x11)"; exit 77; }

start_fake srv --results 1 --steps 400000
"$CTUNE" --dir "$T/c" attach "$FAKE_URL" --key k >/dev/null || fail "attach"
start_client c --always --device cpu --checkpoint-seconds 100; C=$CPID
wait_for 60 "computing" bash -c "'$CTUNE' --dir '$T/c' status 2>/dev/null | grep -q 'activity: computing'"
sleep 3		# a few losses for the curve

for n in $(seq 90 99); do [ -e "/tmp/.X$n-lock" ] || break; done
Xvfb ":$n" -screen 0 800x480x24 -nolisten tcp >"$T/xvfb.log" 2>&1 &
XPID=$!
PIDS="$PIDS $XPID"
export DISPLAY=":$n"
wait_for 20 "Xvfb" "$SHOT" "$T/probe.ppm"
DISPLAY=":$n" "$CTUNE" --dir "$T/c" saver --x11 --interval 0.3 >"$T/saver.log" 2>&1 &
SPID=$!
PIDS="$PIDS $SPID"
sleep 3
"$SHOT" "$T/saver.ppm" >"$T/shot.txt" || fail "screenshot"
"$CTUNE" --dir "$T/c" status 2>/dev/null | grep -q 'activity: computing' ||
	fail "the WU ended before the screenshot"
cat "$T/shot.txt"
val() { awk -v k="$1" -v i="${2:-}" '($1 == k && (i == "" || $2 == i)) { print $NF }' "$T/shot.txt"; }
for r in 0 2 3 4 5; do
	[ "$(val row $r)" -ge 30 ] || fail "text row $r is empty (see $T/saver.ppm)"
done
[ "$(val row 1)" -lt 5 ] || fail "row 1 should be blank"
[ "$(val curve)" -ge 40 ] || fail "no loss curve drawn"
awk -v b="$(val black)" 'BEGIN { exit !(b > 0.8) }' || fail "background not black"

# the daemon stops: the view says so, the rows and the curve go
stop "$C"
sleep 2
"$SHOT" "$T/nodaemon.ppm" >"$T/shot.txt" || fail "screenshot 2"
[ "$(val row 0)" -ge 30 ] || fail "title gone without a daemon"
[ "$(val row 2)" -ge 30 ] || fail "no 'no daemon' line"
for r in 3 4 5; do
	[ "$(val row $r)" -lt 5 ] || fail "row $r still drawn without a daemon"
done
[ "$(val curve)" -lt 5 ] || fail "curve still drawn without a daemon"
kill "$SPID"
wait "$SPID" 2>/dev/null

# --frames N: the X11 saver draws N frames and exits by itself (0.3 s apart)
DISPLAY=":$n" timeout 10 "$CTUNE" --dir "$T/c" saver --x11 --frames 2 --interval 0.3 \
	>"$T/frames.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "saver --x11 --frames 2 did not exit by itself (rc $rc)"

# the daemon's idle detection with a display (and no logind here): the X
# screensaver extension; nobody touches Xvfb, so it computes after
# idle_minutes
if ! grep -q "idle source: logind" "$T/c.log"; then
	start_fake srv2 --results 1 --steps 50
	"$CTUNE" --dir "$T/x" attach "$FAKE_URL" --key k >/dev/null || fail "attach x"
	DISPLAY=":$n" start_client x --device cpu --idle-minutes 0.05
	wait_for 30 "idle source" grep -q "idle source: " "$T/x.log"
	grep -q "idle source: x11" "$T/x.log" || fail "with a display: $(grep 'idle source' "$T/x.log")"
	wait_for 60 "computing once idle" grep -q "r0: starting on" "$T/x.log"
	stop "$CPID"
fi
echo "PASS: the X11 saver drew title, job, speed, credit/rank, ETA rows and the loss curve; X11 idle source used"
