# Llama model type: unit tests of the JSON reader, safetensors files, the
# Llama config/checkpoint and C-reference determinism, and the comparison
# with an independent PyTorch implementation (skips without python3-torch).
if HAVE_CMOCKA
check_PROGRAMS += test/test_llama
TESTS += test/test_llama
test_test_llama_SOURCES = test/test_llama.c
test_test_llama_CFLAGS = $(CT_TEST_CFLAGS)
test_test_llama_LDADD = $(CT_TEST_LIBS)
endif
dist_check_SCRIPTS += test/llama_torch.sh
TESTS += test/llama_torch.sh
EXTRA_DIST += test/llama_torch.py
dist_check_SCRIPTS += test/llama_e2e.sh
TESTS += test/llama_e2e.sh
dist_check_SCRIPTS += test/llama_e2e_wide.sh
TESTS += test/llama_e2e_wide.sh
# tokenizer.json post_processor templates (Llama 3's <|begin_of_text|>)
# against Hugging Face's encode with special tokens (node; skips without)
dist_check_SCRIPTS += test/tokenizer_template.sh
TESTS += test/tokenizer_template.sh
EXTRA_DIST += test/hf_template.mjs
# vocabularies over 65,536 (Llama 3, Qwen2.5) on real tokenizer.json text,
# C reference vs OpenCL byte for byte (skips without test/node_modules)
dist_check_SCRIPTS += test/llama_vocab.sh
TESTS += test/llama_vocab.sh
