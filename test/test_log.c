/* Unit tests for lib/ct_log: levels, file target, line format. */
#include "ct_test.h"
#include "ct_err.h"
#include "ct_log.h"

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = calloc(1, 65536);
	size_t n;

	assert_non_null(f);
	n = fread(s, 1, 65535, f);
	s[n] = '\0';
	fclose(f);
	return s;
}

static void test_levels_and_file(void **state)
{
	char *dir = ct_test_mkdtemp(), path[4200], *text;

	(void)state;
	snprintf(path, sizeof(path), "%s/log.txt", dir);
	ct_log_set_ident("tester");
	assert_int_equal(ct_log_open(path), 0);
	ct_log_set_level(CT_LOG_WARN);
	ct_log_info("hidden %d", 1);
	ct_log_warn("shown %d", 2);
	ct_log_error("bad %s", "thing");
	ct_log_close();
	text = read_all(path);
	assert_null(strstr(text, "hidden"));
	assert_non_null(strstr(text, "tester["));
	assert_non_null(strstr(text, "WARN: shown 2\n"));
	assert_non_null(strstr(text, "ERROR: bad thing\n"));
	free(text);
	ct_test_rmtree(dir);
	free(dir);
}

static void test_open_fails_cleanly(void **state)
{
	(void)state;
	assert_int_equal(ct_log_open("/nonexistent-dir/x/log"), CT_ENOENT);
}

static void test_parse_level(void **state)
{
	enum ct_log_level l;

	(void)state;
	assert_int_equal(ct_log_parse_level("debug", &l), 0);
	assert_int_equal(l, CT_LOG_DEBUG);
	assert_int_equal(ct_log_parse_level("WARN", &l), 0);
	assert_int_equal(l, CT_LOG_WARN);
	assert_int_equal(ct_log_parse_level("1", &l), 0);
	assert_int_equal(l, CT_LOG_WARN);
	assert_int_equal(ct_log_parse_level("loud", &l), CT_EINVAL);
}

CT_TEST_MAIN(test_levels_and_file, test_open_fails_cleanly, test_parse_level)
