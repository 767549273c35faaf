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

/* How a test program runs its tests; a NULL member does nothing. */
struct ct_test_plan {
	const char *group;		/* cmocka's group name (NULL: "tests") */
	int (*before)(void);		/* first: a result other than 0 is main's
					 * (77: the test is skipped) */
	CMFixtureFunction setup;	/* before each test */
	CMFixtureFunction teardown;	/* after each test */
	CMFixtureFunction group_setup;	/* before the first test */
	CMFixtureFunction group_teardown; /* after the last test */
};

/* Runs the n test functions fns[] as one cmocka group, each named by its
 * word in `names` (the functions' names as written, separated by commas and
 * blanks: the CT_TEST_MAIN macros pass their arguments' text), as `plan`
 * says (NULL: nothing around them). argv[1], when given, runs only the
 * tests whose names match it (cmocka's filter: * and ?). Returns
 * plan->before's result where it is not 0, else cmocka's (the number of
 * failed tests); 1 if `names` does not name n functions. */
static inline int ct_test_run(const char *names, const CMUnitTestFunction *fns, size_t n,
			      const struct ct_test_plan *plan, int argc, char **argv)
{
	static const struct ct_test_plan none;
	struct CMUnitTest tests[n];
	char buf[strlen(names) + 1];
	char *save = NULL, *name;
	size_t i = 0;
	int rc;

	if (plan == NULL)
		plan = &none;
	memcpy(buf, names, sizeof(buf));
	for (name = strtok_r(buf, ", \t\n", &save); name != NULL && i < n;
	     name = strtok_r(NULL, ", \t\n", &save)) {
		tests[i] = (struct CMUnitTest){ .name = name, .test_func = fns[i],
						.setup_func = plan->setup,
						.teardown_func = plan->teardown };
		i++;
	}
	if (i != n || name != NULL) {
		fprintf(stderr, "ct_test_run: '%s' does not name %zu tests\n", names, n);
		return 1;
	}
	if (plan->before != NULL && (rc = plan->before()) != 0)
		return rc;
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name(plan->group != NULL ? plan->group : "tests", tests,
					   plan->group_setup, plan->group_teardown);
}

/* main() of a test program that runs the test functions named, in order
 * (void f(void **state) each), as *plan says (a pointer to a struct
 * ct_test_plan, or NULL); `prog PATTERN` runs only the tests it matches. */
#define CT_TEST_MAIN_WITH(plan, ...) \
	int main(int argc, char **argv) \
	{ \
		static const CMUnitTestFunction fns[] = { __VA_ARGS__ }; \
		return ct_test_run(#__VA_ARGS__, fns, sizeof(fns) / sizeof(fns[0]), plan, \
				   argc, argv); \
	}
/* The same with nothing around them: cmocka_unit_test(f) for every one. */
#define CT_TEST_MAIN(...) CT_TEST_MAIN_WITH(NULL, __VA_ARGS__)
/* The same with fx_group_setup before the first test and fx_group_teardown
 * after the last (cmocka_run_group_tests(tests, fx_group_setup,
 * fx_group_teardown)). */
#define CT_TEST_MAIN_GROUP(fx_group_setup, fx_group_teardown, ...) \
	CT_TEST_MAIN_WITH((&(const struct ct_test_plan){ .group_setup = (fx_group_setup), \
							 .group_teardown = (fx_group_teardown) }), \
			  __VA_ARGS__)
/* The same with fx_setup and fx_teardown around each test
 * (cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown) for every one). */
#define CT_TEST_MAIN_EACH(fx_setup, fx_teardown, ...) \
	CT_TEST_MAIN_WITH((&(const struct ct_test_plan){ .setup = (fx_setup), \
							 .teardown = (fx_teardown) }), \
			  __VA_ARGS__)

#endif
