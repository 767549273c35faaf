# Tests of the OpenCL backend (engine/ct_ocl*.c): the runtime, every kernel
# against the C reference bit for bit, and whole work units on cpu vs opencl.
# They run on PoCL here (POCL_DEVICES=pthread, shared POCL_CACHE_DIR, set in
# AM_TESTS_ENVIRONMENT) and exit 77 (skip) on a machine without any OpenCL
# device. Included from test/local.mk; the tests' default flags.
if HAVE_CMOCKA
CT_OPENCL_TESTS = test/test_ocl test/test_ocl_kernels test/test_ocl_train \
	test/test_ocl_selftest test/test_ocl_lora test/test_ocl_llama test/test_ocl_mask \
	test/test_ocl_base
check_PROGRAMS += $(CT_OPENCL_TESTS)
TESTS += $(CT_OPENCL_TESTS)
endif
EXTRA_DIST += test/ct_test_ocl.h

# `ctune devices` end to end, and `ctune sample` giving the same text on cpu
# and opencl (both need the ctune binary).
CT_OPENCL_SCRIPT_TESTS = test/ctune_devices.sh test/sample_devices.sh
dist_check_SCRIPTS += $(CT_OPENCL_SCRIPT_TESTS)
TESTS += $(CT_OPENCL_SCRIPT_TESTS)
