# data/: files the programs read at run time, installed under $(pkgdatadir).
# The build tree finds them in the source tree (CT_SRCDATADIR in
# Makefile.am), an installed program under $(pkgdatadir).
gpt2tokdir = $(pkgdatadir)/tokenizers/gpt2
dist_gpt2tok_DATA = \
	data/tokenizers/gpt2/encoder.json \
	data/tokenizers/gpt2/vocab.bpe \
	data/tokenizers/gpt2/LICENSE \
	data/tokenizers/gpt2/PROVENANCE
EXTRA_DIST += tools/gen_unicode_tab.py
