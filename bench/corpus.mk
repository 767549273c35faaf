# ctune-corpus: synthetic corpora for the demo and the lo-fi benchmarks.
noinst_PROGRAMS += bench/ctune-corpus
bench_ctune_corpus_SOURCES = bench/gen_corpus.c
bench_ctune_corpus_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS)
bench_ctune_corpus_LDADD = lib/libctune.a $(CT_DEP_LIBS)
