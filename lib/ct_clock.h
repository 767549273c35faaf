/*
 * ct_clock.h - the clock seam shared by the server and the client: wall
 * time, monotonic time and sleeping go through a struct of function
 * pointers, so tests drive time (a fake clock whose sleep just advances
 * it) while the programs use the system clock.
 *
 * Who holds one: the client's daemon (struct ct_daemon_opts.clk) and idle
 * detector; the server's context (struct ct_server.clock), from which every
 * database connection takes the clock that stamps rows (ct_db_now()). A
 * clock is not owned by its users: it must outlive them.
 */
#ifndef CT_CLOCK_H
#define CT_CLOCK_H

#include <stdint.h>

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

/* Wall clock in whole seconds since the epoch (what database rows hold). */
static inline int64_t ct_clock_now_s(const struct ct_clock *c)
{
	return (int64_t)c->now(c->ctx);
}

static inline void ct_clock_sleep(const struct ct_clock *c, double s)
{
	c->sleep(c->ctx, s);
}

#endif
