/*
 * ct_lora.h - LoRA adapters for GPT-2: which matrices get one, where each
 * adapter lives in the flat adapter array, how adapters start (a pure
 * function of the work unit's seed) and how the adapters of K shards are
 * merged into full weights exactly.
 *
 * For a target weight W (OC, C) (llm.c's (out, in) layout) an adapter is
 * A (r, C) and B (OC, r), and the layer computes
 *   out = inp x W^T + bias + s * ((inp x A^T) x B^T),   s = alpha / r
 * with W frozen. The work unit trains only A and B (AdamW over the adapter
 * array); its result is the adapter array, uploaded with ct_delta against
 * the initial adapters (so the lossless/int8 encodings, the hash quorum and
 * the sanity checks apply to adapters unchanged).
 *
 * Adapter array layout (floats, back to back): for layer l = 0..L-1, for
 * each selected target in the order qkv, attproj, fc, fcproj:
 *   A (r, C_in) then B (C_out, r)
 * with (C_out, C_in) = qkv (3C, C), attproj (C, C), fc (4C, C),
 * fcproj (C, 4C).
 *
 * Where the rest lives (for the server/client side):
 *  - training: struct ct_wu_hparams (ct_engine.h) carries `lora` (this
 *    spec; rank 0 = full fine-tuning, unchanged) and `lora_seed` (the
 *    seed of ct_lora_init); ct_wu_open/ct_wu_resume/ct_wu_step work as for
 *    a full WU on "cpu" and "opencl" (bit-identical);
 *  - the result: ct_wu_nparams_trained(wu) floats (ct_lora_nparams for a
 *    LoRA WU) copied out by ct_wu_read_adapters(wu, buf) (or
 *    ct_wu_read_trained, which reads weights or adapters as the WU trains);
 *  - the arithmetic of the adapter layer, forward and backward, and the
 *    frozen-weight model: ct_lora_model.h and doc/workunit.md section 10.
 */
#ifndef CT_LORA_H
#define CT_LORA_H

#include <stddef.h>
#include <stdint.h>

#include "ct_gpt2.h"

enum ct_lora_target {
	CT_LORA_QKV = 1 << 0,
	CT_LORA_ATTPROJ = 1 << 1,
	CT_LORA_FC = 1 << 2,
	CT_LORA_FCPROJ = 1 << 3,
	CT_LORA_ALL = 0xf,
};

#define CT_LORA_NTARGETS 4
#define CT_LORA_MAX_RANK 1024

/* A LoRA configuration; rank 0 means "no LoRA, train all weights". */
struct ct_lora_spec {
	int rank;		/* r, 0 or 1..CT_LORA_MAX_RANK */
	float alpha;		/* s = alpha / r; default alpha = r (s = 1) */
	unsigned targets;	/* CT_LORA_* bits, non-zero when rank > 0 */
	int base_fmt;		/* how the frozen base is stored: CT_BASE_* of
				 * ct_base.h (0, float32, by default) */
};

/* Where one adapter pair sits in the adapter array. */
struct ct_lora_slot {
	int layer;
	enum ct_lora_target target;
	int out, in;		/* W is (out, in) */
	size_t a_off;		/* A (r, in) */
	size_t b_off;		/* B (out, r) */
	size_t w_off;		/* offset of W in the model's flat params */
};

/* Check spec against cfg (rank range, alpha finite and > 0, targets known
 * and non-empty). Returns 0, or CT_EINVAL with a detail naming the field. */
int ct_lora_spec_check(const struct ct_lora_spec *spec,
		       const struct ct_model_config *cfg);

/* Parse a comma-separated target list ("qkv,proj,fc,fcproj", "all") into
 * CT_LORA_* bits. Returns 0 or CT_EINVAL naming the bad word. */
int ct_lora_targets_parse(const char *s, unsigned *out);

/* Number of adapter slots (L x selected targets) and total adapter floats
 * for a checked spec. */
int ct_lora_nslots(const struct ct_model_config *cfg, const struct ct_lora_spec *spec);
size_t ct_lora_nparams(const struct ct_model_config *cfg, const struct ct_lora_spec *spec);

/* Slot i (0 <= i < nslots) of the layout above. */
void ct_lora_slot(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
		  int i, struct ct_lora_slot *out);

/* Initial adapters for a work unit, identical on every platform: every A
 * element ~ normal(0, 1/sqrt(in)) drawn from the same generator as
 * ct_gpt2_init_random (xoshiro256** seeded by splitmix64(seed), Marsaglia
 * polar normals) in slot order, row-major; every B element 0. adapters
 * holds ct_lora_nparams floats. Returns 0 or CT_EINVAL. */
int ct_lora_init(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
		 uint64_t seed, float *adapters);

/* Exact lo-fi merge of K shards' adapters into full weights:
 * for every slot and every W element (o, i):
 *   acc = 0.0f
 *   for k = 0..K-1:
 *     d = 0.0f; for j = 0..r-1: d = fmaf(B_k[o,j], A_k[j,i], d)
 *     acc = acc + d
 *   params[w_off + o*in + i] = params[...] + (s * (acc / (float)K))
 * (the mean of the K products, not the product of mean A and mean B).
 * params holds the model's nparams floats (updated in place); adapters[k]
 * holds ct_lora_nparams floats. Returns 0 or CT_EINVAL. */
int ct_lora_merge(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
		  float *params, const float *const *adapters, int K);

#endif
