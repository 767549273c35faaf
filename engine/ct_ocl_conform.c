/*
 * ct_ocl_conform.c - the arithmetic probes of the conformance self-test
 * (ct_ocl_conform_probes in ct_ocl_selftest.h).
 *
 * Each probe runs the engine's real kernels (the launchers of
 * ct_ocl_ops.h, the code work units run) on inputs built to expose one way
 * a device can silently disagree with the C reference, and compares every
 * output with the reference layer (ct_layers.c, ct_attention.c) bit for
 * bit:
 *  - subnormal softmax: logits spread over ~220 so that e/sum gives
 *    subnormal probabilities (ct_expf itself returns 0 below FLT_MIN by
 *    design), and -log of a subnormal probability;
 *  - subnormal g*g: AdamW and the gradient norm on gradients of 1e-19 ..
 *    1e-24 (g*g subnormal or zero) and subnormal moments;
 *  - subnormal attention: scores far apart, so that attention weights are
 *    subnormal, forward and backward;
 *  - no contraction: layernorm ((d*rs)*w + b), GELU, residual and AdamW on
 *    random inputs, where a fused multiply-add gives other bits for most
 *    elements;
 *  - long reductions: a 50,257-entry softmax row, a matmul whose
 *    reduction is 4,099 long, and a gradient norm over three 65,536 chunks.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_model.h"
#include "ct_ocl.h"
#include "ct_ocl_ops.h"
#include "ct_ocl_selftest.h"

struct probe {
	struct ct_ocl *ocl;
	struct ct_ocl_ops ops;
	unsigned corrupt;	/* CT_CONFORM_CORRUPT_REF: spoil each reference */
	uint64_t rng;
	int rc;			/* first error */
	int ok;			/* every comparison so far matched */
	char detail[CT_CONFORM_DETAIL];
	cl_mem mems[16];
	int nmem;
};

static float frand(struct probe *p)
{
	p->rng ^= p->rng << 13;
	p->rng ^= p->rng >> 7;
	p->rng ^= p->rng << 17;
	return (float)(p->rng >> 40) / 8388608.0f - 1.0f;	/* [-1, 1) */
}

static float *floats(struct probe *p, size_t n)
{
	float *f = calloc(n ? n : 1, sizeof(float));

	if (f == NULL && p->rc == 0)
		p->rc = ct_error(CT_ENOMEM, "self-test probe");
	return f;
}

/* A device copy of host data (released at the end of the probe). */
static struct ct_dten up(struct probe *p, const float *h, size_t n)
{
	cl_mem m = NULL;

	if (p->rc == 0 && p->nmem < (int)(sizeof(p->mems) / sizeof(p->mems[0])))
		p->rc = ct_ocl_alloc(p->ocl, (n ? n : 1) * sizeof(float), CL_MEM_READ_WRITE, &m);
	else if (p->rc == 0)
		p->rc = ct_error(CT_EINTERNAL, "self-test probe: too many buffers");
	if (p->rc == 0) {
		p->mems[p->nmem++] = m;
		p->rc = ct_ocl_write(&p->ops, ct_dten_at(m, 0), h, n);
	}
	return ct_dten_at(m, 0);
}

static cl_mem up_tokens(struct probe *p, const ct_tok *h, size_t n)
{
	cl_mem m = NULL;

	if (p->rc == 0 && p->nmem < (int)(sizeof(p->mems) / sizeof(p->mems[0])))
		p->rc = ct_ocl_alloc(p->ocl, n * sizeof(ct_tok), CL_MEM_READ_WRITE, &m);
	if (p->rc == 0) {
		p->mems[p->nmem++] = m;
		p->rc = ct_ocl_check(clEnqueueWriteBuffer(p->ocl->queue, m, CL_TRUE, 0,
							  n * sizeof(ct_tok), h,
							  0, NULL, NULL), "write tokens");
	}
	return m;
}

/* A subnormal probe whose inputs gave no subnormal would test nothing:
 * count them in the reference and fail the check if there is none. */
static void need_subnormal(struct probe *p, const char *what, const float *x, size_t n,
			   int square)
{
	size_t k = 0;

	for (size_t i = 0; p->rc == 0 && i < n; i++)
		k += fpclassify(square ? x[i] * x[i] : x[i]) == FP_SUBNORMAL;
	if (p->rc == 0 && k == 0 && p->ok) {
		p->ok = 0;
		snprintf(p->detail, sizeof(p->detail), "probe design: no subnormal %s", what);
	}
}

static void release_all(struct probe *p)
{
	for (int i = 0; i < p->nmem; i++)
		clReleaseMemObject(p->mems[i]);
	p->nmem = 0;
}

/* Compare the device tensor with the reference, bit for bit; the first
 * mismatch of the probe is described in p->detail. */
static void same(struct probe *p, const char *what, struct ct_dten d, float *ref, size_t n)
{
	float *got = floats(p, n);
	size_t bad = 0, first = 0;

	if (p->rc == 0)
		p->rc = ct_ocl_read(&p->ops, got, d, n);
	if (p->rc == 0 && (p->corrupt & CT_CONFORM_CORRUPT_REF) && n > 0) {
		uint32_t u;

		memcpy(&u, &ref[n / 2], 4);
		u ^= 1;
		memcpy(&ref[n / 2], &u, 4);
	}
	for (size_t i = 0; p->rc == 0 && i < n; i++)
		if (memcmp(&got[i], &ref[i], sizeof(float)) != 0 && bad++ == 0)
			first = i;
	if (p->rc == 0 && bad > 0 && p->ok) {
		p->ok = 0;
		snprintf(p->detail, sizeof(p->detail), "%s: %zu of %zu differ, first [%zu] "
			 "device %a reference %a", what, bad, n, first, (double)got[first],
			 (double)ref[first]);
	}
	free(got);
}

/* Softmax and cross-entropy: rows whose logits spread over `spread` (220:
 * e/sum subnormal, targets on subnormal probabilities), or long rows. */
static void probe_softmax(struct probe *p, int BT, int V, int Vp, float spread)
{
	size_t n = (size_t)BT * Vp;
	float *x = floats(p, n), *probs = floats(p, n), *loss = floats(p, BT);
	ct_tok tg[8];
	struct ct_dten dx, dp, dl;
	cl_mem dt;

	for (size_t i = 0; p->rc == 0 && i < n; i++)
		x[i] = (frand(p) * 0.5f - 0.5f) * spread;
	for (int r = 0; r < BT && r < 8 && p->rc == 0; r++) {
		const float *row = x + (size_t)r * Vp;
		float mx = row[0];
		int best = 0;	/* odd rows: the target whose probability is ~e^-95 */

		for (int i = 1; i < V; i++)
			mx = row[i] > mx ? row[i] : mx;
		for (int i = 1; i < V; i++)
			best = fabsf(row[i] - mx + 95.0f) < fabsf(row[best] - mx + 95.0f) ? i : best;
		tg[r] = (ct_tok)(r % 2 ? best : (r * 7) % V);
	}
	dx = up(p, x, n);
	dp = up(p, probs, n);
	dl = up(p, loss, BT);
	dt = up_tokens(p, tg, BT);
	if (p->rc == 0) {
		ct_crossentropy_forward(loss, probs, x, tg, BT, V, Vp);
		p->rc = ct_ocl_crossentropy_forward(&p->ops, dl, dp, dx, dt, 0, BT, V, Vp);
	}
	if (spread > 110.0f)
		need_subnormal(p, "probability", probs, n, 0);
	same(p, "softmax probabilities", dp, probs, n);
	same(p, "cross-entropy losses", dl, loss, BT);
	free(x);
	free(probs);
	free(loss);
}

/* AdamW and the gradient norm on gradients of magnitude `mag` (g*g
 * subnormal for 1e-20) with moments near the subnormal range. */
static void probe_adamw(struct probe *p, size_t n, float mag)
{
	float *w = floats(p, n), *g = floats(p, n), *m = floats(p, n), *v = floats(p, n);
	struct ct_adamw_args a = { .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f,
				   .eps = 1e-30f, .weight_decay = 0.01f };
	struct ct_dten dw, dg, dm, dv;
	float norm = 0.0f, dnorm = 0.0f;

	ct_adamw_bias_corrections(a.beta1, a.beta2, 3, &a.bc1, &a.bc2);
	for (size_t i = 0; p->rc == 0 && i < n; i++) {
		w[i] = frand(p);
		g[i] = frand(p) * mag * (float)(1 + i % 9999);
		m[i] = frand(p) * mag;
		v[i] = frand(p) * mag * mag * 1e3f;
		v[i] = v[i] < 0.0f ? -v[i] : v[i];
	}
	if (mag < 1e-19f)
		need_subnormal(p, "g*g", g, n, 1);
	dw = up(p, w, n);
	dg = up(p, g, n);
	dm = up(p, m, n);
	dv = up(p, v, n);
	if (p->rc == 0) {
		norm = ct_grad_norm(g, n);
		p->rc = ct_ocl_grad_clip(&p->ops, dg, n, 0.0f);
	}
	if (p->rc == 0)
		p->rc = ct_ocl_grad_norm_read(&p->ops, &dnorm);
	if (p->rc == 0 && (p->corrupt & CT_CONFORM_CORRUPT_REF))
		norm = nextafterf(norm, 1.0f);
	if (p->rc == 0 && memcmp(&norm, &dnorm, 4) != 0 && p->ok) {
		p->ok = 0;
		snprintf(p->detail, sizeof(p->detail), "gradient norm over %zu: device %a "
			 "reference %a", n, (double)dnorm, (double)norm);
	}
	if (p->rc == 0) {
		ct_adamw_update(w, g, m, v, n, &a);
		p->rc = ct_ocl_adamw(&p->ops, dw, dg, dm, dv, n, &a, 0.0f);
	}
	same(p, "AdamW weights", dw, w, n);
	same(p, "AdamW m", dm, m, n);
	same(p, "AdamW v", dv, v, n);
	free(w);
	free(g);
	free(m);
	free(v);
}

/* Attention (the recompute path), forward and backward, with query and
 * key scale `qk` (large: most weights subnormal or zero). */
static void probe_attention(struct probe *p, int B, int T, int C, int NH, float qk)
{
	size_t n = (size_t)B * T * C, ns = (size_t)B * NH * T * 2;
	float *qkv = floats(p, 3 * n), *out = floats(p, n), *st = floats(p, ns);
	float *dout = floats(p, n), *dqkv = floats(p, 3 * n);
	float *scr = floats(p, ct_attention_scratch_floats(T, C, NH));
	struct ct_dten dq, dout_d, dst, dy, ddq, ddot;

	for (size_t i = 0; p->rc == 0 && i < 3 * n; i++)
		qkv[i] = frand(p) * ((i / C) % 3 == 2 ? 1.0f : qk);
	for (size_t i = 0; p->rc == 0 && i < n; i++)
		dout[i] = frand(p);
	dq = up(p, qkv, 3 * n);
	dout_d = up(p, out, n);
	dst = up(p, st, ns);
	dy = up(p, dout, n);
	ddq = up(p, dqkv, 3 * n);
	ddot = up(p, st, ns / 2);
	if (p->rc == 0) {
		ct_attention_forward_recompute(out, st, scr, qkv, B, T, C, NH);
		ct_attention_backward_recompute(dqkv, scr, dout, qkv, st, B, T, C, NH);
		p->rc = ct_ocl_attention_forward_recompute(&p->ops, dout_d, dst, dq, B, T, C, NH);
	}
	if (p->rc == 0)
		p->rc = ct_ocl_attention_backward_recompute(&p->ops, ddq, ddot, dy, dq, dst,
							    B, T, C, NH);
	same(p, "attention out", dout_d, out, n);
	same(p, "attention dqkv", ddq, dqkv, 3 * n);
	free(qkv);
	free(out);
	free(st);
	free(dout);
	free(dqkv);
	free(scr);
}

/* Layernorm, GELU and residual on random inputs: products followed by
 * additions, which a contracting compiler would fuse. */
static void probe_contraction(struct probe *p, int BT, int C)
{
	size_t n = (size_t)BT * C;
	float *x = floats(p, n), *w = floats(p, C), *b = floats(p, C), *o = floats(p, n);
	float *mean = floats(p, BT), *rstd = floats(p, BT), *ge = floats(p, n);
	float *res = floats(p, n);
	struct ct_dten dx, dw, db, dout, dmean, drstd, dge, dres;

	for (size_t i = 0; p->rc == 0 && i < n; i++)
		x[i] = frand(p) * 3.0f + 0.25f;
	for (int i = 0; p->rc == 0 && i < C; i++) {
		w[i] = frand(p) * 1.7f;
		b[i] = frand(p);
	}
	dx = up(p, x, n);
	dw = up(p, w, C);
	db = up(p, b, C);
	dout = up(p, o, n);
	dmean = up(p, mean, BT);
	drstd = up(p, rstd, BT);
	dge = up(p, ge, n);
	dres = up(p, res, n);
	if (p->rc == 0) {
		ct_layernorm_forward(o, mean, rstd, x, w, b, BT, C);
		ct_gelu_forward(ge, o, n);
		ct_residual_forward(res, ge, x, n);
		p->rc = ct_ocl_layernorm_forward(&p->ops, dout, dmean, drstd, dx, dw, db, BT, C);
	}
	if (p->rc == 0)
		p->rc = ct_ocl_gelu_forward(&p->ops, dge, dout, n);
	if (p->rc == 0)
		p->rc = ct_ocl_residual_forward(&p->ops, dres, dge, dx, n);
	same(p, "layernorm out", dout, o, n);
	same(p, "layernorm rstd", drstd, rstd, BT);
	same(p, "GELU", dge, ge, n);
	same(p, "residual", dres, res, n);
	free(x); free(w); free(b); free(o); free(mean); free(rstd); free(ge); free(res);
}

/* A matmul whose every output is a K-long fma chain (plus the bias). */
static void probe_matmul(struct probe *p, int BT, int K, int OC)
{
	float *x = floats(p, (size_t)BT * K), *w = floats(p, (size_t)OC * K);
	float *bias = floats(p, OC), *o = floats(p, (size_t)BT * OC);
	struct ct_dten dx, dw, db, dout;

	for (size_t i = 0; p->rc == 0 && i < (size_t)BT * K; i++)
		x[i] = frand(p);
	for (size_t i = 0; p->rc == 0 && i < (size_t)OC * K; i++)
		w[i] = frand(p) * 0.1f;
	for (int i = 0; p->rc == 0 && i < OC; i++)
		bias[i] = frand(p);
	dx = up(p, x, (size_t)BT * K);
	dw = up(p, w, (size_t)OC * K);
	db = up(p, bias, OC);
	dout = up(p, o, (size_t)BT * OC);
	if (p->rc == 0) {
		ct_matmul_forward(o, x, w, bias, BT, K, OC);
		p->rc = ct_ocl_matmul_forward(&p->ops, dout, dx, dw, db, 1, BT, K, OC);
	}
	same(p, "matmul", dout, o, (size_t)BT * OC);
	free(x); free(w); free(bias); free(o);
}

enum { PR_SOFTMAX, PR_G2, PR_ATTENTION, PR_CONTRACT, PR_LONG, PR_COUNT };

static const char *const probe_names[PR_COUNT] = {
	[PR_SOFTMAX] = "subnormal softmax (exp, e/sum, log)",
	[PR_G2] = "subnormal g*g (AdamW, gradient norm)",
	[PR_ATTENTION] = "subnormal attention weights",
	[PR_CONTRACT] = "no contraction (layernorm, GELU, residual)",
	[PR_LONG] = "long reductions (50257 softmax, 4099 matmul, norm)",
};

static void run_probe(struct probe *p, int id)
{
	switch (id) {
	case PR_SOFTMAX: probe_softmax(p, 6, 301, 304, 220.0f); break;
	case PR_G2:
		probe_adamw(p, 4099, 1e-20f);
		probe_adamw(p, 1000, 1e-23f);
		break;
	case PR_ATTENTION:
		probe_attention(p, 2, 11, 24, 3, 6.0f);
		probe_attention(p, 1, 37, 64, 1, 2.5f);
		break;
	case PR_CONTRACT: probe_contraction(p, 37, 517); break;
	case PR_LONG:
		probe_softmax(p, 2, 50257, 50304, 20.0f);
		probe_matmul(p, 5, 4099, 7);
		probe_adamw(p, (size_t)3 * CT_CLIP_CHUNK + 5, 1e-3f);
		break;
	}
}

int ct_ocl_conform_probes(const char *device, unsigned flags, struct ct_conform_report *rep)
{
	struct probe p;
	int rc;

	memset(rep, 0, sizeof(*rep));
	memset(&p, 0, sizeof(p));
	p.corrupt = flags;
	rc = ct_ocl_open(device, NULL, &p.ocl);
	if (rc == 0)
		rc = ct_ocl_ops_init(&p.ops, p.ocl);
	if (rc < 0) {
		ct_ocl_close(p.ocl);
		return rc;
	}
	for (int id = 0; id < PR_COUNT && rc == 0; id++) {
		struct ct_conform_check *c = &rep->check[rep->n++];

		p.rng = 0x9e3779b97f4a7c15ULL + (uint64_t)id;
		p.ok = 1;
		p.detail[0] = '\0';
		run_probe(&p, id);
		release_all(&p);
		rc = p.rc;
		c->name = probe_names[id];
		c->ok = rc == 0 && p.ok;
		snprintf(c->detail, sizeof(c->detail), "%s", p.detail);
	}
	ct_ocl_ops_free(&p.ops);
	ct_ocl_close(p.ocl);
	if (rc < 0)
		memset(rep, 0, sizeof(*rep));
	return rc;
}
