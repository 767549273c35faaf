# lib/: code shared by server and client (see lib/*.h for each module).
# Helpers appending modules add them to lib_libctune_a_SOURCES below.
noinst_LIBRARIES += lib/libctune.a
lib_libctune_a_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS)
lib_libctune_a_SOURCES = \
	lib/ct_err.c lib/ct_err.h \
	lib/ct_log.c lib/ct_log.h \
	lib/ct_buf.c lib/ct_buf.h \
	lib/ct_time.c lib/ct_time.h \
	lib/ct_le.h \
	lib/ct_utf8.c lib/ct_utf8.h \
	lib/ct_cmd.c lib/ct_cmd.h
include lib/delta.mk
include lib/util.mk
include lib/engine.mk
