# Unit tests of the daemons part: result deltas, averaging, credit math,
# validator/transitioner/assimilator decisions. Included from test/local.mk.
if HAVE_CMOCKA
CT_DAEMONS_TESTS = test/test_delta test/test_avg
check_PROGRAMS += $(CT_DAEMONS_TESTS)
TESTS += $(CT_DAEMONS_TESTS)

test_test_delta_SOURCES = test/test_delta.c
test_test_delta_CFLAGS = $(CT_TEST_CFLAGS)
test_test_delta_LDADD = $(CT_TEST_LIBS)

test_test_avg_SOURCES = test/test_avg.c
test_test_avg_CFLAGS = $(CT_TEST_CFLAGS)
test_test_avg_LDADD = $(CT_TEST_LIBS)
endif
