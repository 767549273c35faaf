# ctune-corpus: synthetic corpora for the demo and the lo-fi benchmarks.
# The generator itself is bench/ct_corpus.[ch], shared with bench/bench_lofi.
noinst_PROGRAMS += bench/ctune-corpus
bench_ctune_corpus_SOURCES = bench/gen_corpus.c bench/ct_corpus.c bench/ct_corpus.h
bench_ctune_corpus_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS)
bench_ctune_corpus_LDADD = lib/libctune.a $(CT_DEP_LIBS)
