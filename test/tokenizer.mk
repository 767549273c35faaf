# Tokenizer tests: the unit test of lib/ct_tokenizer.h (bytes and gpt2) and
# the comparison of the gpt2 tokenizer with OpenAI's tiktoken on real text
# (needs node and test/node_modules, see test/package.json).
if HAVE_CMOCKA
check_PROGRAMS += test/test_tokenizer
TESTS += test/test_tokenizer
test_test_tokenizer_SOURCES = test/test_tokenizer.c test/ct_test_engine.h \
	test/ct_test_tokenizer.h
test_test_tokenizer_CFLAGS = $(CT_TEST_CFLAGS)
test_test_tokenizer_LDADD = $(CT_TEST_LIBS)
endif
dist_check_SCRIPTS += test/tokenizer_gpt2.sh
TESTS += test/tokenizer_gpt2.sh
EXTRA_DIST += test/tiktoken_ref.mjs
# tokenizer.json: the JSON reader, version 2 token files, a small
# tokenizer.json per pre-tokeniser; and the comparison with Hugging Face's
# tokenizers (npm @lenml/tokenizers) on Llama 3's and Qwen3's real files.
if HAVE_CMOCKA
check_PROGRAMS += test/test_tokenizer_hf
TESTS += test/test_tokenizer_hf
test_test_tokenizer_hf_SOURCES = test/test_tokenizer_hf.c test/ct_test_engine.h \
	test/ct_test_tokenizer.h
test_test_tokenizer_hf_CFLAGS = $(CT_TEST_CFLAGS)
test_test_tokenizer_hf_LDADD = $(CT_TEST_LIBS)
endif
dist_check_SCRIPTS += test/tokenizer_hf.sh
TESTS += test/tokenizer_hf.sh
EXTRA_DIST += test/hf_ref.mjs test/token_ref.mjs test/tokenizer_corpus.sh
