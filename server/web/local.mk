# server/web/: the web pages, JSON API, stats export and metrics of
# ctune-server (included at the end of server/local.mk). They live in
# server/libctserver.a with the rest of the server, so tests link them the
# same way; html/local.mk generates server/web/web_assets.c (CSS, layout, icon).
server_libctserver_a_SOURCES += \
	server/web/tmpl.c server/web/tmpl.h \
	server/web/web.c server/web/web.h server/web/web_int.h \
	server/web/page_cache.c server/web/page_cache.h \
	server/web/web_http.c server/web/web_http.h \
	server/web/web_pages.c server/web/web_api.c server/web/web_account.c \
	server/web/web_stats.c server/web/web_samples.c server/web/web_tasks.c \
	server/web/web_prefs.c server/web/web_settings.c server/web/web_countries.c \
	server/web/web_news.c server/web/web_receipt.c \
	server/web/web_mail.c server/web/web_mail.h \
	server/web/web_recover.c server/web/web_recover.h \
	server/web/web_json.c server/web/web_json.h \
	server/web/web_svg.c server/web/web_svg.h
nodist_server_libctserver_a_SOURCES += server/web/web_assets.c

# The web pages' data layer lives with the rest of it in server/data/
# (dl_web.h): listed here so that it travels with the pages it serves.
server_libctserver_a_SOURCES += server/data/dl_web.c server/data/dl_web.h \
	server/data/dl_web_job.c server/data/dl_web_task.c server/data/dl_user.c \
	server/data/dl_news.c server/data/dl_team.c server/data/dl_team.h

# web_mail.c sends the recovery mails through libcurl's SMTP client.
CT_SERVER_CFLAGS += $(CURL_CFLAGS)
CT_SERVER_LIBS += $(CURL_LIBS)
