#!/bin/bash
# The Llama model type against an independent PyTorch implementation
# (test/llama_torch.py): small random Llama-config models (GQA, tied and
# untied embeddings, Qwen2-style q/k/v biases, Llama-3 RoPE scaling; F32,
# BF16 and F16 tensors; one and two shards) written as Hugging Face
# safetensors directories by Python, imported, trained and exported by
# ctune; losses within 1e-4 and weight updates within 1e-3 relative of
# PyTorch's float64 run (or, for a tensor float32 cannot resolve to 1e-3,
# within 32 x its float32 floor measured on the data by rounding-noise
# runs in float64: see llama_torch.py); fp32 import/export round trip exact; bad
# directories refused by name. Needs a python3 that imports torch (Debian's
# python3-torch): skips (77) without one.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
CTUNE=$top_builddir/ctune

PY=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch' >/dev/null 2>&1; then
		PY=$p
		break
	fi
done
if [ -z "$PY" ]; then
	echo "SKIP: needs python3 with torch (Debian: python3-torch)"
	exit 77
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export CTUNE_THREADS=2
exec nice "$PY" "$top_srcdir/test/llama_torch.py" "$CTUNE" "$T"
