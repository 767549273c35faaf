/*
 * ct_gpt2.h - checkpoints of every model family (load, save, check,
 * layout, seeded init, through the family's row of ct_model_ops.h; the
 * config itself is ct_model_config.h), and GPT-2's own: its parameter
 * layout and llm.c's checkpoint file format (version 3, float32).
 *
 * File layout (little-endian, what llm.c's train_gpt2.c reads):
 *   int32 header[256]: [0] magic 20240326, [1] version 3, [2] maxT,
 *                      [3] V, [4] L, [5] NH, [6] C, [7] Vp, rest 0
 *   float32 params[nparams], the 16 tensors below, back to back, in order:
 *     wte (Vp,C)  wpe (maxT,C)  ln1w (L,C)  ln1b (L,C)  qkvw (L,3C,C)
 *     qkvb (L,3C)  attprojw (L,C,C)  attprojb (L,C)  ln2w (L,C)  ln2b (L,C)
 *     fcw (L,4C,C)  fcb (L,4C)  fcprojw (L,C,4C)  fcprojb (L,C)
 *     lnfw (C)  lnfb (C)
 * Weight matrices are (out, in) row-major: y[o] = sum_i w[o*in + i] x[i].
 * The file size is exactly 1024 + 4*nparams bytes; anything else is
 * rejected. Big-endian hosts are not supported (CT_EUNSUPP).
 *
 * Names: maxT = max sequence length, V = vocabulary, Vp = padded vocabulary
 * (rows of wte; logits Vp..V-1 are ignored by the loss), L = layers,
 * NH = heads, C = channels.
 */
#ifndef CT_GPT2_H
#define CT_GPT2_H

#include <stddef.h>
#include <stdint.h>

#include "ct_model_config.h"

/* A model in memory: config, layout, and its parameters (owned, malloc'd,
 * writable, lay.total floats). Zero-initialise before use; free with
 * ct_gpt2_free(). */
struct ct_gpt2 {
	struct ct_model_config cfg;
	struct ct_gpt2_layout lay;
	float *params;
	/* A compact frozen base (engine/ct_base.h), for LoRA: fmt 0
	 * (CT_BASE_F32) means the weights are params; any other fmt has
	 * params NULL and the weights in base (base_bytes, owned, the image
	 * of ct_base_layout). ct_gpt2_free releases either. */
	int fmt;
	unsigned char *base;
	size_t base_bytes;
};

/* Check a config against the rules (all fields >= 1 and under the caps
 * of ct_model_config.h, C % NH == 0, Vp >= V, an arch that has a row of
 * ct_model_ops.h and that row's own rules, nparams <= CT_GPT2_MAX_PARAMS).
 * Returns 0 or CT_EFORMAT with a detail naming the field. */
int ct_gpt2_config_check(const struct ct_model_config *cfg);

/* The dimensions both checkpoint headers share: v[2..7] are maxT, V, L,
 * NH, C, Vp (cfg's other fields untouched). */
void ct_gpt2_config_dims(struct ct_model_config *cfg, const int32_t *v);

/* ct_gpt2_config_check(), then that an image of n bytes is exactly the
 * header and cfg's parameters. Errors name the file: CT_EFORMAT and the
 * config check's codes. */
int ct_gpt2_config_fits(const struct ct_model_config *cfg, size_t n, const char *name);

/* Fill lay for a valid config (ct_gpt2_config_check() passed). */
void ct_gpt2_layout(const struct ct_model_config *cfg, struct ct_gpt2_layout *lay);

/* Name of tensor i ("wte", ... "lnfb"), or "?" out of range. */
const char *ct_gpt2_tensor_name(int i);

/* Allocate m->params (zeroed) for cfg and fill cfg/lay. Returns 0,
 * CT_EFORMAT (bad config) or CT_ENOMEM; m is zeroed on failure. */
int ct_gpt2_alloc(struct ct_gpt2 *m, const struct ct_model_config *cfg);

/* Release m->params and zero m. A zeroed m is a no-op. */
void ct_gpt2_free(struct ct_gpt2 *m);

/* Read a checkpoint (header validated field by field, exact file size).
 * Returns 0, CT_ENOENT / CT_EPERM / CT_EIO (file), CT_EFORMAT (bad magic,
 * version, config or size; the detail names the path and the problem),
 * CT_ENOMEM or CT_EUNSUPP (big-endian host). On failure m is zeroed.
 * Parameters are NOT checked for NaN/Inf (see ct_gpt2_check_finite). */
int ct_gpt2_load(const char *path, struct ct_gpt2 *m);

/* Same, from a checkpoint image already in memory (n bytes at data). */
int ct_gpt2_load_mem(const void *data, size_t n, const char *name, struct ct_gpt2 *m);

/* Read only the header of a checkpoint file into *cfg (validated, and the
 * file size checked). Returns like ct_gpt2_load(). */
int ct_gpt2_read_config(const char *path, struct ct_model_config *cfg);

/* Parse and check a checkpoint header alone (CT_GPT2_HEADER_BYTES at hdr,
 * GPT-2 or Llama), without the file-size check: for files that carry the
 * header in front of something else (ct_base.h). Returns like
 * ct_gpt2_load(). */
int ct_gpt2_parse_config(const void *hdr, const char *name, struct ct_model_config *cfg);

/* Write cfg + params (nparams floats) to path atomically (0644). Returns 0
 * or a CT_E* code (no file, nor temp file, is left on failure). */
int ct_gpt2_save(const char *path, const struct ct_model_config *cfg, const float *params);

/* Fill the 1024-byte header for cfg into hdr (256 int32, rest zeroed). */
void ct_gpt2_header(const struct ct_model_config *cfg, int32_t hdr[CT_GPT2_HEADER_INTS]);
/* The header ct_gpt2_save writes for either model type (GPT-2's above, or
 * ct_llama_header's), so a checkpoint's bytes, and its hash, can be had
 * without writing it. */
void ct_gpt2_file_header(const struct ct_model_config *cfg,
			 unsigned char hdr[CT_GPT2_HEADER_BYTES]);

/* GPT-2 initialisation from a seed, identical on every platform: every
 * weight matrix and both embeddings ~ normal(0, 0.02), except attprojw and
 * fcprojw ~ normal(0, 0.02/sqrt(2L)); layernorm weights (and Llama's q/k
 * norm weights) 1; biases 0
 * (padded rows of wte are drawn too, like every other element). Normals
 * come from one xoshiro256** stream seeded by splitmix64(seed), turned into
 * N(0,1) by the Marsaglia polar method on ct_logf/sqrtf, consumed in
 * parameter order. params must hold nparams floats. Returns 0 or
 * CT_EFORMAT (bad config). */
int ct_gpt2_init_random(const struct ct_model_config *cfg, uint64_t seed, float *params);

/* 0 if all n floats are finite, else CT_ENONFINITE naming the first bad
 * index and its tensor (for a model with layout lay; lay may be NULL). */
int ct_gpt2_check_finite(const float *params, size_t n, const struct ct_gpt2_layout *lay);

/* Training FLOPs per token (forward + backward) of any family (its row's
 * flops_per_token), used for credit. */
double ct_gpt2_flops_per_token(const struct ct_model_config *cfg, int T);

/* ---- GPT-2's own (its row of ct_model_ops.h) ------------------------ */

/* Sizes of the 16 tensors in floats (the file comment's shapes). */
void ct_gpt2_own_sizes(const struct ct_model_config *cfg, size_t s[CT_GPT2_NTENSORS]);

/* The rest of a header whose magic is CT_GPT2_MAGIC (parse rules of
 * ct_gpt2_load; n the image size, SIZE_MAX for the header alone). */
int ct_gpt2_own_parse(const void *data, size_t n, const char *name,
		      struct ct_model_config *cfg);

/* GPT-2's training FLOPs per token:
 *   matmul params Nm = L*12*C*C + Vp*C (qkv 3C^2, attproj C^2, fc 4C^2,
 *   fcproj 4C^2 per layer; logits through wte);
 *   forward  = 2*Nm + 2*L*C*(T+1)  (attention: q.k and att.v over the
 *              average causal context (T+1)/2, 2 flops per MAC, 2 products);
 *   training = 3 * forward (backward costs twice the forward).
 * Elementwise ops (layernorm, GELU, softmax, AdamW) are not counted. */
double ct_gpt2_own_flops(const struct ct_model_config *cfg, int T);

#endif
