/*
 * ct_rng.h - the portable random generator behind every seeded
 * initialisation (ct_gpt2_init_random, ct_lora_init): xoshiro256** seeded
 * by splitmix64(seed), integer-only so the stream is the same on every
 * platform, turned into N(0,1) by the Marsaglia polar method on
 * ct_logf/sqrtf (float arithmetic exactly as written in ct_rng.c, compiled
 * without contraction).
 */
#ifndef CT_RNG_H
#define CT_RNG_H

#include <stdint.h>

/* A normal generator; set up with ct_rng_seed, then draw with
 * ct_rng_normal. Plain data: copy it to fork the stream. */
struct ct_rng {
	uint64_t s[4];		/* xoshiro256** state */
	int have;		/* a spare normal is waiting */
	float spare;
};

/* s[i] = splitmix64 outputs 1..4 of `seed`; no spare. */
void ct_rng_seed(struct ct_rng *r, uint64_t seed);

/* Next 64-bit output of xoshiro256**. */
uint64_t ct_rng_next(struct ct_rng *r);

/* Standard normal: pairs (u, v) with u, v = (2k + 1)/2^24 - 1 from the top
 * 24 bits of two outputs, rejected unless 0 < s = u*u + v*v < 1;
 * f = sqrtf((-2 * ct_logf(s)) / s); returns u*f and keeps v*f for the
 * next call. */
float ct_rng_normal(struct ct_rng *r);

#endif
