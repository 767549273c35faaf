#ifdef CT_TEST_CONTRACT	/* tests only: prove the self-test sees contraction */
#pragma OPENCL FP_CONTRACT ON
#else
#pragma OPENCL FP_CONTRACT OFF
#endif
/*
 * llama.cl - the Llama layers (engine/ct_llama.h): token embedding,
 * RMSNorm, RoPE, SwiGLU, and the gather / scatter that let grouped-query
 * attention run through attention.cl's kernels. Each kernel is the device
 * twin of a C reference function in engine/ct_llama_layers.c (or
 * ct_llama_model.c) with the same chain of operations per output element:
 * sequential sums from index 0, fma only where the reference has fmaf,
 * ct_expf from ct_math.clh. Parallelism is only across independent outputs.
 * CT_BUF / CT_AT (layers.cl): every float buffer comes with an offset.
 */

/* ---- embedding ------------------------------------------------------------- */

/* out (BT,C) = wte[inp[bt]] (a copy); one work-item per (c, bt). */
__kernel void ct_ll_embed_fwd(CT_BUF(__global, out), const __global ct_tok *inp,
			      CT_BUF(const __global, wte), int BT, int C)
{
	int c = get_global_id(0), bt = get_global_id(1);

	if (c >= C || bt >= BT)
		return;
	CT_AT(out); CT_AT(wte);
	out[(size_t)bt * C + c] = wte[(size_t)inp[bt] * C + c];
}

/* dwte[inp[bt], c] += dout[bt, c], rows in increasing order; one work-item
 * per channel c. */
__kernel void ct_ll_embed_bwd(CT_BUF(__global, dwte), CT_BUF(const __global, dout),
			      const __global ct_tok *inp, int BT, int C)
{
	int c = get_global_id(0);

	if (c >= C)
		return;
	CT_AT(dwte); CT_AT(dout);
	for (int bt = 0; bt < BT; bt++) {
		size_t iw = (size_t)inp[bt] * C + c;

		dwte[iw] = dwte[iw] + dout[(size_t)bt * C + c];
	}
}

/* ---- RMSNorm --------------------------------------------------------------- */

/* One row of n values: y = (x * rs) * w with rs ct_rmsnorm_forward's
 * chain; returns rs. */
static float rms_row_fwd(__global float *y, const __global float *x,
			 const __global float *w, int n, float eps)
{
	float ss = 0.0f, rs;

	for (int i = 0; i < n; i++)
		ss = fma(x[i], x[i], ss);
	rs = ss / (float)n;
	rs = rs + eps;
	rs = sqrt(rs);
	rs = 1.0f / rs;
	for (int i = 0; i < n; i++) {
		float v = x[i] * rs;

		y[i] = v * w[i];
	}
	return rs;
}

/* The input gradient of one row (ct_rmsnorm_backward's chain): dv_i =
 * (dn_i - n_i * m) * rs; dx_i + dv_i when add, else dv_i (dx may be dy). */
static void rms_row_bwd(__global float *dx, const __global float *dy,
			const __global float *x, const __global float *w, float rs, int n,
			int add)
{
	float s = 0.0f, m;

	for (int i = 0; i < n; i++) {
		float dn = w[i] * dy[i], v = x[i] * rs;

		s = fma(dn, v, s);
	}
	m = s / (float)n;
	for (int i = 0; i < n; i++) {
		float dn = w[i] * dy[i], v = x[i] * rs, dv;

		v = v * m;
		dv = dn - v;
		dv = dv * rs;
		dx[i] = add ? dx[i] + dv : dv;
	}
}

/* ct_rmsnorm_forward; one work-item per row r. */
__kernel void ct_rmsnorm_fwd(CT_BUF(__global, out), CT_BUF(__global, rstd),
			     CT_BUF(const __global, inp), CT_BUF(const __global, w),
			     int BT, int C, float eps)
{
	int r = get_global_id(0);

	if (r >= BT)
		return;
	CT_AT(out); CT_AT(rstd); CT_AT(inp); CT_AT(w);
	rstd[r] = rms_row_fwd(out + (size_t)r * C, inp + (size_t)r * C, w, C, eps);
}

/* The dinp half of ct_rmsnorm_backward; one work-item per row r. */
__kernel void ct_rmsnorm_bwd_dinp(CT_BUF(__global, dinp), CT_BUF(const __global, dout),
				  CT_BUF(const __global, inp), CT_BUF(const __global, w),
				  CT_BUF(const __global, rstd), int BT, int C)
{
	int r = get_global_id(0);
	size_t o = (size_t)r * C;

	if (r >= BT)
		return;
	CT_AT(dinp); CT_AT(dout); CT_AT(inp); CT_AT(w); CT_AT(rstd);
	rms_row_bwd(dinp + o, dout + o, inp + o, w, rstd[r], C, 1);
}

/* The dw half of ct_rmsnorm_backward; one work-item per channel i, rows
 * in increasing order. */
__kernel void ct_rmsnorm_bwd_dw(CT_BUF(__global, dw), CT_BUF(const __global, dout),
				CT_BUF(const __global, inp), CT_BUF(const __global, rstd),
				int BT, int C)
{
	int i = get_global_id(0);
	float acc = 0.0f;

	if (i >= C)
		return;
	CT_AT(dw); CT_AT(dout); CT_AT(inp); CT_AT(rstd);
	for (int r = 0; r < BT; r++) {
		float n = inp[(size_t)r * C + i] * rstd[r];

		acc = fma(n, dout[(size_t)r * C + i], acc);
	}
	dw[i] = dw[i] + acc;
}

/* ---- RoPE ------------------------------------------------------------------ */

/* ct_rope_forward (dir > 0) / ct_rope_backward (dir < 0) in place on the
 * first nh heads of each of BT rows of `stride` floats; tab (T, hs/2, 2)
 * of (cos, sin). One work-item per (head h, row r), its hs/2 pairs in a
 * loop (one per pair, the index arithmetic cost more than the rotation:
 * Qwen3-0.6B 78 ms a step). */
__kernel void ct_ll_rope(CT_BUF(__global, x), CT_BUF(const __global, tab),
			 int BT, int T, int nh, int hs, int stride, int dir)
{
	int h = get_global_id(0), r = get_global_id(1), h2 = hs / 2;
	__global float *v;
	const __global float *cs;

	if (h >= nh || r >= BT)
		return;
	CT_AT(x); CT_AT(tab);
	v = x + (size_t)r * stride + (size_t)h * hs;
	cs = tab + (size_t)(r % T) * hs;
	for (int i = 0; i < h2; i++) {
		float c = cs[2 * i], s = cs[2 * i + 1], x0 = v[i], x1 = v[i + h2], a, b;

		if (dir > 0) {
			a = x0 * c;
			b = x1 * s;
			v[i] = a - b;
			a = x1 * c;
			b = x0 * s;
			v[i + h2] = a + b;
		} else {
			a = x0 * c;
			b = x1 * s;
			v[i] = a + b;
			a = x1 * c;
			b = x0 * s;
			v[i + h2] = a - b;
		}
	}
}

/* ---- SwiGLU ---------------------------------------------------------------- */

/* ct_swiglu_forward: fch (BT, 2F) = [gate | up], out (BT, F); one
 * work-item per (i, r). */
__kernel void ct_swiglu_fwd(CT_BUF(__global, out), CT_BUF(const __global, fch),
			    int BT, int F)
{
	int i = get_global_id(0), r = get_global_id(1);
	float g, u, sig, y;

	if (i >= F || r >= BT)
		return;
	CT_AT(out); CT_AT(fch);
	g = fch[(size_t)r * 2 * F + i];
	u = fch[(size_t)r * 2 * F + F + i];
	sig = 1.0f + ct_expf(-g);
	sig = 1.0f / sig;
	y = g * sig;
	out[(size_t)r * F + i] = y * u;
}

/* ct_swiglu_backward: dfch (BT, 2F) += the gate and up gradients. */
__kernel void ct_swiglu_bwd(CT_BUF(__global, dfch), CT_BUF(const __global, fch),
			    CT_BUF(const __global, dout), int BT, int F)
{
	int i = get_global_id(0), r = get_global_id(1);
	size_t gi, ui;
	float g, u, dy, sig, a, d, t;

	if (i >= F || r >= BT)
		return;
	CT_AT(dfch); CT_AT(fch); CT_AT(dout);
	gi = (size_t)r * 2 * F + i;
	ui = gi + F;
	g = fch[gi];
	u = fch[ui];
	dy = dout[(size_t)r * F + i];
	sig = 1.0f + ct_expf(-g);
	sig = 1.0f / sig;
	a = g * sig;
	t = 1.0f - sig;
	t = g * t;
	t = 1.0f + t;
	d = sig * t;
	dfch[ui] = dfch[ui] + dy * a;
	t = dy * u;
	dfch[gi] = dfch[gi] + t * d;
}

/* ---- grouped-query attention through attention.cl -------------------------- */

/* dst (BT, 3C) = GPT-2's [q | k | v] rows from Llama's (BT, QKV) rows
 * [NH q heads | KVH k heads | KVH v heads]: query head h's k and v are a
 * copy of kv head h / (NH/KVH). One work-item per (destination head
 * d < 3*NH, row), copying its hs channels (one per channel, the index
 * arithmetic cost more than the copy: SmolLM-135M 65 ms a step). */
__kernel void ct_ll_gqa_expand(CT_BUF(__global, dst), CT_BUF(const __global, src),
			       int BT, int NH, int KVH, int hs)
{
	int d = get_global_id(0), r = get_global_id(1);
	int part = d / NH, h = d % NH, sh;
	const __global float *from;
	__global float *to;

	if (d >= 3 * NH || r >= BT)
		return;
	CT_AT(dst); CT_AT(src);
	sh = part == 0 ? h : NH + (part - 1) * KVH + h / (NH / KVH);
	from = src + (size_t)r * (NH + 2 * KVH) * hs + (size_t)sh * hs;
	to = dst + (size_t)r * 3 * NH * hs + (size_t)d * hs;
	for (int i = 0; i < hs; i++)
		to[i] = from[i];
}

/* The transpose of ct_ll_gqa_expand on gradients: dq added; each kv
 * head's dk, dv += those of its query heads in increasing h (the order of
 * ct_gqa_backward). One work-item per (head d of dqkv's NH + 2*KVH, row),
 * its hs channels in a loop. */
__kernel void ct_ll_gqa_reduce(CT_BUF(__global, dqkv), CT_BUF(const __global, src),
			       int BT, int NH, int KVH, int hs)
{
	int d = get_global_id(0), r = get_global_id(1);
	int C = NH * hs, G = NH / KVH, part, kh;
	const __global float *e;
	__global float *o;

	if (d >= NH + 2 * KVH || r >= BT)
		return;
	CT_AT(dqkv); CT_AT(src);
	e = src + (size_t)r * 3 * C;
	o = dqkv + (size_t)r * (NH + 2 * KVH) * hs + (size_t)d * hs;
	if (d < NH) {	/* e = 0 + dq: the same bits added as the reference's dq */
		e += (size_t)d * hs;
		for (int i = 0; i < hs; i++)
			o[i] = o[i] + e[i];
		return;
	}
	part = d < NH + KVH ? 1 : 2;
	kh = d - NH - (part - 1) * KVH;
	e += (size_t)part * C + (size_t)kh * G * hs;
	for (int i = 0; i < hs; i++) {
		float acc = o[i];

		for (int g = 0; g < G; g++)
			acc = acc + e[(size_t)g * hs + i];
		o[i] = acc;
	}
}

/* ---- per-head RMSNorm of q and k (Qwen3) --------------------------------- */

/* ct_qknorm_forward: raw, qkv (BT, (NH+2KVH)*hd); heads h < NH+KVH normed
 * (w = qkw, or qkw + hd for k heads), the v heads copied. One work-item
 * per (head h < NH+2KVH, row r). */
__kernel void ct_ll_qknorm_fwd(CT_BUF(__global, qkv), CT_BUF(__global, rstd),
			       CT_BUF(const __global, raw), CT_BUF(const __global, qkw),
			       int BT, int NH, int KVH, int hd, float eps)
{
	int h = get_global_id(0), r = get_global_id(1), nh = NH + KVH;
	size_t o;

	if (h >= nh + KVH || r >= BT)
		return;
	CT_AT(qkv); CT_AT(rstd); CT_AT(raw); CT_AT(qkw);
	o = (size_t)r * (NH + 2 * KVH) * hd + (size_t)h * hd;
	if (h >= nh) {
		for (int i = 0; i < hd; i++)
			qkv[o + i] = raw[o + i];
		return;
	}
	rstd[(size_t)r * nh + h] = rms_row_fwd(qkv + o, raw + o, qkw + (h < NH ? 0 : hd), hd,
						 eps);
}

/* The weight half of ct_qknorm_backward: dqkw[j] for j < 2hd (j < hd:
 * q_norm over the q heads, else k_norm over the k heads), rows then heads
 * in increasing order. One work-item per j. Runs before ..._dx. */
__kernel void ct_ll_qknorm_bwd_dw(CT_BUF(__global, dqkw), CT_BUF(const __global, dqkv),
				  CT_BUF(const __global, raw), CT_BUF(const __global, rstd),
				  int BT, int NH, int KVH, int hd)
{
	int j = get_global_id(0), nh = NH + KVH, i, h0, h1;
	size_t QKV = (size_t)(NH + 2 * KVH) * hd;
	float acc = 0.0f;

	if (j >= 2 * hd)
		return;
	CT_AT(dqkw); CT_AT(dqkv); CT_AT(raw); CT_AT(rstd);
	i = j % hd;
	h0 = j < hd ? 0 : NH;
	h1 = j < hd ? NH : nh;
	for (int r = 0; r < BT; r++)
		for (int h = h0; h < h1; h++) {
			size_t k = (size_t)r * QKV + (size_t)h * hd + i;
			float n = raw[k] * rstd[(size_t)r * nh + h];

			acc = fma(n, dqkv[k], acc);
		}
	dqkw[j] = dqkw[j] + acc;
}

/* The input half of ct_qknorm_backward, in place on dqkv's q and k heads.
 * One work-item per (head h < NH+KVH, row r). */
__kernel void ct_ll_qknorm_bwd_dx(CT_BUF(__global, dqkv), CT_BUF(const __global, raw),
				  CT_BUF(const __global, qkw), CT_BUF(const __global, rstd),
				  int BT, int NH, int KVH, int hd)
{
	int h = get_global_id(0), r = get_global_id(1), nh = NH + KVH;
	size_t o;

	if (h >= nh || r >= BT)
		return;
	CT_AT(dqkv); CT_AT(raw); CT_AT(qkw); CT_AT(rstd);
	o = (size_t)r * (NH + 2 * KVH) * hd + (size_t)h * hd;
	rms_row_bwd(dqkv + o, dqkv + o, raw + o, qkw + (h < NH ? 0 : hd),
		    rstd[(size_t)r * nh + h], hd, 0);
}
