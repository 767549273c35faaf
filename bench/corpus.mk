# ctune-corpus: synthetic corpora for the demo and the lo-fi benchmarks.
# The generator itself is bench/ct_corpus.[ch] (bench/libctcorpus.a), shared
# with bench_lofi, bench_lora_upload and test_corpus.
noinst_LIBRARIES += bench/libctcorpus.a
bench_libctcorpus_a_SOURCES = bench/ct_corpus.c bench/ct_corpus.h
bench_libctcorpus_a_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS)
noinst_PROGRAMS += bench/ctune-corpus
bench_ctune_corpus_SOURCES = bench/gen_corpus.c
bench_ctune_corpus_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS)
bench_ctune_corpus_LDADD = bench/libctcorpus.a $(CT_CORE_LIBS) $(CT_DEP_LIBS)
