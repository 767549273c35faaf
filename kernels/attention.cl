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

/* Raw dots of x (hs) with the 32 columns j..j+31 of rowsT (hs rows of T
 * floats, padded: columns past T are read and ignored): lanes are
 * independent fma chains in increasing i, the reference's chain. */
static inline void ct_att_dot32(float *s, const __global float *x,
				const __global float *rowsT, int T, int j, int hs)
{
	float16 a0 = (float16)(0.0f), a1 = (float16)(0.0f);

	for (int i = 0; i < hs; i++) {
		const __global float *r = rowsT + (size_t)i * T + j;
		float16 xi = (float16)(x[i]);

		a0 = fma(xi, vload16(0, r), a0);
		a1 = fma(xi, vload16(0, r + 16), a1);
	}
	vstore16(a0, 0, s);
	vstore16(a1, 0, s + 16);
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

/* One work-item per (t, b*NH + h): out[b,t,h*hs..] and stat of the row. */
__kernel void ct_attn_fwd(CT_BUF(__global, out), CT_BUF(__global, stat),
			  CT_BUF(const __global, qkv), CT_BUF(const __global, kT),
			  int B, int T, int C, int NH)
{
	int t = get_global_id(0), bh = get_global_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C;
	const __global float *q, *base, *kt;
	float scale = ct_att_scale(hs), mx = 0.0f, sum = 0.0f, s[32];

	if (t >= T || bh >= B * NH)
		return;
	CT_AT(out); CT_AT(stat); CT_AT(qkv); CT_AT(kT);
	base = qkv + (size_t)b * T * C3 + h * hs;
	q = base + (size_t)t * C3;
	kt = kT + (size_t)bh * hs * T;
	for (int j = 0; j <= t; j += 32) {
		ct_att_dot32(s, q, kt, T, j, hs);
		for (int l = 0; l < 32 && j + l <= t; l++) {
			float x = s[l] * scale;

			mx = (j + l == 0 || x > mx) ? x : mx;
		}
	}
	for (int j = 0; j <= t; j += 32) {
		ct_att_dot32(s, q, kt, T, j, hs);
		ct_att_probs32(s, s, scale, mx, 1.0f, 0);
		for (int l = 0; l < 32 && j + l <= t; l++)
			sum = sum + s[l];
	}
	for (int c0 = 0; c0 < hs; c0 += CT_ATT_CH) {
		int nc = min(CT_ATT_CH, hs - c0);
		float acc[CT_ATT_CH];

		for (int i = 0; i < nc; i++)
			acc[i] = 0.0f;
		for (int j = 0; j <= t; j += 32) {
			ct_att_dot32(s, q, kt, T, j, hs);
			ct_att_probs32(s, s, scale, mx, sum, 1);
			for (int l = 0; l < 32 && j + l <= t; l++) {
				float a = s[l];
				const __global float *v = base + (size_t)(j + l) * C3 + 2 * C + c0;

				for (int i = 0; i < nc; i++)
					acc[i] = fma(a, v[i], acc[i]);
			}
		}
		for (int i = 0; i < nc; i++)
			out[((size_t)b * T + t) * C + h * hs + c0 + i] = acc[i];
	}
	stat[((size_t)bh * T + t) * 2] = mx;
	stat[((size_t)bh * T + t) * 2 + 1] = sum;
}

/* Backward step 1, one work-item per (t, b*NH + h):
 * dot[bh,t] = sum over t2 <= t of fma(att[t,t2], da[t,t2], acc). */
__kernel void ct_attn_bwd_dot(CT_BUF(__global, dot), CT_BUF(const __global, dout),
			      CT_BUF(const __global, qkv), CT_BUF(const __global, stat),
			      CT_BUF(const __global, tr), int B, int T, int C, int NH)
{
	int t = get_global_id(0), bh = get_global_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C;
	const __global float *q, *dy, *kt, *vt;
	float scale = ct_att_scale(hs), mx, sum, acc = 0.0f, s[32], da[32];

	if (t >= T || bh >= B * NH)
		return;
	CT_AT(dot); CT_AT(dout); CT_AT(qkv); CT_AT(stat); CT_AT(tr);
	q = qkv + ((size_t)b * T + t) * C3 + h * hs;
	dy = dout + ((size_t)b * T + t) * C + h * hs;
	kt = tr + (size_t)bh * hs * T;			/* k^T, then v^T */
	vt = kt + (size_t)B * C * T;
	mx = stat[((size_t)bh * T + t) * 2];
	sum = stat[((size_t)bh * T + t) * 2 + 1];
	for (int j = 0; j <= t; j += 32) {
		ct_att_dot32(s, q, kt, T, j, hs);
		ct_att_dot32(da, dy, vt, T, j, hs);
		ct_att_probs32(s, s, scale, mx, sum, 1);
		for (int l = 0; l < 32 && j + l <= t; l++)
			acc = fma(s[l], da[l], acc);
	}
	dot[(size_t)bh * T + t] = acc;
}

/* g[t,t2] from att[t,t2], the raw da and the row's dot (ct_model.h's
 * order: d = da - dot; d = att * d; g = d * scale). */
static inline float ct_att_gp(float a, float da, float dot, float scale)
{
	float d = da - dot;

	d = a * d;
	return d * scale;
}

/* ct_att_probs32 for 32 queries j..j+31 against one key: each lane with
 * its own row's max and sum from st (T rows of (max, sum)); lanes past T
 * get max 0, sum 1 (their results are not used). */
static inline void ct_att_probs32q(float *pr, const float *s, float scale,
				   const __global float *st, int j, int T)
{
	float mx[32], sm[32];

	for (int l = 0; l < 32; l++) {
		mx[l] = j + l < T ? st[(size_t)(j + l) * 2] : 0.0f;
		sm[l] = j + l < T ? st[(size_t)(j + l) * 2 + 1] : 1.0f;
	}
	for (int h = 0; h < 32; h += 16) {
		float16 e = ct_expf16(vload16(0, s + h) * scale - vload16(0, mx + h));

		vstore16(e / vload16(0, sm + h), 0, pr + h);
	}
}

/* Backward step 2, one work-item per (t, b*NH + h): dq[t] += sum over
 * t2 <= t of fma(g[t,t2], k[t2,i], acc). */
__kernel void ct_attn_bwd_dq(CT_BUF(__global, dqkv), CT_BUF(const __global, dot),
			     CT_BUF(const __global, dout), CT_BUF(const __global, qkv),
			     CT_BUF(const __global, stat), CT_BUF(const __global, tr),
			     int B, int T, int C, int NH)
{
	int t = get_global_id(0), bh = get_global_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C;
	const __global float *q, *dy, *base, *kt, *vt;
	float scale = ct_att_scale(hs), mx, sum, dt, s[32], da[32];
	size_t row;

	if (t >= T || bh >= B * NH)
		return;
	CT_AT(dqkv); CT_AT(dot); CT_AT(dout); CT_AT(qkv); CT_AT(stat); CT_AT(tr);
	base = qkv + (size_t)b * T * C3 + h * hs;
	q = base + (size_t)t * C3;
	dy = dout + ((size_t)b * T + t) * C + h * hs;
	kt = tr + (size_t)bh * hs * T;
	vt = kt + (size_t)B * C * T;
	row = (size_t)bh * T + t;
	mx = stat[row * 2];
	sum = stat[row * 2 + 1];
	dt = dot[row];
	for (int c0 = 0; c0 < hs; c0 += CT_ATT_CH) {
		int nc = min(CT_ATT_CH, hs - c0);
		float acc[CT_ATT_CH];
		__global float *d = dqkv + ((size_t)b * T + t) * C3 + h * hs + c0;

		for (int i = 0; i < nc; i++)
			acc[i] = 0.0f;
		for (int j = 0; j <= t; j += 32) {
			ct_att_dot32(s, q, kt, T, j, hs);
			ct_att_dot32(da, dy, vt, T, j, hs);
			ct_att_probs32(s, s, scale, mx, sum, 1);
			for (int l = 0; l < 32 && j + l <= t; l++) {
				float g = ct_att_gp(s[l], da[l], dt, scale);
				const __global float *k = base + (size_t)(j + l) * C3 + C + c0;

				for (int i = 0; i < nc; i++)
					acc[i] = fma(g, k[i], acc[i]);
			}
		}
		for (int i = 0; i < nc; i++)
			d[i] = d[i] + acc[i];
	}
}

/* Backward step 3, one work-item per (key t2, b*NH + h): dk[t2] and dv[t2]
 * += chains over queries t = t2..T-1 in increasing t of fma(g[t,t2],
 * q[t,i], acc) and fma(att[t,t2], dout[t,i], acc). */
__kernel void ct_attn_bwd_dkv(CT_BUF(__global, dqkv), CT_BUF(const __global, dot),
			      CT_BUF(const __global, dout), CT_BUF(const __global, qkv),
			      CT_BUF(const __global, stat), CT_BUF(const __global, tr),
			      int B, int T, int C, int NH)
{
	int t2 = get_global_id(0), bh = get_global_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C;
	const __global float *k, *v, *base, *dyb, *st, *qt, *dt;
	float scale = ct_att_scale(hs), s[32], da[32];

	if (t2 >= T || bh >= B * NH)
		return;
	CT_AT(dqkv); CT_AT(dot); CT_AT(dout); CT_AT(qkv); CT_AT(stat); CT_AT(tr);
	base = qkv + (size_t)b * T * C3 + h * hs;
	k = base + (size_t)t2 * C3 + C;
	v = base + (size_t)t2 * C3 + 2 * C;
	dyb = dout + (size_t)b * T * C + h * hs;
	st = stat + (size_t)bh * T * 2;
	qt = tr + (size_t)2 * B * C * T + (size_t)bh * hs * T;	/* q^T, then dout^T */
	dt = qt + (size_t)B * C * T;
	for (int c0 = 0; c0 < hs; c0 += CT_ATT_CH) {
		int nc = min(CT_ATT_CH, hs - c0);
		float ak[CT_ATT_CH], av[CT_ATT_CH];
		__global float *d = dqkv + ((size_t)b * T + t2) * C3 + h * hs + c0;

		for (int i = 0; i < nc; i++) {
			ak[i] = 0.0f;
			av[i] = 0.0f;
		}
		for (int j = t2; j < T; j += 32) {
			ct_att_dot32(s, k, qt, T, j, hs);
			ct_att_dot32(da, v, dt, T, j, hs);
			ct_att_probs32q(s, s, scale, st, j, T);
			for (int l = 0; l < 32 && j + l < T; l++) {
				float a = s[l], g = ct_att_gp(a, da[l], dot[(size_t)bh * T + j + l], scale);
				const __global float *qq = base + (size_t)(j + l) * C3 + c0;
				const __global float *dy = dyb + (size_t)(j + l) * C + c0;

				for (int i = 0; i < nc; i++) {
					ak[i] = fma(g, qq[i], ak[i]);
					av[i] = fma(a, dy[i], av[i]);
				}
			}
		}
		for (int i = 0; i < nc; i++) {
			d[C + i] = d[C + i] + ak[i];
			d[2 * C + i] = d[2 * C + i] + av[i];
		}
	}
}
