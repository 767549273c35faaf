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
