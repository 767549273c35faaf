/* Unit tests for lib/ct_cmd: the resolver both programs dispatch with -
 * words down the tree, help, unknown options named the way a user typed
 * them, argument counts, and the handler seeing its own argv afterwards. */
#include "ct_test.h"
#include "ct_cmd.h"
#include "ct_err.h"

#include <getopt.h>
#include <string.h>

static int got_argc, got_verbose;
static char got_first[32], got_roles[32];

/* A handler that parses its options with the same table, as the real ones
 * do: it must see them all although the resolver already ran getopt. */
static const struct option leaf_opts[] = {
	{ "roles", required_argument, NULL, 'r' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ NULL, 0, NULL, 0 },
};

static int leaf(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	int c;

	(void)ctx;
	got_argc = argc;
	got_verbose = 0;
	got_roles[0] = 0;
	snprintf(got_first, sizeof(got_first), "%s", argv[0]);
	while ((c = getopt_long(argc, argv, "vqr:", leaf_opts, NULL)) != -1) {
		if (c == 'v')
			got_verbose = 1;
		else if (c == 'r')
			snprintf(got_roles, sizeof(got_roles), "%s", optarg);
	}
	return 7;
}

static const struct ct_cmd_def run_def = {
	.name = "run", .fn = leaf, .opts = leaf_opts, .shortopts = "vqr:", .min_args = 1,
	.max_args = 1, .summary = "run it", .usage = "DIR [--roles R] [-v]",
};
static const struct ct_cmd_def need_def = {
	.name = "need", .fn = leaf, .opts = leaf_opts, .shortopts = "vqr:",
	.required = "roles quiet", .summary = "needs options", .usage = "--roles R -q",
};
static const struct ct_cmd_def raw_def = {
	.name = "raw", .fn = leaf, .own_opts = 1, .max_args = -1,
	.summary = "parses its own options", .usage = "[ANY...]",
};
static const struct ct_cmd_def *const job_subs[] = { &run_def, &raw_def, &need_def, NULL };
static const struct ct_cmd_def job_def = {
	.name = "job", .subs = job_subs, .summary = "a group",
};
static const struct ct_cmd_def *const table[] = { &run_def, &job_def, NULL };

/* Resolve the NULL-ended words; returns what ct_cmd_resolve returned. */
static int resolve(const struct ct_cmd_def **def, int *nw, ...)
{
	char *argv[16];
	int argc = 0;
	va_list ap;

	va_start(ap, nw);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	return ct_cmd_resolve("prog", table, argc, argv, def, nw);
}

static void expect_usage(const char *needle, int rc)
{
	assert_int_equal(rc, CT_EUSAGE);
	if (strstr(ct_errmsg(rc), needle) == NULL)
		fail_msg("'%s' lacks '%s'", ct_errmsg(rc), needle);
}

static void test_words_and_groups(void **state)
{
	const struct ct_cmd_def *d;
	int nw;

	(void)state;
	assert_int_equal(resolve(&d, &nw, "job", "run", "D", NULL), 0);
	assert_ptr_equal(d, &run_def);
	assert_int_equal(nw, 2);
	assert_int_equal(resolve(&d, &nw, "run", "D", "-v", NULL), 0);
	assert_int_equal(nw, 1);
	expect_usage("unknown command 'job nope'", resolve(&d, &nw, "job", "nope", NULL));
	expect_usage("unknown command 'nope'", resolve(&d, &nw, "nope", NULL));
	expect_usage("job: unknown option '--x'", resolve(&d, &nw, "job", "--x", NULL));
	expect_usage("missing command", resolve(&d, &nw, "job", NULL));
	assert_null(d);
	/* help anywhere on the way answers 1 */
	assert_int_equal(resolve(&d, &nw, "job", "--help", NULL), 1);
	assert_int_equal(resolve(&d, &nw, "job", "run", "-h", NULL), 1);
	assert_int_equal(resolve(&d, &nw, "help", "job", "run", NULL), 1);
	assert_int_equal(resolve(&d, &nw, "help", "job", NULL), 1);
	assert_int_equal(resolve(&d, &nw, "job", "raw", "x", "--help", NULL), 1);
	/* but not as an option's value, nor after "--" */
	assert_int_equal(resolve(&d, &nw, "run", "D", "--roles", "--help", NULL), 0);
	assert_int_equal(resolve(&d, &nw, "job", "raw", "--", "--help", NULL), 0);
}

static void test_options_named_as_typed(void **state)
{
	const struct ct_cmd_def *d;
	int nw;

	(void)state;
	expect_usage("run: unknown option '--bogus'", resolve(&d, &nw, "run", "D", "--bogus", NULL));
	expect_usage("unknown option '--bogus'", resolve(&d, &nw, "run", "D", "--bogus=1", NULL));
	expect_usage("unknown option '-x'", resolve(&d, &nw, "run", "D", "-x", NULL));
	/* an unknown letter in the middle of a cluster, after a long option */
	expect_usage("unknown option '-x'",
		     resolve(&d, &nw, "run", "--roles", "a", "-xv", "D", NULL));
	expect_usage("unknown option '-x'", resolve(&d, &nw, "run", "--verbose", "-vx", "D",
						   NULL));
	expect_usage("option '--roles' needs a value", resolve(&d, &nw, "run", "D", "--roles",
							      NULL));
	expect_usage("option '-r' needs a value", resolve(&d, &nw, "run", "D", "-r", NULL));
	expect_usage("option '--verbose' takes no value",
		     resolve(&d, &nw, "run", "D", "--verbose=1", NULL));
	expect_usage("option '--verb' takes no value",
		     resolve(&d, &nw, "run", "D", "--verb=1", NULL));
	expect_usage("see 'prog run --help'", resolve(&d, &nw, "run", "D", "--bogus", NULL));
	/* an unambiguous abbreviation is getopt's and fine; "--" ends options */
	assert_int_equal(resolve(&d, &nw, "run", "D", "--rol", "x", NULL), 0);
	expect_usage("unexpected argument '--bogus'",
		     resolve(&d, &nw, "run", "D", "--", "--bogus", NULL));
	/* own_opts: the handler judges its options */
	assert_int_equal(resolve(&d, &nw, "job", "raw", "--anything", NULL), 0);
}

static void test_argument_counts(void **state)
{
	const struct ct_cmd_def *d;
	int nw;

	(void)state;
	expect_usage("run: missing argument (usage: prog run DIR", resolve(&d, &nw, "run", NULL));
	expect_usage("run: missing argument", resolve(&d, &nw, "run", "-v", NULL));
	expect_usage("unexpected argument 'E'", resolve(&d, &nw, "run", "D", "E", NULL));
	/* required options, given long, short or abbreviated */
	expect_usage("the required option '--roles' is missing",
		     resolve(&d, &nw, "job", "need", "-q", NULL));
	expect_usage("the required option '--quiet' is missing",
		     resolve(&d, &nw, "job", "need", "--roles", "x", NULL));
	assert_int_equal(resolve(&d, &nw, "job", "need", "-r", "x", "--qu", NULL), 0);
	/* options are checked before the count */
	expect_usage("unknown option '--bogus'", resolve(&d, &nw, "run", "--bogus", NULL));
}

static void test_run_reaches_handler(void **state)
{
	char *argv[] = { "job", "run", "-v", "D", "--roles", "http", NULL };
	char *bad[] = { "run", "--bogus", "D", NULL };
	const struct ct_cmd_def *d;
	int nw;

	(void)state;
	/* the check works on a copy: argv is left as it was for the handler */
	assert_int_equal(ct_cmd_resolve("prog", table, 6, argv, &d, &nw), 0);
	assert_string_equal(argv[2], "-v");
	assert_string_equal(argv[3], "D");
	assert_int_equal(ct_cmd_run("prog", table, NULL, 6, argv), 7);
	assert_string_equal(got_first, "run");
	assert_int_equal(got_argc, 5);
	assert_int_equal(got_verbose, 1);
	assert_string_equal(got_roles, "http");
	got_argc = 0;
	assert_int_equal(ct_cmd_run("prog", table, NULL, 3, bad), 2);
	assert_int_equal(got_argc, 0);
	assert_ptr_equal(ct_cmd_lookup(table, 2, argv, &nw), &run_def);
	assert_int_equal(nw, 2);
	assert_null(ct_cmd_lookup(table, 1, argv, &nw));
}

CT_TEST_MAIN(test_words_and_groups, test_options_named_as_typed, test_argument_counts,
	test_run_reaches_handler)
