#!/bin/bash
# The gpt2 tokenizer against OpenAI's own (npm tiktoken, encoding "gpt2"):
# a few hundred KB of real text that Debian ships (licence texts, raw man
# pages, C headers, translated man pages for non-English text) plus a
# hand-made stress text, encoded by `ctune tokens encode --tokenizer gpt2`
# and by tiktoken, must give identical ids (each file one document after
# <|endoftext|>); a 2.5 MB document crosses ctune's 1 MiB read blocks.
# Decoding must give back the exact bytes, and bytes that are not UTF-8
# (a binary, stray continuation bytes) must round-trip too, read from a
# file and from standard input alike.
#
# Files missing on a machine are left out, but the corpus must reach a
# minimum size and non-ASCII share. Needs node and test/node_modules
# (tools/setup installs them): under CI it fails without them, elsewhere
# it skips (77).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
CTUNE=$top_builddir/ctune
REF="$top_srcdir/test/tiktoken_ref.mjs"
MIN_BYTES=300000
MIN_NONASCII_PERCENT=8

fail() { echo "FAIL: $*"; exit 1; }

if ! command -v node >/dev/null 2>&1 || [ ! -f "$top_srcdir/test/node_modules/tiktoken/package.json" ]; then
	msg="needs node and test/node_modules/tiktoken (tools/setup installs them)"
	[ -n "${CI:-}" ] && fail "$msg"
	echo "SKIP: $msg"
	exit 77
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/corpus"
n=0

# Up to 64 KB of a (possibly gzipped) file, cut at a line end; kept only
# when it is valid UTF-8 (tiktoken takes strings).
add() {
	local src=$1 dst
	[ -r "$src" ] || return 0
	n=$((n + 1))
	dst=$(printf '%s/corpus/%03d-%s' "$T" "$n" "$(basename "$src" .gz)")
	zcat -f "$src" | head -c 65536 | sed '$d' >"$dst"
	if [ ! -s "$dst" ] || ! iconv -f UTF-8 -t UTF-8 "$dst" >/dev/null 2>&1; then
		rm -f "$dst"
	fi
}

L=/usr/share/common-licenses
for f in GPL-3 Apache-2.0 LGPL-2.1 MPL-2.0 Artistic; do add "$L/$f"; done
M=/usr/share/man
for f in man1/man.1.gz man8/apt-get.8.gz man1/dpkg.1.gz man1/bash.1.gz man1/ls.1.gz; do
	add "$M/$f"
done
for f in stdio.h stdlib.h string.h unistd.h curl/curl.h libxml2/libxml/tree.h; do
	add "/usr/include/$f"
done
for lang in ru uk ja zh_CN ko de fr pl cs; do
	for f in man1/man.1.gz man1/apropos.1.gz man1/chsh.1.gz man1/dpkg.1.gz man8/apt-get.8.gz man5/passwd.5.gz; do
		add "$M/$lang/$f"
	done
done
(cd "$top_srcdir/test" && node "$REF" synth "$T/corpus/900-synth.txt") || fail "synth"
cat "$T"/corpus/* "$T"/corpus/* "$T"/corpus/* "$T"/corpus/* | head -c 2500000 | sed '$d' \
	>"$T/corpus/999-big.txt"

files=("$T"/corpus/*)
bytes=$(cat "${files[@]}" | wc -c)
nonascii=$(cat "${files[@]}" | LC_ALL=C tr -d '\000-\177' | wc -c)
echo "corpus: ${#files[@]} files, $bytes bytes, $nonascii non-ASCII bytes"
[ "$bytes" -ge $((MIN_BYTES + 2500000)) ] ||
	fail "corpus too small ($bytes bytes): Debian's licence texts, man pages or headers are missing"
[ $((nonascii * 100)) -ge $((bytes * MIN_NONASCII_PERCENT)) ] ||
	fail "corpus has too little non-ASCII text ($nonascii of $bytes bytes): translated man pages missing?"

"$CTUNE" tokens encode --tokenizer gpt2 "${files[@]}" --out "$T/all.bin" || fail "encode"
(cd "$top_srcdir/test" && node "$REF" compare "$T/all.bin" "${files[@]}") ||
	fail "ctune's gpt2 ids differ from tiktoken's"

"$CTUNE" tokens decode --tokenizer gpt2 "$T/all.bin" --out "$T/all.txt" || fail "decode"
for f in "${files[@]}"; do printf '<|endoftext|>'; cat "$f"; done >"$T/want.txt"
cmp "$T/want.txt" "$T/all.txt" || fail "decode does not give back the text"

# Not UTF-8: a binary and stray bytes; by file and by standard input.
{ head -c 200000 "$CTUNE"; printf '\x80\xbf abc\xc3 \xed\xa0\x80 \xf4\x90\x80\x80 x\xff\xfe'; } >"$T/raw"
"$CTUNE" tokens encode --tokenizer gpt2 --no-eot "$T/raw" --out "$T/raw.bin" || fail "encode raw"
"$CTUNE" tokens encode --tokenizer gpt2 --no-eot - --out "$T/raw2.bin" <"$T/raw" || fail "encode stdin"
cmp "$T/raw.bin" "$T/raw2.bin" || fail "standard input encodes differently from the file"
"$CTUNE" tokens decode --tokenizer gpt2 "$T/raw.bin" >"$T/raw.out" || fail "decode raw"
cmp "$T/raw" "$T/raw.out" || fail "invalid UTF-8 does not round-trip"

echo "PASS: gpt2 ids identical to tiktoken on $bytes bytes (${#files[@]} files), exact round trips"
