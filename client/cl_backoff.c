/*
 * cl_backoff.c - see cl_backoff.h.
 */
#include "cl_backoff.h"
#include "ct_hash.h"

#include <math.h>

void ct_backoff_init(struct ct_backoff *b, double base, double cap, uint64_t seed)
{
	b->base = base > 0 ? base : CT_BACKOFF_BASE;
	b->cap = cap > 0 ? cap : CT_BACKOFF_CAP;
	if (b->cap < b->base)
		b->cap = b->base;
	if (seed == 0 && ct_random_bytes(&seed, sizeof(seed)) < 0)
		seed = 0x9e3779b97f4a7c15ull;
	b->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
}

double ct_backoff_uniform(struct ct_backoff *b)
{
	uint64_t x = b->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	b->rng = x;
	/* top 53 bits of the xorshift64* output -> [0, 1) */
	return (double)((x * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

double ct_backoff_ceiling(const struct ct_backoff *b, int nfailures)
{
	double d;

	if (nfailures <= 0)
		return 0;
	if (nfailures > 60)	/* 2^60 * base is past any cap */
		return b->cap;
	d = ldexp(b->base, nfailures - 1);
	return d < b->cap ? d : b->cap;
}

double ct_backoff_delay(struct ct_backoff *b, int nfailures)
{
	return ct_backoff_ceiling(b, nfailures) * (0.5 + 0.5 * ct_backoff_uniform(b));
}
