/*
 * ct_llama_layers.c - the C reference of the Llama layers: RMSNorm, RoPE,
 * SwiGLU and grouped-query attention (contracts in ct_llama.h). The
 * matmuls, residuals, cross-entropy and AdamW are GPT-2's (ct_model.h).
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

/* ---- grouped-query attention ----------------------------------------- */

struct gqa {
	size_t QS;		/* floats per qkv row */
	int hs;
	float scale;
	size_t qoff, koff, voff;	/* of the current (h, kv head) in a row */
};

static void gqa_head(struct gqa *g, int h, int NH, int KVH)
{
	int kh = h / (NH / KVH);

	g->qoff = (size_t)h * g->hs;
	g->koff = (size_t)(NH + kh) * g->hs;
	g->voff = (size_t)(NH + KVH + kh) * g->hs;
}

/* s[t2] = dot(q[t], k[t2]) * scale for t2 = 0..t. */
static void gqa_scores(float *s, const struct gqa *g, const float *qkv_b, int t)
{
	const float *q = qkv_b + (size_t)t * g->QS + g->qoff;

	for (int t2 = 0; t2 <= t; t2++) {
		const float *k = qkv_b + (size_t)t2 * g->QS + g->koff;
		float acc = 0.0f;

		for (int i = 0; i < g->hs; i++)
			acc = fmaf(q[i], k[i], acc);
		s[t2] = acc * g->scale;
	}
}

static void gqa_row(float *y, float *stat, float *row, const struct gqa *g,
		    const float *qkv_b, int t)
{
	float mx = 0.0f, sum = 0.0f;

	gqa_scores(row, g, qkv_b, t);
	for (int t2 = 0; t2 <= t; t2++)
		mx = (t2 == 0 || row[t2] > mx) ? row[t2] : mx;
	for (int t2 = 0; t2 <= t; t2++) {
		float e = ct_expf(row[t2] - mx);

		row[t2] = e;
		sum = sum + e;
	}
	for (int t2 = 0; t2 <= t; t2++)
		row[t2] = row[t2] / sum;
	for (int i = 0; i < g->hs; i++) {
		float acc = 0.0f;

		for (int t2 = 0; t2 <= t; t2++)
			acc = fmaf(row[t2], qkv_b[(size_t)t2 * g->QS + g->voff + i], acc);
		y[i] = acc;
	}
	stat[0] = mx;
	stat[1] = sum;
}

void ct_gqa_forward(float *out, float *stat, float *row, const float *qkv,
		    int B, int T, int NH, int KVH, int hs)
{
	struct gqa g = { .QS = (size_t)(NH + 2 * KVH) * hs, .hs = hs,
			 .scale = 1.0f / sqrtf((float)hs) };
	const size_t C = (size_t)NH * hs;

	for (int b = 0; b < B; b++)
		for (int h = 0; h < NH; h++) {
			gqa_head(&g, h, NH, KVH);
			for (int t = 0; t < T; t++)
				gqa_row(out + ((size_t)b * T + t) * C + (size_t)h * hs,
					stat + (((size_t)b * NH + h) * T + t) * 2, row, &g,
					qkv + (size_t)b * T * g.QS, t);
		}
}

/* One query row of the backward (see ct_attention.c's twin). */
static void gqa_backward_row(float *a, float *gr, float *ak, float *av, float *dq,
			     const struct gqa *g, const float *qkv_b, const float *dy,
			     const float *stat, int t)
{
	const float *q = qkv_b + (size_t)t * g->QS + g->qoff;
	const int hs = g->hs;
	float dot = 0.0f;

	gqa_scores(a, g, qkv_b, t);
	for (int t2 = 0; t2 <= t; t2++)
		a[t2] = ct_expf(a[t2] - stat[0]) / stat[1];
	for (int t2 = 0; t2 <= t; t2++) {
		const float *v = qkv_b + (size_t)t2 * g->QS + g->voff;
		float acc = 0.0f;

		for (int i = 0; i < hs; i++)
			acc = fmaf(dy[i], v[i], acc);
		gr[t2] = acc;
	}
	for (int t2 = 0; t2 <= t; t2++)
		dot = fmaf(a[t2], gr[t2], dot);
	for (int t2 = 0; t2 <= t; t2++) {
		float d = gr[t2] - dot;

		d = a[t2] * d;
		gr[t2] = d * g->scale;
	}
	for (int i = 0; i < hs; i++) {
		float aq = 0.0f;

		for (int t2 = 0; t2 <= t; t2++)
			aq = fmaf(gr[t2], qkv_b[(size_t)t2 * g->QS + g->koff + i], aq);
		dq[i] = dq[i] + aq;
	}
	for (int t2 = 0; t2 <= t; t2++)
		for (int i = 0; i < hs; i++) {
			ak[(size_t)t2 * hs + i] = fmaf(gr[t2], q[i], ak[(size_t)t2 * hs + i]);
			av[(size_t)t2 * hs + i] = fmaf(a[t2], dy[i], av[(size_t)t2 * hs + i]);
		}
}

void ct_gqa_backward(float *dqkv, float *scratch, const float *dout,
		     const float *qkv, const float *stat,
		     int B, int T, int NH, int KVH, int hs)
{
	struct gqa g = { .QS = (size_t)(NH + 2 * KVH) * hs, .hs = hs,
			 .scale = 1.0f / sqrtf((float)hs) };
	const size_t C = (size_t)NH * hs;
	float *a = scratch, *gr = scratch + T, *ak = gr + T, *av = ak + (size_t)T * hs;

	for (int b = 0; b < B; b++) {
		const float *qkv_b = qkv + (size_t)b * T * g.QS;
		float *dqkv_b = dqkv + (size_t)b * T * g.QS;

		for (int h = 0; h < NH; h++) {
			gqa_head(&g, h, NH, KVH);
			memset(ak, 0, (size_t)2 * T * hs * sizeof(float));
			for (int t = 0; t < T; t++)
				gqa_backward_row(a, gr, ak, av, dqkv_b + (size_t)t * g.QS + g.qoff,
						 &g, qkv_b, dout + ((size_t)b * T + t) * C + (size_t)h * hs,
						 stat + (((size_t)b * NH + h) * T + t) * 2, t);
			for (int t2 = 0; t2 < T; t2++)
				for (int i = 0; i < hs; i++) {
					float *d = dqkv_b + (size_t)t2 * g.QS + i;

					d[g.koff] = d[g.koff] + ak[(size_t)t2 * hs + i];
					d[g.voff] = d[g.voff] + av[(size_t)t2 * hs + i];
				}
		}
	}
}
