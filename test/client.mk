# Tests of the volunteer client (client/): cmocka unit tests of its modules
# and the real-process integration tests (test/client_*.sh).
CT_CLIENT_TEST_CFLAGS = $(CT_TEST_CFLAGS) -I$(top_srcdir)/client $(CURL_CFLAGS)
CT_CLIENT_TEST_LIBS = client/libctclient.a $(CT_TEST_LIBS) $(CURL_LIBS) $(CT_X11_LIBS) $(LIBSYSTEMD_LIBS)

if HAVE_CMOCKA
CT_CLIENT_UNIT_TESTS = test/test_cl_state test/test_cl_backoff test/test_cl_prefs \
	test/test_cl_idle test/test_cl_rpc test/test_cl_ctl test/test_cl_status \
	test/test_cl_buffer test/test_cl_jail test/test_cl_web
check_PROGRAMS += $(CT_CLIENT_UNIT_TESTS)
TESTS += $(CT_CLIENT_UNIT_TESTS)

test_test_cl_state_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_state_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_cl_backoff_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_backoff_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_cl_prefs_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_prefs_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_cl_buffer_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_buffer_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_cl_idle_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_idle_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_cl_rpc_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_rpc_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_cl_ctl_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_ctl_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_cl_status_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_status_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_cl_jail_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_jail_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_cl_web_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_web_LDADD = $(CT_CLIENT_TEST_LIBS)
endif

# A stand-in server for the client's own integration tests.
check_PROGRAMS += test/cl_fake_server
test_cl_fake_server_SOURCES = test/cl_fake_server.c test/http_fixture.c test/http_fixture.h
test_cl_fake_server_CFLAGS = $(CT_TEST_CFLAGS) $(MHD_CFLAGS)
test_cl_fake_server_LDADD = $(CT_CORE_LIBS) $(MHD_LIBS) $(CT_DEP_LIBS)

# A hostile project server: a proxy that rewrites ctune-server's real replies
# (test/client_hostile.sh).
check_PROGRAMS += test/hostile_proxy
test_hostile_proxy_SOURCES = test/hostile_proxy.c test/http_fixture.c test/http_fixture.h
test_hostile_proxy_CFLAGS = $(CT_TEST_CFLAGS) $(MHD_CFLAGS) $(CURL_CFLAGS)
test_hostile_proxy_LDADD = $(CT_CORE_LIBS) $(MHD_LIBS) $(CURL_LIBS) $(CT_DEP_LIBS)

# Real-process integration tests of the client (stand-in server + ctune run).
CT_CLIENT_IT = test/client_fake_e2e.sh test/client_kill9.sh test/client_idle.sh \
	test/client_backoff.sh test/client_badinput.sh test/client_server_e2e.sh \
	test/client_attach.sh test/client_install.sh test/client_xsaver.sh \
	test/client_buffer.sh test/client_hostile.sh test/client_cancel.sh test/client_tls.sh \
	test/text_job_e2e.sh test/job_loss_rising.sh test/client_web_browser.sh \
	test/client_web_projects.sh test/client_web_ca.sh
dist_check_SCRIPTS += $(CT_CLIENT_IT)
TESTS += $(CT_CLIENT_IT)
EXTRA_DIST += test/client_lib.sh test/browser/control.mjs test/browser/control_projects.mjs \
	test/browser/lib.mjs

# Screenshot checker of the X11 saver test (only with X11).
if HAVE_X11
check_PROGRAMS += test/x11_shot
test_x11_shot_SOURCES = test/x11_shot.c
test_x11_shot_CFLAGS = $(AM_CFLAGS) $(X11_CFLAGS)
test_x11_shot_LDADD = $(X11_LIBS)
endif
