#ifdef CT_TEST_CONTRACT	/* tests only: prove the self-test sees contraction */
#pragma OPENCL FP_CONTRACT ON
#else
#pragma OPENCL FP_CONTRACT OFF
#endif
/*
 * layers.cl - every layer of the model except the matrix products, as
 * forward/backward kernels that reproduce the C reference (engine/ct_model.h,
 * engine/ct_layers.c) bit for bit: each output element is computed by one
 * work-item with exactly the reference's chain of operations (sequential
 * sums from index 0, explicit fma only where the reference has fmaf,
 * ct_expf/ct_logf/ct_tanhf from ct_math.clh). Parallelism is only across
 * independent outputs.
 *
 * Every float buffer argument comes with an offset in floats (CT_BUF), as
 * the model's tensors live in a few large buffers; CT_AT applies it.
 */
#define CT_BUF(q, name) q float *name, ulong name##_off
#define CT_AT(name) name += name##_off

/* ---- encoder --------------------------------------------------------------- */

/* out (BT,C) = wte[inp[bt]] + wpe[t]; one work-item per (c, bt). */
__kernel void ct_encoder_fwd(CT_BUF(__global, out), const __global ct_tok *inp,
			     CT_BUF(const __global, wte), CT_BUF(const __global, wpe),
			     int BT, int T, int C)
{
	int c = get_global_id(0), bt = get_global_id(1);

	if (c >= C || bt >= BT)
		return;
	CT_AT(out); CT_AT(wte); CT_AT(wpe);
	out[(size_t)bt * C + c] = wte[(size_t)inp[bt] * C + c] + wpe[(size_t)(bt % T) * C + c];
}

/* dwte[ix,c] += dout[bt,c] and dwpe[t,c] += dout[bt,c], positions in
 * increasing order; one work-item per channel c (channels independent). */
__kernel void ct_encoder_bwd(CT_BUF(__global, dwte), CT_BUF(__global, dwpe),
			     CT_BUF(const __global, dout), const __global ct_tok *inp,
			     int BT, int T, int C)
{
	int c = get_global_id(0);

	if (c >= C)
		return;
	CT_AT(dwte); CT_AT(dwpe); CT_AT(dout);
	for (int bt = 0; bt < BT; bt++) {
		float d = dout[(size_t)bt * C + c];
		size_t iw = (size_t)inp[bt] * C + c, ip = (size_t)(bt % T) * C + c;

		dwte[iw] = dwte[iw] + d;
		dwpe[ip] = dwpe[ip] + d;
	}
}

/* ---- layernorm ------------------------------------------------------------- */

/* One work-item per row r of inp (BT,C). */
__kernel void ct_layernorm_fwd(CT_BUF(__global, out), CT_BUF(__global, mean),
			       CT_BUF(__global, rstd), CT_BUF(const __global, inp),
			       CT_BUF(const __global, w), CT_BUF(const __global, b),
			       int BT, int C)
{
	int r = get_global_id(0);
	const __global float *x;
	__global float *o;
	float sum = 0.0f, mu, ss = 0.0f, var, rs;

	if (r >= BT)
		return;
	CT_AT(out); CT_AT(mean); CT_AT(rstd); CT_AT(inp); CT_AT(w); CT_AT(b);
	x = inp + (size_t)r * C;
	o = out + (size_t)r * C;
	for (int i = 0; i < C; i++)
		sum = sum + x[i];
	mu = sum / (float)C;
	for (int i = 0; i < C; i++) {
		float d = x[i] - mu;
		ss = fma(d, d, ss);
	}
	var = ss / (float)C;
	rs = var + CT_LN_EPS;
	rs = sqrt(rs);
	rs = 1.0f / rs;
	for (int i = 0; i < C; i++) {
		float d = x[i] - mu;
		float y = d * rs;
		y = y * w[i];
		o[i] = y + b[i];
	}
	mean[r] = mu;
	rstd[r] = rs;
}

/* dinp of layernorm; one work-item per row r. */
__kernel void ct_layernorm_bwd_dinp(CT_BUF(__global, dinp), CT_BUF(const __global, dout),
				    CT_BUF(const __global, inp), CT_BUF(const __global, w),
				    CT_BUF(const __global, mean), CT_BUF(const __global, rstd),
				    int BT, int C)
{
	int r = get_global_id(0);
	const __global float *x, *dy;
	__global float *dx;
	float mu, rs, s1 = 0.0f, s2 = 0.0f, m1, m2;

	if (r >= BT)
		return;
	CT_AT(dinp); CT_AT(dout); CT_AT(inp); CT_AT(w); CT_AT(mean); CT_AT(rstd);
	x = inp + (size_t)r * C;
	dy = dout + (size_t)r * C;
	dx = dinp + (size_t)r * C;
	mu = mean[r];
	rs = rstd[r];
	for (int i = 0; i < C; i++) {
		float n = x[i] - mu;
		float dn = w[i] * dy[i];

		n = n * rs;
		s1 = s1 + dn;
		s2 = fma(dn, n, s2);
	}
	m1 = s1 / (float)C;
	m2 = s2 / (float)C;
	for (int i = 0; i < C; i++) {
		float n = x[i] - mu;
		float dn = w[i] * dy[i];
		float dv;

		n = n * rs;
		dv = dn - m1;
		dv = fma(-n, m2, dv);
		dv = dv * rs;
		dx[i] = dx[i] + dv;
	}
}

/* dw, db of layernorm; one work-item per CT_EW channels i, each with its
 * own chains, rows in order. */
__kernel void ct_layernorm_bwd_dwb(CT_BUF(__global, dw), CT_BUF(__global, db),
				   CT_BUF(const __global, dout), CT_BUF(const __global, inp),
				   CT_BUF(const __global, mean), CT_BUF(const __global, rstd),
				   int BT, int C)
{
	int i0 = get_global_id(0) * CT_EW, w = C - i0 < CT_EW ? C - i0 : CT_EW;
	float aw[CT_EW], ab[CT_EW];

	if (i0 >= C)
		return;
	CT_AT(dw); CT_AT(db); CT_AT(dout); CT_AT(inp); CT_AT(mean); CT_AT(rstd);
	for (int c = 0; c < CT_EW; c++) {
		aw[c] = 0.0f;
		ab[c] = 0.0f;
	}
	for (int r = 0; r < BT; r++) {
		float mr = mean[r], rr = rstd[r];

		for (int c = 0; c < w; c++) {
			float n = inp[(size_t)r * C + i0 + c] - mr;
			float d = dout[(size_t)r * C + i0 + c];

			n = n * rr;
			aw[c] = fma(n, d, aw[c]);
			ab[c] = ab[c] + d;
		}
	}
	for (int c = 0; c < w; c++) {
		dw[i0 + c] = dw[i0 + c] + aw[c];
		db[i0 + c] = db[i0 + c] + ab[c];
	}
}

/* ---- attention ------------------------------------------------------------- */

/* dst[j] = dot(x, rows + j*rstride) over hs for j < n, each one fma chain
 * from i = 0; four rows at a time so that four chains are in flight. */
static inline void ct_att_dots(__global float *dst, const __global float *x,
			       const __global float *rows, size_t rstride, int n, int hs)
{
	int j = 0;

	for (; j + 4 <= n; j += 4) {
		const __global float *r0 = rows + (size_t)j * rstride;
		float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;

		for (int i = 0; i < hs; i++) {
			float xi = x[i];

			a0 = fma(xi, r0[i], a0);
			a1 = fma(xi, r0[rstride + i], a1);
			a2 = fma(xi, r0[2 * rstride + i], a2);
			a3 = fma(xi, r0[3 * rstride + i], a3);
		}
		dst[j] = a0;
		dst[j + 1] = a1;
		dst[j + 2] = a2;
		dst[j + 3] = a3;
	}
	for (; j < n; j++) {
		const __global float *r = rows + (size_t)j * rstride;
		float acc = 0.0f;

		for (int i = 0; i < hs; i++)
			acc = fma(x[i], r[i], acc);
		dst[j] = acc;
	}
}

/* o[i] = sum over t2 < n of w[t2] * v[t2*vstride + i], i < hs, each a
 * chain from t2 = 0; 8 channels at a time when hs allows. */
static inline void ct_att_mix(__global float *o, const __global float *w,
			      const __global float *v, size_t vstride, int n, int hs)
{
	int i = 0;

	if (hs % 8 == 0) {
		for (; i < hs; i += 8) {
			float8 acc = (float8)(0.0f);

			for (int t2 = 0; t2 < n; t2++)
				acc = fma((float8)(w[t2]), vload8(0, v + (size_t)t2 * vstride + i), acc);
			vstore8(acc, 0, o + i);
		}
	}
	for (; i < hs; i++) {
		float acc = 0.0f;

		for (int t2 = 0; t2 < n; t2++)
			acc = fma(w[t2], v[(size_t)t2 * vstride + i], acc);
		o[i] = acc;
	}
}

/* One work-item per (t, b*NH + h): the attention row of query t and the
 * output out[b,t,h*hs..]. att (B,NH,T,T). */
__kernel void ct_attention_fwd(CT_BUF(__global, out), CT_BUF(__global, att),
			       CT_BUF(const __global, qkv), int B, int T, int C, int NH)
{
	int t = get_global_id(0), bh = get_global_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C;
	const __global float *q, *base;
	__global float *a;
	float scale, mx, sum = 0.0f;

	if (t >= T || bh >= B * NH)
		return;
	CT_AT(out); CT_AT(att); CT_AT(qkv);
	scale = sqrt((float)hs);
	scale = 1.0f / scale;
	base = qkv + (size_t)b * T * C3 + h * hs;	/* q of position 0 */
	q = base + (size_t)t * C3;
	a = att + ((size_t)bh * T + t) * T;
	ct_att_dots(a, q, base + C, C3, t + 1, hs);
	for (int t2 = 0; t2 <= t; t2++)
		a[t2] = a[t2] * scale;
	mx = a[0];
	for (int t2 = 1; t2 <= t; t2++)
		mx = a[t2] > mx ? a[t2] : mx;
	for (int t2 = 0; t2 <= t; t2++) {
		float e = ct_expf(a[t2] - mx);

		a[t2] = e;
		sum = sum + e;
	}
	for (int t2 = 0; t2 <= t; t2++)
		a[t2] = a[t2] / sum;
	for (int t2 = t + 1; t2 < T; t2++)
		a[t2] = 0.0f;
	ct_att_mix(out + ((size_t)b * T + t) * C + h * hs, a, base + 2 * C, C3, t + 1, hs);
}

/* Backward step 1, one work-item per (t, b*NH + h): datt[t,t2] = g[t,t2]
 * (see ct_model.h) for t2 <= t. */
__kernel void ct_attention_bwd_g(CT_BUF(__global, datt), CT_BUF(const __global, dout),
				 CT_BUF(const __global, qkv), CT_BUF(const __global, att),
				 int B, int T, int C, int NH)
{
	int t = get_global_id(0), bh = get_global_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C;
	const __global float *dy, *a;
	__global float *g;
	float scale, dot = 0.0f;

	if (t >= T || bh >= B * NH)
		return;
	CT_AT(datt); CT_AT(dout); CT_AT(qkv); CT_AT(att);
	scale = sqrt((float)hs);
	scale = 1.0f / scale;
	dy = dout + ((size_t)b * T + t) * C + h * hs;
	a = att + ((size_t)bh * T + t) * T;
	g = datt + ((size_t)bh * T + t) * T;
	/* da[t,t2] = dout[t] . v[t2] */
	ct_att_dots(g, dy, qkv + (size_t)b * T * C3 + 2 * C + h * hs, C3, t + 1, hs);
	for (int t2 = 0; t2 <= t; t2++)
		dot = fma(a[t2], g[t2], dot);
	for (int t2 = 0; t2 <= t; t2++) {
		float d = g[t2] - dot;

		d = a[t2] * d;
		g[t2] = d * scale;
	}
}

/* Backward step 2, one work-item per (b*T + t, c) with c < C: dq, dk, dv
 * of channel c = h*hs + i at position t, each added once into dqkv. */
__kernel void ct_attention_bwd_qkv(CT_BUF(__global, dqkv), CT_BUF(const __global, datt),
				   CT_BUF(const __global, dout), CT_BUF(const __global, qkv),
				   CT_BUF(const __global, att), int B, int T, int C, int NH)
{
	int c = get_global_id(0), bt = get_global_id(1);
	int b, t, h, hs = C / NH, C3 = 3 * C;
	size_t rowq, bh;
	float aq = 0.0f, ak = 0.0f, av = 0.0f;

	if (c >= C || bt >= B * T)
		return;
	CT_AT(dqkv); CT_AT(datt); CT_AT(dout); CT_AT(qkv); CT_AT(att);
	b = bt / T;
	t = bt % T;
	h = c / hs;
	bh = (size_t)b * NH + h;
	rowq = (bh * T + t) * T;	/* g[t, .] and att[t, .] */
	/* dq[t,c] = sum_{t2<=t} g[t,t2] * k[t2,c] */
	for (int t2 = 0; t2 <= t; t2++)
		aq = fma(datt[rowq + t2], qkv[((size_t)b * T + t2) * C3 + C + c], aq);
	/* dk[t,c] = sum_{t'>=t} g[t',t] * q[t',c];
	 * dv[t,c] = sum_{t'>=t} att[t',t] * dout[t',c] */
	for (int tq = t; tq < T; tq++) {
		size_t row = (bh * T + tq) * T + t;

		ak = fma(datt[row], qkv[((size_t)b * T + tq) * C3 + c], ak);
		av = fma(att[row], dout[((size_t)b * T + tq) * C + c], av);
	}
	dqkv[(size_t)bt * C3 + c] = dqkv[(size_t)bt * C3 + c] + aq;
	dqkv[(size_t)bt * C3 + C + c] = dqkv[(size_t)bt * C3 + C + c] + ak;
	dqkv[(size_t)bt * C3 + 2 * C + c] = dqkv[(size_t)bt * C3 + 2 * C + c] + av;
}

/* ct_attention_bwd_qkv for 8 consecutive channels c0..c0+7 of one head
 * per work-item (used when hs is a multiple of 8): the same chains, 8 at a
 * time in a float8, so that they run side by side instead of each waiting
 * on its own fmas. Global size (C/8, B*T). */
__kernel void ct_attention_bwd_qkv8(CT_BUF(__global, dqkv), CT_BUF(const __global, datt),
				    CT_BUF(const __global, dout), CT_BUF(const __global, qkv),
				    CT_BUF(const __global, att), int B, int T, int C, int NH)
{
	int c0 = get_global_id(0) * 8, bt = get_global_id(1);
	int b, t, h, hs = C / NH, C3 = 3 * C;
	size_t rowq, bh;
	float8 aq = (float8)(0.0f), ak = (float8)(0.0f), av = (float8)(0.0f);
	__global float *d;

	if (c0 >= C || bt >= B * T)
		return;
	CT_AT(dqkv); CT_AT(datt); CT_AT(dout); CT_AT(qkv); CT_AT(att);
	b = bt / T;
	t = bt % T;
	h = c0 / hs;
	bh = (size_t)b * NH + h;
	rowq = (bh * T + t) * T;
	for (int t2 = 0; t2 <= t; t2++)
		aq = fma((float8)(datt[rowq + t2]),
			 vload8(0, qkv + ((size_t)b * T + t2) * C3 + C + c0), aq);
	for (int tq = t; tq < T; tq++) {
		size_t row = (bh * T + tq) * T + t;

		ak = fma((float8)(datt[row]), vload8(0, qkv + ((size_t)b * T + tq) * C3 + c0), ak);
		av = fma((float8)(att[row]), vload8(0, dout + ((size_t)b * T + tq) * C + c0), av);
	}
	d = dqkv + (size_t)bt * C3 + c0;
	vstore8(vload8(0, d) + aq, 0, d);
	vstore8(vload8(0, d + C) + ak, 0, d + C);
	vstore8(vload8(0, d + 2 * C) + av, 0, d + 2 * C);
}

/* ---- elementwise ----------------------------------------------------------- */

/* CT_EW elements per work-item (ct_math.clh). */
__kernel void ct_gelu_fwd(CT_BUF(__global, out), CT_BUF(const __global, inp), ulong n)
{
	if (get_global_id(0) * CT_EW >= n)
		return;
	CT_AT(out); CT_AT(inp);
	CT_EW_FOR(i, n)
		out[i] = ct_gelu_forward_elem(inp[i]);
}

__kernel void ct_gelu_bwd(CT_BUF(__global, dinp), CT_BUF(const __global, inp),
			  CT_BUF(const __global, dout), ulong n)
{
	if (get_global_id(0) * CT_EW >= n)
		return;
	CT_AT(dinp); CT_AT(inp); CT_AT(dout);
	CT_EW_FOR(i, n) {
		float g = ct_gelu_grad_elem(inp[i]);

		g = g * dout[i];
		dinp[i] = dinp[i] + g;
	}
}

__kernel void ct_residual_fwd(CT_BUF(__global, out), CT_BUF(const __global, a),
			      CT_BUF(const __global, b), ulong n)
{
	if (get_global_id(0) * CT_EW >= n)
		return;
	CT_AT(out); CT_AT(a); CT_AT(b);
	CT_EW_FOR(i, n)
		out[i] = a[i] + b[i];
}

__kernel void ct_residual_bwd(CT_BUF(__global, da), CT_BUF(__global, db),
			      CT_BUF(const __global, dout), ulong n)
{
	if (get_global_id(0) * CT_EW >= n)
		return;
	CT_AT(da); CT_AT(db); CT_AT(dout);
	CT_EW_FOR(i, n) {
		da[i] = da[i] + dout[i];
		db[i] = db[i] + dout[i];
	}
}

/* ---- softmax + cross-entropy ----------------------------------------------- */

/* The reference's per-row softmax in four passes, so that the expensive
 * exps run one work-item per element while each row's max and sum stay one
 * sequential chain: rows (BT) of logits/probs (BT,Vp); stat (2*BT) holds
 * each row's max, then its sum. A target id with CT_TOK_UNTRAINED set
 * (lib/ct_tok.h) is a row the loss does not count: its dlogits are 0. */

#define CT_TOK_UNTRAINED 0x80000000u

/* stat[r] = max over i < V of x[r,i] (sequential, reference's compare). */
__kernel void ct_ce_max(CT_BUF(const __global, logits), __global float *stat,
			int BT, int V, int Vp)
{
	int r = get_global_id(0);
	const __global float *x;
	float mx;

	if (r >= BT)
		return;
	CT_AT(logits);
	x = logits + (size_t)r * Vp;
	mx = x[0];
	for (int i = 1; i < V; i++)
		mx = x[i] > mx ? x[i] : mx;
	stat[r] = mx;
}

/* probs[r,i] = ct_expf(x[r,i] - max_r) for i < V, 0 for i >= V; one
 * work-item per (i, r) (ct_expf's branches keep the compiler from
 * running a CT_EW loop of it in vector instructions, while PoCL
 * vectorises across work-items: measured 19 ms against 12 for 124M). */
__kernel void ct_ce_exp(CT_BUF(__global, probs), CT_BUF(const __global, logits),
			const __global float *stat, int BT, int V, int Vp)
{
	int i = get_global_id(0), r = get_global_id(1);
	size_t j = (size_t)r * Vp + i;

	if (i >= Vp || r >= BT)
		return;
	CT_AT(probs); CT_AT(logits);
	probs[j] = i < V ? ct_expf(logits[j] - stat[r]) : 0.0f;
}

/* stat[BT + r] = sum over i < V of probs[r,i] (sequential). */
__kernel void ct_ce_sum(CT_BUF(const __global, probs), __global float *stat,
			int BT, int V, int Vp)
{
	int r = get_global_id(0);
	const __global float *e;
	float sum = 0.0f;

	if (r >= BT)
		return;
	CT_AT(probs);
	e = probs + (size_t)r * Vp;
	for (int i = 0; i < V; i++)
		sum = sum + e[i];
	stat[BT + r] = sum;
}

/* probs[r,i] = e / sum_r for i < V; CT_EW entries of row r = gid1 per
 * work-item. */
__kernel void ct_ce_norm(CT_BUF(__global, probs), const __global float *stat,
			 int BT, int V, int Vp)
{
	int r = get_global_id(1);
	float sum;

	if (get_global_id(0) * CT_EW >= (size_t)V || r >= BT)
		return;
	CT_AT(probs);
	probs += (size_t)r * Vp;
	sum = stat[BT + r];
	CT_EW_FOR(i, (size_t)V)
		probs[i] = probs[i] / sum;
}

/* losses[r] = -ct_logf(probs[r, targets[r]]) (targets from targets_off on). */
__kernel void ct_ce_loss(CT_BUF(__global, losses), CT_BUF(const __global, probs),
			 const __global ct_tok *targets, ulong targets_off, int BT, int Vp)
{
	int r = get_global_id(0);

	if (r >= BT)
		return;
	CT_AT(losses); CT_AT(probs);
	targets += targets_off;
	losses[r] = -ct_logf(probs[(size_t)r * Vp + (targets[r] & ~CT_TOK_UNTRAINED)]);
}

/* ntr[0] = (float) number of trained rows (targets without
 * CT_TOK_UNTRAINED); one work-item, an exact count (BT < 2^24). */
__kernel void ct_ce_count(const __global ct_tok *targets, CT_BUF(__global, ntr), int BT)
{
	int n = 0;

	if (get_global_id(0) != 0)
		return;
	CT_AT(ntr);
	for (int r = 0; r < BT; r++)
		n += (targets[r] & CT_TOK_UNTRAINED) == 0;
	ntr[0] = (float)n;
}

/* dlogits = (probs - 1[i == target]) / N (i < V), 0 (i >= V), N = ntr[0]
 * the trained rows (ct_ce_count); 0 throughout an untrained row. CT_EW
 * entries of row r = gid1 per work-item; row r's target is targets[toff + r]
 * (a piece of the rows). */
__kernel void ct_crossentropy_bwd(CT_BUF(__global, dlogits), CT_BUF(const __global, probs),
				  const __global ct_tok *targets, ulong toff,
				  CT_BUF(const __global, ntr), int BT, int V, int Vp)
{
	int r = get_global_id(1);
	size_t tr;
	int skip;
	float n;

	if (get_global_id(0) * CT_EW >= (size_t)Vp || r >= BT)
		return;
	CT_AT(dlogits); CT_AT(probs); CT_AT(ntr);
	targets += toff;
	dlogits += (size_t)r * Vp;
	probs += (size_t)r * Vp;
	skip = (targets[r] & CT_TOK_UNTRAINED) != 0;
	tr = targets[r];
	n = ntr[0];
	CT_EW_FOR(i, (size_t)Vp) {
		float d = 0.0f;

		if (i < (size_t)V && !skip) {
			float ind = i == tr ? 1.0f : 0.0f;

			d = probs[i] - ind;
			d = d / n;
		}
		dlogits[i] = d;
	}
}

/* ---- gradient clipping and AdamW ------------------------------------------- */

/* part[k] = fma chain of g*g over chunk k (CT_CLIP_CHUNK elements). Each
 * work-item runs the chains of 16 consecutive chunks side by side, as the
 * 16 lanes of one vector: it loads 16 floats from each chunk (contiguous
 * reads), transposes the 16 x 16 block in registers and adds it column by
 * column, so every chunk's chain keeps its order. (8 scalar chains per
 * work-item ran at ~10 GB/s on PoCL; this reads at memory speed.) */
#define CT_CLIP_WAYS 16
#define CT_CLIP_COL(c) (float16)(r[0].c, r[1].c, r[2].c, r[3].c, r[4].c, r[5].c, \
	r[6].c, r[7].c, r[8].c, r[9].c, r[10].c, r[11].c, r[12].c, r[13].c, r[14].c, r[15].c)
#define CT_CLIP_ADD(c) do { float16 x = CT_CLIP_COL(c); acc = fma(x, x, acc); } while (0)
__kernel void ct_gradnorm_part(CT_BUF(const __global, g), __global float *part, ulong n)
{
	size_t k0 = get_global_id(0) * CT_CLIP_WAYS;
	size_t nparts = (n + CT_CLIP_CHUNK - 1) / CT_CLIP_CHUNK;

	if (k0 >= nparts)
		return;
	CT_AT(g);
	if ((k0 + CT_CLIP_WAYS) * CT_CLIP_CHUNK <= n) {
		/* 16 full chunks */
		const __global float *b = g + k0 * CT_CLIP_CHUNK;
		float16 acc = (float16)(0.0f), r[16];

		for (size_t j = 0; j < CT_CLIP_CHUNK; j += 16) {
#pragma unroll
			for (int w = 0; w < 16; w++)
				r[w] = vload16(0, b + (size_t)w * CT_CLIP_CHUNK + j);
			CT_CLIP_ADD(s0); CT_CLIP_ADD(s1); CT_CLIP_ADD(s2); CT_CLIP_ADD(s3);
			CT_CLIP_ADD(s4); CT_CLIP_ADD(s5); CT_CLIP_ADD(s6); CT_CLIP_ADD(s7);
			CT_CLIP_ADD(s8); CT_CLIP_ADD(s9); CT_CLIP_ADD(sa); CT_CLIP_ADD(sb);
			CT_CLIP_ADD(sc); CT_CLIP_ADD(sd); CT_CLIP_ADD(se); CT_CLIP_ADD(sf);
		}
		vstore16(acc, 0, part + k0);
	} else {
		for (int w = 0; w < CT_CLIP_WAYS && k0 + w < nparts; w++) {
			size_t lo = (k0 + w) * CT_CLIP_CHUNK, hi = lo + CT_CLIP_CHUNK;
			float acc = 0.0f;

			if (hi > n)
				hi = n;
			for (size_t j = lo; j < hi; j++)
				acc = fma(g[j], g[j], acc);
			part[k0 + w] = acc;
		}
	}
}

/* One work-item: norm = sqrt(sequential sum of the parts); res[0] = norm,
 * res[1] = clip / norm when norm > clip (and clip > 0), else 1, res[2] =
 * 1 if scaling is needed else 0. */
__kernel void ct_gradnorm_final(const __global float *part, __global float *res,
				ulong nparts, float clip)
{
	float acc = 0.0f, norm;

	if (get_global_id(0) != 0)
		return;
	for (size_t k = 0; k < nparts; k++)
		acc = acc + part[k];
	norm = sqrt(acc);
	res[0] = norm;
	res[1] = 1.0f;
	res[2] = 0.0f;
	if (clip > 0.0f && norm > clip) {
		res[1] = clip / norm;
		res[2] = 1.0f;
	}
}

/* g = g * s when res[2] says so (clipping without an AdamW step after it;
 * a training step folds this into ct_adamw). */
__kernel void ct_grad_scale(CT_BUF(__global, g), const __global float *res, ulong n)
{
	if (get_global_id(0) * CT_EW >= n || res[2] == 0.0f)
		return;
	CT_AT(g);
	CT_EW_FOR(i, n)
		g[i] = g[i] * res[1];
}

/* AdamW (ct_adamw_update), CT_EW parameters per work-item. When clip is
 * set, res holds the clipping of ct_gradnorm_final and a clipped g
 * (g * res[1]) is used and written back, exactly as if ct_grad_scale had
 * run first, saving one pass over memory. */
__kernel void ct_adamw(CT_BUF(__global, p), CT_BUF(__global, g),
		       CT_BUF(__global, m), CT_BUF(__global, v), ulong n,
		       float lr, float beta1, float beta2, float eps, float wd,
		       float bc1, float bc2, const __global float *res, int clip)
{
	int scale;
	float s;

	if (get_global_id(0) * CT_EW >= n)
		return;
	CT_AT(p); CT_AT(g); CT_AT(m); CT_AT(v);
	scale = clip && res[2] != 0.0f;
	s = scale ? res[1] : 1.0f;
	CT_EW_FOR(j, n) {
		float gj = g[j], mj, vj;

		if (scale) {
			gj = gj * s;
			g[j] = gj;
		}
		mj = ct_adamw_m_elem(m[j], gj, beta1);
		vj = ct_adamw_v_elem(v[j], gj, beta2);
		m[j] = mj;
		v[j] = vj;
		p[j] = ct_adamw_p_elem(p[j], mj, vj, lr, eps, wd, bc1, bc2);
	}
}
