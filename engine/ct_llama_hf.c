/*
 * ct_llama_hf.c - Hugging Face directories (config.json + safetensors) to
 * and from crowdtune's Llama model (see ct_llama_hf.h).
 */
#include "config.h"
#include "ct_llama_hf.h"
#include "ct_base.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_jv.h"
#include "ct_llama.h"
#include "ct_log.h"
#include "ct_safetensors.h"
#include "ct_os.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One HF tensor and where it lives in the flat parameter array. */
struct hf_t {
	char name[96];
	int ndim;
	int64_t shape[2];
	size_t off;
	int used;
};

static void hf_add(struct hf_t *t, size_t *n, const char *name, int l, int64_t rows,
		   int64_t cols, size_t off)
{
	struct hf_t *e = &t[(*n)++];

	if (l >= 0)
		snprintf(e->name, sizeof(e->name), "model.layers.%d.%s", l, name);
	else
		snprintf(e->name, sizeof(e->name), "%s", name);
	e->ndim = cols > 0 ? 2 : 1;
	e->shape[0] = rows;
	e->shape[1] = cols;
	e->off = off;
	e->used = 0;
}

/* The HF tensors of a Llama config, in export order; *t malloc'd. */
static int hf_tensors(const struct ct_model_config *c, struct hf_t **out, size_t *nout)
{
	struct ct_gpt2_layout lay;
	const size_t C = (size_t)c->C, F = (size_t)c->F, hs = (size_t)ct_llama_head_dim(c);
	const size_t QKV = (size_t)ct_llama_qkv_dim(c), q = (size_t)c->NH * hs;
	const size_t kv = (size_t)c->KVH * hs;
	const int bias = (c->flags & CT_LLAMA_QKV_BIAS) != 0;
	struct hf_t *t = calloc((size_t)c->L * 14 + 3, sizeof(*t));
	size_t n = 0;

	if (t == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	ct_gpt2_layout(c, &lay);
	hf_add(t, &n, "model.embed_tokens.weight", -1, c->V, (int64_t)C, lay.offset[CT_WTE]);
	for (int l = 0; l < c->L; l++) {
		const size_t qw = lay.offset[CT_QKVW] + l * QKV * C;
		const size_t qb = lay.offset[CT_QKVB] + l * QKV;
		const size_t fw = lay.offset[CT_FCW] + l * 2 * F * C;

		hf_add(t, &n, "input_layernorm.weight", l, (int64_t)C, 0,
		       lay.offset[CT_LN1W] + l * C);
		hf_add(t, &n, "self_attn.q_proj.weight", l, (int64_t)q, (int64_t)C, qw);
		hf_add(t, &n, "self_attn.k_proj.weight", l, (int64_t)kv, (int64_t)C, qw + q * C);
		hf_add(t, &n, "self_attn.v_proj.weight", l, (int64_t)kv, (int64_t)C,
		       qw + (q + kv) * C);
		if (bias) {
			hf_add(t, &n, "self_attn.q_proj.bias", l, (int64_t)q, 0, qb);
			hf_add(t, &n, "self_attn.k_proj.bias", l, (int64_t)kv, 0, qb + q);
			hf_add(t, &n, "self_attn.v_proj.bias", l, (int64_t)kv, 0, qb + q + kv);
		}
		if (c->flags & CT_LLAMA_QK_NORM) {
			const size_t qn = lay.offset[CT_LN1B] + l * 2 * hs;

			hf_add(t, &n, "self_attn.q_norm.weight", l, (int64_t)hs, 0, qn);
			hf_add(t, &n, "self_attn.k_norm.weight", l, (int64_t)hs, 0, qn + hs);
		}
		hf_add(t, &n, "self_attn.o_proj.weight", l, (int64_t)C, (int64_t)q,
		       lay.offset[CT_ATTPROJW] + l * C * q);
		hf_add(t, &n, "post_attention_layernorm.weight", l, (int64_t)C, 0,
		       lay.offset[CT_LN2W] + l * C);
		hf_add(t, &n, "mlp.gate_proj.weight", l, (int64_t)F, (int64_t)C, fw);
		hf_add(t, &n, "mlp.up_proj.weight", l, (int64_t)F, (int64_t)C, fw + F * C);
		hf_add(t, &n, "mlp.down_proj.weight", l, (int64_t)C, (int64_t)F,
		       lay.offset[CT_FCPROJW] + l * C * F);
	}
	hf_add(t, &n, "model.norm.weight", -1, (int64_t)C, 0, lay.offset[CT_LNFW]);
	if (!(c->flags & CT_LLAMA_TIED))
		hf_add(t, &n, "lm_head.weight", -1, c->V, (int64_t)C, lay.offset[CT_WPE]);
	*out = t;
	*nout = n;
	return 0;
}

/* ---- config.json ------------------------------------------------------ */

static int cfg_int(const struct ct_jv *root, const char *key, int64_t lo, int64_t hi,
		   int def, int *out)
{
	const struct ct_jv *v = ct_jv_get(root, key);
	int64_t x;
	int rc;

	if ((v == NULL || v->type == CT_JV_NULL) && def >= 0) {
		*out = def;
		return 0;
	}
	rc = ct_jv_int(v, lo, hi, key, &x);
	if (rc < 0)
		return ct_error(rc, "config.json: %s", ct_errmsg(rc));
	*out = (int)x;
	return 0;
}

static int cfg_num(const struct ct_jv *root, const char *key, double def, double *out)
{
	const struct ct_jv *v = ct_jv_get(root, key);

	if (v == NULL || v->type == CT_JV_NULL) {
		*out = def;
		return 0;
	}
	if (v->type != CT_JV_NUM || !isfinite(v->num))
		return ct_error(CT_EFORMAT, "config.json: %s is not a number", key);
	*out = v->num;
	return 0;
}

static int cfg_bool(const struct ct_jv *root, const char *key)
{
	const struct ct_jv *v = ct_jv_get(root, key);

	return v != NULL && v->type == CT_JV_TRUE;
}

static const char *cfg_str(const struct ct_jv *root, const char *key)
{
	const struct ct_jv *v = ct_jv_get(root, key);

	return v != NULL && v->type == CT_JV_STR ? v->str : NULL;
}

static int cfg_rope_scaling(const struct ct_jv *root, struct ct_model_config *c)
{
	const struct ct_jv *rs = ct_jv_get(root, "rope_scaling");
	const char *type;
	int rc;

	if (rs == NULL || rs->type == CT_JV_NULL)
		return 0;
	type = cfg_str(rs, "rope_type") ? cfg_str(rs, "rope_type") : cfg_str(rs, "type");
	if (type != NULL && strcmp(type, "default") == 0)
		return 0;
	if (type == NULL || strcmp(type, "llama3") != 0)
		return ct_error(CT_EUNSUPP, "config.json: rope_scaling type '%s' is not supported "
				"(only llama3)", type ? type : "?");
	rc = cfg_num(rs, "factor", 0.0, &c->rope_factor);
	if (rc == 0)
		rc = cfg_num(rs, "low_freq_factor", 0.0, &c->rope_low);
	if (rc == 0)
		rc = cfg_num(rs, "high_freq_factor", 0.0, &c->rope_high);
	if (rc == 0)
		rc = cfg_int(rs, "original_max_position_embeddings", 1, INT32_MAX, -1,
			     &c->rope_orig_maxT);
	return rc;
}

/* Check model_type and the features this implementation lacks. */
static int cfg_arch(const struct ct_jv *root, struct ct_model_config *c)
{
	const char *mt = cfg_str(root, "model_type"), *act = cfg_str(root, "hidden_act");

	if (mt == NULL || (strcmp(mt, "llama") != 0 && strcmp(mt, "qwen2") != 0 &&
			   strcmp(mt, "qwen3") != 0))
		return ct_error(CT_EUNSUPP, "config.json: model_type '%s' is not supported "
				"(llama, qwen2 or qwen3)", mt ? mt : "?");
	if (act != NULL && strcmp(act, "silu") != 0)
		return ct_error(CT_EUNSUPP, "config.json: hidden_act '%s' is not supported (silu)",
				act);
	if (cfg_bool(root, "attention_bias") || cfg_bool(root, "mlp_bias"))
		return ct_error(CT_EUNSUPP, "config.json: attention_bias / mlp_bias are not "
				"supported for model_type %s", mt);
	if (cfg_bool(root, "use_sliding_window"))
		return ct_error(CT_EUNSUPP, "config.json: sliding-window attention is not supported");
	if (strcmp(mt, "qwen2") == 0)
		c->flags |= CT_LLAMA_QKV_BIAS;
	if (strcmp(mt, "qwen3") == 0)
		c->flags |= CT_LLAMA_QK_NORM;
	if (cfg_bool(root, "tie_word_embeddings"))
		c->flags |= CT_LLAMA_TIED;
	return 0;
}

static int parse_config(const struct ct_jv *root, struct ct_model_config *c)
{
	int mpe = 0, hd = 0, rc;

	memset(c, 0, sizeof(*c));
	c->arch = CT_ARCH_LLAMA;
	rc = cfg_arch(root, c);
	if (rc == 0)
		rc = cfg_int(root, "hidden_size", 1, CT_GPT2_MAX_C, -1, &c->C);
	if (rc == 0)
		rc = cfg_int(root, "num_hidden_layers", 1, CT_GPT2_MAX_L, -1, &c->L);
	if (rc == 0)
		rc = cfg_int(root, "num_attention_heads", 1, CT_GPT2_MAX_NH, -1, &c->NH);
	if (rc == 0)
		rc = cfg_int(root, "num_key_value_heads", 1, CT_GPT2_MAX_NH, c->NH, &c->KVH);
	if (rc == 0)
		rc = cfg_int(root, "intermediate_size", 1, CT_LLAMA_MAX_F, -1, &c->F);
	if (rc == 0)
		rc = cfg_int(root, "vocab_size", 1, INT32_MAX, -1, &c->V);
	if (rc == 0)
		rc = cfg_int(root, "max_position_embeddings", 1, INT32_MAX, 2048, &mpe);
	if (rc == 0)
		rc = cfg_int(root, "head_dim", 0, CT_LLAMA_MAX_HD, 0, &hd);
	if (rc == 0)
		rc = cfg_num(root, "rms_norm_eps", 1e-6, &c->rms_eps);
	if (rc == 0)
		rc = cfg_num(root, "rope_theta", 10000.0, &c->rope_theta);
	if (rc == 0)
		rc = cfg_rope_scaling(root, c);
	if (rc < 0)
		return rc;
	if (c->V > CT_GPT2_MAX_V)
		return ct_error(CT_EUNSUPP, "config.json: vocab_size %d is over crowdtune's "
				"cap of %d", c->V, CT_GPT2_MAX_V);
	if (hd == 0 && (c->flags & CT_LLAMA_QK_NORM))
		hd = 128;	/* transformers' Qwen3Config default */
	if (hd != 0 && hd * c->NH != c->C)
		c->hd = hd;	/* C/NH is kept as 0 (ct_llama.h) */
	c->Vp = c->V;
	c->maxT = mpe < CT_GPT2_MAX_T ? mpe : CT_GPT2_MAX_T;
	return ct_gpt2_config_check(c);
}

static int read_config(const char *dir, struct ct_model_config *c)
{
	const struct ct_jv_limits lim = { .max_bytes = CT_HF_MAX_CONFIG,
					  .max_values = 100000, .max_depth = 16 };
	char path[4096];
	unsigned char *data = NULL;
	size_t len = 0;
	struct ct_jv *root = NULL;
	int rc;

	rc = ct_path_join(path, sizeof(path), dir, "config.json");
	if (rc == 0)
		rc = ct_file_read_all(path, CT_HF_MAX_CONFIG, &data, &len);
	if (rc == 0)
		rc = ct_jv_parse((const char *)data, len, &lim, path, &root);
	if (rc == 0 && root->type != CT_JV_OBJ)
		rc = ct_error(CT_EFORMAT, "%s: not a JSON object", path);
	if (rc == 0) {
		rc = parse_config(root, c);
		if (rc < 0)
			rc = ct_error(rc, "%s: %s", dir, ct_errmsg(rc));
	}
	ct_jv_free(root);
	free(data);
	return rc;
}

/* ---- import ----------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the *.safetensors files in dir (malloc'd array). */
static int list_shards(const char *dir, char ***out, int *nout)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	int n = 0, rc = 0;

	*out = NULL;
	*nout = 0;
	if (d == NULL)
		return ct_error(CT_ENOENT, "%s: cannot open the directory", dir);
	while ((e = readdir(d)) != NULL && rc == 0) {
		size_t k = strlen(e->d_name);
		char **nv;

		if (e->d_name[0] == '.' || k < 13 || strcmp(e->d_name + k - 12, ".safetensors") != 0)
			continue;
		if (n >= CT_HF_MAX_SHARDS) {
			rc = ct_error(CT_ERANGE, "%s: more than %d safetensors files", dir,
				      CT_HF_MAX_SHARDS);
			break;
		}
		nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
		if (nv == NULL || (nv[n] = strdup(e->d_name)) == NULL) {
			v = nv ? nv : v;
			rc = ct_error(CT_ENOMEM, "out of memory");
			break;
		}
		v = nv;
		n++;
	}
	closedir(d);
	if (rc == 0 && n == 0)
		rc = ct_error(CT_ENOENT, "%s: no *.safetensors file", dir);
	if (rc < 0) {
		for (int i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return rc;
	}
	qsort(v, (size_t)n, sizeof(*v), cmp_str);
	*out = v;
	*nout = n;
	return 0;
}

/* Where the imported weights go: float32 params, or a compact base image
 * (img, laid out by bl; *exact cleared when a tensor had to be rounded). */
struct sink {
	float *params;
	unsigned char *img;
	struct ct_gpt2_layout lay;
	struct ct_base_layout bl;
	int exact;
};

/* Tensor s (destined for float offset off of the float32 layout) into a
 * compact image: float32 tensors as they are read, compact ones as bf16
 * (a BF16 tensor's bits copied, others rounded to nearest even). */
static int read_compact(const struct ct_st_file *f, const struct ct_st_tensor *s,
			struct sink *k, size_t off)
{
	const size_t n = (size_t)s->nelem;
	size_t e;
	uint16_t *dst;
	float *tmp;
	int T = 0, rc;

	for (int i = 0; i < CT_GPT2_NTENSORS; i++)
		if (k->lay.size[i] > 0 && off >= k->lay.offset[i] &&
		    off < k->lay.offset[i] + k->lay.size[i])
			T = i;
	e = off - k->lay.offset[T];
	if (ct_base_tensor_fmt(k->bl.fmt, T) == CT_BASE_F32)
		return ct_st_read_f32(f, s, (float *)(void *)(k->img + k->bl.off[T]) + e, n);
	dst = (uint16_t *)(void *)(k->img + k->bl.off[T]) + e;
	if (s->dtype == CT_ST_BF16) {	/* little-endian host (ct_base_save checks) */
		memcpy(dst, f->data + s->begin, n * 2);
		return 0;
	}
	k->exact = 0;
	tmp = malloc((n ? n : 1) * sizeof(float));
	if (tmp == NULL)
		return ct_error(CT_ENOMEM, "out of memory for tensor '%s'", s->name);
	rc = ct_st_read_f32(f, s, tmp, n);
	for (size_t i = 0; rc == 0 && i < n; i++)
		dst[i] = ct_f32_to_bf16(tmp[i]);
	free(tmp);
	return rc;
}

/* A shard's tensors into the sink; each must be one the config expects (or
 * a known-ignorable one) and appear only once across shards. */
static int import_shard(const char *path, const struct ct_model_config *c,
			struct hf_t *t, size_t nt, struct sink *sink)
{
	struct ct_st_file f;
	int rc = ct_st_open(path, &f);

	for (size_t i = 0; i < f.nt && rc == 0; i++) {
		const struct ct_st_tensor *s = &f.t[i];
		size_t k = 0;
		size_t kl = strlen(s->name);

		while (k < nt && strcmp(t[k].name, s->name) != 0)
			k++;
		if (k == nt) {
			if ((kl >= 19 && strcmp(s->name + kl - 19, "rotary_emb.inv_freq") == 0) ||
			    ((c->flags & CT_LLAMA_TIED) && strcmp(s->name, "lm_head.weight") == 0))
				continue;
			rc = ct_error(CT_EFORMAT, "%s: unexpected tensor '%s' (not part of this "
				      "architecture)", path, s->name);
			break;
		}
		if (t[k].used) {
			rc = ct_error(CT_EFORMAT, "%s: tensor '%s' appears twice", path, s->name);
			break;
		}
		if (s->ndim != t[k].ndim || s->shape[0] != t[k].shape[0] ||
		    (t[k].ndim == 2 && s->shape[1] != t[k].shape[1])) {
			rc = ct_error(CT_EFORMAT, "%s: tensor '%s' has the wrong shape for "
				      "config.json (want [%lld%s%lld])", path, s->name,
				      (long long)t[k].shape[0], t[k].ndim == 2 ? ", " : "",
				      t[k].ndim == 2 ? (long long)t[k].shape[1] : 0LL);
			break;
		}
		if (sink->img != NULL)
			rc = read_compact(&f, s, sink, t[k].off);
		else
			rc = ct_st_read_f32(&f, s, sink->params + t[k].off, (size_t)s->nelem);
		if (rc < 0)
			rc = ct_error(rc, "%s: %s", path, ct_errmsg(rc));
		t[k].used = 1;
	}
	ct_st_close(&f);
	return rc;
}

/* The model of dir as fmt: float32 params, or a compact image. */
static int hf_import(const char *dir, int fmt, struct ct_gpt2 *m, int *exact,
		     void (*progress)(int i, int n, const char *path))
{
	struct ct_model_config c;
	struct hf_t *t = NULL;
	char **shards = NULL, path[4096];
	struct sink sink = { .exact = 1 };
	size_t nt = 0;
	int ns = 0, rc;

	memset(m, 0, sizeof(*m));
	rc = read_config(dir, &c);
	if (rc == 0)
		rc = list_shards(dir, &shards, &ns);
	if (rc == 0)
		rc = hf_tensors(&c, &t, &nt);
	if (rc == 0 && fmt == CT_BASE_F32) {
		rc = ct_gpt2_alloc(m, &c);
		sink.params = m->params;
	} else if (rc == 0) {
		m->cfg = c;
		ct_gpt2_layout(&c, &m->lay);
		ct_base_layout(&c, fmt, &sink.bl);
		m->base = calloc(sink.bl.bytes ? sink.bl.bytes : 1, 1);
		m->fmt = fmt;
		m->base_bytes = sink.bl.bytes;
		sink.img = m->base;
		rc = m->base ? 0 : ct_error(CT_ENOMEM, "out of memory for a %zu-byte base",
					    sink.bl.bytes);
	}
	sink.lay = m->lay;
	for (int i = 0; i < ns && rc == 0; i++) {
		rc = ct_path_join(path, sizeof(path), dir, shards[i]);
		if (rc == 0 && progress != NULL)
			progress(i, ns, path);
		if (rc == 0)
			rc = import_shard(path, &c, t, nt, &sink);
	}
	if (exact != NULL)
		*exact = sink.exact;
	for (size_t k = 0; k < nt && rc == 0; k++)
		if (!t[k].used)
			rc = ct_error(CT_EFORMAT, "%s: tensor '%s' is missing from the safetensors "
				      "files", dir, t[k].name);
	if (rc < 0)
		ct_gpt2_free(m);
	for (int i = 0; i < ns; i++)
		free(shards[i]);
	free(shards);
	free(t);
	return rc;
}

int ct_llama_hf_import(const char *dir, struct ct_gpt2 *m,
		       void (*progress)(int i, int n, const char *path))
{
	return hf_import(dir, CT_BASE_F32, m, NULL, progress);
}

int ct_llama_hf_import_base(const char *dir, int fmt, struct ct_gpt2 *m, int *exact,
			    void (*progress)(int i, int n, const char *path))
{
	if (fmt != CT_BASE_BF16) {	/* q8/nf4 blocks would straddle the HF tensors */
		memset(m, 0, sizeof(*m));
		return ct_error(CT_EINVAL, "import writes bf16 bases (a %s base: import as f32 or "
				"bf16 and train with --base-format %s)", ct_base_fmt_name(fmt),
				ct_base_fmt_name(fmt));
	}
	return hf_import(dir, fmt, m, exact, progress);
}

/* ---- export ----------------------------------------------------------- */

/* Shortest decimal text of d that reads back as d. */
static void fmt_double(char *buf, size_t cap, double d)
{
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, cap, "%.*g", p, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	if (strpbrk(buf, ".eEn") == NULL && strlen(buf) + 3 < cap)
		strcat(buf, ".0");
}

static int write_config(const struct ct_model_config *c, const char *dir)
{
	const int qwen = (c->flags & CT_LLAMA_QKV_BIAS) != 0;
	const int qwen3 = (c->flags & CT_LLAMA_QK_NORM) != 0;
	const char *arch = qwen3 ? "Qwen3ForCausalLM" : qwen ? "Qwen2ForCausalLM" : "LlamaForCausalLM";
	const char *mt = qwen3 ? "qwen3" : qwen ? "qwen2" : "llama";
	char path[4096], eps[40], theta[40], rs[512] = "null", f[3][40], text[4096];
	int k;

	if (qwen && qwen3)
		return ct_error(CT_EUNSUPP, "a model with both q/k/v biases and q/k norms has "
				"no Hugging Face model type");
	fmt_double(eps, sizeof(eps), c->rms_eps);
	fmt_double(theta, sizeof(theta), c->rope_theta);
	if (c->rope_factor > 0.0) {
		fmt_double(f[0], sizeof(f[0]), c->rope_factor);
		fmt_double(f[1], sizeof(f[1]), c->rope_low);
		fmt_double(f[2], sizeof(f[2]), c->rope_high);
		snprintf(rs, sizeof(rs), "{\"rope_type\": \"llama3\", \"factor\": %s, "
			 "\"low_freq_factor\": %s, \"high_freq_factor\": %s, "
			 "\"original_max_position_embeddings\": %d}", f[0], f[1], f[2],
			 c->rope_orig_maxT);
	}
	k = snprintf(text, sizeof(text),
		     "{\n  \"architectures\": [\"%s\"],\n  \"model_type\": \"%s\",\n"
		     "  \"hidden_size\": %d,\n  \"intermediate_size\": %d,\n"
		     "  \"num_hidden_layers\": %d,\n  \"num_attention_heads\": %d,\n"
		     "  \"num_key_value_heads\": %d,\n  \"head_dim\": %d,\n"
		     "  \"vocab_size\": %d,\n  \"max_position_embeddings\": %d,\n"
		     "  \"rms_norm_eps\": %s,\n  \"rope_theta\": %s,\n  \"rope_scaling\": %s,\n"
		     "  \"tie_word_embeddings\": %s,\n  \"hidden_act\": \"silu\",\n"
		     "  \"attention_bias\": false,\n  \"mlp_bias\": false,\n%s"
		     "  \"torch_dtype\": \"float32\"\n}\n",
		     arch, mt, c->C, c->F, c->L, c->NH, c->KVH, ct_llama_head_dim(c), c->V,
		     c->maxT, eps, theta, rs, (c->flags & CT_LLAMA_TIED) ? "true" : "false",
		     qwen || qwen3 ? "  \"use_sliding_window\": false,\n" : "");
	if (k < 0 || (size_t)k >= sizeof(text))
		return ct_error(CT_EINTERNAL, "config.json text too long");
	if (ct_path_join(path, sizeof(path), dir, "config.json") < 0)
		return ct_error(CT_ETOOBIG, "%s: path too long", dir);
	return ct_file_write_atomic(path, text, (size_t)k, 0644);
}

const char *const ct_llama_hf_tokenizer_files[] = {
	"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
	"generation_config.json", NULL,
};

int ct_llama_hf_copy_tokenizer(const char *src, const char *dir)
{
	const char *const *names = ct_llama_hf_tokenizer_files;
	int rc = 0;

	for (size_t i = 0; names[i] != NULL && rc == 0; i++) {
		char from[4096], to[4096];
		unsigned char *data = NULL;
		size_t len = 0;

		if (ct_path_join(from, sizeof(from), src, names[i]) < 0 ||
		    ct_path_join(to, sizeof(to), dir, names[i]) < 0)
			return ct_error(CT_ETOOBIG, "path too long");
		if (!ct_file_exists(from))
			continue;
		rc = ct_file_read_all(from, (size_t)256 << 20, &data, &len);
		if (rc == 0)
			rc = ct_file_write_atomic(to, data, len, 0644);
		free(data);
	}
	return rc;
}

int ct_llama_hf_export(const struct ct_gpt2 *m, const char *dir, const char *tok_dir)
{
	struct hf_t *t = NULL;
	struct ct_st_out *o = NULL;
	char path[4096];
	size_t nt = 0;
	int rc;

	rc = ct_mkdir_p(dir, 0755);
	if (rc == 0)
		rc = hf_tensors(&m->cfg, &t, &nt);
	if (rc < 0)
		return rc;
	o = calloc(nt, sizeof(*o));
	if (o == NULL) {
		rc = ct_error(CT_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < nt; k++) {
		o[k].name = t[k].name;
		o[k].ndim = t[k].ndim;
		o[k].shape[0] = t[k].shape[0];
		o[k].shape[1] = t[k].shape[1];
		o[k].data = m->params + t[k].off;
	}
	rc = ct_path_join(path, sizeof(path), dir, "model.safetensors");
	if (rc == 0)
		rc = ct_st_write(path, o, nt);
	if (rc == 0)
		rc = write_config(&m->cfg, dir);
	if (rc == 0 && tok_dir != NULL)
		rc = ct_llama_hf_copy_tokenizer(tok_dir, dir);
out:
	free(o);
	free(t);
	return rc;
}

int ct_llama_hf_read_config(const char *dir, struct ct_model_config *c)
{
	return read_config(dir, c);
}

/* ---- PEFT's names of the LoRA targets ------------------------------ */

/* By target (ct_lora.h order qkv, proj, fc, fcproj): Llama splits the
 * fused matrices. */
const char *const ct_llama_hf_peft_words[4][3] = {
	{ "q_proj", "k_proj", "v_proj" }, { "o_proj" }, { "gate_proj", "up_proj" },
	{ "down_proj" },
};

int ct_llama_hf_lora_module(const struct ct_model_config *c, int ti, int k, int l, int out,
			    char *name, size_t cap)
{
	const int hd = ct_llama_head_dim(c), q = c->NH * hd, kv = c->KVH * hd;
	int rows[3] = { 0, 0, 0 };

	(void)out;
	switch (ti) {
	case 0: rows[0] = q; rows[1] = kv; rows[2] = kv; break;
	case 1: rows[0] = c->C; break;
	case 2: rows[0] = c->F; rows[1] = c->F; break;
	default: rows[0] = c->C; break;
	}
	if (k < 0 || k > 2 || rows[k] == 0)
		return 0;
	snprintf(name, cap, "model.layers.%d.%s.%s", l, ti < 2 ? "self_attn" : "mlp",
		 ct_llama_hf_peft_words[ti][k]);
	return rows[k];
}
