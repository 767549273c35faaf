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
endif
