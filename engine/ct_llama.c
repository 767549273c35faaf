/*
 * ct_llama.c - the Llama model type's config, parameter slots, checkpoint
 * header, FLOPs per token and RoPE tables (see ct_llama.h).
 *
 * The RoPE tables use double-precision exp, log, sin and cos written here
 * from plain IEEE operations (argument reduction by exact scaling or a
 * three-part pi/2, then fixed-length Taylor series), so the tables are the
 * same bits on every host whatever its libm. Compiled with
 * -ffp-contract=off like the rest of the engine.
 */
#include "config.h"
#include "ct_llama.h"
#include "ct_err.h"
#include "ct_le.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ct_llama_head_dim(const struct ct_model_config *c)
{
	return c->hd > 0 ? c->hd : c->C / c->NH;
}

int ct_llama_att_dim(const struct ct_model_config *c)
{
	return c->NH * ct_llama_head_dim(c);
}

int ct_llama_qkv_dim(const struct ct_model_config *c)
{
	return (c->NH + 2 * c->KVH) * ct_llama_head_dim(c);
}

void ct_llama_tensor_sizes(const struct ct_model_config *c, size_t s[CT_GPT2_NTENSORS])
{
	size_t L = (size_t)c->L, C = (size_t)c->C, F = (size_t)c->F;
	size_t QKV = (size_t)ct_llama_qkv_dim(c), A = (size_t)ct_llama_att_dim(c);

	memset(s, 0, CT_GPT2_NTENSORS * sizeof(size_t));
	s[CT_WTE] = (size_t)c->Vp * C;
	s[CT_WPE] = (c->flags & CT_LLAMA_TIED) ? 0 : (size_t)c->Vp * C;
	s[CT_LN1W] = L * C;
	s[CT_LN1B] = (c->flags & CT_LLAMA_QK_NORM) ? L * 2 * (size_t)ct_llama_head_dim(c) : 0;
	s[CT_QKVW] = L * QKV * C;
	s[CT_QKVB] = (c->flags & CT_LLAMA_QKV_BIAS) ? L * QKV : 0;
	s[CT_ATTPROJW] = L * C * A;
	s[CT_LN2W] = L * C;
	s[CT_FCW] = L * 2 * F * C;
	s[CT_FCPROJW] = L * C * F;
	s[CT_LNFW] = C;
}

static int bad_double(const char *name, double v, double lo, double hi)
{
	if (!(v >= lo && v <= hi))
		return ct_error(CT_EFORMAT, "model config: %s = %g (must be %g..%g)",
				name, v, lo, hi);
	return 0;
}

int ct_llama_config_check(const struct ct_model_config *c)
{
	int rc = 0;

	if (c->KVH < 1 || c->KVH > c->NH || c->NH % c->KVH != 0)
		return ct_error(CT_EFORMAT, "model config: num_key_value_heads %d must divide "
				"num_attention_heads %d", c->KVH, c->NH);
	if (c->hd != 0 && (c->hd < 2 || c->hd > CT_LLAMA_MAX_HD || c->hd == c->C / c->NH))
		return ct_error(CT_EFORMAT, "model config: head_dim %d (must be 0, meaning "
				"C/NH, or 2..%d and not C/NH)", c->hd, CT_LLAMA_MAX_HD);
	if (ct_llama_head_dim(c) % 2 != 0)
		return ct_error(CT_EFORMAT, "model config: head size %d must be even for RoPE",
				ct_llama_head_dim(c));
	if (c->F < 1 || c->F > CT_LLAMA_MAX_F)
		return ct_error(CT_EFORMAT, "model config: intermediate_size %d (must be 1..%d)",
				c->F, CT_LLAMA_MAX_F);
	if ((c->flags & ~(CT_LLAMA_TIED | CT_LLAMA_QKV_BIAS | CT_LLAMA_QK_NORM)) != 0)
		return ct_error(CT_EFORMAT, "model config: unknown flags 0x%x", c->flags);
	rc = bad_double("rope_theta", c->rope_theta, 1.0 + 1e-9, 1e12);
	if (rc == 0)
		rc = bad_double("rms_norm_eps", c->rms_eps, 1e-30, 0.5);
	if (rc < 0 || c->rope_factor == 0.0)
		return rc;
	rc = bad_double("rope_scaling.factor", c->rope_factor, 1.0, 1e6);
	if (rc == 0)
		rc = bad_double("rope_scaling.low_freq_factor", c->rope_low, 1e-6, 1e6);
	if (rc == 0)
		rc = bad_double("rope_scaling.high_freq_factor", c->rope_high,
				c->rope_low * (1.0 + 1e-9), 1e6);
	if (rc == 0 && (c->rope_orig_maxT < 1 || c->rope_orig_maxT > CT_GPT2_MAX_T * 16))
		rc = ct_error(CT_EFORMAT, "model config: rope_scaling.original_max_position_"
			      "embeddings %d out of range", c->rope_orig_maxT);
	return rc;
}

/* ---- checkpoint header ----------------------------------------------- */

void ct_llama_header(const struct ct_model_config *c, unsigned char hdr[CT_GPT2_HEADER_BYTES])
{
	const int v2 = c->hd != 0 || (c->flags & CT_LLAMA_QK_NORM) != 0;
	const int32_t ints[12] = { CT_LLAMA_MAGIC, v2 ? CT_LLAMA_VERSION_HD : CT_LLAMA_VERSION,
				   c->maxT, c->V, c->L,
				   c->NH, c->C, c->Vp, c->KVH, c->F, c->flags,
				   c->rope_orig_maxT };

	memset(hdr, 0, CT_GPT2_HEADER_BYTES);
	for (int i = 0; i < 12; i++)
		ct_le_put32(hdr + 4 * i, (uint32_t)ints[i]);
	ct_le_put_f64(hdr + 48, c->rope_theta);
	ct_le_put_f64(hdr + 56, c->rms_eps);
	ct_le_put_f64(hdr + 64, c->rope_factor);
	ct_le_put_f64(hdr + 72, c->rope_low);
	ct_le_put_f64(hdr + 80, c->rope_high);
	if (v2)
		ct_le_put32(hdr + 88, (uint32_t)ct_llama_head_dim(c));
}

int ct_llama_parse_header(const unsigned char *h, size_t n, const char *name,
			  struct ct_model_config *c)
{
	int32_t v[12], hd = 0;
	size_t zero_from = 88;

	if (n < CT_GPT2_HEADER_BYTES)
		return ct_error(CT_EFORMAT, "%s: %zu bytes is too short for a Llama checkpoint",
				name, n);
	for (int i = 0; i < 12; i++)
		v[i] = (int32_t)ct_le_get32(h + 4 * i);
	if (v[1] != CT_LLAMA_VERSION && v[1] != CT_LLAMA_VERSION_HD)
		return ct_error(CT_EFORMAT, "%s: Llama checkpoint version %d not supported (want "
				"%d or %d)", name, (int)v[1], CT_LLAMA_VERSION, CT_LLAMA_VERSION_HD);
	if (v[1] == CT_LLAMA_VERSION_HD) {
		hd = (int32_t)ct_le_get32(h + 88);
		zero_from = 92;
	} else if (v[10] & CT_LLAMA_QK_NORM) {
		return ct_error(CT_EFORMAT, "%s: q/k norms need a version %d Llama checkpoint",
				name, CT_LLAMA_VERSION_HD);
	}
	for (size_t i = zero_from; i < CT_GPT2_HEADER_BYTES; i++)
		if (h[i] != 0)
			return ct_error(CT_EFORMAT, "%s: Llama checkpoint header byte %zu is not zero",
					name, i);
	memset(c, 0, sizeof(*c));	/* field by field: padding stays zero (memcmp) */
	ct_gpt2_config_dims(c, v);
	c->arch = CT_ARCH_LLAMA;
	c->KVH = v[8];
	c->F = v[9];
	c->flags = v[10];
	c->rope_orig_maxT = v[11];
	c->rope_theta = ct_le_get_f64(h + 48);
	c->rms_eps = ct_le_get_f64(h + 56);
	c->rope_factor = ct_le_get_f64(h + 64);
	c->rope_low = ct_le_get_f64(h + 72);
	c->rope_high = ct_le_get_f64(h + 80);
	if (v[1] == CT_LLAMA_VERSION_HD && (hd < 1 || c->NH < 1 || hd != c->C / c->NH))
		c->hd = hd;	/* else C/NH, written as 0 in memory */
	return ct_gpt2_config_fits(c, n, name);
}

double ct_llama_flops_per_token(const struct ct_model_config *c, int T)
{
	double L = c->L, C = c->C, Vp = c->Vp, F = c->F, QKV = ct_llama_qkv_dim(c);
	double A = ct_llama_att_dim(c);
	double nm = L * (QKV * C + A * C + 3.0 * F * C) + Vp * C;
	double fwd = 2.0 * nm + 2.0 * L * A * ((double)T + 1.0);

	return 3.0 * fwd;
}

/* ---- portable double math for the RoPE tables ------------------------ */

#define LN2_HI 6.93147180369123816490e-01	/* high 32 bits of ln 2 */
#define LN2_LO 1.90821492927058770002e-10	/* ln 2 - LN2_HI */
#define PIO2_1 1.57079632673412561417e+00	/* pi/2 in three parts of */
#define PIO2_2 6.07710050630396597660e-11	/* 33 bits each, so k*part is */
#define PIO2_3 2.02226624871116645580e-21	/* exact for k < 2^20 */
#define PIO2_3T 8.47842766036889956997e-32

/* log(x), x > 0 finite: x = m * 2^e with m in [sqrt(1/2), sqrt(2)),
 * log m = 2 atanh(z), z = (m-1)/(m+1), by 16 terms of its series. */
static double own_log(double x)
{
	int e;
	double m = frexp(x, &e), z, z2, term, sum = 0.0;

	if (m < 0.70710678118654752440) {
		m = m * 2.0;
		e = e - 1;
	}
	z = (m - 1.0) / (m + 1.0);
	z2 = z * z;
	term = z;
	for (int k = 0; k < 16; k++) {
		sum = sum + term / (double)(2 * k + 1);
		term = term * z2;
	}
	return ((double)e * LN2_HI + 2.0 * sum) + (double)e * LN2_LO;
}

/* exp(x), |x| < 700: x = k ln2 + r, |r| <= ln2/2, 22 Taylor terms of
 * exp(r) (Horner), scaled by 2^k exactly. */
static double own_exp(double x)
{
	double k = floor(x / 0.69314718055994530942 + 0.5);
	double r = (x - k * LN2_HI) - k * LN2_LO, p = 1.0;

	for (int n = 22; n >= 1; n--)
		p = 1.0 + p * r / (double)n;
	return ldexp(p, (int)k);
}

/* sin and cos of |r| <= pi/4 by their Taylor series to r^27. */
static void sincos_small(double r, double *s, double *c)
{
	double r2 = r * r, ps = 1.0, pc = 1.0;

	for (int n = 26; n >= 2; n -= 2) {
		ps = 1.0 - ps * r2 / ((double)n * (double)(n + 1));
		pc = 1.0 - pc * r2 / ((double)(n - 1) * (double)n);
	}
	*s = r * ps;
	*c = pc;
}

/* sin and cos of 0 <= a < 2^19 * pi/2. */
static void own_sincos(double a, double *s, double *c)
{
	double k = floor(a / PIO2_1 + 0.5);
	double r = (((a - k * PIO2_1) - k * PIO2_2) - k * PIO2_3) - k * PIO2_3T;
	double sr, cr;
	int q = (int)fmod(k, 4.0);

	sincos_small(r, &sr, &cr);
	switch (q) {
	case 0: *s = sr; *c = cr; break;
	case 1: *s = cr; *c = -sr; break;
	case 2: *s = -sr; *c = -cr; break;
	default: *s = -cr; *c = sr; break;
	}
}

void ct_llama_inv_freq(const struct ct_model_config *c, double *f)
{
	const int hs = ct_llama_head_dim(c), h2 = hs / 2;
	const double lt = own_log(c->rope_theta);
	const double two_pi = 4.0 * (PIO2_1 + PIO2_2);

	for (int i = 0; i < h2; i++) {
		double fi = own_exp(-((double)(2 * i) / (double)hs) * lt);

		if (c->rope_factor > 0.0) {
			double orig = (double)c->rope_orig_maxT, w = two_pi / fi;
			double lo = orig / c->rope_low, hi = orig / c->rope_high;

			if (w > lo) {
				fi = fi / c->rope_factor;
			} else if (!(w < hi)) {
				double s = (orig / w - c->rope_low) / (c->rope_high - c->rope_low);

				fi = (1.0 - s) * fi / c->rope_factor + s * fi;
			}
		}
		f[i] = fi;
	}
}

int ct_llama_rope_table(const struct ct_model_config *c, int T, float *tab)
{
	const int h2 = ct_llama_head_dim(c) / 2;
	double *f = malloc((size_t)h2 * sizeof(double));

	if (f == NULL)
		return ct_error(CT_ENOMEM, "out of memory for the RoPE table");
	ct_llama_inv_freq(c, f);
	for (int t = 0; t < T; t++)
		for (int i = 0; i < h2; i++) {
			double s, co;

			own_sincos((double)t * f[i], &s, &co);
			tab[((size_t)t * h2 + i) * 2] = (float)co;
			tab[((size_t)t * h2 + i) * 2 + 1] = (float)s;
		}
	free(f);
	return 0;
}
