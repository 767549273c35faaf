# Tests of LoRA jobs beyond the engine: the exact merge of K shards'
# adapters, the adapter result format, and the whole LoRA job through the
# real server and clients. Included from test/local.mk.
if HAVE_CMOCKA
# test_lora_merge: the tests' default flags (test/local.mk); test_lora_round:
# the daemons on a LoRA job (embedded database, as in test_daemons);
# test_cl_lora: the client's side, a WU's LoRA elements into the engine's
# parameters.
CT_LORA_SRV_TESTS = test/test_lora_merge test/test_lora_round test/test_cl_lora
check_PROGRAMS += $(CT_LORA_SRV_TESTS)
TESTS += $(CT_LORA_SRV_TESTS)
test_test_lora_round_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_lora_round_LDADD = $(CT_DAEMON_FX_LIBS)
test_test_cl_lora_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_lora_LDADD = $(CT_CLIENT_TEST_LIBS)
endif

# The LoRA integration test: a LoRA job with quorum 2 through the real
# server and two real clients; test/lora_tool (the tests' default flags)
# recomputes the rounds' models and crafts bad adapter results.
check_PROGRAMS += test/lora_tool

CT_LORA_SRV_IT = test/lora_e2e.sh test/verify_e2e.sh test/base_job_e2e.sh test/chain_e2e.sh \
	test/base_job_rounds.sh
dist_check_SCRIPTS += $(CT_LORA_SRV_IT)
TESTS += $(CT_LORA_SRV_IT)
