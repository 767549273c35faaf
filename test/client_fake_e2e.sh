#!/bin/bash
# Two `ctune run` daemons against the stand-in server: both fetch, verify,
# train, upload and report; the uploads decode (ct_delta) to exactly the
# weights `ctune train` computes; a partial download in the cache is resumed
# with a Range request; a corrupt partial download is detected by its hash
# and fetched again; `ctune status` shows the project and the credit.
. "$(dirname "$0")/client_lib.sh"

start_fake srv --results 2 --steps 40
reference srv 40
DATA_SHA=$(sha256sum "$T/srv/data.bin" | cut -d' ' -f1)
MODEL_SHA=$(sha256sum "$T/srv/base.bin" | cut -d' ' -f1)

"$CTUNE" --dir "$T/c1" attach "$FAKE_URL" --key key1 >/dev/null || fail "attach c1"
"$CTUNE" --dir "$T/c2" attach "$FAKE_URL/" --key key2 >/dev/null || fail "attach c2"
"$CTUNE" --dir "$T/c2" attach "$FAKE_URL" --key key2 2>/dev/null && fail "attached twice"
[ "$(stat -c %a "$T/c1")" = 700 ] || fail "state dir is not owner-only"
[ "$(stat -c %a "$T/c1/client_state.xml")" = 600 ] || fail "state file is not owner-only"

# c1: the first half of the data file is already in its cache (an
# interrupted download); c2: a partial model download full of garbage.
mkdir -p "$T/c1/cache" "$T/c2/cache"
head -c 4096 "$T/srv/data.bin" >"$T/c1/cache/$DATA_SHA.part"
head -c 5000 /dev/urandom >"$T/c2/cache/$MODEL_SHA.part"

start_client c1 --always --device cpu --backoff-base 0.2; C1=$CPID
start_client c2 --always --device cpu --backoff-base 0.2 --cache-max-mb 0; C2=$CPID
wait_for 60 "both results reported" bash -c "grep -c ' success ' '$T/srv/reports.log' | grep -qx 2"

grep -q "GET $DATA_SHA 4096" "$T/srv/downloads.log" || fail "the partial download was not resumed with Range"
grep -q "SHA-256" "$T/c2.log" || fail "the corrupt partial download was not caught by its hash"
for r in r0 r1; do
	cmp -s "$T/ref.bin" "$T/srv/upload/$r.bin" || fail "$r differs from ctune train's weights"
done
grep -q DUP "$T/srv/reports.log" && fail "a result was reported twice"

# the task is forgotten once acknowledged; its inputs stay cached by hash
# for the next task or round (c1), unless the cache may hold nothing (c2)
wait_for 20 "c1 forgets reported task" bash -c "! grep -q '<task>' '$T/c1/client_state.xml'"
[ -e "$T/c1/cache/$DATA_SHA" ] || fail "input not kept in the cache after the task was reported"
wait_for 20 "c2 forgets reported task" bash -c "! grep -q '<task>' '$T/c2/client_state.xml'"
[ -e "$T/c2/cache/$DATA_SHA" ] && fail "cache over --cache-max-mb 0 after the task was reported"

"$CTUNE" --dir "$T/c1" status >"$T/status.out" || fail "ctune status"
grep -q "project $FAKE_URL" "$T/status.out" || fail "status lacks the project"
grep -q "user tester" "$T/status.out" || fail "status lacks the user"
grep -Eq "credit [0-9]+\.[0-9]+" "$T/status.out" || fail "status lacks credit"
grep -q "1 results done, 1 reported" "$T/status.out" || fail "status totals wrong: $(cat "$T/status.out")"
"$CTUNE" --dir "$T/c1" saver --frames 1 >"$T/saver.out" </dev/null || fail "ctune saver"
grep -q "credit" "$T/saver.out" || fail "saver frame lacks credit"

"$CTUNE" --dir "$T/c1" quit >/dev/null || fail "ctune quit"
wait "$C1" || fail "c1 exited with an error after quit"
[ -e "$T/c1/ctune.sock" ] && fail "socket left behind"
stop "$C2"
echo "PASS: two clients computed, uploaded and reported bit-identical results"
