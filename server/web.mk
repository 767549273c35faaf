# server/web.mk - the web pages, JSON API, stats export and metrics of
# ctune-server (included at the end of server/local.mk). They live in
# server/libctserver.a with the rest of the server, so tests link them the
# same way; html/local.mk generates server/web_assets.c (CSS, layout, icon).
server_libctserver_a_SOURCES += \
	server/tmpl.c server/tmpl.h \
	server/web.c server/web.h server/web_int.h \
	server/web_http.c server/web_http.h \
	server/web_data.c server/web_data.h \
	server/web_pages.c server/web_api.c server/web_account.c \
	server/web_stats.c \
	server/web_json.c server/web_json.h \
	server/web_svg.c server/web_svg.h
nodist_server_libctserver_a_SOURCES += server/web_assets.c
