#!/bin/bash
# The work buffer against the real server: a job of 12 short WUs in one
# round (quorum 1) and one `ctune run --always` client with request_delay
# 10 s. The client asks for several tasks in one scheduler call once it
# knows its speed, fetches the base model once and takes it from the cache
# for every later WU, reports each result without waiting for
# request_delay, and finishes the job in far less than 12 x request_delay.
. "$(dirname "$0")/client_lib.sh"
SERVER="$top_builddir/ctune-server"
CORPUS="$top_builddir/bench/ctune-corpus"
need_built "$SERVER" "$CORPUS"

server_project 10
corpus_data 1 2 32
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" --eval "$T/eval.bin" \
	--shards 12 --rounds 1 --steps 40 --batch 4 --seq 16 --lr 0.001 --quorum 1 \
	>"$T/submit.log" 2>&1 || fail "job submit"
"$SERVER" run "$P" >"$T/server.log" 2>&1 &
PIDS="$PIDS $!"
wait_for 60 "server up" curl -sf "$URL/api/v1/status"
KEY=$("$SERVER" user create "$P" --name buf --email buf@example.org --password buf-password \
	2>/dev/null | sed -n 's/.*account key //p')
"$CTUNE" --dir "$T/c" attach "$URL" --key "$KEY" >/dev/null || fail "attach"

START=$(date +%s)
start_client c --always --device cpu --backoff-base 0.5
reported() { grep -o 'scheduler RPC ok: [0-9]* reported' "$T/c.log" | awk '{ s += $4 } END { exit !(s >= 12) }'; }
wait_for 300 "all 12 results reported" reported
TOOK=$(( $(date +%s) - START ))
stop "$CPID"
grep -Eq 'scheduler RPC ok: [0-9]+ reported, ([2-9]|1[0-9]) new tasks' "$T/c.log" ||
	fail "never more than one task per scheduler call"
[ "$(grep -c ': downloading model' "$T/c.log")" = 1 ] ||
	fail "base model fetched $(grep -c ': downloading model' "$T/c.log") times"
[ "$(grep -c ': model in the cache' "$T/c.log")" = 11 ] || fail "model not taken from the cache"
# 12 WUs with a report each: waiting request_delay between them would take
# >= 110 s; reports at once and a full buffer take far less
[ "$TOOK" -lt 100 ] || fail "took ${TOOK}s: request_delay held the client back"
echo "PASS: 12 WUs in ${TOOK}s, several tasks per call, the model fetched once and cached 11 times"
