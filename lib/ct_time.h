/*
 * ct_time.h - the two clocks the engine and the benchmarks measure with:
 * a monotonic wall clock and the CPU time of the whole process (all
 * threads; on a shared machine it measures a CPU device's work better
 * than the wall clock does).
 */
#ifndef CT_TIME_H
#define CT_TIME_H

/* Seconds on CLOCK_MONOTONIC (arbitrary origin: use differences). */
double ct_time_mono_s(void);

/* CPU seconds used so far by this process, all threads
 * (CLOCK_PROCESS_CPUTIME_ID). */
double ct_time_cpu_s(void);

#endif
