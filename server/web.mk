# server/web.mk - the web pages, JSON API, stats export and metrics of
# ctune-server (included at the end of server/local.mk). They live in
# server/libctserver.a with the rest of the server, so tests link them the
# same way; html/local.mk generates server/web_assets.c (CSS, layout, icon).
server_libctserver_a_SOURCES += \
	server/tmpl.c server/tmpl.h \
	server/web.c server/web.h server/web_int.h \
	server/page_cache.c server/page_cache.h \
	server/web_http.c server/web_http.h \
	server/web_data.c server/web_data.h \
	server/web_pages.c server/web_api.c server/web_account.c \
	server/web_stats.c \
	server/web_json.c server/web_json.h \
	server/web_svg.c server/web_svg.h
nodist_server_libctserver_a_SOURCES += server/web_assets.c

# bench/bench_web: page render times with many users (prints a table; built
# by make, never run by make check). It reuses the web tests' fixture.
noinst_PROGRAMS += bench/bench_web
bench_bench_web_SOURCES = bench/bench_web.c test/web_fixture.c \
	test/web_fixture.h server/credit.c
bench_bench_web_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/server -I$(top_srcdir)/test
bench_bench_web_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS) $(MARIADB_CFLAGS) $(MHD_CFLAGS)
bench_bench_web_LDADD = $(CT_SERVER_LIBS)
