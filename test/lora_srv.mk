# Tests of LoRA jobs beyond the engine: the exact merge of K shards'
# adapters, the adapter result format, and the whole LoRA job through the
# real server and clients. Included from test/local.mk.
if HAVE_CMOCKA
CT_LORA_SRV_TESTS = test/test_lora_merge
check_PROGRAMS += $(CT_LORA_SRV_TESTS)
TESTS += $(CT_LORA_SRV_TESTS)

test_test_lora_merge_SOURCES = test/test_lora_merge.c
test_test_lora_merge_CFLAGS = $(CT_TEST_CFLAGS)
test_test_lora_merge_LDADD = $(CT_TEST_LIBS)

# The daemons on a LoRA job (embedded database, as in test_daemons).
CT_LORA_SRV_TESTS += test/test_lora_round
check_PROGRAMS += test/test_lora_round
TESTS += test/test_lora_round
test_test_lora_round_SOURCES = test/test_lora_round.c
test_test_lora_round_CFLAGS = $(CT_SERVER_CFLAGS) $(CMOCKA_CFLAGS)
test_test_lora_round_LDADD = test/libctdaemonfx.a $(CT_SERVER_LIBS) $(CMOCKA_LIBS)

# The client's side: a WU's LoRA elements into the engine's parameters.
check_PROGRAMS += test/test_cl_lora
TESTS += test/test_cl_lora
test_test_cl_lora_SOURCES = test/test_cl_lora.c
test_test_cl_lora_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_lora_LDADD = $(CT_CLIENT_TEST_LIBS)
endif

# The LoRA integration test: a LoRA job with quorum 2 through the real
# server and two real clients; test/lora_tool recomputes the rounds'
# models and crafts bad adapter results.
check_PROGRAMS += test/lora_tool
test_lora_tool_SOURCES = test/lora_tool.c
test_lora_tool_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS)
test_lora_tool_LDADD = $(CT_CORE_LIBS) $(CT_DEP_LIBS)

CT_LORA_SRV_IT = test/lora_e2e.sh
dist_check_SCRIPTS += $(CT_LORA_SRV_IT)
TESTS += $(CT_LORA_SRV_IT)
