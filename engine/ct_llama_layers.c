/*
 * ct_llama_layers.c - the C reference of the Llama layers: RMSNorm, RoPE,
 * SwiGLU (contracts in ct_llama.h). Grouped-query attention shares GPT-2's
 * code in ct_attention.c; the matmuls, residuals, cross-entropy and AdamW
 * are GPT-2's (ct_model.h).
 */
#include "config.h"
#include "ct_llama.h"
#include "ct_math.h"

#include <math.h>
#include <string.h>

/* One row of n values: y = (x * rs) * w; returns rs. */
static float rms_row_fwd(float *y, const float *x, const float *w, int n, float eps)
{
	float ss = 0.0f, rs;

	for (int i = 0; i < n; i++)
		ss = fmaf(x[i], x[i], ss);
	rs = 1.0f / sqrtf(ss / (float)n + eps);
	for (int i = 0; i < n; i++)
		y[i] = (x[i] * rs) * w[i];
	return rs;
}

/* The input gradient of one row: dv = (dn - n*m) * rs; dx + dv when add,
 * else dv (dx may be dy). */
static void rms_row_bwd(float *dx, const float *dy, const float *x, const float *w,
			float rs, int n, int add)
{
	float s = 0.0f, m;

	for (int i = 0; i < n; i++)
		s = fmaf(w[i] * dy[i], x[i] * rs, s);
	m = s / (float)n;
	for (int i = 0; i < n; i++) {
		float dv = ((w[i] * dy[i]) - ((x[i] * rs) * m)) * rs;

		dx[i] = add ? dx[i] + dv : dv;
	}
}

void ct_rmsnorm_forward(float *out, float *rstd, const float *inp,
			const float *w, int BT, int C, float eps)
{
	for (int r = 0; r < BT; r++)
		rstd[r] = rms_row_fwd(out + (size_t)r * C, inp + (size_t)r * C, w, C, eps);
}

void ct_rmsnorm_backward(float *dinp, float *dw, const float *dout,
			 const float *inp, const float *w, const float *rstd,
			 int BT, int C)
{
	for (int r = 0; r < BT; r++)
		rms_row_bwd(dinp + (size_t)r * C, dout + (size_t)r * C, inp + (size_t)r * C, w,
			    rstd[r], C, 1);
	if (dw == NULL)
		return;
	for (int i = 0; i < C; i++) {
		float acc = 0.0f;

		for (int r = 0; r < BT; r++)
			acc = fmaf(inp[(size_t)r * C + i] * rstd[r], dout[(size_t)r * C + i], acc);
		dw[i] = dw[i] + acc;
	}
}

/* Rotate (dir +1) or rotate back (dir -1) the first nh heads of each row. */
static void rope_apply(float *x, const float *tab, int BT, int T, int nh,
		       int hs, size_t stride, int dir)
{
	const int h2 = hs / 2;

	for (int r = 0; r < BT; r++) {
		const float *cs = tab + (size_t)(r % T) * hs;

		for (int h = 0; h < nh; h++) {
			float *v = x + (size_t)r * stride + (size_t)h * hs;

			for (int i = 0; i < h2; i++) {
				float c = cs[2 * i], s = cs[2 * i + 1];
				float x0 = v[i], x1 = v[i + h2];

				if (dir > 0) {
					v[i] = (x0 * c) - (x1 * s);
					v[i + h2] = (x1 * c) + (x0 * s);
				} else {
					v[i] = (x0 * c) + (x1 * s);
					v[i + h2] = (x1 * c) - (x0 * s);
				}
			}
		}
	}
}

void ct_rope_forward(float *qkv, const float *tab, int BT, int T, int NH,
		     int KVH, int hs)
{
	rope_apply(qkv, tab, BT, T, NH + KVH, hs, (size_t)(NH + 2 * KVH) * hs, 1);
}

void ct_rope_backward(float *dqkv, const float *tab, int BT, int T, int NH,
		      int KVH, int hs)
{
	rope_apply(dqkv, tab, BT, T, NH + KVH, hs, (size_t)(NH + 2 * KVH) * hs, -1);
}

void ct_swiglu_forward(float *out, const float *fch, int BT, int F)
{
	for (int r = 0; r < BT; r++) {
		const float *g = fch + (size_t)r * 2 * F, *u = g + F;
		float *y = out + (size_t)r * F;

		for (int i = 0; i < F; i++) {
			float sig = 1.0f / (1.0f + ct_expf(-g[i]));

			y[i] = (g[i] * sig) * u[i];
		}
	}
}

void ct_swiglu_backward(float *dfch, const float *fch, const float *dout, int BT, int F)
{
	for (int r = 0; r < BT; r++) {
		const float *g = fch + (size_t)r * 2 * F, *u = g + F;
		const float *dy = dout + (size_t)r * F;
		float *dg = dfch + (size_t)r * 2 * F, *du = dg + F;

		for (int i = 0; i < F; i++) {
			float sig = 1.0f / (1.0f + ct_expf(-g[i]));
			float a = g[i] * sig;
			float d = sig * (1.0f + (g[i] * (1.0f - sig)));

			du[i] = du[i] + (dy[i] * a);
			dg[i] = dg[i] + ((dy[i] * u[i]) * d);
		}
	}
}

void ct_qknorm_forward(float *qkv, float *rstd, const float *raw, const float *qkw,
		       int BT, int NH, int KVH, int hd, float eps)
{
	const int nh = NH + KVH;
	const size_t QKV = (size_t)(NH + 2 * KVH) * hd;

	for (int r = 0; r < BT; r++) {
		const float *row = raw + (size_t)r * QKV;
		float *y = qkv + (size_t)r * QKV;

		for (int h = 0; h < nh; h++)
			rstd[(size_t)r * nh + h] = rms_row_fwd(y + (size_t)h * hd, row + (size_t)h * hd,
								qkw + (h < NH ? 0 : hd), hd, eps);
		memcpy(y + (size_t)nh * hd, row + (size_t)nh * hd, (size_t)KVH * hd * sizeof(float));
	}
}

/* dqkw[i] += acc over rows r, then heads h0..h1-1, of n_i * dy_i. */
static void qknorm_dw(float *dw, const float *dqkv, const float *raw, const float *rstd,
		      int BT, int NH, int KVH, int hd, int h0, int h1)
{
	const int nh = NH + KVH;
	const size_t QKV = (size_t)(NH + 2 * KVH) * hd;

	for (int i = 0; i < hd; i++) {
		float acc = 0.0f;

		for (int r = 0; r < BT; r++)
			for (int h = h0; h < h1; h++) {
				size_t k = (size_t)r * QKV + (size_t)h * hd + i;

				acc = fmaf(raw[k] * rstd[(size_t)r * nh + h], dqkv[k], acc);
			}
		dw[i] = dw[i] + acc;
	}
}

void ct_qknorm_backward(float *dqkv, float *dqkw, const float *raw, const float *qkw,
			const float *rstd, int BT, int NH, int KVH, int hd)
{
	const int nh = NH + KVH;
	const size_t QKV = (size_t)(NH + 2 * KVH) * hd;

	if (dqkw != NULL) {
		qknorm_dw(dqkw, dqkv, raw, rstd, BT, NH, KVH, hd, 0, NH);
		qknorm_dw(dqkw + hd, dqkv, raw, rstd, BT, NH, KVH, hd, NH, nh);
	}
	for (int r = 0; r < BT; r++)
		for (int h = 0; h < nh; h++) {
			const size_t o = (size_t)r * QKV + (size_t)h * hd;

			rms_row_bwd(dqkv + o, dqkv + o, raw + o, qkw + (h < NH ? 0 : hd),
				    rstd[(size_t)r * nh + h], hd, 0);
		}
}
