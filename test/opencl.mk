# Tests of the OpenCL backend (engine/ct_ocl*.c): the runtime, every kernel
# against the C reference bit for bit, and whole work units on cpu vs opencl.
# They run on PoCL here (POCL_DEVICES=pthread, shared POCL_CACHE_DIR, set in
# AM_TESTS_ENVIRONMENT) and exit 77 (skip) on a machine without any OpenCL
# device. Included from test/local.mk.
if HAVE_CMOCKA
CT_OPENCL_TESTS = test/test_ocl test/test_ocl_kernels test/test_ocl_train \
	test/test_ocl_selftest test/test_ocl_lora test/test_ocl_llama
check_PROGRAMS += $(CT_OPENCL_TESTS)
TESTS += $(CT_OPENCL_TESTS)

test_test_ocl_SOURCES = test/test_ocl.c test/ct_test_ocl.h
test_test_ocl_CFLAGS = $(CT_TEST_CFLAGS)
test_test_ocl_LDADD = $(CT_TEST_LIBS)

test_test_ocl_kernels_SOURCES = test/test_ocl_kernels.c test/ct_test_ocl.h
test_test_ocl_kernels_CFLAGS = $(CT_TEST_CFLAGS)
test_test_ocl_kernels_LDADD = $(CT_TEST_LIBS)

test_test_ocl_train_SOURCES = test/test_ocl_train.c test/ct_test_ocl.h
test_test_ocl_train_CFLAGS = $(CT_TEST_CFLAGS)
test_test_ocl_train_LDADD = $(CT_TEST_LIBS)

test_test_ocl_lora_SOURCES = test/test_ocl_lora.c test/ct_test_ocl.h
test_test_ocl_lora_CFLAGS = $(CT_TEST_CFLAGS)
test_test_ocl_lora_LDADD = $(CT_TEST_LIBS)

test_test_ocl_llama_SOURCES = test/test_ocl_llama.c test/ct_test_ocl.h
test_test_ocl_llama_CFLAGS = $(CT_TEST_CFLAGS)
test_test_ocl_llama_LDADD = $(CT_TEST_LIBS)

test_test_ocl_selftest_SOURCES = test/test_ocl_selftest.c
test_test_ocl_selftest_CFLAGS = $(CT_TEST_CFLAGS)
test_test_ocl_selftest_LDADD = $(CT_TEST_LIBS)
endif

# `ctune devices` end to end (needs the ctune binary).
dist_check_SCRIPTS += test/ctune_devices.sh
TESTS += test/ctune_devices.sh

# `ctune sample` gives the same text on cpu and opencl (needs ctune).
dist_check_SCRIPTS += test/sample_devices.sh
TESTS += test/sample_devices.sh
