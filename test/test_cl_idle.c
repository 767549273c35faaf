/*
 * test_cl_idle.c - the idle sources: the test file source (and its refusal
 * of junk), the evdev source on a fake /dev whose event devices are FIFOs
 * the test writes input_event records into, a pty that only prints (must
 * not count), a uinput keyboard where /dev/uinput exists, logind where a
 * system bus answers, the other-programs CPU share, and the idle logic the daemon applies to them: compute only
 * after idle_minutes, suspend as soon as input is seen.
 */
#include "ct_test.h"

#include "ct_clock.h"
#include "cl_idle.h"
#include "cl_prefs.h"
#include "ct_err.h"

#include "cl_load.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* One evdev record into fd (a FIFO standing in for /dev/input/eventN). */
static void put_event(int fd, double t, int type, int code, int value)
{
	struct input_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.input_event_sec = (time_t)t;
	ev.input_event_usec = (suseconds_t)((t - (double)(time_t)t) * 1e6);
	ev.type = (unsigned short)type;
	ev.code = (unsigned short)code;
	ev.value = value;
	assert_int_equal(write(fd, &ev, sizeof(ev)), (ssize_t)sizeof(ev));
}

static int open_fifo(const char *dir, const char *name)
{
	char p[4200];
	int fd;

	snprintf(p, sizeof(p), "%s/input/%s", dir, name);
	assert_int_equal(mkfifo(p, 0600), 0);
	fd = open(p, O_RDWR | O_NONBLOCK);	/* a writer that never blocks */
	assert_true(fd >= 0);
	return fd;
}

/* The evdev source reads key and motion events and nothing else; event
 * time stamps count, clamped to the clock; hot-plugged devices are found. */
static void test_input_source(void **unused)
{
	char *dir = ct_test_mkdtemp(), p[4200];
	struct ct_idle_source src;
	struct ct_clock clk;
	double now = 2000000000.0, v = -1;
	int fd0, fd1;

	(void)unused;
	ct_clock_fake(&clk, &now);
	snprintf(p, sizeof(p), "%s/input", dir);
	mkdir(p, 0700);
	assert_int_equal(ct_idle_open_input(&src, dir, &clk), 0);
	/* no devices at all: idle (since boot) */
	assert_int_equal(ct_idle_input_devices(&src), 0);
	assert_int_equal(ct_idle_get(&src, &v), 0);
	assert_true(v > 0);
	ct_idle_close(&src);

	fd0 = open_fifo(dir, "event0");
	(void)open_fifo(dir, "js0");		/* not an event device: never read */
	assert_int_equal(ct_idle_open_input(&src, dir, &clk), 0);
	assert_int_equal(ct_idle_input_devices(&src), 1);
	now += 100;
	assert_int_equal(ct_idle_get(&src, &v), 0);
	assert_true(v == 100);		/* counted from when the source opened */
	put_event(fd0, now - 5, EV_KEY, KEY_A, 1);
	put_event(fd0, now - 5, EV_SYN, SYN_REPORT, 0);
	assert_int_equal(ct_idle_get(&src, &v), 0);
	assert_true(v == 5);		/* a key press 5 s ago */
	put_event(fd0, now, EV_LED, LED_CAPSL, 1);	/* output to the device */
	put_event(fd0, now, EV_MSC, MSC_SCAN, 30);
	assert_int_equal(ct_idle_get(&src, &v), 0);
	assert_true(v == 5);
	put_event(fd0, now + 1000, EV_REL, REL_X, 3);	/* a clock ahead: now */
	assert_int_equal(ct_idle_get(&src, &v), 0);
	assert_true(v == 0);
	now += 40;
	fd1 = open_fifo(dir, "event7");	/* plugged in; found on the rescan */
	put_event(fd1, now - 2, EV_ABS, ABS_X, 100);
	assert_int_equal(ct_idle_get(&src, &v), 0);
	assert_true(v == 2);
	assert_int_equal(ct_idle_input_devices(&src), 2);
	ct_idle_close(&src);
	close(fd0);
	close(fd1);
	ct_test_rmtree(dir);
	free(dir);
}

/* A terminal that only prints (journalctl -f, top, a build) is not a user:
 * /dev/pts is in the fake /dev and its pty is written all along, yet the
 * idle time grows with the real clock. */
static void test_pty_output_is_not_input(void **unused)
{
	char *dir = ct_test_mkdtemp(), p[4200];
	struct ct_idle_source src;
	double v = -1, t0;
	int m, s, fd;

	(void)unused;
	snprintf(p, sizeof(p), "%s/input", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/pts", dir);
	assert_int_equal(symlink("/dev/pts", p), 0);
	fd = open_fifo(dir, "event0");	/* a keyboard nobody touches */
	m = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK);
	assert_true(m >= 0);
	assert_int_equal(grantpt(m), 0);
	assert_int_equal(unlockpt(m), 0);
	s = open(ptsname(m), O_RDWR | O_NOCTTY);
	assert_true(s >= 0);
	assert_int_equal(ct_idle_open_input(&src, dir, &ct_clock_system), 0);
	t0 = ct_clock_mono(&ct_clock_system);
	while (ct_clock_mono(&ct_clock_system) - t0 < 1.5) {
		char buf[256];

		assert_int_equal(write(s, "building...\r\n", 13), 13);	/* output */
		while (read(m, buf, sizeof(buf)) > 0)
			;
		usleep(50000);
	}
	assert_int_equal(ct_idle_get(&src, &v), 0);
	assert_true(v >= 1.4);
	ct_idle_close(&src);
	close(s);
	close(m);
	close(fd);
	ct_test_rmtree(dir);
	free(dir);
}

/* A real keyboard made with uinput counts, through the real /dev/input. */
static void test_uinput_keyboard(void **unused)
{
	struct uinput_setup us;
	struct ct_idle_source src;
	double v = -1;
	int fd;

	(void)unused;
	fd = open("/dev/uinput", O_WRONLY | O_NONBLOCK);
	if (fd < 0) {
		printf("# skipping the uinput keyboard: /dev/uinput: %s (a container or "
		       "no uinput module; the FIFO test covers the event parsing)\n",
		       strerror(errno));
		skip();
	}
	memset(&us, 0, sizeof(us));
	us.id.bustype = BUS_USB;
	snprintf(us.name, sizeof(us.name), "crowdtune test keyboard");
	assert_int_equal(ioctl(fd, UI_SET_EVBIT, EV_KEY), 0);
	assert_int_equal(ioctl(fd, UI_SET_KEYBIT, KEY_A), 0);
	assert_int_equal(ioctl(fd, UI_SET_KEYBIT, KEY_SPACE), 0);
	assert_int_equal(ioctl(fd, UI_DEV_SETUP, &us), 0);
	assert_int_equal(ioctl(fd, UI_DEV_CREATE), 0);
	usleep(500000);			/* udev makes the node */
	assert_int_equal(ct_idle_open_input(&src, "/dev", &ct_clock_system), 0);
	assert_true(ct_idle_input_devices(&src) >= 1);
	usleep(1200000);
	assert_int_equal(ct_idle_get(&src, &v), 0);
	if (v < 1.0)
		printf("# someone typed during the test (idle %.2f s)\n", v);
	put_event(fd, 0, EV_KEY, KEY_A, 1);	/* the kernel stamps the time */
	put_event(fd, 0, EV_KEY, KEY_A, 0);
	put_event(fd, 0, EV_SYN, SYN_REPORT, 0);
	usleep(100000);
	assert_int_equal(ct_idle_get(&src, &v), 0);
	assert_true(v < 0.5);
	ct_idle_close(&src);
	ioctl(fd, UI_DEV_DESTROY);
	close(fd);
}

/* Other programs' CPU share: machine busy time minus our own. */
static void test_cpu_other_percent(void **unused)
{
	char *dir = ct_test_mkdtemp(), p[4200];
	struct ct_cpu_sampler smp;
	double pct = -1;

	(void)unused;
	snprintf(p, sizeof(p), "%s/self", dir);
	mkdir(p, 0700);
	assert_int_equal(ct_cpu_sampler_init(&smp, dir), 0);
	snprintf(p, sizeof(p), "%s/stat", dir);
	write_str(p, "cpu  1000 0 0 9000 0 0 0 0 0 0\ncpu0 1 2 3\n");
	snprintf(p, sizeof(p), "%s/self/stat", dir);
	write_str(p, "42 (ct une (x)) R 1 42 42 0 -1 4194304 10 0 0 0 500 0 0 0 20 0\n");
	assert_int_equal(ct_cpu_other_percent(&smp, &pct), CT_EAGAIN);	/* first */
	/* 1000 ticks pass: 600 busy, 400 of them ours -> others 20% */
	snprintf(p, sizeof(p), "%s/stat", dir);
	write_str(p, "cpu  1500 0 100 9400 0 0 0 0 0 0\n");
	snprintf(p, sizeof(p), "%s/self/stat", dir);
	write_str(p, "42 (ct une (x)) R 1 42 42 0 -1 4194304 10 0 0 0 800 100 0 0 20 0\n");
	assert_int_equal(ct_cpu_other_percent(&smp, &pct), 0);
	assert_true(fabs(pct - 20.0) < 1e-9);
	snprintf(p, sizeof(p), "%s/stat", dir);
	write_str(p, "garbage\n");
	assert_int_equal(ct_cpu_other_percent(&smp, &pct), CT_EFORMAT);
	ct_cpu_sampler_free(&smp);
	/* the real files parse, and the share is a percentage */
	assert_int_equal(ct_cpu_sampler_init(&smp, NULL), 0);
	assert_int_equal(ct_cpu_other_percent(&smp, &pct), CT_EAGAIN);
	usleep(200000);
	assert_int_equal(ct_cpu_other_percent(&smp, &pct), 0);
	assert_true(pct >= 0 && pct <= 100);
	ct_cpu_sampler_free(&smp);
	ct_test_rmtree(dir);
	free(dir);
}

/* logind: a clean "not here" when there is no system bus or no logind;
 * when there is one, a sane answer. */
static void test_logind(void **unused)
{
	struct ct_idle_source src = { 0 };
	double v = -1;
	int rc;

	(void)unused;
	rc = ct_idle_open_logind(&src, &ct_clock_system);
	if (rc < 0) {
		assert_true(rc == CT_ENOENT || rc == CT_EUNSUPP);
		printf("# logind not reachable here: %s\n", ct_errmsg(rc));
		return;
	}
	assert_string_equal(src.name, "logind");
	assert_int_equal(ct_idle_get(&src, &v), 0);
	assert_true(v >= 0);
	ct_idle_close(&src);
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

CT_TEST_MAIN(test_file_source, test_input_source, test_pty_output_is_not_input,
	test_uinput_keyboard, test_cpu_other_percent, test_logind,
	test_x11_absent_is_not_fatal, test_idle_logic)
