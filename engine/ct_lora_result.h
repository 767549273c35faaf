/*
 * ct_lora_result.h - the result file of a LoRA work unit: its trained
 * adapter array as a ct_delta file of kind CT_DELTA_LORA (ct_delta.h)
 * against the initial adapters ct_lora_init(cfg, spec, seed), which both
 * sides compute from the WU's seed. The client encodes with
 * ct_lora_result_encode, the validator and the assimilator decode with
 * ct_lora_result_decode, which also holds the file's LoRA section and
 * model shape to the work unit's.
 */
#ifndef CT_LORA_RESULT_H
#define CT_LORA_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "ct_buf.h"
#include "ct_delta.h"
#include "ct_gpt2.h"
#include "ct_lora.h"

/* The model shape a result header carries, from a config. */
void ct_lora_result_model(const struct ct_model_config *cfg, struct ct_delta_model *m);

/* Encode a LoRA WU's adapters (ct_lora_nparams(cfg, spec) floats, rank >
 * 0) against ct_lora_init(cfg, spec, seed) and append the file to out
 * (bounded by out->max). base_sha: SHA-256 of the base model file the WU
 * trained from. encoding: CT_DELTA_LOSSLESS (written as the smaller
 * CT_DELTA_LOSSLESS_TENSOR: same adapters, same hash) or CT_DELTA_INT8 (zlib
 * level 1). Allocates the initial adapters for the call. Returns 0, CT_EINVAL
 * (spec), CT_ENOMEM, or ct_delta_encode_lora's errors (CT_ETOOBIG: out's
 * cap); out->len unchanged on failure. */
int ct_lora_result_encode(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
			  uint64_t seed, const unsigned char base_sha[32],
			  const float *adapters, int encoding, struct ct_buf *out);

/* ct_lora_result_encode against the initial adapters init (n floats;
 * NULL: ct_lora_init of the seed). A WU that starts from a carried
 * adapter file (ct_lora_file.h; doc/workunit.md §13) passes those. */
int ct_lora_result_encode_from(const struct ct_model_config *cfg,
			       const struct ct_lora_spec *spec, uint64_t seed, const float *init,
			       const unsigned char base_sha[32], const float *adapters,
			       int encoding, struct ct_buf *out);

/* Decode a LoRA result file (len bytes) of a WU with this config, spec and
 * seed into adapters (ct_lora_nparams floats, caller-allocated). init: the
 * WU's initial adapters if the caller has them (ct_lora_init of the same
 * cfg, spec, seed, or the WU's carried adapter file), or NULL to compute
 * ct_lora_init here. Returns 0; CT_EMISMATCH
 * when the file is not a LoRA result, or its model shape, rank, alpha,
 * targets or seed differ from the WU's (the detail says which); else
 * ct_delta_decode_lora's errors (CT_EFORMAT, CT_ECORRUPT, CT_EHASH ...).
 * info (may be NULL) as ct_delta_decode_lora fills it; the caller still
 * compares info->base_sha with the WU's model. */
int ct_lora_result_decode(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
			  uint64_t seed, const float *init, const void *data, size_t len,
			  float *adapters, struct ct_delta_info *info);

#endif
