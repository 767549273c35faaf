#ifdef CT_TEST_CONTRACT	/* tests only: prove the self-test sees contraction */
#pragma OPENCL FP_CONTRACT ON
#else
#pragma OPENCL FP_CONTRACT OFF
#endif
/*
 * attention.cl - causal self-attention without the (B,NH,T,T) matrices: the
 * device twins of ct_attention_forward_recompute() and
 * ct_attention_backward_recompute() (lib/ct_attention.c, contract in
 * ct_model.h), bit-identical to them.
 *
 * Forward keeps per query row the softmax max and sum (stat (B,NH,T,2));
 * backward recomputes each probability from them. Every dot product is one
 * fma chain in increasing channel order; four of them (four keys, or four
 * queries) run side by side in the lanes of a float4, each lane its own
 * chain, so vectorising changes no result. Accumulators over keys or
 * queries are kept in private arrays of CT_ATT_CH channels; heads wider than
 * that are done CT_ATT_CH channels at a time (recomputing the scores).
 */

#define CT_ATT_CH 64

/* Raw dots of x (hs) with rows r0 + (j + l) * stride for lanes l < n
 * (n <= 4; missing lanes repeat the last row and are ignored). */
static inline float4 ct_att_dot4(const __global float *x, const __global float *r0,
				 size_t stride, int j, int n, int hs)
{
	const __global float *a = r0 + (size_t)j * stride;
	const __global float *b = r0 + (size_t)(j + min(1, n - 1)) * stride;
	const __global float *c = r0 + (size_t)(j + min(2, n - 1)) * stride;
	const __global float *d = r0 + (size_t)(j + min(3, n - 1)) * stride;
	float4 acc = (float4)(0.0f);

	for (int i = 0; i < hs; i++)
		acc = fma((float4)(x[i]), (float4)(a[i], b[i], c[i], d[i]), acc);
	return acc;
}

static inline float ct_att_lane(float4 v, int l)
{
	return l == 0 ? v.s0 : l == 1 ? v.s1 : l == 2 ? v.s2 : v.s3;
}

static inline float ct_att_scale(int hs)
{
	float s = sqrt((float)hs);

	return 1.0f / s;
}

/* One work-item per (t, b*NH + h): out[b,t,h*hs..] and stat of the row. */
__kernel void ct_attn_fwd(CT_BUF(__global, out), CT_BUF(__global, stat),
			  CT_BUF(const __global, qkv), int B, int T, int C, int NH)
{
	int t = get_global_id(0), bh = get_global_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C;
	const __global float *q, *base;
	float scale = ct_att_scale(hs), mx = 0.0f, sum = 0.0f;

	if (t >= T || bh >= B * NH)
		return;
	CT_AT(out); CT_AT(stat); CT_AT(qkv);
	base = qkv + (size_t)b * T * C3 + h * hs;
	q = base + (size_t)t * C3;
	for (int j = 0; j <= t; j += 4) {
		float4 s = ct_att_dot4(q, base + C, C3, j, min(4, t + 1 - j), hs);

		for (int l = 0; l < 4 && j + l <= t; l++) {
			float x = ct_att_lane(s, l) * scale;

			mx = (j + l == 0 || x > mx) ? x : mx;
		}
	}
	for (int j = 0; j <= t; j += 4) {
		float4 s = ct_att_dot4(q, base + C, C3, j, min(4, t + 1 - j), hs);

		for (int l = 0; l < 4 && j + l <= t; l++)
			sum = sum + ct_expf(ct_att_lane(s, l) * scale - mx);
	}
	for (int c0 = 0; c0 < hs; c0 += CT_ATT_CH) {
		int nc = min(CT_ATT_CH, hs - c0);
		float acc[CT_ATT_CH];

		for (int i = 0; i < nc; i++)
			acc[i] = 0.0f;
		for (int j = 0; j <= t; j += 4) {
			float4 s = ct_att_dot4(q, base + C, C3, j, min(4, t + 1 - j), hs);

			for (int l = 0; l < 4 && j + l <= t; l++) {
				float a = ct_expf(ct_att_lane(s, l) * scale - mx) / sum;
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
			      int B, int T, int C, int NH)
{
	int t = get_global_id(0), bh = get_global_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C;
	const __global float *q, *dy, *base;
	float scale = ct_att_scale(hs), mx, sum, acc = 0.0f;

	if (t >= T || bh >= B * NH)
		return;
	CT_AT(dot); CT_AT(dout); CT_AT(qkv); CT_AT(stat);
	base = qkv + (size_t)b * T * C3 + h * hs;
	q = base + (size_t)t * C3;
	dy = dout + ((size_t)b * T + t) * C + h * hs;
	mx = stat[((size_t)bh * T + t) * 2];
	sum = stat[((size_t)bh * T + t) * 2 + 1];
	for (int j = 0; j <= t; j += 4) {
		int n = min(4, t + 1 - j);
		float4 s = ct_att_dot4(q, base + C, C3, j, n, hs);
		float4 da = ct_att_dot4(dy, base + 2 * C, C3, j, n, hs);

		for (int l = 0; l < n; l++) {
			float a = ct_expf(ct_att_lane(s, l) * scale - mx) / sum;

			acc = fma(a, ct_att_lane(da, l), acc);
		}
	}
	dot[(size_t)bh * T + t] = acc;
}

/* g[t,t2] and att[t,t2] from the raw score s, the raw da and the row's
 * stat and dot (ct_model.h's order: d = da - dot; d = att * d; g = d * scale). */
static inline float ct_att_g(float s, float da, float mx, float sum, float dot,
			     float scale, float *a)
{
	float d;

	*a = ct_expf(s * scale - mx) / sum;
	d = da - dot;
	d = *a * d;
	return d * scale;
}

/* Backward step 2, one work-item per (t, b*NH + h): dq[t] += sum over
 * t2 <= t of fma(g[t,t2], k[t2,i], acc). */
__kernel void ct_attn_bwd_dq(CT_BUF(__global, dqkv), CT_BUF(const __global, dot),
			     CT_BUF(const __global, dout), CT_BUF(const __global, qkv),
			     CT_BUF(const __global, stat), int B, int T, int C, int NH)
{
	int t = get_global_id(0), bh = get_global_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C;
	const __global float *q, *dy, *base;
	float scale = ct_att_scale(hs), mx, sum, dt;
	size_t row;

	if (t >= T || bh >= B * NH)
		return;
	CT_AT(dqkv); CT_AT(dot); CT_AT(dout); CT_AT(qkv); CT_AT(stat);
	base = qkv + (size_t)b * T * C3 + h * hs;
	q = base + (size_t)t * C3;
	dy = dout + ((size_t)b * T + t) * C + h * hs;
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
		for (int j = 0; j <= t; j += 4) {
			int n = min(4, t + 1 - j);
			float4 s = ct_att_dot4(q, base + C, C3, j, n, hs);
			float4 da = ct_att_dot4(dy, base + 2 * C, C3, j, n, hs);

			for (int l = 0; l < n; l++) {
				float a, g = ct_att_g(ct_att_lane(s, l), ct_att_lane(da, l),
						      mx, sum, dt, scale, &a);
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
			      CT_BUF(const __global, stat), int B, int T, int C, int NH)
{
	int t2 = get_global_id(0), bh = get_global_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C;
	const __global float *k, *v, *base, *dyb;
	const __global float *st;
	float scale = ct_att_scale(hs);

	if (t2 >= T || bh >= B * NH)
		return;
	CT_AT(dqkv); CT_AT(dot); CT_AT(dout); CT_AT(qkv); CT_AT(stat);
	base = qkv + (size_t)b * T * C3 + h * hs;
	k = base + (size_t)t2 * C3 + C;
	v = base + (size_t)t2 * C3 + 2 * C;
	dyb = dout + (size_t)b * T * C + h * hs;
	st = stat + (size_t)bh * T * 2;
	for (int c0 = 0; c0 < hs; c0 += CT_ATT_CH) {
		int nc = min(CT_ATT_CH, hs - c0);
		float ak[CT_ATT_CH], av[CT_ATT_CH];
		__global float *d = dqkv + ((size_t)b * T + t2) * C3 + h * hs + c0;

		for (int i = 0; i < nc; i++) {
			ak[i] = 0.0f;
			av[i] = 0.0f;
		}
		for (int j = t2; j < T; j += 4) {
			int n = min(4, T - j);
			float4 s = ct_att_dot4(k, base, C3, j, n, hs);
			float4 da = ct_att_dot4(v, dyb, C, j, n, hs);

			for (int l = 0; l < n; l++) {
				size_t r = (size_t)bh * T + j + l;
				float a, g = ct_att_g(ct_att_lane(s, l), ct_att_lane(da, l),
						      st[(j + l) * 2], st[(j + l) * 2 + 1],
						      dot[r], scale, &a);
				const __global float *qt = base + (size_t)(j + l) * C3 + c0;
				const __global float *dy = dyb + (size_t)(j + l) * C + c0;

				for (int i = 0; i < nc; i++) {
					ak[i] = fma(g, qt[i], ak[i]);
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
