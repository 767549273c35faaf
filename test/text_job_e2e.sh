#!/bin/bash
# Text in, text out through the real system: `ctune-server job submit
# --train-text` (a licence text Debian ships, tokenised with the bytes
# tokenizer, 10% held out) runs a job of 2 rounds x 2 shards to the end with
# a real server on its embedded database and one `ctune run` daemon; the
# assimilator stores one sample for the base model and one per round, which
# the JSON API and the job page show; `job sample` prints one on demand.
# Also: a text file given as --train gets a hint, --eval-text works.
. "$(dirname "$0")/client_lib.sh"
SERVER="$top_builddir/ctune-server"
need_built "$SERVER"
TEXT=/usr/share/common-licenses/GPL-3
[ -r "$TEXT" ] || { echo "SKIP: no $TEXT"; exit 77; }

server_project 1
sed -i "/^\[daemons\]/a sample_tokens = 40" "$P/ctune-server.conf"
"$CTUNE" model init --layers 1 --heads 2 --channels 32 --max-seq 32 --vocab 256 --seed 1 \
	--out "$T/base.bin" >/dev/null || fail "model init"
JOB="--shards 2 --rounds 2 --steps 40 --batch 4 --seq 32 --lr 0.003 --quorum 1 --replicas 1"

# a text file where a token file belongs: a hint, nothing stored
# shellcheck disable=SC2086
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$TEXT" --eval "$TEXT" $JOB \
	>"$T/hint.log" 2>&1 && fail "text as --train accepted"
grep -q -- "is text, not a token file: pass text with --train-text" "$T/hint.log" ||
	fail "no hint: $(cat "$T/hint.log")"
# shellcheck disable=SC2086
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train-text "$TEXT" $JOB >"$T/noeval.log" 2>&1 &&
	fail "--train-text without eval accepted"
# a tokenizer.json that is not there: named (test/llama_text.sh submits one)
# shellcheck disable=SC2086
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train-text "$TEXT" --eval-fraction 0.1 \
	--tokenizer "$T/tokenizer.json" $JOB >"$T/hfjson.log" 2>&1 && fail "a missing --tokenizer PATH accepted"
grep -q -- "--tokenizer: $T/tokenizer.json: no such file" "$T/hfjson.log" ||
	fail "no clear error for a missing tokenizer.json: $(cat "$T/hfjson.log")"
[ -z "$(ls "$P/download")" ] || fail "failed submits stored files"

# shellcheck disable=SC2086
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train-text "$TEXT" --eval-fraction 0.1 \
	--sample-prompt "This License " --sample-seed 5 $JOB >"$T/submit.log" 2>&1 ||
	fail "job submit --train-text: $(cat "$T/submit.log")"
grep -q "^job 1$" "$T/submit.log" || fail "no job id"
grep -q "bytes tokenizer: [0-9]* training and [0-9]* eval tokens" "$T/submit.log" ||
	fail "no tokenizer summary"
"$SERVER" run "$P" >"$T/server.log" 2>&1 &
SPID=$!
PIDS="$PIDS $SPID"
wait_for 60 "server up" curl -sf "$URL/api/v1/status"
KEY=$("$SERVER" user create "$P" --name reader --email r@example.org --password pw-reader-1 \
	2>/dev/null | sed -n 's/.*account key //p')
[ -n "$KEY" ] || fail "user create"
"$CTUNE" --dir "$T/c1" attach "$URL" --key "$KEY" >/dev/null || fail "attach"
start_client c1 --always --device cpu --backoff-base 0.5
C1=$CPID

job_done() { "$SERVER" job show "$P" 1 2>/dev/null | head -1 | grep -q ': done'; }
wait_for 400 "the job completes" job_done
stop "$C1"
# its loss falls: no warning in job show nor on the page (job_loss_rising.sh)
"$SERVER" job show "$P" 1 2>&1 | grep "eval loss rose" && fail "a falling loss flagged"
curl -sf "$URL/job/1" | grep -q 'id="loss-rising"' && fail "the job page flags a falling loss"
# all weights trained: no adapter to export, said so
out=$("$SERVER" job export "$P" 1 --adapter "$T/adapter" 2>&1) && fail "--adapter of a full job"
echo "$out" | grep -q "trains all weights, not LoRA adapters: export it with --hf" ||
	fail "--adapter of a full job: $out"

# the API: base + 2 rounds, each with text that starts with the prompt
curl -sf "$URL/api/v1/job/1" >"$T/job.json" || fail "api job"
for r in 0 1 2; do
	grep -q "{\"round\":$r,\"model_sha256\":\"[0-9a-f]\{64\}\",\"text\":\"This License " \
		"$T/job.json" || fail "no sample of round $r in the API: $(cat "$T/job.json")"
done
# the page: a samples table with three rows
curl -sf "$URL/job/1" >"$T/job.html" || fail "job page"
[ "$(grep -o '<tr class="sample" data-round="[0-9]*">' "$T/job.html" | wc -l)" = 3 ] ||
	fail "the job page does not show 3 samples"
grep -q '<pre class="sample">This License ' "$T/job.html" || fail "no sample text on the page"
# computed once: a page view does not add or change samples
s1=$(grep -o '"text":"[^"]*"' "$T/job.json" | md5sum)
curl -sf "$URL/job/1" >/dev/null
curl -sf "$URL/api/v1/job/1" | grep -o '"text":"[^"]*"' | md5sum | grep -q "${s1% *}" ||
	fail "samples changed between views"

# job sample: the stored round-2 sample is what `job sample` gives with the same settings
"$SERVER" job sample "$P" 1 --round 2 --tokens 40 >"$T/sample.txt" 2>"$T/sample.err" ||
	fail "job sample: $(cat "$T/sample.err")"
sed -n '1s/^job 1 round 2 (model [0-9a-f]*, bytes tokenizer):$/ok/p' "$T/sample.txt" | grep -q ok ||
	fail "job sample header: $(head -1 "$T/sample.txt")"
if command -v node >/dev/null; then
	tail -n +2 "$T/sample.txt" >"$T/sample.body"
	node -e 'const fs = require("fs");
		const j = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
		const s = j.samples.find((x) => x.round === 2).text + "\n";
		process.exit(s === fs.readFileSync(process.argv[2], "utf8") ? 0 : 1);' \
		"$T/job.json" "$T/sample.body" || fail "job sample differs from the stored sample"
fi
"$SERVER" job sample "$P" 1 --round 0 --prompt "Copying " --tokens 20 >"$T/s0.txt" 2>&1 ||
	fail "job sample round 0"
grep -q "^Copying " "$T/s0.txt" || fail "round 0 sample: $(cat "$T/s0.txt")"
"$SERVER" job sample "$P" 1 --round 9 >/dev/null 2>&1 && fail "round 9 sampled"

# --eval-text: a second job stores its settings too
# shellcheck disable=SC2086
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train-text "$TEXT" \
	--eval-text /usr/share/common-licenses/Apache-2.0 $JOB >"$T/submit2.log" 2>&1 ||
	fail "job submit --eval-text: $(cat "$T/submit2.log")"
stop "$SPID"
echo "PASS: text job done, samples of base, round 1 and round 2 on the page and in the API"
