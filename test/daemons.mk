# Unit tests of the daemons part: result deltas, averaging, credit math,
# validator/transitioner/assimilator decisions. Included from test/local.mk.
if HAVE_CMOCKA
CT_DAEMONS_TESTS = test/test_delta test/test_avg test/test_credit test/test_quorum \
	test/test_daemons test/test_mean_stream test/test_outer test/test_bisect
check_PROGRAMS += $(CT_DAEMONS_TESTS)
TESTS += $(CT_DAEMONS_TESTS)
# the outer step against PyTorch's SGD (skips without python3-torch)
check_PROGRAMS += test/outer_run
dist_check_SCRIPTS += test/outer_torch.sh
TESTS += test/outer_torch.sh
# two validator processes on a private mariadbd (the script builds nothing)
check_PROGRAMS += test/test_vrace
dist_check_SCRIPTS += test/vrace_mariadbd.sh
TESTS += test/vrace_mariadbd.sh

# test_delta and test_avg: the tests' default flags (test/local.mk); the
# others are server tests.
test_test_credit_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_credit_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_quorum_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_quorum_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_bisect_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_bisect_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_mean_stream_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_mean_stream_LDADD = $(CT_SERVER_TEST_LIBS)

# the fixture test_daemons, test_vrace and test_lora_round share, compiled
# once into test/libctdaemonfx.a
check_LIBRARIES += test/libctdaemonfx.a
test_libctdaemonfx_a_SOURCES = test/daemon_fixture.c test/daemon_fixture.h
test_libctdaemonfx_a_CFLAGS = $(CT_SERVER_CFLAGS) $(CMOCKA_CFLAGS)
CT_DAEMON_FX_LIBS = test/libctdaemonfx.a $(CT_SERVER_TEST_LIBS)

test_test_daemons_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_daemons_LDADD = $(CT_DAEMON_FX_LIBS)

test_test_vrace_SOURCES = test/test_vrace.c
test_test_vrace_CFLAGS = $(CT_SERVER_CFLAGS) $(CMOCKA_CFLAGS)
test_test_vrace_LDADD = test/libctdaemonfx.a $(CT_SERVER_LIBS) $(CMOCKA_LIBS)
endif

# the server's evaluation that moves the weights to the device (eval_handover.c)
if HAVE_CMOCKA
check_PROGRAMS += test/test_eval_handover
TESTS += test/test_eval_handover
test_test_eval_handover_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_eval_handover_LDADD = $(CT_SERVER_TEST_LIBS)
endif
