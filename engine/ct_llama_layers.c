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

void ct_rmsnorm_forward(float *out, float *rstd, const float *inp,
			const float *w, int BT, int C, float eps)
{
	for (int r = 0; r < BT; r++) {
		const float *x = inp + (size_t)r * C;
		float *y = out + (size_t)r * C;
		float ss = 0.0f, rs;

		for (int i = 0; i < C; i++)
			ss = fmaf(x[i], x[i], ss);
		rs = 1.0f / sqrtf(ss / (float)C + eps);
		for (int i = 0; i < C; i++)
			y[i] = (x[i] * rs) * w[i];
		rstd[r] = rs;
	}
}

void ct_rmsnorm_backward(float *dinp, float *dw, const float *dout,
			 const float *inp, const float *w, const float *rstd,
			 int BT, int C)
{
	for (int r = 0; r < BT; r++) {
		const float *x = inp + (size_t)r * C, *dy = dout + (size_t)r * C;
		float *dx = dinp + (size_t)r * C;
		const float rs = rstd[r];
		float s = 0.0f, m;

		for (int i = 0; i < C; i++)
			s = fmaf(w[i] * dy[i], x[i] * rs, s);
		m = s / (float)C;
		for (int i = 0; i < C; i++) {
			float dv = (w[i] * dy[i]) - ((x[i] * rs) * m);

			dx[i] = dx[i] + dv * rs;
		}
	}
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
