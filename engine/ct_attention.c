/*
 * ct_attention.c - causal self-attention without the (B,NH,T,T) matrices:
 * the C reference of ct_attention_forward_recompute() and
 * ct_attention_backward_recompute() (contracts in ct_model.h).
 *
 * The arithmetic of every output is exactly that of ct_attention_forward()
 * and ct_attention_backward() in ct_layers.c (same chains, same order), so
 * the results are bit-identical to them; what changes is what is kept.
 * Forward keeps per query row only the softmax's max and sum; backward
 * recomputes each row's probabilities from them (the score s is the same
 * fmaf chain, so ct_expf(s - mx) / sum gives the same bits) and keeps the
 * key-side accumulators of one (b, h) in a scratch of T*hs floats each.
 * The same code serves the Llama model type's grouped-query attention
 * (ct_gqa_forward / ct_gqa_backward, ct_llama.h): only where a head's q, k
 * and v sit in a row differs (struct att_geom).
 */
#include "config.h"
#include "ct_model.h"
#include "ct_llama.h"
#include "ct_math.h"

#include <math.h>
#include <string.h>

size_t ct_attention_scratch_floats(int T, int C, int NH)
{
	size_t hs = (size_t)(C / NH);

	return (size_t)T * (2 + 2 * hs);
}

/* Where one head's q, k and v sit in the rows of a (B,T,QS) qkv array:
 * GPT-2's [q | k | v] with QS = 3C, or Llama's grouped-query
 * [q heads | kv heads | kv heads] (ct_llama.h). */
struct att_geom {
	size_t QS;			/* floats per qkv row */
	size_t qoff, koff, voff;	/* of the current head, within a row */
	int hs;
	float scale;
};

/* Query head h of NH reading kv head h / (NH/KVH) of KVH (GPT-2: KVH = NH
 * and the kv heads follow C = NH*hs floats of q, then C of k). */
static void geom_head(struct att_geom *g, int h, int NH, int KVH)
{
	int kh = h / (NH / KVH);

	g->qoff = (size_t)h * g->hs;
	g->koff = (size_t)(NH + kh) * g->hs;
	g->voff = (size_t)(NH + KVH + kh) * g->hs;
}

/* Scores of query row t against keys 0..t: s[t2] = dot(q, k[t2]) * scale. */
CT_KERNEL_INLINE void att_scores(float *s, const float *q, const float *k0,
				  size_t C3, int t, int hs, float scale)
{
	for (int t2 = 0; t2 <= t; t2++) {
		const float *k = k0 + (size_t)t2 * C3;
		float acc = 0.0f;

		for (int i = 0; i < hs; i++)
			acc = fmaf(q[i], k[i], acc);
		s[t2] = acc * scale;
	}
}

/* One (b, h, t) row: out_row (hs), stat (2) = row max and sum. */
static CT_KERNEL(attention_row_rc,
		 (float *out_row, float *stat, float *row, const float *qkv_b, int t,
		  const struct att_geom *g),
		 (out_row, stat, row, qkv_b, t, g))
{
	const size_t C3 = g->QS;
	const int hs = g->hs;
	float mx = 0.0f, sum = 0.0f;

	att_scores(row, qkv_b + (size_t)t * C3 + g->qoff, qkv_b + g->koff, C3, t, hs,
		   g->scale);
	for (int t2 = 0; t2 <= t; t2++)
		mx = (t2 == 0 || row[t2] > mx) ? row[t2] : mx;
	sum = ct_softmax_tail(row, t + 1, mx);
	for (int i = 0; i < hs; i++) {
		float acc = 0.0f;

		for (int t2 = 0; t2 <= t; t2++)
			acc = fmaf(row[t2], qkv_b[(size_t)t2 * C3 + g->voff + i], acc);
		out_row[i] = acc;
	}
	stat[0] = mx;
	stat[1] = sum;
}

static void attention_forward_geom(float *out, float *stat, float *row, const float *qkv,
				   int B, int T, int NH, int KVH, int hs)
{
	struct att_geom g = { .QS = (size_t)(NH + 2 * KVH) * hs, .hs = hs,
			      .scale = 1.0f / sqrtf((float)hs) };
	const size_t C = (size_t)NH * hs;

	for (int b = 0; b < B; b++)
		for (int h = 0; h < NH; h++) {
			geom_head(&g, h, NH, KVH);
			for (int t = 0; t < T; t++)
				attention_row_rc(out + ((size_t)b * T + t) * C + (size_t)h * hs,
						 stat + (((size_t)b * NH + h) * T + t) * 2, row,
						 qkv + (size_t)b * T * g.QS, t, &g);
		}
}

void ct_attention_forward_recompute(float *out, float *stat, float *row,
				    const float *qkv, int B, int T, int C, int NH)
{
	attention_forward_geom(out, stat, row, qkv, B, T, NH, NH, C / NH);
}

void ct_gqa_forward(float *out, float *stat, float *row, const float *qkv,
		    int B, int T, int NH, int KVH, int hs)
{
	attention_forward_geom(out, stat, row, qkv, B, T, NH, KVH, hs);
}

/* Row t of the backward for one (b,h): a = att[t, 0..t] (recomputed),
 * g = the scaled softmax gradient; dq of row t added into dq; the key-side
 * chains ak, av (T,hs) advanced by one term each. */
static CT_KERNEL(attention_backward_row,
		 (float *a, float *g, float *ak, float *av, float *dq,
		  const float *qkv_b, const float *dy, const float *stat, int t,
		  const struct att_geom *ge),
		 (a, g, ak, av, dq, qkv_b, dy, stat, t, ge))
{
	const size_t C3 = ge->QS;
	const int hs = ge->hs;
	const float *q = qkv_b + (size_t)t * C3 + ge->qoff;
	float dot = 0.0f;

	att_scores(a, q, qkv_b + ge->koff, C3, t, hs, ge->scale);
	for (int t2 = 0; t2 <= t; t2++)
		a[t2] = ct_expf(a[t2] - stat[0]) / stat[1];
	for (int t2 = 0; t2 <= t; t2++) {
		const float *v = qkv_b + (size_t)t2 * C3 + ge->voff;
		float acc = 0.0f;

		for (int i = 0; i < hs; i++)
			acc = fmaf(dy[i], v[i], acc);
		g[t2] = acc;
	}
	for (int t2 = 0; t2 <= t; t2++)
		dot = fmaf(a[t2], g[t2], dot);
	for (int t2 = 0; t2 <= t; t2++) {
		float d = g[t2] - dot;

		d = a[t2] * d;
		g[t2] = d * ge->scale;
	}
	for (int i = 0; i < hs; i++) {
		float aq = 0.0f;

		for (int t2 = 0; t2 <= t; t2++)
			aq = fmaf(g[t2], qkv_b[(size_t)t2 * C3 + ge->koff + i], aq);
		dq[i] = dq[i] + aq;
	}
	for (int t2 = 0; t2 <= t; t2++)
		for (int i = 0; i < hs; i++) {
			ak[(size_t)t2 * hs + i] = fmaf(g[t2], q[i], ak[(size_t)t2 * hs + i]);
			av[(size_t)t2 * hs + i] = fmaf(a[t2], dy[i], av[(size_t)t2 * hs + i]);
		}
}

/* Per (b, h): the rows in increasing t, then head h's key-side chains
 * added once into its k and v (a kv head shared by G query heads gets G
 * additions, in increasing h). */
static void attention_backward_geom(float *dqkv, float *scratch, const float *dout,
				    const float *qkv, const float *stat,
				    int B, int T, int NH, int KVH, int hs)
{
	struct att_geom ge = { .QS = (size_t)(NH + 2 * KVH) * hs, .hs = hs,
			       .scale = 1.0f / sqrtf((float)hs) };
	const size_t C = (size_t)NH * hs, C3 = ge.QS;
	float *a = scratch, *g = scratch + T, *ak = g + T, *av = ak + (size_t)T * hs;

	for (int b = 0; b < B; b++) {
		for (int h = 0; h < NH; h++) {
			const float *qkv_b = qkv + (size_t)b * T * C3;
			float *dqkv_b = dqkv + (size_t)b * T * C3;

			geom_head(&ge, h, NH, KVH);
			memset(ak, 0, (size_t)2 * T * hs * sizeof(float));
			for (int t = 0; t < T; t++)
				attention_backward_row(a, g, ak, av, dqkv_b + (size_t)t * C3 + ge.qoff,
						       qkv_b, dout + ((size_t)b * T + t) * C + (size_t)h * hs,
						       stat + (((size_t)b * NH + h) * T + t) * 2,
						       t, &ge);
			for (int t2 = 0; t2 < T; t2++)
				for (int i = 0; i < hs; i++) {
					float *d = dqkv_b + (size_t)t2 * C3 + i;

					d[ge.koff] = d[ge.koff] + ak[(size_t)t2 * hs + i];
					d[ge.voff] = d[ge.voff] + av[(size_t)t2 * hs + i];
				}
		}
	}
}

void ct_attention_backward_recompute(float *dqkv, float *scratch, const float *dout,
				     const float *qkv, const float *stat,
				     int B, int T, int C, int NH)
{
	attention_backward_geom(dqkv, scratch, dout, qkv, stat, B, T, NH, NH, C / NH);
}

void ct_gqa_backward(float *dqkv, float *scratch, const float *dout,
		     const float *qkv, const float *stat,
		     int B, int T, int NH, int KVH, int hs)
{
	attention_backward_geom(dqkv, scratch, dout, qkv, stat, B, T, NH, KVH, hs);
}
