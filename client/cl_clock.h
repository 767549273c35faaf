/*
 * cl_clock.h - the client's clock seam: wall time, monotonic time and
 * sleeping go through a struct of function pointers so tests can drive time
 * (a fake clock whose sleep just advances it) while the daemon uses the
 * system clock.
 */
#ifndef CT_CL_CLOCK_H
#define CT_CL_CLOCK_H

struct ct_clock {
	/* Wall clock in seconds since the epoch (deadlines, state file). */
	double (*now)(void *ctx);
	/* Monotonic seconds (intervals, timeouts). */
	double (*mono)(void *ctx);
	/* Sleep (or pretend to) for s seconds. */
	void (*sleep)(void *ctx, double s);
	void *ctx;
};

/* The real clock (CLOCK_REALTIME, CLOCK_MONOTONIC, nanosleep). */
extern const struct ct_clock ct_clock_system;

/* A fake clock for tests: both now() and mono() return *t, sleep() adds to
 * it. Initialise with ct_clock_fake(&clk, &t). */
void ct_clock_fake(struct ct_clock *clk, double *t);

static inline double ct_clock_now(const struct ct_clock *c)
{
	return c->now(c->ctx);
}

static inline double ct_clock_mono(const struct ct_clock *c)
{
	return c->mono(c->ctx);
}

static inline void ct_clock_sleep(const struct ct_clock *c, double s)
{
	c->sleep(c->ctx, s);
}

#endif
