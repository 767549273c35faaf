#!/bin/bash
# A job that makes its model worse is flagged, with real processes: a
# ctune-server on its embedded database and one `ctune run` daemon run a
# job of 3 rounds that trains on a text of one repeated letter and
# evaluates on a licence text, so the eval loss rises every round (the
# round check is held off by --loss-margin, as an operator might). Once
# the loss has risen two rounds in a row:
#  - `job show` prints one "warning: eval loss rose two rounds in a row"
#    line naming the first three rounds that rose and their losses (its
#    rounds table's, to 4 decimals);
#  - the job page shows the notice (id loss-rising) with the same text.
# text_job_e2e.sh checks that a job whose loss falls gets neither.
. "$(dirname "$0")/client_lib.sh"
SERVER="$top_builddir/ctune-server"
need_built "$SERVER"
TEXT=/usr/share/common-licenses/GPL-3
[ -r "$TEXT" ] || { echo "SKIP: no $TEXT"; exit 77; }

server_project 1
"$CTUNE" model init --layers 1 --heads 2 --channels 32 --max-seq 32 --vocab 256 --seed 1 \
	--out "$T/base.bin" >/dev/null || fail "model init"
awk 'BEGIN { for (i = 0; i < 400; i++) print "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" }' \
	>"$T/a.txt"
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train-text "$T/a.txt" \
	--eval-text "$TEXT" --shards 1 --rounds 3 --steps 20 --batch 4 --seq 32 --lr 0.003 \
	--quorum 1 --replicas 1 --loss-margin 100 >"$T/submit.log" 2>&1 ||
	fail "job submit: $(cat "$T/submit.log")"
"$SERVER" run "$P" >"$T/server.log" 2>&1 &
SPID=$!
PIDS="$PIDS $SPID"
wait_for 60 "server up" curl -sf "$URL/api/v1/status"
KEY=$("$SERVER" user create "$P" --name u --email u@example.org --password pw-u-12345 \
	2>/dev/null | sed -n 's/.*account key //p')
[ -n "$KEY" ] || fail "user create"
"$CTUNE" --dir "$T/c1" attach "$URL" --key "$KEY" >/dev/null || fail "attach"
start_client c1 --always --device cpu --backoff-base 0.5
C1=$CPID
job_done() { "$SERVER" job show "$P" 1 2>/dev/null | head -1 | grep -q ': done'; }
wait_for 400 "the job completes" job_done
stop "$C1"

"$SERVER" job show "$P" 1 >"$T/show.txt" 2>&1 || fail "job show"
# the rounds table: round, status, ..., base loss, eval loss
losses=$(awk '$2 == "done" && $1 ~ /^[1-3]$/ { if ($1 == 1) printf "%s ", $4; printf "%s ", $5 }' \
	"$T/show.txt")
set -- $losses
[ $# = 4 ] || fail "no four losses in job show: $(cat "$T/show.txt")"
awk -v a="$1" -v b="$2" -v c="$3" -v d="$4" 'BEGIN { exit !(a < b && b < c && c < d) }' ||
	fail "the eval loss did not rise every round ($losses): the test's premise"
n=$(grep -c "^warning: eval loss rose two rounds in a row" "$T/show.txt")
[ "$n" = 1 ] || fail "job show: $n loss warnings, want 1: $(cat "$T/show.txt")"
w=$(grep "^warning: eval loss rose" "$T/show.txt")
want=$(awk -v a="$1" -v b="$2" -v c="$3" 'BEGIN { printf "(round 0 %.4f, 1 %.4f, 2 %.4f;", a, b, c }')
echo "$w" | grep -qF "$want round 0 is the base model): training is making the model worse" ||
	fail "the warning does not name rounds 0-2 with the table's losses ($losses): $w"
curl -sf "$URL/job/1" >"$T/job.html" || fail "job page"
grep -q '<p class="notice error" id="loss-rising">eval loss rose two rounds in a row (round 0 ' \
	"$T/job.html" || fail "the job page has no loss-rising notice"
stop "$SPID"
echo "PASS: eval loss $losses; job show: ${w#warning: }"
