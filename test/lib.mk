# Unit tests of lib/ modules (the tests' default flags, test/local.mk).
if HAVE_CMOCKA
CT_LIB_TESTS = test/test_err test/test_log test/test_buf test/test_utf8 test/test_cmd \
	test/test_options
check_PROGRAMS += $(CT_LIB_TESTS)
TESTS += $(CT_LIB_TESTS)

# Utility modules (lib/local.mk).
CT_UTIL_TESTS = test/test_hash test/test_gzip test/test_file test/test_conf test/test_xml
check_PROGRAMS += $(CT_UTIL_TESTS)
TESTS += $(CT_UTIL_TESTS)
# bf16 / f16 exports: the roundings and ct_hf_dtype.h
check_PROGRAMS += test/test_hf_dtype
TESTS += test/test_hf_dtype
endif
