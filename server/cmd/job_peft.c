/*
 * job_peft.c - PEFT adapter directories of LoRA jobs (see job_peft.h).
 */
#include "config.h"
#include "job_peft.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_model_ops.h"
#include "daemons/eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOD_NAME_MAX 80

/* One Hugging Face module a LoRA target covers: rows [0, out) of a
 * row-major (out, in) block at params + w_off. */
struct peft_mod {
	char name[MOD_NAME_MAX];	/* "model.layers.0.self_attn.q_proj" */
	size_t w_off;
	int out, in;
};

static int target_index(enum ct_lora_target t)
{
	int i = 0;

	while (i < CT_LORA_NTARGETS - 1 && t != (enum ct_lora_target)(1 << i))
		i++;
	return i;
}

/* The modules of spec on cfg into *out (malloc'd), their count in *n. */
static int list_mods(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
		     struct peft_mod **out, size_t *n)
{
	const struct ct_model_ops *ops = ct_model_ops_for(cfg);
	const int ns = ct_lora_nslots(cfg, spec);
	struct peft_mod *m = calloc((size_t)(ns > 0 ? ns : 1) * 3, sizeof(*m));

	*n = 0;
	if (m == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	for (int i = 0; i < ns; i++) {
		struct ct_lora_slot s;
		int ti, rows;
		size_t off;

		ct_lora_slot(cfg, spec, i, &s);
		ti = target_index(s.target);
		off = s.w_off;
		for (int k = 0; k < 3; k++) {
			struct peft_mod *e = &m[*n];

			rows = ops->hf_lora_module(cfg, ti, k, s.layer, s.out, e->name,
						   sizeof(e->name));
			if (rows <= 0)
				break;
			(*n)++;
			e->w_off = off;
			e->out = rows;
			e->in = s.in;
			off += (size_t)rows * (size_t)s.in;
		}
	}
	*out = m;
	return 0;
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Columns q[0..p) (each `out` doubles) made orthonormal in place by
 * modified Gram-Schmidt, twice over each column (so the result is
 * orthogonal to working precision); a column that was (numerically) in
 * the span of those before it becomes 0. */
static void orthonormalise(double *q, int out, int p)
{
	for (int j = 0; j < p; j++) {
		double *v = q + (size_t)j * out, before = 0.0, after = 0.0;

		for (int o = 0; o < out; o++)
			before += v[o] * v[o];
		for (int pass = 0; pass < 2; pass++)
			for (int i = 0; i < j; i++) {
				const double *u = q + (size_t)i * out;
				double d = 0.0;

				for (int o = 0; o < out; o++)
					d += u[o] * v[o];
				for (int o = 0; o < out; o++)
					v[o] -= d * u[o];
			}
		for (int o = 0; o < out; o++)
			after += v[o] * v[o];
		if (!(after > 1e-20 * before) || after == 0.0) {
			memset(v, 0, (size_t)out * sizeof(*v));
			continue;
		}
		after = 1.0 / sqrt(after);
		for (int o = 0; o < out; o++)
			v[o] *= after;
	}
}

/* yc (out, p; column j at yc + j out) = D (out, in) zr (in, p; row-major),
 * through yr (out, p row-major): the inner loops run along rows so that
 * they vectorise without reassociating a sum. */
static void mul_d(const double *d, int out, int in, const double *zr, int p, double *yc,
		  double *yr)
{
	memset(yr, 0, (size_t)out * p * sizeof(*yr));
	for (int o = 0; o < out; o++) {
		double *yo = yr + (size_t)o * p;

		for (int i = 0; i < in; i++) {
			const double x = d[(size_t)o * in + i], *z = zr + (size_t)i * p;

			if (x != 0.0)
				for (int j = 0; j < p; j++)
					yo[j] += x * z[j];
		}
	}
	for (int o = 0; o < out; o++)
		for (int j = 0; j < p; j++)
			yc[(size_t)j * out + o] = yr[(size_t)o * p + j];
}

/* zc (in, p; column j at zc + j in) = D^T yc, each row of D read once. */
static void mul_dt(const double *d, int out, int in, const double *yc, int p, double *zc)
{
	memset(zc, 0, (size_t)in * p * sizeof(*zc));
	for (int o = 0; o < out; o++) {
		const double *row = d + (size_t)o * in;

		for (int j = 0; j < p; j++) {
			const double q = yc[(size_t)j * out + o];
			double *z = zc + (size_t)j * in;

			if (q != 0.0)
				for (int i = 0; i < in; i++)
					z[i] += q * row[i];
		}
	}
}

/* D = model - base over module e, factored as B (out, P) A (P, in) into
 * the floats B and A (zero past the first p = min(P, out, in) ranks). */
static int factor(const struct peft_mod *e, const float *base, const float *model, int P,
		  uint64_t seed, float *B, float *A)
{
	const int out = e->out, in = e->in;
	const int p = P < out ? (P < in ? P : in) : (out < in ? out : in);
	double *d = malloc((size_t)out * in * sizeof(*d));
	double *y = malloc((size_t)out * p * sizeof(*y));	/* column j at y + j out */
	double *yr = malloc((size_t)out * p * sizeof(*yr));
	double *a = malloc((size_t)p * in * sizeof(*a));	/* column j at a + j in */
	double *zr = malloc((size_t)in * p * sizeof(*zr));
	int rc = 0;

	if (d == NULL || y == NULL || yr == NULL || a == NULL || zr == NULL) {
		rc = ct_error(CT_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < (size_t)out * in; k++)
		d[k] = (double)model[e->w_off + k] - (double)base[e->w_off + k];
	for (size_t k = 0; k < (size_t)in * p; k++)	/* random signs (in, p) */
		zr[k] = (splitmix64(&seed) >> 63) ? 1.0 : -1.0;
	mul_d(d, out, in, zr, p, y, yr);
	orthonormalise(y, out, p);
	/* one subspace iteration, y = orth(D orth(D^T y)): the rounding noise
	 * in D bent the random sketch off D's range by up to ~1e-5 of the
	 * change at the exact rank; this brings it to ~1e-7 (test_job_peft) */
	mul_dt(d, out, in, y, p, a);
	orthonormalise(a, in, p);
	for (int i = 0; i < in; i++)
		for (int j = 0; j < p; j++)
			zr[(size_t)i * p + j] = a[(size_t)j * in + i];
	mul_d(d, out, in, zr, p, y, yr);
	orthonormalise(y, out, p);
	mul_dt(d, out, in, y, p, a);	/* A = y^T D: its row j is column j of a */
	for (int o = 0; o < out; o++)
		for (int j = 0; j < P; j++)
			B[(size_t)o * P + j] = j < p ? (float)y[(size_t)j * out + o] : 0.0f;
	for (int j = 0; j < P; j++)
		for (int i = 0; i < in; i++)
			A[(size_t)j * in + i] = j < p ? (float)a[(size_t)j * in + i] : 0.0f;
out:
	free(zr);
	free(a);
	free(yr);
	free(y);
	free(d);
	return rc;
}

/* 0 when model equals base outside the modules, else CT_EMISMATCH. */
static int check_rest(const struct ct_gpt2 *base, const struct ct_gpt2 *model,
		      const struct peft_mod *m, size_t n)
{
	const size_t total = base->lay.total;
	float *t = malloc(total * sizeof(*t));
	int rc = 0;

	if (t == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	memcpy(t, model->params, total * sizeof(*t));
	for (size_t k = 0; k < n; k++)
		memcpy(t + m[k].w_off, base->params + m[k].w_off,
		       (size_t)m[k].out * m[k].in * sizeof(*t));
	if (memcmp(t, base->params, total * sizeof(*t)) != 0)
		rc = ct_error(CT_EMISMATCH, "the model differs from the base outside the LoRA "
			      "targets: not a LoRA job's model");
	free(t);
	return rc;
}

/* s as a JSON string (quoted) into b; control characters, " and \ escaped. */
static int json_str(char *b, size_t cap, const char *s)
{
	size_t k = 0;

	if (s == NULL)
		return snprintf(b, cap, "null") < (int)cap ? 0 : -1;
	if (cap < 3)
		return -1;
	b[k++] = '"';
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		int w;

		if (c < 0x20 || c == '"' || c == '\\')
			w = snprintf(b + k, cap - k, c == '"' ? "\\\"" : c == '\\' ? "\\\\" :
				     "\\u%04x", c);
		else
			w = snprintf(b + k, cap - k, "%c", c);
		if (w < 0 || (size_t)w >= cap - k)
			return -1;
		k += (size_t)w;
	}
	return snprintf(b + k, cap - k, "\"") < (int)(cap - k) ? 0 : -1;
}

static int write_config(const struct ct_job_peft *p, const struct ct_model_config *cfg,
			int P, const char *dir)
{
	const struct ct_model_ops *ops = ct_model_ops_for(cfg);
	char name[2048], targets[256] = "", text[4096], path[4096];
	size_t k = 0;
	int n;

	if (json_str(name, sizeof(name), p->base_name) < 0)
		return ct_error(CT_ETOOBIG, "base model name too long");
	for (int t = 0; t < CT_LORA_NTARGETS; t++)
		for (int i = 0; i < 3 && (p->spec.targets & (1u << t)); i++) {
			const char *w = ops->peft_words[t][i];

			if (w != NULL)
				k += (size_t)snprintf(targets + k, sizeof(targets) - k, "%s\"%s\"",
						      k ? ", " : "", w);
		}
	n = snprintf(text, sizeof(text),
		     "{\n  \"peft_type\": \"LORA\",\n  \"task_type\": \"CAUSAL_LM\",\n"
		     "  \"base_model_name_or_path\": %s,\n  \"r\": %d,\n  \"lora_alpha\": %d,\n"
		     "  \"lora_dropout\": 0.0,\n  \"target_modules\": [%s],\n"
		     "  \"fan_in_fan_out\": %s,\n  \"bias\": \"none\",\n"
		     "  \"use_rslora\": false,\n  \"use_dora\": false,\n"
		     "  \"modules_to_save\": null,\n  \"init_lora_weights\": true,\n"
		     "  \"layers_to_transform\": null,\n  \"layers_pattern\": null,\n"
		     "  \"rank_pattern\": {},\n  \"alpha_pattern\": {},\n"
		     "  \"inference_mode\": true,\n  \"revision\": null\n}\n",
		     name, P, P, targets,
		     (ops->flags & CT_MODEL_HF_FAN_IN_FAN_OUT) ? "true" : "false");
	if (n < 0 || (size_t)n >= sizeof(text))
		return ct_error(CT_EINTERNAL, "adapter_config.json too long");
	if (ct_path_join(path, sizeof(path), dir, "adapter_config.json") < 0)
		return ct_error(CT_ETOOBIG, "%s: path too long", dir);
	return ct_file_write_atomic(path, text, (size_t)n, 0644);
}

/* The adapter's rank: p->rank capped at the widest module's smaller side. */
static int cap_rank(int rank, const struct peft_mod *m, size_t n)
{
	int most = 1;

	for (size_t k = 0; k < n; k++) {
		int s = m[k].out < m[k].in ? m[k].out : m[k].in;

		if (s > most)
			most = s;
	}
	return rank < 1 ? 1 : rank < most ? rank : most;
}

/* Factor every module into the tensors o[2 n] (names in names[2 n]); the
 * floats in *data (malloc'd). */
static int build(const struct ct_gpt2 *base,
		 const struct ct_gpt2 *model, const struct peft_mod *m, size_t n, int P,
		 struct ct_st_out *o, char (*names)[MOD_NAME_MAX + 48], float **data)
{
	size_t total = 0, at = 0;
	int rc = 0;

	for (size_t k = 0; k < n; k++)
		total += (size_t)P * ((size_t)m[k].in + m[k].out);
	*data = malloc((total ? total : 1) * sizeof(float));
	if (*data == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	for (size_t k = 0; k < n && rc == 0; k++) {
		float *A = *data + at, *B = A + (size_t)P * m[k].in;

		snprintf(names[2 * k], sizeof(names[0]), "base_model.model.%s.lora_A.weight",
			 m[k].name);
		snprintf(names[2 * k + 1], sizeof(names[0]), "base_model.model.%s.lora_B.weight",
			 m[k].name);
		o[2 * k] = (struct ct_st_out){ .name = names[2 * k], .ndim = 2,
					       .shape = { P, m[k].in }, .data = A };
		o[2 * k + 1] = (struct ct_st_out){ .name = names[2 * k + 1], .ndim = 2,
						   .shape = { m[k].out, P }, .data = B };
		rc = factor(&m[k], base->params, model->params, P, 0x5eed0000ull + k, B, A);
		at += (size_t)P * ((size_t)m[k].in + m[k].out);
	}
	return rc;
}

/* Whether a and b have the same tensors (a config has padding: no memcmp). */
static int same_shape(const struct ct_gpt2 *a, const struct ct_gpt2 *b)
{
	const struct ct_model_config *x = &a->cfg, *y = &b->cfg;

	return a->lay.total == b->lay.total && x->maxT == y->maxT && x->V == y->V &&
	       x->L == y->L && x->NH == y->NH && x->C == y->C && x->Vp == y->Vp &&
	       x->arch == y->arch && x->KVH == y->KVH && x->F == y->F && x->flags == y->flags &&
	       x->hd == y->hd;
}

int ct_job_peft_export(const struct ct_job_peft *p, const char *dir, int *rank_out)
{
	struct ct_gpt2 base = { 0 }, model = { 0 };
	struct peft_mod *m = NULL;
	struct ct_st_out *o = NULL;
	char (*names)[MOD_NAME_MAX + 48] = NULL, path[4096];
	float *data = NULL;
	size_t n = 0;
	int P = 0, rc;

	rc = ct_seval_model_load(p->base_path, &base);	/* a compact base widened */
	if (rc == 0)
		rc = ct_gpt2_load(p->model_path, &model);
	if (rc == 0 && !same_shape(&base, &model))
		rc = ct_error(CT_EMISMATCH, "the model's shape is not the base model's");
	if (rc == 0)
		rc = ct_lora_spec_check(&p->spec, &base.cfg);
	if (rc == 0)
		rc = list_mods(&base.cfg, &p->spec, &m, &n);
	if (rc == 0)
		rc = check_rest(&base, &model, m, n);
	if (rc < 0)
		goto out;
	P = cap_rank(p->rank, m, n);
	o = calloc(2 * n, sizeof(*o));
	names = calloc(2 * n, sizeof(*names));
	if (o == NULL || names == NULL) {
		rc = ct_error(CT_ENOMEM, "out of memory");
		goto out;
	}
	rc = build(&base, &model, m, n, P, o, names, &data);
	if (rc == 0)
		rc = ct_mkdir_p(dir, 0755);
	if (rc == 0)
		rc = ct_path_join(path, sizeof(path), dir, "adapter_model.safetensors");
	if (rc == 0)
		rc = ct_st_write_as(path, o, 2 * n, p->dtype);
	if (rc == 0)
		rc = write_config(p, &base.cfg, P, dir);
	if (rc == 0 && rank_out != NULL)
		*rank_out = P;
out:
	free(data);
	free(names);
	free(o);
	free(m);
	ct_gpt2_free(&model);
	ct_gpt2_free(&base);
	return rc;
}
