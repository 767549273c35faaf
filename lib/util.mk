# lib/ utility modules (helper "lib"): hashing, gzip/zlib, atomic files,
# config files, safe XML. Included from lib/local.mk.
lib_libctune_a_SOURCES += \
	lib/ct_hash.c lib/ct_hash.h \
	lib/ct_gzip.c lib/ct_gzip.h \
	lib/ct_file.c lib/ct_file.h \
	lib/ct_conf.c lib/ct_conf.h \
	lib/ct_xml.c lib/ct_xml.h \
	lib/ct_unix.c lib/ct_unix.h \
	lib/ct_clock.c lib/ct_clock.h
