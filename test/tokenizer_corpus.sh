# tokenizer_corpus.sh - sourced by the tokenizer tests (tokenizer_gpt2.sh,
# tokenizer_hf.sh): `corpus_add_debian DIR` copies a few hundred KB of real
# text Debian ships into DIR - licence texts, raw man pages, C headers, and
# translated man pages for non-English text - up to 64 KB of each file, cut
# at a line end, kept only when it is valid UTF-8 (the references take
# strings). `corpus_check FILE...` prints the size and fails (returns 1)
# below MIN_BYTES bytes or MIN_NONASCII_PERCENT non-ASCII bytes.
# `corpus_make DIR REF` does both, adding the stress text of `node REF
# synth` and a 2.5 MB document of all of it (across ctune's 1 MiB blocks);
# the files are then "$DIR"/*.

corpus_n=0

# Up to 64 KB of a (possibly gzipped) file into $1.
corpus_add() {
	local dir=$1 src=$2 dst
	[ -r "$src" ] || return 0
	corpus_n=$((corpus_n + 1))
	dst=$(printf '%s/%03d-%s' "$dir" "$corpus_n" "$(basename "$src" .gz)")
	zcat -f "$src" | head -c 65536 | sed '$d' >"$dst"
	if [ ! -s "$dst" ] || ! iconv -f UTF-8 -t UTF-8 "$dst" >/dev/null 2>&1; then
		rm -f "$dst"
	fi
}

corpus_add_debian() {
	local dir=$1 f lang L=/usr/share/common-licenses M=/usr/share/man
	for f in GPL-3 Apache-2.0 LGPL-2.1 MPL-2.0 Artistic; do corpus_add "$dir" "$L/$f"; done
	for f in man1/man.1.gz man8/apt-get.8.gz man1/dpkg.1.gz man1/bash.1.gz man1/ls.1.gz; do
		corpus_add "$dir" "$M/$f"
	done
	for f in stdio.h stdlib.h string.h unistd.h curl/curl.h libxml2/libxml/tree.h; do
		corpus_add "$dir" "/usr/include/$f"
	done
	for lang in ru uk ja zh_CN ko de fr pl cs; do
		for f in man1/man.1.gz man1/apropos.1.gz man1/chsh.1.gz man1/dpkg.1.gz \
			 man8/apt-get.8.gz man5/passwd.5.gz; do
			corpus_add "$dir" "$M/$lang/$f"
		done
	done
}

corpus_check() {
	local bytes nonascii
	bytes=$(cat "$@" | wc -c)
	nonascii=$(cat "$@" | LC_ALL=C tr -d '\000-\177' | wc -c)
	echo "corpus: $# files, $bytes bytes, $nonascii non-ASCII bytes"
	corpus_bytes=$bytes
	if [ "$bytes" -lt "$MIN_BYTES" ]; then
		echo "FAIL: corpus too small ($bytes bytes): Debian's licence texts, man pages or headers are missing"
		return 1
	fi
	if [ $((nonascii * 100)) -lt $((bytes * MIN_NONASCII_PERCENT)) ]; then
		echo "FAIL: corpus has too little non-ASCII text ($nonascii of $bytes bytes): translated man pages missing?"
		return 1
	fi
}

corpus_make() {
	local dir=$1 ref=$2
	corpus_add_debian "$dir"
	(cd "$top_srcdir/test" && node "$ref" synth "$dir/900-synth.txt") || {
		echo "FAIL: synth"
		return 1
	}
	cat "$dir"/* "$dir"/* "$dir"/* "$dir"/* | head -c 2500000 | sed '$d' >"$dir/999-big.txt"
	MIN_BYTES=$((MIN_BYTES + 2500000))
	corpus_check "$dir"/*
}
