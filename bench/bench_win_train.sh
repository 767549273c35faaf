#!/bin/sh
# bench/bench_win_train.sh - one training WU on the C reference, Linux
# `ctune train` against `wine64 ctune.exe train` (the Windows build), on
# every kernel path (CTUNE_ISA: x86-64, avx2, avx512) this CPU runs: the
# CPU seconds of the whole command (user + sys of the process: on a shared
# machine the wall clock depends on the neighbours), their ratio, and
# whether both wrote the same bits.
#
#   bench/bench_win_train.sh [LINUX_BUILD [WIN_BUILD]]
#     (default build/ and build-win/ of this tree)
# Environment: STEPS (default 3), THREADS (CTUNE_THREADS, default 1),
#   PATHS (default: every path `ctune devices` lists), WINE (default
#   wine64), WINEPREFIX (default WIN_BUILD/wine). The WU: a GPT-2 of
#   L=4, C=256, NH=4 with GPT-2's vocabulary (bench_train's "small"),
#   batch 4 x 64 tokens.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
lin=$(cd "${1:-$top/build}" && pwd)
win=$(cd "${2:-$top/build-win}" && pwd)
steps=${STEPS:-3}
export CTUNE_THREADS=${THREADS:-1} WINEDEBUG=-all WINEPATH="$win"
export WINEPREFIX=${WINEPREFIX:-$win/wine}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
C=$lin/ctune
W=$win/ctune.exe
WINE=${WINE:-$(command -v wine64 || echo /usr/lib/wine/wine64)}

head -c 200000 "$top/doc/workunit.md" >"$T/text.txt"
"$C" tokens encode --tokenizer bytes --no-eot "$T/text.txt" --out "$T/tok.bin" >/dev/null 2>&1
"$C" model init --config 4,4,256,64,50257,50304 --seed 1 --out "$T/base.bin" >/dev/null
paths=${PATHS:-$("$C" devices --no-selftest 2>/dev/null |
	sed -n 's/^  kernels: .*(this CPU runs: \([^;]*\);.*/\1/p')}

# cpu_s OUT CMD...: runs CMD, prints its user + sys CPU seconds
cpu_s() {
	out=$1
	shift
	/usr/bin/time -f '%U %S' -o "$T/time" "$@" >"$out" 2>&1 || { cat "$out" >&2; exit 1; }
	awk '{ printf "%.2f", $1 + $2 }' "$T/time"
}

wb=$(winepath -w "$T/base.bin") wt=$(winepath -w "$T/tok.bin")
"$WINE" "$W" --version >/dev/null 2>&1	# start the wineserver outside the timing
printf '%-8s %6s %10s %10s %7s %s\n' path steps linux_cpu_s wine_cpu_s ratio bits
for p in $paths; do
	l=$(CTUNE_ISA=$p cpu_s "$T/l.log" "$C" train --model "$T/base.bin" --data "$T/tok.bin" \
		--steps "$steps" --batch 4 --seq 64 --lr 1e-3 --out "$T/l.$p")
	w=$(CTUNE_ISA=$p cpu_s "$T/w.log" "$WINE" "$W" train --model "$wb" --data "$wt" \
		--steps "$steps" --batch 4 --seq 64 --lr 1e-3 --out "$(winepath -w "$T")\\w.$p")
	same=differ
	cmp -s "$T/l.$p" "$T/w.$p" && same=same
	printf '%-8s %6s %10s %10s %7s %s\n' "$p" "$steps" "$l" "$w" \
		"$(awk -v a="$w" -v b="$l" 'BEGIN { printf "%.2f", a / b }')" "$same"
done
