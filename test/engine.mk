# Unit tests of the training engine (engine/): formats, portable
# math, the C reference model, work units with save/resume.
# The tests' default flags (test/local.mk) but for test_cmd_train.
EXTRA_DIST += test/ct_test_engine.h
if HAVE_CMOCKA
CT_ENGINE_TESTS = test/test_gpt2 test/test_tokens test/test_math test/test_model \
	test/test_cmd_train test/test_sample test/test_lora test/test_base
# test_sample_prefix: a backend's logits of one row from the rows before
# it are the whole window's bits
CT_ENGINE_TESTS += test/test_sample_prefix
# test_isa: every kernel path (x86-64, AVX2, AVX-512) the CPU runs gives
# the same bits (engine/ct_isa.h)
CT_ENGINE_TESTS += test/test_isa
# test_chain: the WU hash chain's links (ct_wu_state_digest)
CT_ENGINE_TESTS += test/test_chain
# test_model_ops: the model families' table (engine/ct_model_ops.h)
CT_ENGINE_TESTS += test/test_model_ops
check_PROGRAMS += $(CT_ENGINE_TESTS)
TESTS += $(CT_ENGINE_TESTS)

# `ctune train` is the client's command (client/libctclient.a).
test_test_cmd_train_CFLAGS = $(CT_TEST_CFLAGS) -I$(top_srcdir)/client
test_test_cmd_train_LDADD = $(CT_CLIENT_TEST_LIBS)
endif

# The same WU gives the same bits on every machine and device: fixed tiny
# GPT-2, Llama and LoRA WUs against hashes committed in test/data/repro/.
TESTS += test/repro_wu.sh
dist_check_SCRIPTS += test/repro_wu.sh
EXTRA_DIST += test/data/repro

# Compact frozen bases from the command line (import, train, cpu = opencl)
TESTS += test/base_train.sh
dist_check_SCRIPTS += test/base_train.sh

# GPT-2 checkpoints out in transformers' GPT-2 layout (engine/ct_gpt2_hf.h)
TESTS += test/gpt2_hf_export.sh
dist_check_SCRIPTS += test/gpt2_hf_export.sh
