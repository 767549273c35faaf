/*
 * ct_time.c - monotonic and process-CPU clocks in seconds (see ct_time.h).
 */
#include "ct_time.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ct_err.h"

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

static int parse_hhmm(const char *s, char **end, int *minutes)
{
	long h, m = 0;

	h = strtol(s, end, 10);
	if (*end == s || h < 0 || h > 24)
		return CT_EINVAL;
	if (**end == ':') {
		s = *end + 1;
		m = strtol(s, end, 10);
		if (*end == s || m < 0 || m > 59)
			return CT_EINVAL;
	}
	if (h == 24 && m != 0)
		return CT_EINVAL;
	*minutes = (int)((h * 60 + m) % 1440);
	return 0;
}

int ct_time_parse_hours(const char *s, int *from, int *to)
{
	char *end;
	int a, b;

	if (s == NULL || *s == '\0' || strcmp(s, "any") == 0) {
		*from = *to = -1;
		return 0;
	}
	if (parse_hhmm(s, &end, &a) < 0 || *end != '-')
		return ct_error(CT_EINVAL, "run_hours '%s': expected HH[:MM]-HH[:MM]", s);
	if (parse_hhmm(end + 1, &end, &b) < 0 || *end != '\0')
		return ct_error(CT_EINVAL, "run_hours '%s': expected HH[:MM]-HH[:MM]", s);
	if (a == b)
		a = b = -1;
	*from = a;
	*to = b;
	return 0;
}

