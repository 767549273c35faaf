# test/: cmocka unit tests (test/test_<module>.c), integration and browser
# tests. Each part of the tree keeps its test rules in test/<part>.mk.
# A cmocka test test/test_foo is test/test_foo.c compiled with AM_CFLAGS and
# linked with LDADD = $(CT_TEST_LIBS) (Makefile.am) unless its .mk names a
# family's flags (CT_SERVER_TEST_*, CT_CLIENT_TEST_*). Its main() is
# CT_TEST_MAIN(test_a, test_b, ...) (test/ct_test.h); `test/test_foo PATTERN`
# runs only the tests whose names match (cmocka's filter: * and ?).
CT_TEST_CFLAGS = $(AM_CFLAGS)
CT_TEST_LIBS = $(CT_CORE_LIBS) $(CT_DEP_LIBS) $(CMOCKA_LIBS)
EXTRA_DIST += test/ct_test.h

include test/lib.mk
include test/engine.mk
include test/opencl.mk
include test/daemons.mk
include test/web.mk
include test/client.mk
include test/server.mk
include test/cli.mk
include test/crafted.mk
include test/lofi.mk
include test/lora_srv.mk
include test/tokenizer.mk
include test/chat.mk
include test/llama.mk
include test/attack.mk
include test/galera.mk
include test/fuzz.mk
