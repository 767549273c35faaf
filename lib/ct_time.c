/*
 * ct_time.c - monotonic and process-CPU clocks in seconds (see ct_time.h).
 */
#include "ct_time.h"

#include <time.h>

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double ct_time_mono_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

double ct_time_cpu_s(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

void ct_time_after(clockid_t clock, double s, struct timespec *ts)
{
	clock_gettime(clock, ts);
	ts->tv_sec += (time_t)s;
	ts->tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}
