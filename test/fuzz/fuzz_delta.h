/*
 * fuzz_delta.h - what the result-file harness (fuzz_delta.c) and the seed
 * maker (seeds.c) share: the two LoRA work units a LoRA result is decoded
 * for, and the base weights a full-weights result is decoded against.
 */
#ifndef CT_FUZZ_DELTA_H
#define CT_FUZZ_DELTA_H

#include <stdint.h>
#include <string.h>

#include "ct_delta.h"
#include "ct_gpt2.h"
#include "ct_llama.h"
#include "ct_lora.h"

/* Full-weights files of up to this many weights are decoded: three
 * chunks, the last one short. */
#define CT_FUZZ_MAX_FULL (2 * CT_DELTA_CHUNK + 300)

struct ct_fuzz_wu {
	struct ct_model_config cfg;
	struct ct_lora_spec spec;
	uint64_t seed;
};

#define CT_FUZZ_NWUS 2
static const struct ct_fuzz_wu ct_fuzz_wus[CT_FUZZ_NWUS] = {
	{ .cfg = { .maxT = 16, .V = 64, .Vp = 64, .L = 2, .NH = 2, .C = 16 },
	  .spec = { .rank = 2, .alpha = 4.0f, .targets = CT_LORA_ALL }, .seed = 7 },
	{ .cfg = { .maxT = 16, .V = 50, .Vp = 50, .L = 2, .NH = 4, .C = 32,
		   .arch = CT_ARCH_LLAMA, .KVH = 2, .F = 48, .flags = CT_LLAMA_QKV_BIAS,
		   .rope_theta = 10000.0, .rms_eps = 1e-5 },
	  .spec = { .rank = 2, .alpha = 2.0f, .targets = CT_LORA_ALL }, .seed = 9 },
};

/* Base weight i: every kind of float32 bit pattern shows up (a fifth of
 * them anything: NaNs, infinities, subnormals; the rest ordinary). */
static inline float ct_fuzz_base(size_t i)
{
	uint32_t u = (uint32_t)i * 2654435761u;
	float f;

	u = i % 5 == 0 ? u : (u & 0x3fffffffu) | 0x3c000000u;
	memcpy(&f, &u, 4);
	return f;
}

#endif
