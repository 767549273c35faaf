# Tests of ctune-server (server/): unit tests of the database layer and the
# upload tokens, the data-driven scheduler cases (test/data/sched/*.xml,
# run against a real HTTP server on an embedded database), and the flow
# test of the real binary on the embedded database and on a private
# mariadbd. Included from test/local.mk.
CT_SERVER_TEST_CFLAGS = $(CT_TEST_CFLAGS) $(MARIADB_CFLAGS) $(MHD_CFLAGS) $(CURL_CFLAGS) \
	-I$(top_srcdir)/server
CT_SERVER_TEST_LIBS = server/libctserver.a $(CT_TEST_LIBS) $(MARIADBD_LIBS) $(MHD_LIBS) \
	$(CURL_LIBS)

CT_SERVER_SCRIPT_TESTS = test/server_flow_embedded.sh test/server_flow_mariadbd.sh \
	test/server_instances.sh
dist_check_SCRIPTS += $(CT_SERVER_SCRIPT_TESTS)
EXTRA_DIST += test/server_flow.sh test/data/sched test/ct_test_db.h
TESTS += $(CT_SERVER_SCRIPT_TESTS)

if HAVE_CMOCKA
CT_SERVER_UNIT_TESTS = test/test_db test/test_token test/test_sched test/test_wg \
	test/test_lock_order
CT_SERVER_UNIT_TESTS += test/test_server_sample test/test_dl test/test_wu_state
# the migration lock and resumable migrations
CT_SERVER_UNIT_TESTS += test/test_migrate_lock
# an RPC's rows examined stay flat as the unsent work grows
CT_SERVER_UNIT_TESTS += test/test_sched_scan
check_PROGRAMS += $(CT_SERVER_UNIT_TESTS)
TESTS += $(CT_SERVER_UNIT_TESTS)

test_test_lock_order_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_lock_order_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_dl_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_dl_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_wu_state_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_wu_state_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_db_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_db_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_sched_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_sched_scan_SOURCES = test/test_sched_scan.c bench/sched_load.c
test_test_sched_scan_CFLAGS = $(CT_SERVER_TEST_CFLAGS) -I$(top_srcdir)/bench
test_test_sched_scan_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_sched_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_wg_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_wg_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_server_sample_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_server_sample_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_token_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_token_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_migrate_lock_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_migrate_lock_LDADD = $(CT_SERVER_TEST_LIBS)
endif

# job submit's one-line refusals and warnings (server/daemons/submit_check.h)
TESTS += test/server_submit_checks.sh test/server_instance_embedded.sh
dist_check_SCRIPTS += test/server_submit_checks.sh test/server_instance_embedded.sh
if HAVE_CMOCKA
check_PROGRAMS += test/test_submit_check
TESTS += test/test_submit_check
test_test_submit_check_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_submit_check_LDADD = $(CT_SERVER_TEST_LIBS)
# job export --adapter (server/cmd/job_peft.c)
check_PROGRAMS += test/test_job_peft
TESTS += test/test_job_peft
test_test_job_peft_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_job_peft_LDADD = $(CT_SERVER_TEST_LIBS)
endif
