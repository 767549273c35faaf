# Unit tests of lib/ modules.
if HAVE_CMOCKA
CT_LIB_TESTS = test/test_err test/test_log test/test_buf test/test_utf8 test/test_cmd
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

test_test_cmd_SOURCES = test/test_cmd.c
test_test_cmd_CFLAGS = $(CT_TEST_CFLAGS)
test_test_cmd_LDADD = $(CT_TEST_LIBS)

test_test_utf8_SOURCES = test/test_utf8.c
test_test_utf8_CFLAGS = $(CT_TEST_CFLAGS)
test_test_utf8_LDADD = $(CT_TEST_LIBS)

# Utility modules (lib/local.mk).
CT_UTIL_TESTS = test/test_hash test/test_gzip test/test_file test/test_conf test/test_xml
check_PROGRAMS += $(CT_UTIL_TESTS)
TESTS += $(CT_UTIL_TESTS)

test_test_hash_SOURCES = test/test_hash.c
test_test_hash_CFLAGS = $(CT_TEST_CFLAGS)
test_test_hash_LDADD = $(CT_TEST_LIBS)

test_test_gzip_SOURCES = test/test_gzip.c
test_test_gzip_CFLAGS = $(CT_TEST_CFLAGS)
test_test_gzip_LDADD = $(CT_TEST_LIBS)

test_test_file_SOURCES = test/test_file.c
test_test_file_CFLAGS = $(CT_TEST_CFLAGS)
test_test_file_LDADD = $(CT_TEST_LIBS)

test_test_conf_SOURCES = test/test_conf.c
test_test_conf_CFLAGS = $(CT_TEST_CFLAGS)
test_test_conf_LDADD = $(CT_TEST_LIBS)

test_test_xml_SOURCES = test/test_xml.c
test_test_xml_CFLAGS = $(CT_TEST_CFLAGS)
test_test_xml_LDADD = $(CT_TEST_LIBS)
endif
