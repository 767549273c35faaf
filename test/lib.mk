# Unit tests of lib/ modules.
if HAVE_CMOCKA
CT_LIB_TESTS = test/test_err test/test_log test/test_buf
check_PROGRAMS += $(CT_LIB_TESTS)
TESTS += $(CT_LIB_TESTS)

test_test_err_SOURCES = test/test_err.c
test_test_err_CFLAGS = $(CT_TEST_CFLAGS)
test_test_err_LDADD = $(CT_TEST_LIBS)

test_test_log_SOURCES = test/test_log.c
test_test_log_CFLAGS = $(CT_TEST_CFLAGS)
test_test_log_LDADD = $(CT_TEST_LIBS)

test_test_buf_SOURCES = test/test_buf.c
test_test_buf_CFLAGS = $(CT_TEST_CFLAGS)
test_test_buf_LDADD = $(CT_TEST_LIBS)
endif
