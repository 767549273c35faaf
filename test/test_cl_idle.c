/*
 * test_cl_idle.c - the idle sources: the test file source (and its refusal
 * of junk), the Linux input-device source on a fake /dev whose file times
 * the test sets, and the idle logic the daemon applies to them: compute only
 * after idle_minutes, suspend as soon as input is seen.
 */
#include "ct_test.h"

#include "cl_clock.h"
#include "cl_idle.h"
#include "cl_prefs.h"
#include "ct_err.h"

#include <fcntl.h>
#include <sys/stat.h>

static void write_str(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(s, f);
	fclose(f);
}

static void test_file_source(void **unused)
{
	char *dir = ct_test_mkdtemp(), path[4200];
	struct ct_idle_source src;
	double v = -1;

	(void)unused;
	snprintf(path, sizeof(path), "%s/idle", dir);
	assert_int_equal(ct_idle_open_file(&src, path), 0);
	assert_string_equal(src.name, "file");
	assert_int_equal(ct_idle_get(&src, &v), CT_ENOENT);	/* no file yet */
	write_str(path, "250\n");
	assert_int_equal(ct_idle_get(&src, &v), 0);
	assert_true(v == 250);
	write_str(path, "12.5");
	assert_int_equal(ct_idle_get(&src, &v), 0);
	assert_true(v == 12.5);
	write_str(path, "lots");
	assert_int_equal(ct_idle_get(&src, &v), CT_EFORMAT);
	write_str(path, "-3");
	assert_int_equal(ct_idle_get(&src, &v), CT_EFORMAT);
	ct_idle_close(&src);
	ct_idle_close(&src);	/* idempotent */
	ct_test_rmtree(dir);
	free(dir);
}

static void set_time(const char *path, double t)
{
	struct timespec ts[2];

	ts[0].tv_sec = ts[1].tv_sec = (time_t)t;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void test_input_source(void **unused)
{
	char *dir = ct_test_mkdtemp(), p[4200];
	struct ct_idle_source src;
	struct ct_clock clk;
	double now = 2000000000.0, v = -1;

	(void)unused;
	ct_clock_fake(&clk, &now);
	snprintf(p, sizeof(p), "%s/input", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/pts", dir);
	mkdir(p, 0700);
	assert_int_equal(ct_idle_open_input(&src, dir, &clk), 0);
	/* no devices at all: idle (since boot) */
	assert_int_equal(ct_idle_get(&src, &v), 0);
	assert_true(v > 0);
	snprintf(p, sizeof(p), "%s/input/event0", dir);
	write_str(p, "");
	set_time(p, now - 600);
	snprintf(p, sizeof(p), "%s/pts/3", dir);
	write_str(p, "");
	set_time(p, now - 100);
	assert_int_equal(ct_idle_get(&src, &v), 0);
	assert_true(v == 100);		/* the newest device counts */
	snprintf(p, sizeof(p), "%s/input/event0", dir);
	set_time(p, now - 1);		/* a key press */
	assert_int_equal(ct_idle_get(&src, &v), 0);
	assert_true(v == 1);
	/* names not matching are ignored */
	snprintf(p, sizeof(p), "%s/input/js0", dir);
	write_str(p, "");
	set_time(p, now);
	assert_int_equal(ct_idle_get(&src, &v), 0);
	assert_true(v == 1);
	ct_idle_close(&src);
	ct_test_rmtree(dir);
	free(dir);
}

static void test_x11_absent_is_not_fatal(void **unused)
{
	struct ct_idle_source src = { 0 };
	char *old = getenv("DISPLAY") ? strdup(getenv("DISPLAY")) : NULL;

	(void)unused;
	unsetenv("DISPLAY");
	assert_true(ct_idle_open_x11(&src) < 0);
	if (old != NULL) {
		setenv("DISPLAY", old, 1);
		free(old);
	}
}

/* The daemon's rule driven by the test source: not before idle_minutes,
 * suspended by activity, resumed after idle_minutes again. */
static void test_idle_logic(void **unused)
{
	char *dir = ct_test_mkdtemp(), path[4200];
	struct ct_idle_source src;
	struct ct_prefs prefs;
	struct ct_run_env env = { .minute_of_day = 600 };
	static const struct { const char *idle; int run; } steps[] = {
		{ "0", 0 }, { "60", 0 }, { "179.9", 0 }, { "180", 1 }, { "400", 1 },
		{ "0.5", 0 }, { "100", 0 }, { "181", 1 },
	};

	(void)unused;
	snprintf(path, sizeof(path), "%s/idle", dir);
	ct_prefs_default(&prefs);
	assert_int_equal(ct_idle_open_file(&src, path), 0);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		write_str(path, steps[i].idle);
		assert_int_equal(ct_idle_get(&src, &env.idle_seconds), 0);
		assert_int_equal(ct_prefs_decide(&prefs, &env) == CT_RUN_OK, steps[i].run);
	}
	ct_idle_close(&src);
	ct_test_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_source),
		cmocka_unit_test(test_input_source),
		cmocka_unit_test(test_x11_absent_is_not_fatal),
		cmocka_unit_test(test_idle_logic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
