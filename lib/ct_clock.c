/*
 * ct_clock.c - the system clock and the fake one (ct_clock.h).
 */
#include "ct_clock.h"

#include <errno.h>
#include <time.h>

static double ts_seconds(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double sys_now(void *ctx)
{
	(void)ctx;
	return ts_seconds(CLOCK_REALTIME);
}

static double sys_mono(void *ctx)
{
	(void)ctx;
	return ts_seconds(CLOCK_MONOTONIC);
}

static void sys_sleep(void *ctx, double s)
{
	struct timespec ts;

	(void)ctx;
	if (!(s > 0))
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

const struct ct_clock ct_clock_system = {
	.now = sys_now,
	.mono = sys_mono,
	.sleep = sys_sleep,
	.ctx = NULL,
};

static double fake_now(void *ctx)
{
	return *(double *)ctx;
}

static void fake_sleep(void *ctx, double s)
{
	if (s > 0)
		*(double *)ctx += s;
}

void ct_clock_fake(struct ct_clock *clk, double *t)
{
	clk->now = fake_now;
	clk->mono = fake_now;
	clk->sleep = fake_sleep;
	clk->ctx = t;
}
