/*
 * ct_time.h - the two clocks the engine and the benchmarks measure with:
 * a monotonic wall clock and the CPU time of the whole process (all
 * threads; on a shared machine it measures a CPU device's work better
 * than the wall clock does).
 */
#ifndef CT_TIME_H
#define CT_TIME_H

#include <time.h>

/* Seconds on CLOCK_MONOTONIC (arbitrary origin: use differences). */
double ct_time_mono_s(void);

/* CPU seconds used so far by this process, all threads
 * (CLOCK_PROCESS_CPUTIME_ID). */
double ct_time_cpu_s(void);

/* *ts = now on clock `clock` + s seconds (s >= 0), normalised: an
 * absolute deadline for pthread_cond_timedwait on a condition variable
 * of that clock (ct_os.h's ct_os_cond_deadline). */
void ct_time_after(clockid_t clock, double s, struct timespec *ts);

/* Parse a daily window "HH[:MM]-HH[:MM]" (local time, may wrap past
 * midnight; "" or "any": no window) into minutes after midnight; from ==
 * to is no window, given as -1 and -1. The client's run_hours and the web's
 * computing preferences share it. Returns 0 or CT_EINVAL. */
int ct_time_parse_hours(const char *s, int *from, int *to);

#endif
