/*
 * fuzz.h - what the parser harnesses of test/fuzz/ share: the libFuzzer
 * entry point they each define, and a scratch file for the parsers that
 * read a path (the loaders map or open the file a peer sent, so the
 * harness hands them a real file, not a buffer).
 *
 * Each harness test/fuzz/fuzz_<name>.c is linked either with libFuzzer
 * (tools/fuzz, clang -fsanitize=fuzzer,address,undefined) or with
 * test/fuzz/replay.c, which feeds it every file of its corpus in
 * `make check` (test/fuzz.mk). A harness aborts on a broken promise of the
 * parser (two readers that disagree, a round trip that does not hold), so
 * that libFuzzer and the replay both report it.
 */
#ifndef CT_FUZZ_H
#define CT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The path of this process's scratch file called name (in a private
 * directory under $TMPDIR or /tmp, removed at exit) after writing the n
 * bytes of data to it; aborts when it cannot (the harness is broken, not
 * the parser). Valid until the next call with the same name. */
const char *ct_fuzz_file(const char *name, const void *data, size_t n);

/* abort() with a message when cond is false: a property the harness holds
 * the parser to. */
#define CT_FUZZ_CHECK(cond)                                                       \
	do {                                                                      \
		if (!(cond))                                                      \
			ct_fuzz_fail(__FILE__, __LINE__, #cond);                  \
	} while (0)

void ct_fuzz_fail(const char *file, int line, const char *what);

#endif
