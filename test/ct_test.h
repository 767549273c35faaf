/*
 * ct_test.h - what every cmocka test includes: cmocka's required headers in
 * the right order, plus helpers for temporary directories.
 */
#ifndef CT_TEST_H
#define CT_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Make a fresh directory under $TMPDIR (or /tmp); returns a malloc'd path
 * the caller frees, after ct_test_rmtree() if it wants it gone. */
static inline char *ct_test_mkdtemp(void)
{
	const char *t = getenv("TMPDIR");
	char *p = malloc(4096);

	if (p == NULL)
		return NULL;
	snprintf(p, 4096, "%s/ctune-test-XXXXXX", t && *t ? t : "/tmp");
	if (mkdtemp(p) == NULL) {
		free(p);
		return NULL;
	}
	return p;
}

/* rm -rf `path` (test directories only). */
static inline void ct_test_rmtree(const char *path)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", path);
}

#endif
