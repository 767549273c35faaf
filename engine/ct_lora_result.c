/*
 * ct_lora_result.c - see ct_lora_result.h.
 */
#include "config.h"
#include "ct_lora_result.h"
#include "ct_err.h"
#include "ct_model_ops.h"

#include <stdlib.h>
#include <string.h>

void ct_lora_result_model(const struct ct_model_config *cfg, struct ct_delta_model *m)
{
	m->max_seq_len = (uint32_t)cfg->maxT;
	m->vocab_size = (uint32_t)cfg->V;
	m->padded_vocab_size = (uint32_t)cfg->Vp;
	m->num_layers = (uint32_t)cfg->L;
	m->num_heads = (uint32_t)cfg->NH;
	m->channels = (uint32_t)cfg->C;
}

/* ct_lora_init into a fresh array of n floats (*out; the caller frees). */
static int initial(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
		   uint64_t seed, size_t n, float **out)
{
	int rc;

	*out = malloc(n * sizeof(float));
	if (*out == NULL)
		return ct_error(CT_ENOMEM, "LoRA result: %zu initial adapters", n);
	rc = ct_lora_init(cfg, spec, seed, *out);
	if (rc < 0) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

int ct_lora_result_encode(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
			  uint64_t seed, const unsigned char base_sha[32],
			  const float *adapters, int encoding, struct ct_buf *out)
{
	return ct_lora_result_encode_from(cfg, spec, seed, NULL, base_sha, adapters, encoding,
					  out);
}

int ct_lora_result_encode_from(const struct ct_model_config *cfg,
			       const struct ct_lora_spec *spec, uint64_t seed, const float *init,
			       const unsigned char base_sha[32], const float *adapters,
			       int encoding, struct ct_buf *out)
{
	struct ct_delta_lora sec = { .rank = (uint32_t)spec->rank,
				     .targets = spec->targets, .alpha = spec->alpha,
				     .seed = seed, .arch = (uint32_t)cfg->arch };
	struct ct_delta_model m;
	size_t n;
	float *own = NULL;
	int rc;

	if (spec->rank < 1)
		return ct_error(CT_EINVAL, "LoRA result: rank 0 is not a LoRA work unit");
	n = ct_lora_nparams(cfg, spec);
	if (init == NULL) {
		rc = initial(cfg, spec, seed, n, &own);
		if (rc < 0)
			return rc;
		init = own;
	}
	ct_lora_result_model(cfg, &m);
	if (encoding == CT_DELTA_LOSSLESS &&
	    (ct_model_ops_for(cfg)->flags & CT_MODEL_LORA_TENSOR_SEGMENTS))
		encoding = CT_DELTA_LOSSLESS_TENSOR;	/* its segments follow GPT-2's slots */
	rc = ct_delta_encode_lora(init, adapters, n, &m, base_sha, &sec, encoding, -1, out);
	free(own);
	return rc;
}

/* The header's LoRA section and shape against the WU's. */
static int same_wu(const struct ct_delta_info *info, const struct ct_model_config *cfg,
		   const struct ct_lora_spec *spec, uint64_t seed)
{
	struct ct_delta_model m;

	ct_lora_result_model(cfg, &m);
	if (memcmp(&m, &info->model, sizeof(m)) != 0 || info->lora.arch != (uint32_t)cfg->arch)
		return ct_error(CT_EMISMATCH, "LoRA result for another model shape");
	if (info->lora.rank != (uint32_t)spec->rank || info->lora.targets != spec->targets ||
	    memcmp(&info->lora.alpha, &spec->alpha, sizeof(float)) != 0)
		return ct_error(CT_EMISMATCH, "LoRA result with rank %u, alpha %g, targets 0x%x; "
				"the work unit has %d, %g, 0x%x", info->lora.rank,
				(double)info->lora.alpha, info->lora.targets, spec->rank,
				(double)spec->alpha, spec->targets);
	if (info->lora.seed != seed)
		return ct_error(CT_EMISMATCH, "LoRA result against the adapters of another seed");
	return 0;
}

int ct_lora_result_decode(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
			  uint64_t seed, const float *init, const void *data, size_t len,
			  float *adapters, struct ct_delta_info *info)
{
	struct ct_delta_info local;
	float *own = NULL;
	size_t n;
	int rc;

	if (info == NULL)
		info = &local;
	if (spec->rank < 1)
		return ct_error(CT_EINVAL, "LoRA result: rank 0 is not a LoRA work unit");
	n = ct_lora_nparams(cfg, spec);
	/* the header first: nothing is computed for a file of another WU */
	rc = ct_delta_parse_header(data, len, info);
	if (rc == 0 && info->kind != CT_DELTA_LORA)
		rc = ct_error(CT_EMISMATCH, "a full-weights result where LoRA adapters are expected");
	if (rc == 0)
		rc = same_wu(info, cfg, spec, seed);
	if (rc == 0 && init == NULL) {
		rc = initial(cfg, spec, seed, n, &own);
		init = own;
	}
	if (rc == 0)
		rc = ct_delta_decode_lora(data, len, init, n, adapters, info);
	free(own);
	return rc;
}
