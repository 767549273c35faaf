# Tests of the web pages (server/web/): cmocka unit tests
# of escaping, JSON and SVG; test_web_db, the web module on a real embedded
# database; test_web_browser.sh, a real ctune-server driven by headless
# chromium through playwright-core (test/package.json).
# The fixture: a project populated through the server's own functions
# (test/web_fixture.c), for test_web_db and web_seed.
# Compiled once into test/libctwebfx.a (also linked by bench/bench_web).
noinst_LIBRARIES += test/libctwebfx.a
test_libctwebfx_a_SOURCES = test/web_fixture.c test/web_fixture.h
test_libctwebfx_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/server -I$(top_srcdir)/test
test_libctwebfx_a_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS) $(MARIADB_CFLAGS) $(MHD_CFLAGS)
CT_WEB_FX_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/server -I$(top_srcdir)/test
CT_WEB_FX_CFLAGS = $(CT_TEST_CFLAGS) $(MARIADB_CFLAGS) $(MHD_CFLAGS)
CT_WEB_FX_LIBS = test/libctwebfx.a $(CT_SERVER_LIBS) $(CT_TEST_LIBS)

if HAVE_CMOCKA
CT_WEB_TESTS = test/test_tmpl test/test_web_json test/test_web_svg test/test_page_cache \
	test/test_web_mail
check_PROGRAMS += $(CT_WEB_TESTS)
TESTS += $(CT_WEB_TESTS)
test_test_page_cache_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_page_cache_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_tmpl_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_tmpl_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_web_json_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_web_json_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_web_mail_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_web_mail_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_web_svg_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_web_svg_LDADD = $(CT_SERVER_TEST_LIBS)

# In-process integration test: the web module on the fixture's database.
check_PROGRAMS += test/test_web_db
TESTS += test/test_web_db
test_test_web_db_CPPFLAGS = $(CT_WEB_FX_CPPFLAGS)
test_test_web_db_CFLAGS = $(CT_WEB_FX_CFLAGS)
test_test_web_db_LDADD = $(CT_WEB_FX_LIBS)

endif

# Browser tests: test/web_seed makes the project, the script serves it with
# ctune-server and drives headless chromium (test/browser/web.mjs).
check_PROGRAMS += test/web_seed
test_web_seed_CPPFLAGS = $(CT_WEB_FX_CPPFLAGS)
test_web_seed_CFLAGS = $(CT_WEB_FX_CFLAGS)
test_web_seed_LDADD = $(CT_WEB_FX_LIBS)

dist_check_SCRIPTS += test/test_web_browser.sh
TESTS += test/test_web_browser.sh
EXTRA_DIST += test/browser/web.mjs test/package.json

# Password recovery by e-mail: the same browser against a server that
# mails through a local SMTP sink (test/smtp_sink.py).
dist_check_SCRIPTS += test/test_web_mail.sh
TESTS += test/test_web_mail.sh
EXTRA_DIST += test/smtp_sink.py
