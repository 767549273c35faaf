#!/bin/sh
# test/sample_devices.sh - `ctune sample` with a fixed seed prints the same
# text with --device cpu and --device opencl (the logits are bit-identical
# and the choice is made on the host), for greedy, top-k and full-vocabulary
# sampling, with a context longer than the model's maxT; another seed gives
# other text; bad options are usage errors. Skips (77) without OpenCL.
set -u
ctune="${top_builddir:-.}/ctune"
CTUNE_KERNEL_CACHE=""
export CTUNE_KERNEL_CACHE
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

[ -x "$ctune" ] || fail "no $ctune"
"$ctune" model init --config 2,2,32,32,256,256 --seed 11 --out "$tmp/m.bin" >/dev/null ||
	fail "model init"
out=$("$ctune" devices --no-selftest) || fail "devices exited $?"
case "$out" in
*"opencl:0 "*) ;;
*) echo "SKIP: no OpenCL device"; exit 77 ;;
esac

n=0
for opts in "--temperature 0" "--top-k 5 --temperature 0.8" "--top-k 0 --temperature 1.2"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	"$ctune" sample --model "$tmp/m.bin" --prompt "The cat " --tokens 48 --seed 7 \
		$opts --device cpu >"$tmp/cpu$n" || fail "cpu sample ($opts)"
	# shellcheck disable=SC2086
	"$ctune" sample --model "$tmp/m.bin" --prompt "The cat " --tokens 48 --seed 7 \
		$opts --device opencl >"$tmp/ocl$n" || fail "opencl sample ($opts)"
	cmp -s "$tmp/cpu$n" "$tmp/ocl$n" || fail "cpu and opencl differ ($opts)"
	# prompt + 48 bytes + newline
	[ "$(wc -c <"$tmp/cpu$n")" -eq 57 ] || fail "wrong length ($opts): $(wc -c <"$tmp/cpu$n")"
	head -c 8 "$tmp/cpu$n" | grep -q "^The cat $" || fail "prompt not echoed"
done
"$ctune" sample --model "$tmp/m.bin" --prompt "The cat " --tokens 48 --seed 8 \
	--top-k 0 --temperature 1.2 >"$tmp/seed8" || fail "seed 8"
cmp -s "$tmp/cpu3" "$tmp/seed8" && fail "seeds 7 and 8 gave the same text"

# a GPT-2-vocabulary model: the gpt2 tokenizer by default, where it is built
"$ctune" model init --config 1,2,32,32,50257,50304 --seed 2 --out "$tmp/g.bin" >/dev/null ||
	fail "gpt2 model init"
if "$ctune" sample --model "$tmp/g.bin" --prompt "Hello, world" --tokens 24 --seed 3 \
	>"$tmp/gcpu" 2>"$tmp/gerr"; then
	"$ctune" sample --model "$tmp/g.bin" --prompt "Hello, world" --tokens 24 --seed 3 \
		--device opencl >"$tmp/gocl" || fail "gpt2 opencl sample"
	cmp -s "$tmp/gcpu" "$tmp/gocl" || fail "gpt2: cpu and opencl differ"
	head -c 12 "$tmp/gcpu" | grep -q "^Hello, world$" || fail "gpt2: prompt not echoed"
	[ "$(wc -c <"$tmp/gcpu")" -gt 40 ] || fail "gpt2: too little text"
else
	grep -q "gpt2" "$tmp/gerr" || fail "gpt2 sample failed: $(cat "$tmp/gerr")"
	echo "note: gpt2 tokenizer not available: $(cat "$tmp/gerr")"
fi

"$ctune" sample --model "$tmp/m.bin" --temperature -1 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--temperature -1 is not a usage error"
"$ctune" sample --prompt x >/dev/null 2>&1
[ $? -eq 2 ] || fail "missing --model is not a usage error"
"$ctune" sample --model "$tmp/m.bin" --top-k 300 >/dev/null 2>&1
[ $? -eq 1 ] || fail "--top-k 300 > V did not fail"
"$ctune" sample --model "$tmp/m.bin" --tokenizer nope >/dev/null 2>&1
[ $? -eq 1 ] || fail "unknown tokenizer did not fail"
echo "PASS: cpu and opencl sample the same text"
