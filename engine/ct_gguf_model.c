/*
 * ct_gguf_model.c - GPT-2 and Llama-family models as GGUF files (see
 * ct_gguf_model.h): the architecture's metadata, the tensors named and
 * shaped as llama.cpp loads them, straight from the flat parameter array
 * (ct_llama.h's slots; rows reordered through a row map, never copied).
 */
#include "ct_gguf_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_gguf_tok.h"
#include "ct_llama.h"
#include "ct_model_ops.h"

static const struct {
	const char *name;
	enum ct_ggml_type t;
	int file_type;		/* general.file_type */
} dtypes[] = {
	{ "f32", CT_GGML_F32, 0 }, { "f16", CT_GGML_F16, 1 },
	{ "bf16", CT_GGML_BF16, 32 }, { "q8_0", CT_GGML_Q8_0, 7 },
};
#define NDTYPES (sizeof(dtypes) / sizeof(dtypes[0]))

int ct_gguf_dtype_parse(const char *s, enum ct_ggml_type *t)
{
	for (size_t i = 0; i < NDTYPES; i++)
		if (strcmp(s, dtypes[i].name) == 0) {
			*t = dtypes[i].t;
			return 0;
		}
	return ct_error(CT_EINVAL, "dtype '%s': want f32, f16, bf16 or q8_0", s);
}

const char *ct_gguf_dtype_name(enum ct_ggml_type t)
{
	for (size_t i = 0; i < NDTYPES; i++)
		if (dtypes[i].t == t)
			return dtypes[i].name;
	return "?";
}

static int file_type(enum ct_ggml_type t)
{
	for (size_t i = 0; i < NDTYPES; i++)
		if (dtypes[i].t == t)
			return dtypes[i].file_type;
	return 0;
}

/* What one export is writing. */
struct ct_gguf_export {
	struct ct_gguf *g;
	const struct ct_gpt2 *m;
	enum ct_ggml_type dt;
	uint32_t *qmap, *kmap;	/* "llama": the rows of attn_q / attn_k */
	float *rope_freqs;	/* Llama 3 scaling */
};

/* A matrix (rows x cols at float offset off) or, cols 0, a vector. */
static int put(struct ct_gguf_export *x, const char *name, int l, int64_t rows, int64_t cols,
	       size_t off, const uint32_t *map)
{
	enum ct_ggml_type t = cols == 0 ? CT_GGML_F32 : x->dt;
	char full[CT_GGUF_MAX_NAME + 1];

	if (l >= 0)
		snprintf(full, sizeof(full), "blk.%d.%s", l, name);
	else
		snprintf(full, sizeof(full), "%s", name);
	if (t == CT_GGML_Q8_0 && cols % CT_GGML_QK8_0 != 0)
		t = CT_GGML_F16;
	return ct_gguf_tensor(x->g, full, t, rows, cols, x->m->params + off, map);
}

/* Row map of one projection of nh heads of hd rows: HF's rotate-half
 * pairs (i, i + hd/2) to adjacent pairs (2i, 2i + 1). */
static uint32_t *head_map(int nh, int hd)
{
	uint32_t *map = malloc((size_t)nh * (size_t)hd * sizeof(*map));

	for (int h = 0; map != NULL && h < nh; h++)
		for (int i = 0; i < hd / 2; i++)
			for (int e = 0; e < 2; e++)
				map[h * hd + 2 * i + e] = (uint32_t)(h * hd + e * (hd / 2) + i);
	return map;
}

/* Key "<arch>.<key>" of x's file. */
static int kv_u32(struct ct_gguf_export *x, const char *arch, const char *key, uint32_t v)
{
	char k[96];

	snprintf(k, sizeof(k), "%s.%s", arch, key);
	return ct_gguf_kv_u32(x->g, k, v);
}

static int kv_f32(struct ct_gguf_export *x, const char *arch, const char *key, double v)
{
	char k[96];

	snprintf(k, sizeof(k), "%s.%s", arch, key);
	return ct_gguf_kv_f32(x->g, k, (float)v);
}

/* The architecture keys every family has, then the family's own. */
static int arch_keys(struct ct_gguf_export *x, const char *arch)
{
	const struct ct_model_config *c = &x->m->cfg;
	const struct ct_model_dims d = ct_model_dims(c);
	int rc = kv_u32(x, arch, "context_length", (uint32_t)c->maxT);

	if (rc == 0)
		rc = kv_u32(x, arch, "embedding_length", (uint32_t)c->C);
	if (rc == 0)
		rc = kv_u32(x, arch, "block_count", (uint32_t)c->L);
	if (rc == 0)
		rc = kv_u32(x, arch, "feed_forward_length", (uint32_t)d.hidden);
	if (rc == 0)
		rc = kv_u32(x, arch, "vocab_size", (uint32_t)c->V);
	if (rc == 0)
		rc = kv_u32(x, arch, "attention.head_count", (uint32_t)c->NH);
	if (rc == 0)
		rc = ct_model_ops_for(c)->gguf_keys(x, arch);
	return rc;
}

int ct_gguf_gpt2_keys(struct ct_gguf_export *x, const char *arch)
{
	return kv_f32(x, arch, "attention.layer_norm_epsilon", 1e-5);
}

int ct_gguf_llama_keys(struct ct_gguf_export *x, const char *arch)
{
	const struct ct_model_config *c = &x->m->cfg;
	const uint32_t hd = (uint32_t)ct_llama_head_dim(c);
	int rc = kv_u32(x, arch, "attention.head_count_kv", (uint32_t)c->KVH);

	if (rc == 0)
		rc = kv_u32(x, arch, "attention.key_length", hd);
	if (rc == 0)
		rc = kv_u32(x, arch, "attention.value_length", hd);
	if (rc == 0)
		rc = kv_u32(x, arch, "rope.dimension_count", hd);
	if (rc == 0)
		rc = kv_f32(x, arch, "rope.freq_base", c->rope_theta);
	if (rc == 0)
		rc = kv_f32(x, arch, "attention.layer_norm_rms_epsilon", c->rms_eps);
	return rc;
}

/* Llama 3 scaling: f_i / f'_i for each of the hd/2 frequencies. */
static int rope_freqs(struct ct_gguf_export *x)
{
	struct ct_model_config plain = x->m->cfg;
	const int half = ct_llama_head_dim(&plain) / 2;
	double *f = malloc(2 * (size_t)half * sizeof(*f));

	x->rope_freqs = malloc((size_t)half * sizeof(float));
	if (f == NULL || x->rope_freqs == NULL) {
		free(f);
		return ct_error(CT_ENOMEM, "out of memory");
	}
	ct_llama_inv_freq(&x->m->cfg, f + half);
	plain.rope_factor = 0.0;
	ct_llama_inv_freq(&plain, f);
	for (int i = 0; i < half; i++)
		x->rope_freqs[i] = (float)(f[i] / f[half + i]);
	free(f);
	return ct_gguf_tensor(x->g, "rope_freqs.weight", CT_GGML_F32, half, 0, x->rope_freqs,
			      NULL);
}

static int llama_layer(struct ct_gguf_export *x, const struct ct_gpt2_layout *lay, int l)
{
	const struct ct_model_config *c = &x->m->cfg;
	const size_t C = (size_t)c->C, F = (size_t)c->F, hd = (size_t)ct_llama_head_dim(c);
	const size_t QKV = (size_t)ct_llama_qkv_dim(c), q = (size_t)c->NH * hd;
	const size_t kv = (size_t)c->KVH * hd;
	const size_t qw = lay->offset[CT_QKVW] + l * QKV * C, qb = lay->offset[CT_QKVB] + l * QKV;
	const size_t fw = lay->offset[CT_FCW] + l * 2 * F * C;
	int rc = put(x, "attn_norm.weight", l, (int64_t)C, 0, lay->offset[CT_LN1W] + l * C, NULL);

	if (rc == 0)
		rc = put(x, "attn_q.weight", l, (int64_t)q, (int64_t)C, qw, x->qmap);
	if (rc == 0)
		rc = put(x, "attn_k.weight", l, (int64_t)kv, (int64_t)C, qw + q * C, x->kmap);
	if (rc == 0)
		rc = put(x, "attn_v.weight", l, (int64_t)kv, (int64_t)C, qw + (q + kv) * C, NULL);
	if (rc == 0 && (c->flags & CT_LLAMA_QKV_BIAS)) {
		rc = put(x, "attn_q.bias", l, (int64_t)q, 0, qb, NULL);
		if (rc == 0)
			rc = put(x, "attn_k.bias", l, (int64_t)kv, 0, qb + q, NULL);
		if (rc == 0)
			rc = put(x, "attn_v.bias", l, (int64_t)kv, 0, qb + q + kv, NULL);
	}
	if (rc == 0 && (c->flags & CT_LLAMA_QK_NORM)) {
		const size_t qn = lay->offset[CT_LN1B] + l * 2 * hd;

		rc = put(x, "attn_q_norm.weight", l, (int64_t)hd, 0, qn, NULL);
		if (rc == 0)
			rc = put(x, "attn_k_norm.weight", l, (int64_t)hd, 0, qn + hd, NULL);
	}
	if (rc == 0)
		rc = put(x, "attn_output.weight", l, (int64_t)C, (int64_t)q,
			 lay->offset[CT_ATTPROJW] + l * C * q, NULL);
	if (rc == 0)
		rc = put(x, "ffn_norm.weight", l, (int64_t)C, 0, lay->offset[CT_LN2W] + l * C, NULL);
	if (rc == 0)
		rc = put(x, "ffn_gate.weight", l, (int64_t)F, (int64_t)C, fw, NULL);
	if (rc == 0)
		rc = put(x, "ffn_up.weight", l, (int64_t)F, (int64_t)C, fw + F * C, NULL);
	if (rc == 0)
		rc = put(x, "ffn_down.weight", l, (int64_t)C, (int64_t)F,
			 lay->offset[CT_FCPROJW] + l * C * F, NULL);
	return rc;
}

int ct_gguf_llama_tensors(struct ct_gguf_export *x, const char *arch)
{
	const struct ct_model_config *c = &x->m->cfg;
	const struct ct_gpt2_layout *lay = &x->m->lay;
	const int hd = ct_llama_head_dim(c);
	int rc = 0;

	if (strcmp(arch, "llama") == 0) {
		x->qmap = head_map(c->NH, hd);
		x->kmap = head_map(c->KVH, hd);
		if (x->qmap == NULL || x->kmap == NULL)
			return ct_error(CT_ENOMEM, "out of memory");
	}
	rc = put(x, "token_embd.weight", -1, c->V, c->C, lay->offset[CT_WTE], NULL);
	for (int l = 0; rc == 0 && l < c->L; l++)
		rc = llama_layer(x, lay, l);
	if (rc == 0)
		rc = put(x, "output_norm.weight", -1, c->C, 0, lay->offset[CT_LNFW], NULL);
	if (rc == 0 && !(c->flags & CT_LLAMA_TIED))
		rc = put(x, "output.weight", -1, c->V, c->C, lay->offset[CT_WPE], NULL);
	if (rc == 0 && c->rope_factor > 0.0)
		rc = rope_freqs(x);
	return rc;
}

int ct_gguf_gpt2_tensors(struct ct_gguf_export *x, const char *arch)
{
	const struct ct_model_config *c = &x->m->cfg;
	const size_t *o = x->m->lay.offset, C = (size_t)c->C;
	static const struct { const char *name; int slot, rows, cols; } per_layer[] = {
		/* rows, cols in units of C (0: a vector) */
		{ "attn_norm.weight", CT_LN1W, 1, 0 }, { "attn_norm.bias", CT_LN1B, 1, 0 },
		{ "attn_qkv.weight", CT_QKVW, 3, 1 }, { "attn_qkv.bias", CT_QKVB, 3, 0 },
		{ "attn_output.weight", CT_ATTPROJW, 1, 1 }, { "attn_output.bias", CT_ATTPROJB, 1, 0 },
		{ "ffn_norm.weight", CT_LN2W, 1, 0 }, { "ffn_norm.bias", CT_LN2B, 1, 0 },
		{ "ffn_up.weight", CT_FCW, 4, 1 }, { "ffn_up.bias", CT_FCB, 4, 0 },
		{ "ffn_down.weight", CT_FCPROJW, 1, 4 }, { "ffn_down.bias", CT_FCPROJB, 1, 0 },
	};
	int rc = put(x, "token_embd.weight", -1, c->V, c->C, o[CT_WTE], NULL);

	(void)arch;
	if (rc == 0)
		rc = put(x, "position_embd.weight", -1, c->maxT, c->C, o[CT_WPE], NULL);
	for (int l = 0; rc == 0 && l < c->L; l++)
		for (size_t i = 0; rc == 0 && i < sizeof(per_layer) / sizeof(per_layer[0]); i++) {
			const size_t n = per_layer[i].rows * C * (per_layer[i].cols ? per_layer[i].cols * C : 1);

			rc = put(x, per_layer[i].name, l, (int64_t)(per_layer[i].rows * C),
				 (int64_t)(per_layer[i].cols * C), o[per_layer[i].slot] + l * n, NULL);
		}
	if (rc == 0)
		rc = put(x, "output_norm.weight", -1, c->C, 0, o[CT_LNFW], NULL);
	if (rc == 0)
		rc = put(x, "output_norm.bias", -1, c->C, 0, o[CT_LNFB], NULL);
	if (rc == 0)	/* llama.cpp's gpt2 reads the logits' matrix from here */
		rc = put(x, "output.weight", -1, c->V, c->C, o[CT_WTE], NULL);
	return rc;
}

const char *ct_gguf_gpt2_arch(const struct ct_model_config *c)
{
	(void)c;
	return "gpt2";
}

const char *ct_gguf_llama_arch(const struct ct_model_config *c)
{
	if ((c->flags & CT_LLAMA_QK_NORM) && (c->flags & CT_LLAMA_QKV_BIAS))
		return NULL;
	return (c->flags & CT_LLAMA_QK_NORM) ? "qwen3"
	       : (c->flags & CT_LLAMA_QKV_BIAS) ? "qwen2" : "llama";
}

int ct_gguf_export_model(const struct ct_gpt2 *m, const char *path, const char *tok_dir,
			 enum ct_ggml_type dtype, const char *name)
{
	const struct ct_model_ops *ops = ct_model_ops_for(&m->cfg);
	struct ct_gguf_export x = { .m = m, .dt = dtype };
	const char *arch = ops->gguf_arch(&m->cfg);
	int rc;

	if (arch == NULL)
		return ct_error(CT_EUNSUPP, "a model with both q/k/v biases and q/k norms has "
				"no llama.cpp architecture");
	if (m->params == NULL)
		return ct_error(CT_EUNSUPP, "GGUF export needs the float32 weights, not a "
				"compact base");
	rc = ct_gguf_new(&x.g);
	if (rc == 0)
		rc = ct_gguf_kv_str(x.g, "general.architecture", arch);
	if (rc == 0)
		rc = ct_gguf_kv_str(x.g, "general.name", name ? name : "crowdtune");
	if (rc == 0)
		rc = ct_gguf_kv_u32(x.g, "general.file_type", (uint32_t)file_type(dtype));
	if (rc == 0 && dtype == CT_GGML_Q8_0)
		rc = ct_gguf_kv_u32(x.g, "general.quantization_version", 2);
	if (rc == 0)
		rc = arch_keys(&x, arch);
	if (rc == 0 && tok_dir != NULL)
		rc = ct_gguf_add_tokenizer(x.g, tok_dir, m->cfg.V, NULL);
	if (rc == 0)
		rc = ops->gguf_tensors(&x, arch);
	if (rc == 0)
		rc = ct_gguf_write(x.g, path);
	ct_gguf_free(x.g);
	free(x.qmap);
	free(x.kmap);
	free(x.rope_freqs);
	return rc;
}
