# Unit tests of the lo-fi benchmark part: bench/ct_corpus (the synthetic
# languages behind ctune-corpus and bench_lofi).
if HAVE_CMOCKA
check_PROGRAMS += test/test_corpus
TESTS += test/test_corpus
test_test_corpus_CFLAGS = $(CT_TEST_CFLAGS) -I$(top_srcdir)/bench
test_test_corpus_LDADD = bench/libctcorpus.a $(CT_TEST_LIBS)
endif
