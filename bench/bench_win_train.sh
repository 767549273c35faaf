#!/bin/sh
# bench/bench_win_train.sh - one training WU, Linux `ctune train` against
# `wine64 ctune.exe train` (the Windows build), on OpenCL (Wine's
# opencl.dll forwards to the host's libOpenCL: PoCL here) and on every
# kernel path of the C reference (CTUNE_ISA: x86-64, avx2, avx512) this
# CPU runs. Each row is ROUNDS rounds, the two clients interleaved (the
# order alternates round by round); it prints the median CPU seconds of
# the whole command (user + sys of the process and its threads: on a
# shared machine the wall clock depends on the neighbours), the median
# wall seconds, their Wine/Linux ratios, whether both wrote the same bits,
# and the load average when the row ended.
#
#   bench/bench_win_train.sh [LINUX_BUILD [WIN_BUILD]]
#     (default build/ and build-win/ of this tree)
# Environment: STEPS (default 3), ROUNDS (default 3), THREADS
#   (CTUNE_THREADS, default 1), DEVICES (default: opencl:0 if both clients
#   list it, then cpu on every path `ctune devices` lists; a cpu row is
#   cpu:PATH), WINE (default wine64), WINEPREFIX (default WIN_BUILD/wine).
#   The WU: a GPT-2 of L=4, C=256, NH=4 with GPT-2's vocabulary
#   (bench_train's "small"), batch 4 x 64 tokens.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
lin=$(cd "${1:-$top/build}" && pwd)
win=$(cd "${2:-$top/build-win}" && pwd)
steps=${STEPS:-3}
rounds=${ROUNDS:-3}
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
"$WINE" "$W" --version >/dev/null 2>&1	# start the wineserver outside the timing
if [ -z "${DEVICES:-}" ]; then
	"$C" devices --no-selftest >"$T/ldev" 2>&1 || true
	"$WINE" "$W" devices --no-selftest >"$T/wdev" 2>&1 || true
	DEVICES=""
	grep -q 'opencl:0' "$T/ldev" && grep -q 'opencl:0' "$T/wdev" && DEVICES=opencl:0
	for p in $(sed -n 's/^  kernels: .*(this CPU runs: \([^;]*\);.*/\1/p' "$T/ldev"); do
		DEVICES="$DEVICES cpu:$p"
	done
fi
wb=$(winepath -w "$T/base.bin") wt=$(winepath -w "$T/tok.bin") wd=$(winepath -w "$T")

# timed OUT CMD...: runs CMD, appends "cpu_s wall_s" to OUT.times
timed() {
	out=$1
	shift
	/usr/bin/time -f '%U %S %e' -o "$T/time" "$@" >"$out.log" 2>&1 || { cat "$out.log" >&2; exit 1; }
	awk '{ printf "%.2f %.2f\n", $1 + $2, $3 }' "$T/time" >>"$out.times"
}

# median FILE COLUMN
median() {
	sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { printf "%.2f", v[int((NR + 1) / 2)] }'
}

linux() {
	timed "$T/l" env CTUNE_ISA="$isa" "$C" train --model "$T/base.bin" --data "$T/tok.bin" \
		--device "$dev" --steps "$steps" --batch 4 --seq 64 --lr 1e-3 --out "$T/l.out"
}
wine() {
	timed "$T/w" env CTUNE_ISA="$isa" "$WINE" "$W" train --model "$wb" --data "$wt" \
		--device "$dev" --steps "$steps" --batch 4 --seq 64 --lr 1e-3 --out "$wd\\w.out"
}

echo "bench_win_train: $steps steps, $rounds rounds interleaved, CTUNE_THREADS=$CTUNE_THREADS; load at start: $(uptime | sed 's/.*load average: //')"
printf '%-12s %10s %10s %6s %10s %10s %6s %-6s %s\n' device linux_cpu wine_cpu ratio \
	linux_wall wine_wall ratio bits load
for d in $DEVICES; do
	dev=${d%%:*}
	isa=auto
	case $d in
	cpu:*) isa=${d#cpu:} ;;
	*) dev=$d ;;
	esac
	rm -f "$T/l.times" "$T/w.times"
	# one untimed run each: PoCL compiles and caches its kernels
	case $dev in opencl*) linux; wine; rm -f "$T/l.times" "$T/w.times" ;; esac
	r=0
	while [ $r -lt "$rounds" ]; do
		if [ $((r % 2)) = 0 ]; then linux; wine; else wine; linux; fi
		r=$((r + 1))
	done
	same=differ
	cmp -s "$T/l.out" "$T/w.out" && same=same
	lc=$(median "$T/l.times" 1) wc=$(median "$T/w.times" 1)
	lw=$(median "$T/l.times" 2) ww=$(median "$T/w.times" 2)
	printf '%-12s %10s %10s %6s %10s %10s %6s %-6s %s\n' "$d" "$lc" "$wc" \
		"$(awk -v a="$wc" -v b="$lc" 'BEGIN { printf "%.2f", a / b }')" "$lw" "$ww" \
		"$(awk -v a="$ww" -v b="$lw" 'BEGIN { printf "%.2f", a / b }')" "$same" \
		"$(uptime | sed 's/.*load average: //')"
done
