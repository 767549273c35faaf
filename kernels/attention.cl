#ifdef CT_TEST_CONTRACT	/* tests only: prove the self-test sees contraction */
#pragma OPENCL FP_CONTRACT ON
#else
#pragma OPENCL FP_CONTRACT OFF
#endif
/*
 * attention.cl - causal self-attention without the (B,NH,T,T) matrices: the
 * device twins of ct_attention_forward_recompute() and
 * ct_attention_backward_recompute() (engine/ct_attention.c, contract in
 * ct_model.h), bit-identical to them.
 *
 * Forward keeps per query row the softmax max and sum (stat (B,NH,T,2));
 * backward recomputes each probability from them. Every dot product is one
 * fma chain in increasing channel order; 32 of them (32 keys, or 32
 * queries) run side by side in the lanes of two float16s, each lane its own
 * chain, so vectorising changes no result. For that the keys, values,
 * queries and output gradients are first transposed to (B,NH,hs,T)
 * (ct_attn_tr, scratch of the launcher). Accumulators over keys or
 * queries are kept in private arrays of CT_ATT_CH channels; heads wider than
 * that are done CT_ATT_CH channels at a time (recomputing the scores).
 */

#define CT_ATT_CH 64

/* Rows per work-item (queries; keys in ct_attn_bwd_dkv): each 32-wide
 * load of keys (or queries) then serves CT_ATT_R dots, and each value row
 * CT_ATT_R outputs. Rows past T repeat row T-1 and are not stored. The
 * host launches ceil(T / CT_ATT_R) work-items per head (-D from the host). */
#ifndef CT_ATT_R
#define CT_ATT_R 8
#endif

/* dst (B,NH,hs,T) = the head-major transpose of the channels c0..c0+C-1
 * of src rows (B*T rows of ld floats): dst[((b*NH+h)*hs + i)*T + t] =
 * src[(b*T+t)*ld + c0 + h*hs + i]. One work-item per (t, b*C + c). The
 * score dots read keys (or queries) 32 at a time from it. */
__kernel void ct_attn_tr(CT_BUF(__global, dst), CT_BUF(const __global, src), int ld,
			 int B, int T, int C)
{
	int t = get_global_id(0), bc = get_global_id(1);
	int b = bc / C, c = bc % C;

	if (t >= T || bc >= B * C)
		return;
	CT_AT(dst); CT_AT(src);
	dst[((size_t)b * C + c) * T + t] = src[((size_t)b * T + t) * ld + c];
}

/* Raw dots of CT_ATT_R vectors x + xo[r] (hs each) with the 32 columns
 * j..j+31 of rowsT (hs rows of T floats, padded: columns past T are read
 * and ignored): s[r][l], lanes independent fma chains in increasing i,
 * the reference's chain. */
static inline void ct_att_dot32(float s[CT_ATT_R][32], const __global float *x,
				const size_t xo[CT_ATT_R], const __global float *rowsT,
				int T, int j, int hs)
{
	float16 a0[CT_ATT_R], a1[CT_ATT_R];

	for (int r = 0; r < CT_ATT_R; r++) {
		a0[r] = (float16)(0.0f);
		a1[r] = (float16)(0.0f);
	}
	for (int i = 0; i < hs; i++) {
		const __global float *p = rowsT + (size_t)i * T + j;
		float16 k0 = vload16(0, p), k1 = vload16(0, p + 16);

#pragma unroll
		for (int r = 0; r < CT_ATT_R; r++) {
			float16 xi = (float16)(x[xo[r] + i]);

			a0[r] = fma(xi, k0, a0[r]);
			a1[r] = fma(xi, k1, a1[r]);
		}
	}
	for (int r = 0; r < CT_ATT_R; r++) {
		vstore16(a0[r], 0, s[r]);
		vstore16(a1[r], 0, s[r] + 16);
	}
}

/* ct_expf (ct_math.clh) on 16 lanes: the same statements in the same
 * order on every lane, the branches as selects, so each lane has exactly
 * the bits of the scalar function. */
static inline float16 ct_expf16(float16 x)
{
	float16 t, k, r, p, y;
	int16 n, big;

	t = x * 1.4426950216293335f;
	k = t + 12582912.0f;
	k = k - 12582912.0f;
	n = convert_int16_sat(k);
	r = fma(-k, (float16)(0.6931471824645996f), x);
	r = fma(-k, (float16)(-1.9046542121259336e-09f), r);
	p = (float16)(2.480158764e-05f);
	p = fma(p, r, (float16)(1.984127011e-04f));
	p = fma(p, r, (float16)(1.388888923e-03f));
	p = fma(p, r, (float16)(8.333333768e-03f));
	p = fma(p, r, (float16)(4.166666791e-02f));
	p = fma(p, r, (float16)(1.666666716e-01f));
	p = fma(p, r, (float16)(0.5f));
	p = fma(p, r, (float16)(1.0f));
	p = fma(p, r, (float16)(1.0f));
	big = n > 127;
	p = select(p, p * 2.0f, big);
	n = select(n, n - 1, big);
	n = clamp(n, -127, 128);		/* only lanes replaced below leave [-126, 127] */
	y = p * as_float16((n + 127) << 23);
	y = select(y, (float16)(0.0f), y < CT_FLT_MIN);
	y = select(y, (float16)(0.0f), x < -87.3365478515625f);
	y = select(y, as_float16((int16)(CT_INF_BITS)), x > 88.72283935546875f);
	return select(y, x + x, isnan(x));
}

/* p[l] = ct_expf(s[l] * scale - mx) / sum for 32 lanes (div: 0 = e only). */
static inline void ct_att_probs32(float *pr, const float *s, float scale, float mx,
				  float sum, int div)
{
	for (int h = 0; h < 32; h += 16) {
		float16 e = ct_expf16(vload16(0, s + h) * scale - mx);

		vstore16(div ? e / sum : e, 0, pr + h);
	}
}

static inline float ct_att_scale(int hs)
{
	float s = sqrt((float)hs);

	return 1.0f / s;
}

/* Row r of a work-item's block from t0 (rows past T repeat row T-1). */
static inline int ct_att_row(int t0, int r, int T)
{
	return min(t0 + r, T - 1);
}

/* The softmax max and sum of the block's rows from t0 (st: T rows of
 * (max, sum)). */
static inline void ct_att_row_stats(float mx[CT_ATT_R], float sum[CT_ATT_R],
				    const __global float *st, int t0, int T)
{
	for (int r = 0; r < CT_ATT_R; r++) {
		mx[r] = st[(size_t)ct_att_row(t0, r, T) * 2];
		sum[r] = st[(size_t)ct_att_row(t0, r, T) * 2 + 1];
	}
}

/* xo[r] = offset of row r of the block from t0, rows ld floats apart. */
static inline void ct_att_rows(size_t xo[CT_ATT_R], int t0, int T, int ld)
{
	for (int r = 0; r < CT_ATT_R; r++)
		xo[r] = (size_t)ct_att_row(t0, r, T) * ld;
}

/* One work-item per (CT_ATT_R query rows from t0, b*NH + h): out[b,t,
 * h*hs..] and stat of each row t. */
__kernel void ct_attn_fwd(CT_BUF(__global, out), CT_BUF(__global, stat),
			  CT_BUF(const __global, qkv), CT_BUF(const __global, kT),
			  int B, int T, int C, int NH)
{
	int t0 = get_global_id(0) * CT_ATT_R, bh = get_global_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C, tl;
	const __global float *base, *kt;
	float scale = ct_att_scale(hs), mx[CT_ATT_R], sum[CT_ATT_R], s[CT_ATT_R][32];
	size_t qo[CT_ATT_R];

	if (t0 >= T || bh >= B * NH)
		return;
	CT_AT(out); CT_AT(stat); CT_AT(qkv); CT_AT(kT);
	base = qkv + (size_t)b * T * C3 + h * hs;
	kt = kT + (size_t)bh * hs * T;
	tl = ct_att_row(t0, CT_ATT_R - 1, T);
	ct_att_rows(qo, t0, T, C3);
	for (int r = 0; r < CT_ATT_R; r++) {
		mx[r] = 0.0f;
		sum[r] = 0.0f;
	}
	for (int j = 0; j <= tl; j += 32) {
		ct_att_dot32(s, base, qo, kt, T, j, hs);
		for (int r = 0; r < CT_ATT_R; r++)
			for (int l = 0; l < 32 && j + l <= ct_att_row(t0, r, T); l++) {
				float x = s[r][l] * scale;

				mx[r] = (j + l == 0 || x > mx[r]) ? x : mx[r];
			}
	}
	for (int j = 0; j <= tl; j += 32) {
		ct_att_dot32(s, base, qo, kt, T, j, hs);
		for (int r = 0; r < CT_ATT_R; r++) {
			ct_att_probs32(s[r], s[r], scale, mx[r], 1.0f, 0);
			for (int l = 0; l < 32 && j + l <= ct_att_row(t0, r, T); l++)
				sum[r] = sum[r] + s[r][l];
		}
	}
	for (int c0 = 0; c0 < hs; c0 += CT_ATT_CH) {
		int nc = min(CT_ATT_CH, hs - c0);
		float acc[CT_ATT_R][CT_ATT_CH];

		for (int r = 0; r < CT_ATT_R; r++)
			for (int i = 0; i < nc; i++)
				acc[r][i] = 0.0f;
		for (int j = 0; j <= tl; j += 32) {
			ct_att_dot32(s, base, qo, kt, T, j, hs);
			for (int r = 0; r < CT_ATT_R; r++)
				ct_att_probs32(s[r], s[r], scale, mx[r], sum[r], 1);
			for (int l = 0; l < 32 && j + l <= tl; l++) {
				const __global float *v = base + (size_t)(j + l) * C3 + 2 * C + c0;

				for (int r = 0; r < CT_ATT_R; r++) {
					float a = s[r][l];

					if (j + l > ct_att_row(t0, r, T))
						continue;
					for (int i = 0; i < nc; i++)
						acc[r][i] = fma(a, v[i], acc[r][i]);
				}
			}
		}
		for (int r = 0; r < CT_ATT_R && t0 + r < T; r++)
			for (int i = 0; i < nc; i++)
				out[((size_t)b * T + t0 + r) * C + h * hs + c0 + i] = acc[r][i];
	}
	for (int r = 0; r < CT_ATT_R && t0 + r < T; r++) {
		stat[((size_t)bh * T + t0 + r) * 2] = mx[r];
		stat[((size_t)bh * T + t0 + r) * 2 + 1] = sum[r];
	}
}

/* What the backward's query-row kernels share for the CT_ATT_R rows from
 * t0 of head bh: q and dout of the head (qo, yo: the rows' offsets), k^T
 * and v^T (tr: the launcher's transposes), the last row and the rows'
 * softmax max and sum. */
struct ct_att_qrows {
	const __global float *q, *dy, *kt, *vt;
	size_t qo[CT_ATT_R], yo[CT_ATT_R];
	float mx[CT_ATT_R], sum[CT_ATT_R];
	int tl;
};

static inline void ct_att_qrows_init(struct ct_att_qrows *w, const __global float *qkv,
				     const __global float *dout, const __global float *stat,
				     const __global float *tr, int t0, int bh, int B, int T,
				     int C, int NH)
{
	int b = bh / NH, hs = C / NH;

	w->q = qkv + (size_t)b * T * 3 * C + (bh % NH) * hs;
	w->dy = dout + (size_t)b * T * C + (bh % NH) * hs;
	w->kt = tr + (size_t)bh * hs * T;		/* k^T, then v^T */
	w->vt = w->kt + (size_t)B * C * T;
	w->tl = ct_att_row(t0, CT_ATT_R - 1, T);
	ct_att_rows(w->qo, t0, T, 3 * C);
	ct_att_rows(w->yo, t0, T, C);
	ct_att_row_stats(w->mx, w->sum, stat + (size_t)bh * T * 2, t0, T);
}

/* For keys j..j+31: s = the rows' probabilities, da = their raw dots of
 * dout with v. */
static inline void ct_att_qrows_keys(const struct ct_att_qrows *w, float s[CT_ATT_R][32],
				     float da[CT_ATT_R][32], int j, int T, int hs, float scale)
{
	ct_att_dot32(s, w->q, w->qo, w->kt, T, j, hs);
	ct_att_dot32(da, w->dy, w->yo, w->vt, T, j, hs);
	for (int r = 0; r < CT_ATT_R; r++)
		ct_att_probs32(s[r], s[r], scale, w->mx[r], w->sum[r], 1);
}

/* Backward step 1, one work-item per (CT_ATT_R query rows, b*NH + h):
 * dot[bh,t] = sum over t2 <= t of fma(att[t,t2], da[t,t2], acc). */
__kernel void ct_attn_bwd_dot(CT_BUF(__global, dot), CT_BUF(const __global, dout),
			      CT_BUF(const __global, qkv), CT_BUF(const __global, stat),
			      CT_BUF(const __global, tr), int B, int T, int C, int NH)
{
	int t0 = get_global_id(0) * CT_ATT_R, bh = get_global_id(1), hs = C / NH;
	float scale = ct_att_scale(hs), acc[CT_ATT_R], s[CT_ATT_R][32], da[CT_ATT_R][32];
	struct ct_att_qrows w;

	if (t0 >= T || bh >= B * NH)
		return;
	CT_AT(dot); CT_AT(dout); CT_AT(qkv); CT_AT(stat); CT_AT(tr);
	ct_att_qrows_init(&w, qkv, dout, stat, tr, t0, bh, B, T, C, NH);
	for (int r = 0; r < CT_ATT_R; r++)
		acc[r] = 0.0f;
	for (int j = 0; j <= w.tl; j += 32) {
		ct_att_qrows_keys(&w, s, da, j, T, hs, scale);
		for (int r = 0; r < CT_ATT_R; r++)
			for (int l = 0; l < 32 && j + l <= ct_att_row(t0, r, T); l++)
				acc[r] = fma(s[r][l], da[r][l], acc[r]);
	}
	for (int r = 0; r < CT_ATT_R && t0 + r < T; r++)
		dot[(size_t)bh * T + t0 + r] = acc[r];
}

/* g[t,t2] from att[t,t2], the raw da and the row's dot (ct_model.h's
 * order: d = da - dot; d = att * d; g = d * scale). */
static inline float ct_att_gp(float a, float da, float dot, float scale)
{
	float d = da - dot;

	d = a * d;
	return d * scale;
}

/* The max and sum of the 32 query rows j..j+31 from st (T rows of (max,
 * sum)); lanes past T get max 0, sum 1 (their results are not used). */
static inline void ct_att_stat32(float mx[32], float sm[32], const __global float *st,
				 int j, int T)
{
	for (int l = 0; l < 32; l++) {
		mx[l] = j + l < T ? st[(size_t)(j + l) * 2] : 0.0f;
		sm[l] = j + l < T ? st[(size_t)(j + l) * 2 + 1] : 1.0f;
	}
}

/* ct_att_probs32 for 32 queries against one key: each lane with its own
 * row's max and sum (ct_att_stat32). */
static inline void ct_att_probs32q(float *pr, const float *s, float scale,
				   const float mx[32], const float sm[32])
{
	for (int h = 0; h < 32; h += 16) {
		float16 e = ct_expf16(vload16(0, s + h) * scale - vload16(0, mx + h));

		vstore16(e / vload16(0, sm + h), 0, pr + h);
	}
}

/* Backward step 2, one work-item per (CT_ATT_R query rows, b*NH + h):
 * dq[t] += sum over t2 <= t of fma(g[t,t2], k[t2,i], acc). */
__kernel void ct_attn_bwd_dq(CT_BUF(__global, dqkv), CT_BUF(const __global, dot),
			     CT_BUF(const __global, dout), CT_BUF(const __global, qkv),
			     CT_BUF(const __global, stat), CT_BUF(const __global, tr),
			     int B, int T, int C, int NH)
{
	int t0 = get_global_id(0) * CT_ATT_R, bh = get_global_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C;
	float scale = ct_att_scale(hs), dt[CT_ATT_R], s[CT_ATT_R][32], da[CT_ATT_R][32];
	struct ct_att_qrows w;

	if (t0 >= T || bh >= B * NH)
		return;
	CT_AT(dqkv); CT_AT(dot); CT_AT(dout); CT_AT(qkv); CT_AT(stat); CT_AT(tr);
	ct_att_qrows_init(&w, qkv, dout, stat, tr, t0, bh, B, T, C, NH);
	for (int r = 0; r < CT_ATT_R; r++)
		dt[r] = dot[(size_t)bh * T + ct_att_row(t0, r, T)];
	for (int c0 = 0; c0 < hs; c0 += CT_ATT_CH) {
		int nc = min(CT_ATT_CH, hs - c0);
		float acc[CT_ATT_R][CT_ATT_CH];

		for (int r = 0; r < CT_ATT_R; r++)
			for (int i = 0; i < nc; i++)
				acc[r][i] = 0.0f;
		for (int j = 0; j <= w.tl; j += 32) {
			ct_att_qrows_keys(&w, s, da, j, T, hs, scale);
			for (int l = 0; l < 32 && j + l <= w.tl; l++) {
				/* w.q is the head's q: its k is C further along the row */
				const __global float *k = w.q + (size_t)(j + l) * C3 + C + c0;

				for (int r = 0; r < CT_ATT_R; r++) {
					float g;

					if (j + l > ct_att_row(t0, r, T))
						continue;
					g = ct_att_gp(s[r][l], da[r][l], dt[r], scale);
					for (int i = 0; i < nc; i++)
						acc[r][i] = fma(g, k[i], acc[r][i]);
				}
			}
		}
		for (int r = 0; r < CT_ATT_R && t0 + r < T; r++) {
			__global float *d = dqkv + ((size_t)b * T + t0 + r) * C3 + h * hs + c0;

			for (int i = 0; i < nc; i++)
				d[i] = d[i] + acc[r][i];
		}
	}
}

/* Backward step 3, one work-item per (CT_ATT_R key rows t2, b*NH + h):
 * dk[t2] and dv[t2] += chains over queries t = t2..T-1 in increasing t of
 * fma(g[t,t2], q[t,i], acc) and fma(att[t,t2], dout[t,i], acc). */
__kernel void ct_attn_bwd_dkv(CT_BUF(__global, dqkv), CT_BUF(const __global, dot),
			      CT_BUF(const __global, dout), CT_BUF(const __global, qkv),
			      CT_BUF(const __global, stat), CT_BUF(const __global, tr),
			      int B, int T, int C, int NH)
{
	int t0 = get_global_id(0) * CT_ATT_R, bh = get_global_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C;
	const __global float *base, *dyb, *st, *qt, *dt, *dots;
	float scale = ct_att_scale(hs), s[CT_ATT_R][32], da[CT_ATT_R][32], mx[32], sm[32];
	size_t ko[CT_ATT_R], vo[CT_ATT_R];

	if (t0 >= T || bh >= B * NH)
		return;
	CT_AT(dqkv); CT_AT(dot); CT_AT(dout); CT_AT(qkv); CT_AT(stat); CT_AT(tr);
	base = qkv + (size_t)b * T * C3 + h * hs;
	ct_att_rows(ko, t0, T, C3);
	for (int r = 0; r < CT_ATT_R; r++) {
		vo[r] = ko[r] + 2 * C;
		ko[r] += C;
	}
	dyb = dout + (size_t)b * T * C + h * hs;
	st = stat + (size_t)bh * T * 2;
	dots = dot + (size_t)bh * T;
	qt = tr + (size_t)2 * B * C * T + (size_t)bh * hs * T;	/* q^T, then dout^T */
	dt = qt + (size_t)B * C * T;
	for (int c0 = 0; c0 < hs; c0 += CT_ATT_CH) {
		int nc = min(CT_ATT_CH, hs - c0);
		float ak[CT_ATT_R][CT_ATT_CH], av[CT_ATT_R][CT_ATT_CH];

		for (int r = 0; r < CT_ATT_R; r++)
			for (int i = 0; i < nc; i++) {
				ak[r][i] = 0.0f;
				av[r][i] = 0.0f;
			}
		for (int j = t0; j < T; j += 32) {
			ct_att_dot32(s, base, ko, qt, T, j, hs);
			ct_att_dot32(da, base, vo, dt, T, j, hs);
			ct_att_stat32(mx, sm, st, j, T);
			for (int r = 0; r < CT_ATT_R; r++)
				ct_att_probs32q(s[r], s[r], scale, mx, sm);
			for (int l = 0; l < 32 && j + l < T; l++) {
				const __global float *qq = base + (size_t)(j + l) * C3 + c0;
				const __global float *dy = dyb + (size_t)(j + l) * C + c0;
				float dtl = dots[j + l];

				for (int r = 0; r < CT_ATT_R; r++) {
					float a = s[r][l], g;

					if (j + l < ct_att_row(t0, r, T))
						continue;
					g = ct_att_gp(a, da[r][l], dtl, scale);
					for (int i = 0; i < nc; i++) {
						ak[r][i] = fma(g, qq[i], ak[r][i]);
						av[r][i] = fma(a, dy[i], av[r][i]);
					}
				}
			}
		}
		for (int r = 0; r < CT_ATT_R && t0 + r < T; r++) {
			__global float *d = dqkv + ((size_t)b * T + t0 + r) * C3 + h * hs + c0;

			for (int i = 0; i < nc; i++) {
				d[C + i] = d[C + i] + ak[r][i];
				d[2 * C + i] = d[2 * C + i] + av[r][i];
			}
		}
	}
}
