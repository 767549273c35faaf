/*
 * cl_backoff.h - when to talk to a project next.
 *
 * After n consecutive failures (n >= 1) of a scheduler RPC, download or
 * upload, the client waits min(base * 2^(n-1), cap) * U(0.5, 1) seconds, as
 * BOINC does (base 60 s, cap 4 h; `ctune run --backoff-base S` shortens the
 * base for tests). The jitter spreads out clients that failed together so a
 * server coming back is not hit by all of them at once. A success resets n.
 * Independently the server's request_delay sets the earliest next RPC.
 */
#ifndef CT_CL_BACKOFF_H
#define CT_CL_BACKOFF_H

#include <stdint.h>

#define CT_BACKOFF_BASE 60.0
#define CT_BACKOFF_CAP (4 * 3600.0)

struct ct_backoff {
	double base;		/* seconds, > 0 */
	double cap;		/* seconds, >= base */
	uint64_t rng;		/* xorshift64* state, never 0 */
};

/* Base/cap as given (<= 0: the defaults); the jitter generator is seeded
 * from `seed` (0: from secure random bytes). */
void ct_backoff_init(struct ct_backoff *b, double base, double cap, uint64_t seed);

/* A uniform number in [0, 1) from b's generator. */
double ct_backoff_uniform(struct ct_backoff *b);

/* The un-jittered delay after n failures: min(base * 2^(n-1), cap); 0 for
 * n <= 0. Never overflows for large n. */
double ct_backoff_ceiling(const struct ct_backoff *b, int nfailures);

/* The delay to wait after the n-th consecutive failure:
 * ceiling(n) * (0.5 + 0.5 * u) with u = ct_backoff_uniform(b), so it lies in
 * [ceiling/2, ceiling). */
double ct_backoff_delay(struct ct_backoff *b, int nfailures);

#endif
