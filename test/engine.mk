# Unit tests of the training engine (engine/): formats, portable
# math, the C reference model, work units with save/resume.
if HAVE_CMOCKA
CT_ENGINE_TESTS = test/test_gpt2 test/test_tokens test/test_math test/test_model \
	test/test_cmd_train test/test_sample test/test_lora
check_PROGRAMS += $(CT_ENGINE_TESTS)
TESTS += $(CT_ENGINE_TESTS)

test_test_gpt2_SOURCES = test/test_gpt2.c test/ct_test_engine.h
test_test_gpt2_CFLAGS = $(CT_TEST_CFLAGS)
test_test_gpt2_LDADD = $(CT_TEST_LIBS)

test_test_tokens_SOURCES = test/test_tokens.c test/ct_test_engine.h
test_test_tokens_CFLAGS = $(CT_TEST_CFLAGS)
test_test_tokens_LDADD = $(CT_TEST_LIBS)

test_test_sample_SOURCES = test/test_sample.c test/ct_test_engine.h
test_test_sample_CFLAGS = $(CT_TEST_CFLAGS)
test_test_sample_LDADD = $(CT_TEST_LIBS)

test_test_math_SOURCES = test/test_math.c
test_test_math_CFLAGS = $(CT_TEST_CFLAGS)
test_test_math_LDADD = $(CT_TEST_LIBS)

test_test_model_SOURCES = test/test_model.c test/ct_test_engine.h
test_test_model_CFLAGS = $(CT_TEST_CFLAGS)
test_test_model_LDADD = $(CT_TEST_LIBS)

test_test_lora_SOURCES = test/test_lora.c test/ct_test_engine.h
test_test_lora_CFLAGS = $(CT_TEST_CFLAGS)
test_test_lora_LDADD = $(CT_TEST_LIBS)

test_test_cmd_train_SOURCES = test/test_cmd_train.c test/ct_test_engine.h
test_test_cmd_train_CFLAGS = $(CT_TEST_CFLAGS) -I$(top_srcdir)/client
test_test_cmd_train_LDADD = $(CT_CLIENT_TEST_LIBS)
endif

# a backend's logits of one row from the rows before it: the whole window's bits
if HAVE_CMOCKA
check_PROGRAMS += test/test_sample_prefix
TESTS += test/test_sample_prefix
test_test_sample_prefix_SOURCES = test/test_sample_prefix.c test/ct_test_engine.h \
	test/ct_test_ocl.h
test_test_sample_prefix_CFLAGS = $(CT_TEST_CFLAGS)
test_test_sample_prefix_LDADD = $(CT_TEST_LIBS)
endif
