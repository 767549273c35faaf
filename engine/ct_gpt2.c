/*
 * ct_gpt2.c - GPT-2 config/layout, llm.c checkpoint read/write, seeded
 * platform-independent initialisation, FLOPs per token (see ct_gpt2.h).
 */
#include "config.h"
#include "ct_gpt2.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_le.h"
#include "ct_math.h"
#include "ct_model_ops.h"
#include "ct_rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const tensor_names[CT_GPT2_NTENSORS] = {
	"wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb",
	"ln2w", "ln2b", "fcw", "fcb", "fcprojw", "fcprojb", "lnfw", "lnfb"
};

const char *ct_gpt2_tensor_name(int i)
{
	return i >= 0 && i < CT_GPT2_NTENSORS ? tensor_names[i] : "?";
}

/* No overflow for configs under the caps: each factor < 2^20 and the
 * products are computed in size_t = 64 bits. */
void ct_gpt2_own_sizes(const struct ct_model_config *c, size_t s[CT_GPT2_NTENSORS])
{
	size_t L = (size_t)c->L, C = (size_t)c->C;

	s[CT_WTE] = (size_t)c->Vp * C;
	s[CT_WPE] = (size_t)c->maxT * C;
	s[CT_LN1W] = L * C;
	s[CT_LN1B] = L * C;
	s[CT_QKVW] = L * 3 * C * C;
	s[CT_QKVB] = L * 3 * C;
	s[CT_ATTPROJW] = L * C * C;
	s[CT_ATTPROJB] = L * C;
	s[CT_LN2W] = L * C;
	s[CT_LN2B] = L * C;
	s[CT_FCW] = L * 4 * C * C;
	s[CT_FCB] = L * 4 * C;
	s[CT_FCPROJW] = L * C * 4 * C;
	s[CT_FCPROJB] = L * C;
	s[CT_LNFW] = C;
	s[CT_LNFB] = C;
}

static int check_field(const char *name, int v, int max)
{
	if (v < 1 || v > max)
		return ct_error(CT_EFORMAT, "model config: %s = %d (must be 1..%d)",
				name, v, max);
	return 0;
}

int ct_gpt2_config_check(const struct ct_model_config *c)
{
	const struct ct_model_ops *ops;
	size_t s[CT_GPT2_NTENSORS], total = 0;
	int rc;

	rc = check_field("max_seq_len", c->maxT, CT_GPT2_MAX_T);
	if (rc == 0)
		rc = check_field("vocab_size", c->V, CT_GPT2_MAX_V);
	if (rc == 0)
		rc = check_field("num_layers", c->L, CT_GPT2_MAX_L);
	if (rc == 0)
		rc = check_field("num_heads", c->NH, CT_GPT2_MAX_NH);
	if (rc == 0)
		rc = check_field("channels", c->C, CT_GPT2_MAX_C);
	if (rc == 0)
		rc = check_field("padded_vocab_size", c->Vp, CT_GPT2_MAX_VP);
	if (rc < 0)
		return rc;
	if (c->C % c->NH != 0)
		return ct_error(CT_EFORMAT, "model config: channels %d not divisible by num_heads %d",
				c->C, c->NH);
	if (c->Vp < c->V)
		return ct_error(CT_EFORMAT, "model config: padded_vocab_size %d < vocab_size %d",
				c->Vp, c->V);
	ops = ct_model_ops_find(c->arch);
	if (ops == NULL)
		return ct_error(CT_EFORMAT, "model config: unknown model type %d", c->arch);
	if (ops->config_check != NULL && (rc = ops->config_check(c)) < 0)
		return rc;
	ops->tensor_sizes(c, s);
	for (int i = 0; i < CT_GPT2_NTENSORS; i++)
		total += s[i];
	if (total > CT_GPT2_MAX_PARAMS)
		return ct_error(CT_EFORMAT, "model config: %zu parameters (limit %zu)",
				total, CT_GPT2_MAX_PARAMS);
	return 0;
}

void ct_gpt2_layout(const struct ct_model_config *cfg, struct ct_gpt2_layout *lay)
{
	size_t off = 0;

	ct_model_ops_for(cfg)->tensor_sizes(cfg, lay->size);
	for (int i = 0; i < CT_GPT2_NTENSORS; i++) {
		lay->offset[i] = off;
		off += lay->size[i];
	}
	lay->total = off;
}

int ct_gpt2_alloc(struct ct_gpt2 *m, const struct ct_model_config *cfg)
{
	int rc;

	memset(m, 0, sizeof(*m));
	rc = ct_gpt2_config_check(cfg);
	if (rc < 0)
		return rc;
	m->cfg = *cfg;
	ct_gpt2_layout(cfg, &m->lay);
	m->params = calloc(m->lay.total, sizeof(float));
	if (m->params == NULL) {
		size_t n = m->lay.total;

		memset(m, 0, sizeof(*m));
		return ct_error(CT_ENOMEM, "out of memory for %zu model parameters", n);
	}
	return 0;
}

void ct_gpt2_free(struct ct_gpt2 *m)
{
	free(m->params);
	free(m->base);
	memset(m, 0, sizeof(*m));
}

void ct_gpt2_header(const struct ct_model_config *cfg, int32_t hdr[CT_GPT2_HEADER_INTS])
{
	memset(hdr, 0, CT_GPT2_HEADER_BYTES);
	hdr[0] = CT_GPT2_MAGIC;
	hdr[1] = CT_GPT2_VERSION;
	hdr[2] = cfg->maxT;
	hdr[3] = cfg->V;
	hdr[4] = cfg->L;
	hdr[5] = cfg->NH;
	hdr[6] = cfg->C;
	hdr[7] = cfg->Vp;
}

/* Validate a header against the total byte size n of the image: the
 * family its magic names parses the rest. */
static int parse_header(const void *data, size_t n, const char *name,
			struct ct_model_config *cfg)
{
	const struct ct_model_ops *ops;
	int32_t magic;

	if (!ct_le_host())
		return ct_error(CT_EUNSUPP, "%s: big-endian hosts are not supported", name);
	if (n < CT_GPT2_HEADER_BYTES)
		return ct_error(CT_EFORMAT, "%s: %zu bytes is too short for a GPT-2 checkpoint header",
				name, n);
	memcpy(&magic, data, sizeof(magic));
	ops = ct_model_ops_by_magic(magic);
	if (ops != NULL)
		return ops->parse_header(data, n, name, cfg);
	memset(cfg, 0, sizeof(*cfg));
	return ct_error(CT_EFORMAT, "%s: bad magic %d (not a GPT-2 checkpoint; want %d)",
			name, (int)magic, CT_GPT2_MAGIC);
}

int ct_gpt2_own_parse(const void *data, size_t n, const char *name,
		      struct ct_model_config *cfg)
{
	int32_t hdr[8];

	memcpy(hdr, data, sizeof(hdr));
	memset(cfg, 0, sizeof(*cfg));
	if (hdr[1] != CT_GPT2_VERSION)
		return ct_error(CT_EFORMAT, "%s: checkpoint version %d not supported (want %d, float32)",
				name, (int)hdr[1], CT_GPT2_VERSION);
	ct_gpt2_config_dims(cfg, hdr);
	return ct_gpt2_config_fits(cfg, n, name);
}

void ct_gpt2_config_dims(struct ct_model_config *cfg, const int32_t *v)
{
	cfg->maxT = v[2];
	cfg->V = v[3];
	cfg->L = v[4];
	cfg->NH = v[5];
	cfg->C = v[6];
	cfg->Vp = v[7];
}

int ct_gpt2_config_fits(const struct ct_model_config *cfg, size_t n, const char *name)
{
	struct ct_gpt2_layout lay;
	size_t want;
	int rc;

	rc = ct_gpt2_config_check(cfg);
	if (rc < 0) {
		char why[256];

		snprintf(why, sizeof(why), "%s", ct_errmsg(rc));
		return ct_error(rc, "%s: %s", name, why);
	}
	ct_gpt2_layout(cfg, &lay);
	want = CT_GPT2_HEADER_BYTES + lay.total * sizeof(float);
	if (n != want && n != SIZE_MAX)	/* SIZE_MAX: header only (ct_gpt2_parse_config) */
		return ct_error(CT_EFORMAT, "%s: file is %zu bytes but its header implies %zu (truncated or wrong file)",
				name, n, want);
	return 0;
}

int ct_gpt2_load_mem(const void *data, size_t n, const char *name, struct ct_gpt2 *m)
{
	struct ct_model_config cfg;
	int rc;

	memset(m, 0, sizeof(*m));
	rc = parse_header(data, n, name, &cfg);
	if (rc < 0)
		return rc;
	rc = ct_gpt2_alloc(m, &cfg);
	if (rc < 0)
		return rc;
	memcpy(m->params, (const unsigned char *)data + CT_GPT2_HEADER_BYTES,
	       m->lay.total * sizeof(float));
	return 0;
}

int ct_gpt2_load(const char *path, struct ct_gpt2 *m)
{
	struct ct_mmap map = { 0 };
	int rc;

	memset(m, 0, sizeof(*m));
	rc = ct_file_map(path, &map);
	if (rc < 0)
		return rc;
	rc = ct_gpt2_load_mem(map.addr, map.len, path, m);
	ct_file_unmap(&map);
	return rc;
}

int ct_gpt2_parse_config(const void *hdr, const char *name, struct ct_model_config *cfg)
{
	return parse_header(hdr, SIZE_MAX, name, cfg);
}

int ct_gpt2_read_config(const char *path, struct ct_model_config *cfg)
{
	struct ct_mmap map = { 0 };
	int rc;

	rc = ct_file_map(path, &map);
	if (rc < 0)
		return rc;
	rc = parse_header(map.addr, map.len, path, cfg);
	ct_file_unmap(&map);
	return rc;
}

void ct_gpt2_file_header(const struct ct_model_config *cfg,
			 unsigned char hdr[CT_GPT2_HEADER_BYTES])
{
	ct_model_ops_for(cfg)->file_header(cfg, hdr);
}

int ct_gpt2_save(const char *path, const struct ct_model_config *cfg, const float *params)
{
	int32_t hdr[CT_GPT2_HEADER_INTS];
	struct ct_gpt2_layout lay;
	struct ct_afile af = { .fd = -1 };
	int rc;

	if (!ct_le_host())
		return ct_error(CT_EUNSUPP, "%s: big-endian hosts are not supported", path);
	rc = ct_gpt2_config_check(cfg);
	if (rc < 0)
		return rc;
	ct_gpt2_layout(cfg, &lay);
	ct_gpt2_file_header(cfg, (unsigned char *)hdr);
	rc = ct_afile_open(&af, path, 0644);
	if (rc < 0)
		return rc;
	rc = ct_afile_write(&af, hdr, sizeof(hdr));
	if (rc < 0)
		goto out;
	rc = ct_afile_write(&af, params, lay.total * sizeof(float));
	if (rc < 0)
		goto out;
	return ct_afile_commit(&af);
out:
	ct_afile_abort(&af);
	return rc;
}

/* ---- seeded initialisation ----------------------------------------- */

int ct_gpt2_init_random(const struct ct_model_config *cfg, uint64_t seed, float *params)
{
	struct ct_gpt2_layout lay;
	struct ct_rng g;
	float std = 0.02f, pstd;
	int rc, ln1b_norms;

	rc = ct_gpt2_config_check(cfg);
	if (rc < 0)
		return rc;
	ct_gpt2_layout(cfg, &lay);
	ln1b_norms = (ct_model_ops_for(cfg)->flags & CT_MODEL_LN1B_NORMS) != 0;
	ct_rng_seed(&g, seed);
	pstd = 0.02f / sqrtf(2.0f * (float)cfg->L);
	for (int t = 0; t < CT_GPT2_NTENSORS; t++) {
		float *p = params + lay.offset[t];
		size_t n = lay.size[t];

		/* a ln1b slot of norm weights (Qwen3's q/k norms): ones too */
		int ones = t == CT_LN1W || t == CT_LN2W || t == CT_LNFW ||
			   (t == CT_LN1B && ln1b_norms);

		switch (ones ? CT_LN1W : t) {
		case CT_LN1W: case CT_LN2W: case CT_LNFW:
			for (size_t i = 0; i < n; i++)
				p[i] = 1.0f;
			break;
		case CT_LN1B: case CT_LN2B: case CT_LNFB: case CT_QKVB:
		case CT_ATTPROJB: case CT_FCB: case CT_FCPROJB:
			memset(p, 0, n * sizeof(float));
			break;
		default: {
			float sd = (t == CT_ATTPROJW || t == CT_FCPROJW) ? pstd : std;

			for (size_t i = 0; i < n; i++)
				p[i] = ct_rng_normal(&g) * sd;
			break;
		}
		}
	}
	return 0;
}

int ct_gpt2_check_finite(const float *params, size_t n, const struct ct_gpt2_layout *lay)
{
	for (size_t i = 0; i < n; i++) {
		float x = params[i];

		if (x - x != 0.0f) {	/* NaN or +-inf */
			int t = 0;

			while (lay && t + 1 < CT_GPT2_NTENSORS && i >= lay->offset[t + 1])
				t++;
			return ct_error(CT_ENONFINITE, "parameter %zu%s%s is %s", i,
					lay ? " in " : "", lay ? tensor_names[t] : "",
					x != x ? "NaN" : "infinite");
		}
	}
	return 0;
}

double ct_gpt2_flops_per_token(const struct ct_model_config *c, int T)
{
	return ct_model_ops_for(c)->flops_per_token(c, T);
}

double ct_gpt2_own_flops(const struct ct_model_config *c, int T)
{
	double L = c->L, C = c->C, Vp = c->Vp;
	double nm = L * 12.0 * C * C + Vp * C;
	double fwd = 2.0 * nm + 2.0 * L * C * ((double)T + 1.0);

	return 3.0 * fwd;
}
