#!/bin/sh
# test/repro_wu.sh - the same work unit gives the same bits on every
# machine: a few fixed tiny WUs (a GPT-2-config and a Llama-config model
# trained 3 AdamW steps, and LoRA adapters of each) are run with `ctune
# train`, the runner the client uses, on the CPU reference and on every
# OpenCL device `ctune devices` lists (PoCL where installed), and the
# SHA-256 of each model and result is compared with the hashes committed in
# test/data/repro/wus.sha256; the CPU reference also on each other kernel
# path (CTUNE_ISA: x86-64, avx2, avx512) this CPU runs. Volunteers agree
# on a result by its hash, so a machine that computes other bits would
# disagree with every other one:
# this test fails loudly there, naming the WU, the device and what to do.
#
#   CT_REPRO_KEEP=DIR    keep the models and results in DIR
#   CT_REPRO_UPDATE=1    rewrite wus.sha256 from this machine's CPU run
#                        (only for an intended change of arithmetic)
#
# Exit 0 = pass, anything else = failure.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
C=$top_builddir/ctune
D=$top_srcdir/test/data/repro
WANT=$D/wus.sha256
T=${CT_REPRO_KEEP:-$(mktemp -d)}
mkdir -p "$T" || exit 1
[ -n "${CT_REPRO_KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
fails=0
TRAIN="--data $T/tok.bin --steps 3 --batch 2 --seq 32 --lr 1e-3"

die() { echo "FAIL: $*"; exit 1; }
run() { "$@" >"$T/out.log" 2>&1 || { cat "$T/out.log"; die "$*"; }; }

# The fixed inputs: one token per byte of text.txt, two random models.
run "$C" tokens encode --tokenizer bytes --no-eot "$D/text.txt" --out "$T/tok.bin"
run "$C" model init --config 2,2,32,64,256,256 --seed 7 --out "$T/gpt2.bin"
run "$C" model init-llama --layers 2 --heads 4 --kv-heads 2 --channels 32 --mlp 64 \
	--vocab 256 --max-seq 64 --qkv-bias --seed 7 --out "$T/llama.ct"

# wu NAME DEVICE BASE [train options]: run the WU, print "HASH  NAME";
# DEVICE cpu+PATH is the C reference on kernel path PATH (CTUNE_ISA)
wu() {
	name=$1 spec=$2 wdev=${2%%+*} isa=auto base=$3
	case $spec in *+*) isa=${spec#*+} ;; esac
	shift 3
	# shellcheck disable=SC2086
	run env CTUNE_ISA="$isa" "$C" train --model "$T/$base" $TRAIN --device "$wdev" "$@" \
		--out "$T/$name.$spec"
	echo "$(sha256sum <"$T/$name.$spec" | cut -d' ' -f1)  $name"
}
hashes() {	# hashes DEVICE -> this machine's hash of every input and WU
	for f in tok.bin gpt2.bin llama.ct; do
		echo "$(sha256sum <"$T/$f" | cut -d' ' -f1)  $f"
	done
	wu gpt2-full "$1" gpt2.bin
	wu gpt2-lora "$1" gpt2.bin --lora-rank 4 --lora-seed 3
	wu llama-full "$1" llama.ct
	wu llama-lora "$1" llama.ct --lora-rank 4 --lora-seed 3
}

if [ -n "${CT_REPRO_UPDATE:-}" ]; then
	hashes cpu >"$WANT" || exit 1
	echo "wrote $WANT from this machine's CPU run:"; cat "$WANT"
	exit 0
fi

# the C reference on its default kernel path, then on every other path
# this CPU runs (x86-64, avx2, avx512: engine/ct_isa.h), then OpenCL
devs=cpu
paths=$("$C" devices --no-selftest 2>/dev/null |
	sed -n 's/^  kernels: *\([^ ]*\) (this CPU runs: \([^;]*\);.*/\1 \2/p')
best=${paths%% *}
for p in ${paths#* }; do
	[ "$p" = "$best" ] || devs="$devs cpu+$p"
done
[ -n "$paths" ] || { echo "FAIL: ctune devices names no kernel paths"; exit 1; }
for d in $("$C" devices 2>/dev/null | sed -n 's/^\(opencl:[0-9]*\) .*/\1/p'); do
	devs="$devs $d"
done
cpu=$(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')
for dev in $devs; do
	hashes "$dev" >"$T/got.$dev" || exit 1
	while read -r want name; do
		got=$(sed -n "s/^\([0-9a-f]*\)  $name\$/\1/p" "$T/got.$dev")
		if [ "$got" = "$want" ]; then
			echo "ok - $name on $dev: $want"
			continue
		fi
		fails=$((fails + 1))
		cat <<MSG
FAIL: $name on $dev gives other bits than the committed hash.
  want $want (test/data/repro/wus.sha256)
  got  ${got:-nothing}
  machine: ${cpu:-unknown CPU}; device: $dev
  Volunteers on machines like this one would never agree by hash with the
  others. Find the first thing that differs: rerun with CT_REPRO_KEEP=DIR
  and compare DIR's inputs (tok.bin, gpt2.bin, llama.ct: a different
  initialisation or tokenizer) before the WUs; compare 'ctune train'
  losses per step with a machine that passes; suspect a libm function, a
  compiler flag (-ffast-math, FMA contraction) or a kernel whose order of
  summation depends on the hardware. Only an intended change of arithmetic
  may update the hashes: CT_REPRO_UPDATE=1 test/repro_wu.sh, and say why in
  the commit.
MSG
	done <"$WANT"
done
exit $((fails > 0))
