/*
 * ct_test.h - what every cmocka test includes: cmocka's required headers in
 * the right order, the main() of a test program (CT_TEST_MAIN), plus helpers
 * for temporary directories.
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

/* Runs the n test functions fns[] as cmocka's group "tests", each named by
 * its word in `names` (the functions' names as written, separated by commas
 * and blanks: the CT_TEST_MAIN macros pass their arguments' text), each
 * between setup and teardown and the whole between group_setup and
 * group_teardown (cmocka fixtures, NULL for none). Returns cmocka's result,
 * the number of failed tests; 1 if `names` does not name n functions. */
static inline int ct_test_run(const char *names, const CMUnitTestFunction *fns, size_t n,
			      CMFixtureFunction setup, CMFixtureFunction teardown,
			      CMFixtureFunction group_setup, CMFixtureFunction group_teardown)
{
	struct CMUnitTest tests[n];
	char buf[strlen(names) + 1];
	char *save = NULL, *name;
	size_t i = 0;

	memcpy(buf, names, sizeof(buf));
	for (name = strtok_r(buf, ", \t\n", &save); name != NULL && i < n;
	     name = strtok_r(NULL, ", \t\n", &save)) {
		tests[i] = (struct CMUnitTest){ .name = name, .test_func = fns[i],
						.setup_func = setup, .teardown_func = teardown };
		i++;
	}
	if (i != n || name != NULL) {
		fprintf(stderr, "ct_test_run: '%s' does not name %zu tests\n", names, n);
		return 1;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

/* int main(void) of a test program that runs the test functions named, in
 * order (void f(void **state) each; cmocka_unit_test(f) for every one). */
#define CT_TEST_MAIN(...) CT_TEST_MAIN_FIXTURES(NULL, NULL, NULL, NULL, __VA_ARGS__)
/* The same with group_setup before the first and group_teardown after the
 * last (cmocka_run_group_tests(tests, group_setup, group_teardown)). */
#define CT_TEST_MAIN_GROUP(group_setup, group_teardown, ...) \
	CT_TEST_MAIN_FIXTURES(NULL, NULL, group_setup, group_teardown, __VA_ARGS__)
/* The same with setup and teardown around each test
 * (cmocka_unit_test_setup_teardown(f, setup, teardown) for every one). */
#define CT_TEST_MAIN_EACH(setup, teardown, ...) \
	CT_TEST_MAIN_FIXTURES(setup, teardown, NULL, NULL, __VA_ARGS__)
#define CT_TEST_MAIN_FIXTURES(setup, teardown, group_setup, group_teardown, ...) \
	int main(void) \
	{ \
		static const CMUnitTestFunction fns[] = { __VA_ARGS__ }; \
		return ct_test_run(#__VA_ARGS__, fns, sizeof(fns) / sizeof(fns[0]), setup, \
				   teardown, group_setup, group_teardown); \
	}

#endif
