/*
 * test_cl_prefs.c - preferences: the file format with its errors, time
 * windows across midnight, the compute/suspend decision, CPU throttling and
 * battery detection from a fake /sys/class/power_supply.
 */
#include "ct_test.h"

#include "cl_prefs.h"
#include "ct_buf.h"
#include "ct_conf.h"
#include "ct_err.h"

#include <sys/stat.h>

static int load_text(struct ct_prefs *p, const char *text)
{
	struct ct_conf *c = NULL;
	int rc = ct_conf_parse(text, strlen(text), "prefs.conf", &c);

	if (rc == 0)
		rc = ct_prefs_from_conf(p, c);
	ct_conf_free(c);
	return rc;
}

static void test_defaults_and_file(void **unused)
{
	struct ct_prefs p;

	(void)unused;
	ct_prefs_default(&p);
	assert_true(p.idle_minutes == 3);
	assert_false(p.run_on_battery);
	assert_int_equal(p.max_cpu_percent, 100);
	assert_int_equal(p.run_from, -1);
	assert_string_equal(p.device, "auto");
	assert_int_equal(load_text(&p, "idle_minutes = 0.5\nrun_on_battery = yes\n"
				   "max_cpu_percent = 50\nrun_hours = 22-7:30\n"
				   "gpu_only = on\ndevice = opencl:1\ncheckpoint_seconds = 5\n"
				   "future_key = 1\n"), 0);
	assert_true(p.idle_minutes == 0.5);
	assert_true(p.run_on_battery);
	assert_int_equal(p.max_cpu_percent, 50);
	assert_int_equal(p.run_from, 22 * 60);
	assert_int_equal(p.run_to, 7 * 60 + 30);
	assert_true(p.gpu_only);
	assert_string_equal(p.device, "opencl:1");
	assert_true(p.checkpoint_seconds == 5);
}

static void test_bad_values(void **unused)
{
	struct ct_prefs p;

	(void)unused;
	ct_prefs_default(&p);
	assert_int_equal(load_text(&p, "max_cpu_percent = 0\n"), CT_ECONFIG);
	assert_non_null(strstr(ct_errmsg(CT_ECONFIG), "prefs.conf:1"));
	assert_int_equal(load_text(&p, "idle_minutes = soon\n"), CT_ECONFIG);
	assert_int_equal(load_text(&p, "run_on_battery = maybe\n"), CT_ECONFIG);
	assert_int_equal(load_text(&p, "run_hours = 25-3\n"), CT_ECONFIG);
	assert_int_equal(load_text(&p, "run_hours = 9\n"), CT_ECONFIG);
	assert_int_equal(load_text(&p, "device = gpu\n"), CT_ECONFIG);
	assert_int_equal(load_text(&p, "device = opencl:x\n"), CT_ECONFIG);
	/* nothing of the failed loads leaked into p */
	assert_int_equal(p.max_cpu_percent, 100);
	assert_string_equal(p.device, "auto");
}

static void test_hours(void **unused)
{
	int a, b;

	(void)unused;
	assert_int_equal(ct_prefs_parse_hours("8:15-17", &a, &b), 0);
	assert_int_equal(a, 8 * 60 + 15);
	assert_int_equal(b, 17 * 60);
	assert_int_equal(ct_prefs_parse_hours("0-24", &a, &b), 0);
	assert_int_equal(a, -1);	/* the whole day = no window */
	assert_int_equal(ct_prefs_parse_hours("", &a, &b), 0);
	assert_int_equal(a, -1);
	assert_int_equal(ct_prefs_parse_hours("8:60-9", &a, &b), CT_EINVAL);
	assert_int_equal(ct_prefs_parse_hours("8-9x", &a, &b), CT_EINVAL);
}

static void test_decide(void **unused)
{
	struct ct_prefs p;
	struct ct_run_env e = { .idle_seconds = 500, .minute_of_day = 12 * 60,
				.device_is_gpu = 0 };

	(void)unused;
	ct_prefs_default(&p);
	assert_int_equal(ct_prefs_decide(&p, &e), CT_RUN_OK);
	e.idle_seconds = 179;			/* 3 minutes not reached */
	assert_int_equal(ct_prefs_decide(&p, &e), CT_SUSPEND_USER_ACTIVE);
	p.always = 1;
	assert_int_equal(ct_prefs_decide(&p, &e), CT_RUN_OK);
	e.on_battery = 1;
	assert_int_equal(ct_prefs_decide(&p, &e), CT_SUSPEND_BATTERY);
	p.run_on_battery = 1;
	assert_int_equal(ct_prefs_decide(&p, &e), CT_RUN_OK);
	/* 22-7 wraps past midnight */
	assert_int_equal(ct_prefs_parse_hours("22-7", &p.run_from, &p.run_to), 0);
	assert_int_equal(ct_prefs_decide(&p, &e), CT_SUSPEND_TIME_OF_DAY);
	e.minute_of_day = 23 * 60;
	assert_int_equal(ct_prefs_decide(&p, &e), CT_RUN_OK);
	e.minute_of_day = 6 * 60 + 59;
	assert_int_equal(ct_prefs_decide(&p, &e), CT_RUN_OK);
	e.minute_of_day = 7 * 60;
	assert_int_equal(ct_prefs_decide(&p, &e), CT_SUSPEND_TIME_OF_DAY);
	e.minute_of_day = 0;
	p.gpu_only = 1;
	assert_int_equal(ct_prefs_decide(&p, &e), CT_SUSPEND_GPU_ONLY);
	e.device_is_gpu = 1;
	assert_int_equal(ct_prefs_decide(&p, &e), CT_RUN_OK);
	assert_string_equal(ct_suspend_reason_str(CT_SUSPEND_USER_ACTIVE), "user active");
	/* other programs' CPU share: off by default, then above X% suspends */
	e.other_cpu_percent = 90;
	assert_int_equal(ct_prefs_decide(&p, &e), CT_RUN_OK);
	assert_int_equal(load_text(&p, "suspend_cpu_percent = 25\n"), 0);
	assert_int_equal(p.suspend_cpu_percent, 25);
	assert_int_equal(ct_prefs_decide(&p, &e), CT_SUSPEND_CPU_BUSY);
	e.other_cpu_percent = 25;
	assert_int_equal(ct_prefs_decide(&p, &e), CT_RUN_OK);
	assert_string_equal(ct_suspend_reason_str(CT_SUSPEND_CPU_BUSY), "computer busy");
	assert_int_equal(load_text(&p, "suspend_cpu_percent = 101\n"), CT_ECONFIG);
}

static void test_throttle(void **unused)
{
	struct ct_prefs p;

	(void)unused;
	ct_prefs_default(&p);
	assert_true(ct_prefs_throttle_sleep(&p, 2.0) == 0);
	p.max_cpu_percent = 25;
	assert_true(ct_prefs_throttle_sleep(&p, 2.0) == 6.0);	/* 2 busy of 8 */
}

static void put(const char *dir, const char *sub, const char *file, const char *val)
{
	char path[4300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, file);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(val, f);
	fclose(f);
}

static void test_battery(void **unused)
{
	char *dir = ct_test_mkdtemp();

	(void)unused;
	assert_int_equal(ct_prefs_on_battery(dir), 0);		/* desktop */
	put(dir, "BAT0", "type", "Battery\n");
	put(dir, "BAT0", "status", "Discharging\n");
	assert_int_equal(ct_prefs_on_battery(dir), 1);
	put(dir, "AC", "type", "Mains\n");
	put(dir, "AC", "online", "1\n");
	assert_int_equal(ct_prefs_on_battery(dir), 0);		/* plugged in */
	put(dir, "AC", "online", "0\n");
	assert_int_equal(ct_prefs_on_battery(dir), 1);
	put(dir, "BAT0", "status", "Charging\n");
	assert_int_equal(ct_prefs_on_battery(dir), 0);
	assert_int_equal(ct_prefs_on_battery("/nonexistent"), 0);
	ct_test_rmtree(dir);
	free(dir);
}

/* Checkpoints: every checkpoint_seconds for small states; big ones so
 * that at most checkpoint_mb_per_hour MiB are written an hour. */
static void test_checkpoint_interval(void **unused)
{
	struct ct_prefs p;
	const double mib = 1048576.0;

	(void)unused;
	ct_prefs_default(&p);
	assert_int_equal(p.checkpoint_mb_per_hour, 2048);
	assert_true(ct_prefs_checkpoint_interval(&p, 1.5 * mib) == 60);	/* demo-sized */
	assert_true(ct_prefs_checkpoint_interval(&p, 34.0 * mib) == 60);	/* 2048/60 MiB */
	/* a 124M WU's state: 1424 MiB at 2048 MiB an hour, one per 2503 s */
	assert_true(ct_prefs_checkpoint_interval(&p, 1424.0 * mib) == 1424.0 * 3600.0 / 2048.0);
	assert_int_equal(load_text(&p, "checkpoint_mb_per_hour = 0\ncheckpoint_seconds = 30\n"),
			 0);
	assert_true(ct_prefs_checkpoint_interval(&p, 1424.0 * mib) == 30);	/* no cap */
	assert_int_equal(load_text(&p, "checkpoint_mb_per_hour = 360\n"), 0);
	assert_true(ct_prefs_checkpoint_interval(&p, 100.0 * mib) == 1000);
	assert_int_equal(load_text(&p, "checkpoint_mb_per_hour = -1\n"), CT_ECONFIG);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The layers, lowest first: defaults, the web's, prefs.conf, the command
 * line; the web may set only its keys, values checked as prefs.conf's, and
 * an older save does not replace a newer one's time. */
static void test_web_layers(void **unused)
{
	char *dir = ct_test_mkdtemp(), web[4200], file[4200];
	struct ct_conf *cli = NULL;
	struct ct_prefs p;

	(void)unused;
	snprintf(web, sizeof(web), "%s/prefs_web.conf", dir);
	snprintf(file, sizeof(file), "%s/prefs.conf", dir);
	assert_int_equal(ct_prefs_web_time(web), 0);
	/* "always" and "device" are the computer's own: dropped */
	assert_int_equal(ct_prefs_save_web(web, "max_cpu_percent = 40\nrun_hours = 1-2\n"
					   "idle_minutes = 9\nalways = on\ndevice = cpu\n", 1234),
			 0);
	assert_int_equal(ct_prefs_web_time(web), 1234);
	write_text(file, "idle_minutes = 5\n");
	assert_int_equal(ct_conf_new(&cli), 0);
	assert_int_equal(ct_conf_set(cli, "max_cpu_percent", "70"), 0);
	assert_int_equal(ct_prefs_build(&p, web, file, cli), 0);
	assert_int_equal(p.max_cpu_percent, 70);	/* the command line wins */
	assert_true(p.idle_minutes == 5);		/* prefs.conf over the web */
	assert_int_equal(p.run_from, 60);		/* the web's, nobody else's */
	assert_int_equal(p.run_to, 120);
	assert_false(p.always);
	assert_string_equal(p.device, "auto");
	assert_int_equal(ct_prefs_build(&p, web, NULL, NULL), 0);
	assert_int_equal(p.max_cpu_percent, 40);
	/* a value the client refuses: nothing written, the old ones stay */
	assert_int_equal(ct_prefs_save_web(web, "max_cpu_percent = 400\n", 2000), CT_ECONFIG);
	assert_int_equal(ct_prefs_web_time(web), 1234);
	/* a bad prefs.conf fails the build and leaves p as it was */
	write_text(file, "max_cpu_percent = lots\n");
	assert_int_equal(ct_prefs_build(&p, web, file, NULL), CT_ECONFIG);
	assert_int_equal(p.max_cpu_percent, 40);
	/* a damaged web file is skipped, not fatal */
	write_text(web, "run_hours = 25-99\n");
	write_text(file, "");
	assert_int_equal(ct_prefs_build(&p, web, file, NULL), 0);
	assert_int_equal(p.run_from, -1);
	/* cleared on the web: an empty text saves an empty set */
	assert_int_equal(ct_prefs_save_web(web, "", 3000), 0);
	assert_int_equal(ct_prefs_web_time(web), 3000);
	ct_conf_free(cli);
	ct_test_rmtree(dir);
	free(dir);
}

static char *read_text(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static struct ct_conf *changes(const char *text)
{
	struct ct_conf *c = NULL;

	assert_int_equal(ct_conf_parse(text, strlen(text), "changes", &c), 0);
	return c;
}

/* What the control page and `ctune prefs set` write: the volunteer's other
 * lines stay, a bad value writes nothing. */
static void test_edit(void **unused)
{
	char *dir = ct_test_mkdtemp(), file[4200];
	struct ct_conf *c;
	struct ct_prefs p;

	(void)unused;
	snprintf(file, sizeof(file), "%s/prefs.conf", dir);
	c = changes("idle_minutes = 7\n");
	assert_int_equal(ct_prefs_edit(file, c), 0);	/* no file yet */
	ct_conf_free(c);
	assert_string_equal(read_text(file), "idle_minutes = 7\n");
	write_text(file, "# mine\nidle_minutes = 2   # short\nalways = off\n\n[later]\nx = 1\n");
	c = changes("always = on\nrun_hours = 22:00-07:30\nidle_minutes = 4\n");
	assert_int_equal(ct_prefs_edit(file, c), 0);
	ct_conf_free(c);
	assert_string_equal(read_text(file), "# mine\nidle_minutes = 4\nalways = on\n\n"
			    "run_hours = 22:00-07:30\n[later]\nx = 1\n");
	write_text(file, "# mine\nalways = off\n");
	static const char *const bad[] = { "max_cpu_percent = 400\n", "nonsense = 1\n",
					   "device = \"a b\"\n", "run_hours = 25-99\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = changes(bad[i]);
		assert_true(ct_prefs_edit(file, c) < 0);
		ct_conf_free(c);
		assert_string_equal(read_text(file), "# mine\nalways = off\n");
	}
	/* what ct_prefs_format writes reads back as the same preferences */
	{
		struct ct_buf b = CT_BUF_INIT(1 << 16);
		struct ct_prefs q;

		ct_prefs_default(&p);
		p.run_from = 22 * 60;
		p.run_to = 7 * 60 + 30;
		p.idle_minutes = 2.5;
		p.web = 1;
		p.web_port = 0;
		assert_int_equal(ct_prefs_format(&p, &b), 0);
		assert_non_null(strstr(ct_buf_cstr(&b), "run_hours = 22:00-07:30\n"));
		c = changes(ct_buf_cstr(&b));
		ct_prefs_default(&q);
		assert_int_equal(ct_prefs_from_conf(&q, c), 0);
		assert_memory_equal(&p, &q, sizeof(p));
		ct_conf_free(c);
		ct_buf_free(&b);
	}
	ct_test_rmtree(dir);
	free(dir);
}

CT_TEST_MAIN(test_defaults_and_file, test_bad_values, test_hours, test_decide,
	test_throttle, test_battery, test_checkpoint_interval, test_web_layers, test_edit)
