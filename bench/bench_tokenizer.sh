#!/bin/bash
# bench_tokenizer.sh - gpt2 encode throughput (MB/s) of ctune next to
# OpenAI's tiktoken (npm, WebAssembly) on the same input, one core each
# (taskset), runs interleaved, the machine load printed beside.
#
#   bench/bench_tokenizer.sh [BUILD_DIR] [MB] [ROUNDS]
#
# Then, when test/node_modules has them (tools/setup), the same for Llama 3's
# and Qwen3's tokenizer.json beside Hugging Face's tokenizers in JavaScript
# (npm @lenml/tokenizers, test/hf_ref.mjs).
#
# Input: MB (default 8) of real text Debian ships - licence texts, raw man
# pages in translation, then in English - valid UTF-8 only (tiktoken takes
# strings). Each run encodes the whole input 3 times and keeps the best;
# both sides load their tokenizer data before timing.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
mb=${2:-8}
rounds=${3:-5}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

for f in /usr/share/common-licenses/* /usr/share/man/*/man*/*.gz /usr/share/man/man*/*.gz; do
	[ -f "$f" ] || continue
	zcat -f "$f" >"$T/one" 2>/dev/null || continue
	iconv -f UTF-8 -t UTF-8 "$T/one" >/dev/null 2>&1 || continue
	cat "$T/one" >>"$T/input.txt"
	[ "$(stat -c %s "$T/input.txt")" -ge $((mb * 1000000)) ] && break
done
bytes=$(stat -c %s "$T/input.txt")
nonascii=$(LC_ALL=C tr -d '\000-\177' <"$T/input.txt" | wc -c)
echo "input: $bytes bytes of Debian text ($((nonascii * 100 / bytes))% non-ASCII bytes); one core (taskset -c 0)"
printf '%-6s %12s %14s  %s\n' run "ctune MB/s" "tiktoken MB/s" "load (1 5 15 min)"
for r in $(seq "$rounds"); do
	c=$(nice taskset -c 0 "$build/bench/bench_tokenizer" "$T/input.txt" 3 | cut -d' ' -f1,2)
	t=$(cd "$src/test" && nice taskset -c 0 node tiktoken_ref.mjs bench "$T/input.txt" 3)
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	printf '%-6s %12s %14s  %s\n' "$r" "${c#ctune }" "${t#tiktoken }" "$load"
	echo "${c#ctune }" >>"$T/c"
	echo "${t#tiktoken }" >>"$T/t"
done
med() { sort -g "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-6s %12s %14s\n' median "$(med "$T/c")" "$(med "$T/t")"

nm=$src/test/node_modules/@lenml
[ -f "$nm/tokenizers/package.json" ] || exit 0
for m in llama3 qwen3; do
	dir=$nm/tokenizer-$m/models
	[ -f "$dir/tokenizer.json" ] || continue
	echo
	echo "$m tokenizer.json"
	printf '%-6s %12s %14s  %s\n' run "ctune MB/s" "hf (JS) MB/s" "load (1 5 15 min)"
	for r in $(seq "$rounds"); do
		c=$(nice taskset -c 0 "$build/bench/bench_tokenizer" --tokenizer "$dir/tokenizer.json" \
			"$T/input.txt" 3 | cut -d' ' -f1,2)
		t=$(cd "$src/test" && nice taskset -c 0 node hf_ref.mjs bench "$dir" "$T/input.txt" 1)
		printf '%-6s %12s %14s  %s\n' "$r" "${c#ctune }" "${t#hf }" "$(cut -d' ' -f1-3 /proc/loadavg)"
	done
done
