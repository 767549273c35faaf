# Tokenizer tests: the unit test of lib/ct_tokenizer.h (bytes and gpt2) and
# the comparison of the gpt2 tokenizer with OpenAI's tiktoken on real text
# (needs node and test/node_modules, see test/package.json); for
# tokenizer.json, the JSON reader, version 2 token files, a small
# tokenizer.json per pre-tokeniser, and the comparison with Hugging Face's
# tokenizers (npm @lenml/tokenizers) on Llama 3's and Qwen3's real files.
# The tests' default flags (test/local.mk).
EXTRA_DIST += test/ct_test_tokenizer.h
if HAVE_CMOCKA
CT_TOKENIZER_TESTS = test/test_tokenizer test/test_tokenizer_hf
check_PROGRAMS += $(CT_TOKENIZER_TESTS)
TESTS += $(CT_TOKENIZER_TESTS)
endif
dist_check_SCRIPTS += test/tokenizer_gpt2.sh test/tokenizer_hf.sh
TESTS += test/tokenizer_gpt2.sh test/tokenizer_hf.sh
EXTRA_DIST += test/tiktoken_ref.mjs
EXTRA_DIST += test/hf_ref.mjs test/token_ref.mjs test/tokenizer_corpus.sh
