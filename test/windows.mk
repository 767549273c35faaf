# The Windows build's tests (configure --host=x86_64-w64-mingw32, see
# tools/build-windows --check and tools/test-windows): the cmocka unit tests
# of lib/ and the client, cross-built as .exe files and run by wine64 as
# automake's test runner. Included instead of test/local.mk on Windows.
CT_TEST_CFLAGS = $(AM_CFLAGS)
CT_TEST_LIBS = $(CT_CORE_LIBS) $(CT_DEP_LIBS) $(CMOCKA_LIBS)
CT_CLIENT_TEST_CFLAGS = $(CT_TEST_CFLAGS) -I$(top_srcdir)/client $(CURL_CFLAGS)
CT_CLIENT_TEST_LIBS = client/libctclient.a $(CT_TEST_LIBS) $(CURL_LIBS)

# Not here: test_cl_idle (the Linux idle sources; the Windows one is
# exercised by test/windows_e2e.sh). test_file, test_gzip, test_cl_ctl and
# test_cl_state leave out, under CT_TEST_WINDOWS, what only POSIX has (a
# shell, socket files, permission bits, rlimits, fork and setuid: the Wine
# client's kill -9 is in test/windows_e2e.sh).
CT_WIN_DEFS = -DCT_TEST_WINDOWS
if HAVE_CMOCKA
CT_WIN_LIB_TESTS = test/test_err test/test_buf test/test_utf8 \
	test/test_hash test/test_conf test/test_xml test/test_cmd \
	test/test_gzip test/test_file
CT_WIN_CLIENT_TESTS = test/test_cl_backoff test/test_cl_status test/test_cl_rpc \
	test/test_cl_prefs test/test_cl_ctl test/test_cl_state test/test_cl_web
# test_isa: the engine's kernel paths (AVX2, AVX-512 where the CPU has
# them) give the x86-64 path's bits in the MinGW build too
CT_WIN_ENGINE_TESTS = test/test_isa
check_PROGRAMS += $(CT_WIN_LIB_TESTS) $(CT_WIN_CLIENT_TESTS) $(CT_WIN_ENGINE_TESTS)
TESTS += $(CT_WIN_LIB_TESTS) $(CT_WIN_CLIENT_TESTS) $(CT_WIN_ENGINE_TESTS)
test_test_cl_backoff_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_backoff_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_cl_status_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_status_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_cl_rpc_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_rpc_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_cl_prefs_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_prefs_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_cl_ctl_CFLAGS = $(CT_CLIENT_TEST_CFLAGS) $(CT_WIN_DEFS)
test_test_cl_ctl_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_cl_state_CFLAGS = $(CT_CLIENT_TEST_CFLAGS) $(CT_WIN_DEFS)
test_test_cl_state_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_cl_web_CFLAGS = $(CT_CLIENT_TEST_CFLAGS)
test_test_cl_web_LDADD = $(CT_CLIENT_TEST_LIBS)
test_test_gzip_CFLAGS = $(CT_TEST_CFLAGS) $(CT_WIN_DEFS)
test_test_file_CFLAGS = $(CT_TEST_CFLAGS) $(CT_WIN_DEFS)
endif

# wine64 runs each .exe; its own chatter off, the DLLs beside the binaries
# on its PATH (tools/build-windows copies them into the build folder).
LOG_COMPILER = $(WINE)
AM_TESTS_ENVIRONMENT += WINEDEBUG=-all; export WINEDEBUG; \
	WINEPATH='$(abs_top_builddir)'; export WINEPATH;

# tools/build-windows --check builds these.
print-win-tests:
	@echo $(check_PROGRAMS)
