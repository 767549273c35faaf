/*
 * Unit tests for lib/ct_options: each kind of option parses what it should
 * and refuses the rest by name; empty values count as unset; a value set
 * in the process comes before the environment's, and clearing it gives
 * the environment's back.
 */
#include "ct_test.h"
#include "ct_err.h"
#include "ct_options.h"

#include <stdlib.h>
#include <string.h>

static void test_kinds(void **state)
{
	(void)state;
	setenv("CTUNE_THREADS", "3", 1);
	assert_int_equal(ct_opt_int(CT_OPT_THREADS, 7), 3);
	setenv("CTUNE_THREADS", "3x", 1);	/* not a number: refused, default used */
	assert_int_equal(ct_opt_int(CT_OPT_THREADS, 7), 7);
	assert_null(ct_opt_str(CT_OPT_THREADS));
	assert_int_equal(ct_options_check(), CT_EINVAL);
	assert_non_null(strstr(ct_errmsg(CT_EINVAL), "CTUNE_THREADS='3x': want 1..4096"));
	setenv("CTUNE_THREADS", "0", 1);	/* out of range */
	assert_int_equal(ct_opt_int(CT_OPT_THREADS, 7), 7);
	setenv("CTUNE_THREADS", "", 1);		/* empty: unset */
	assert_int_equal(ct_opt_int(CT_OPT_THREADS, 7), 7);
	assert_int_equal(ct_options_check(), 0);
	unsetenv("CTUNE_THREADS");

	setenv("CT_OCL_LEAN", "1", 1);
	assert_int_equal(ct_opt_int(CT_OPT_OCL_LEAN, 0), 1);
	setenv("CT_OCL_LEAN", "yes", 1);
	assert_int_equal(ct_opt_int(CT_OPT_OCL_LEAN, 0), 0);
	assert_int_equal(ct_options_check(), CT_EINVAL);
	assert_non_null(strstr(ct_errmsg(CT_EINVAL), "CT_OCL_LEAN='yes': want 0 or 1"));
	unsetenv("CT_OCL_LEAN");

	setenv("CT_OCL_MM_TILED", "s", 1);
	assert_string_equal(ct_opt_str(CT_OPT_OCL_MM_TILED), "s");
	setenv("CT_OCL_MM_TILED", "small", 1);	/* words are whole */
	assert_null(ct_opt_str(CT_OPT_OCL_MM_TILED));
	assert_int_equal(ct_options_check(), CT_EINVAL);
	assert_non_null(strstr(ct_errmsg(CT_EINVAL), "want one of 0|1|b|m|s"));
	unsetenv("CT_OCL_MM_TILED");

	setenv("CTUNE_KERNEL_CACHE", "/some where/ü", 1);	/* text: as it is */
	assert_string_equal(ct_opt_str(CT_OPT_KERNEL_CACHE), "/some where/ü");
	unsetenv("CTUNE_KERNEL_CACHE");
	assert_int_equal(ct_options_check(), 0);
	assert_string_equal(ct_opt_name(CT_OPT_OCL_WIDE_MAX), "CT_OCL_WIDE_MAX");
}

static void test_set_comes_first(void **state)
{
	(void)state;
	setenv("CTUNE_THREADS", "5", 1);
	assert_int_equal(ct_opt_set(CT_OPT_THREADS, "2"), 0);
	assert_int_equal(ct_opt_int(CT_OPT_THREADS, 7), 2);
	assert_int_equal(ct_opt_set(CT_OPT_THREADS, "-1"), CT_EINVAL);	/* checked too */
	assert_int_equal(ct_opt_int(CT_OPT_THREADS, 7), 2);		/* and kept */
	assert_int_equal(ct_opt_set(CT_OPT_THREADS, ""), 0);		/* set empty: unset */
	assert_int_equal(ct_opt_int(CT_OPT_THREADS, 7), 7);
	assert_int_equal(ct_opt_set(CT_OPT_THREADS, NULL), 0);		/* the environment's */
	assert_int_equal(ct_opt_int(CT_OPT_THREADS, 7), 5);
	unsetenv("CTUNE_THREADS");
}

CT_TEST_MAIN(test_kinds, test_set_comes_first)
