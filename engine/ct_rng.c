/*
 * ct_rng.c - xoshiro256** / splitmix64 / Marsaglia polar (see ct_rng.h).
 * Shared by ct_gpt2_init_random and ct_lora_init; changing one operation
 * here changes every seeded model and adapter.
 */
#include "config.h"
#include "ct_rng.h"
#include "ct_math.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void ct_rng_seed(struct ct_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
	r->have = 0;
	r->spare = 0.0f;
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t ct_rng_next(struct ct_rng *r)
{
	uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

/* Uniform in (-1, 1): top 24 bits -> k in [0, 2^24), u = (2k + 1)/2^24 - 1
 * (exact in float, never 0 nor +-1). */
static float rng_sym(struct ct_rng *r)
{
	uint32_t k = (uint32_t)(ct_rng_next(r) >> 40);
	float u = (float)(2 * k + 1) * (1.0f / 16777216.0f);

	return u - 1.0f;
}

float ct_rng_normal(struct ct_rng *r)
{
	float u, v, s, f;

	if (r->have) {
		r->have = 0;
		return r->spare;
	}
	do {
		u = rng_sym(r);
		v = rng_sym(r);
		s = u * u;
		s = s + v * v;
	} while (s >= 1.0f || s == 0.0f);
	f = ct_logf(s);
	f = -2.0f * f;
	f = f / s;
	f = sqrtf(f);
	r->spare = v * f;
	r->have = 1;
	return u * f;
}
