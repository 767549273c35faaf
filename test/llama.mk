# Llama model type: unit tests of the JSON reader, safetensors files, the
# Llama config/checkpoint and C-reference determinism, and the comparison
# with an independent PyTorch implementation (skips without python3-torch).
if HAVE_CMOCKA
check_PROGRAMS += test/test_llama
TESTS += test/test_llama
# a job's own tokenizer.json (server/cmd/job_tokenizer.c): the submit's choice
# and errors, long texts encoded in parts
check_PROGRAMS += test/test_job_tokenizer
TESTS += test/test_job_tokenizer
test_test_job_tokenizer_SOURCES = test/test_job_tokenizer.c
test_test_job_tokenizer_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_job_tokenizer_LDADD = $(CT_SERVER_TEST_LIBS)
endif
# Scripts: the PyTorch comparison; a Llama job from plain text with Llama 3's
# tokenizer.json, its samples decoded and its tokenizer exported
# (llama_text.sh); a LoRA job from a safetensors directory
# through server and clients (llama_e2e_wide.sh: with Llama 3's 128,256
# ids and real tokenizer.json text; llama_e2e_qwen3.sh: a Qwen3-style model);
# tokenizer.json post_processor
# templates (Llama 3's <|begin_of_text|>) against Hugging Face's encode with
# special tokens; vocabularies over 65,536 (Llama 3, Qwen2.5) trained on C
# reference vs OpenCL byte for byte. Node-based ones skip without
# test/node_modules.
CT_LLAMA_TEST_SH = test/llama_torch.sh test/llama_e2e.sh test/llama_e2e_wide.sh \
	test/llama_e2e_qwen3.sh test/llama_text.sh test/chat_job_e2e.sh \
	test/tokenizer_template.sh test/llama_vocab.sh
dist_check_SCRIPTS += $(CT_LLAMA_TEST_SH)
TESTS += $(CT_LLAMA_TEST_SH)
EXTRA_DIST += test/llama_torch.py test/hf_template.mjs test/hf_check.py
