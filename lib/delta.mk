# lib/: result upload encoding (ct_delta) and weight averaging (ct_avg),
# owned by the daemons part. Included from lib/local.mk.
lib_libctune_a_SOURCES += \
	lib/ct_delta.c lib/ct_delta.h \
	lib/ct_avg.c lib/ct_avg.h
