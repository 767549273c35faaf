# server/ rules (included by the top-level Makefile.am).
# server/libctserver.a holds every server module but main.c, so the tests
# link the same code; ctune-server is main.c + the daemons + that library.
# DAEMONS: append your .c/.h files to ctune_server_SOURCES with += (roles.c
# references your run_once functions weakly; they must be linked as objects,
# not from the archive).
CT_SERVER_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS) $(MARIADB_CFLAGS) $(MHD_CFLAGS) \
	-I$(top_srcdir)/server
CT_SERVER_LIBS = server/libctserver.a lib/libctune.a $(MARIADBD_LIBS) $(MHD_LIBS) \
	$(CT_DEP_LIBS)

noinst_LIBRARIES += server/libctserver.a
server_libctserver_a_CFLAGS = $(CT_SERVER_CFLAGS)
server_libctserver_a_SOURCES = \
	server/db.c server/db.h \
	server/db_url.c server/db_url.h \
	server/server.h server/store.h server/wg.h server/roles.h
nodist_server_libctserver_a_SOURCES = server/db_sql.c
include server/web.mk
