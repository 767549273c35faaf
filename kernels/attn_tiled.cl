#ifdef CT_TEST_CONTRACT	/* tests only: prove the self-test sees contraction */
#pragma OPENCL FP_CONTRACT ON
#else
#pragma OPENCL FP_CONTRACT OFF
#endif
/*
 * attn_tiled.cl - the GPU-shaped variant of attention.cl's recompute
 * kernels: the same outputs with the same bits (each one the reference's
 * chain of operations in the reference's order), computed by work-groups
 * of CT_ATG_NT work-items over tiles of CT_ATG_B rows staged in local
 * memory, for heads of at most CT_ATG_HS channels.
 *
 * A tile pair (X rows x0.., Y rows y0..) gives the CT_ATG_B x CT_ATG_B raw
 * dots X[x] . Y[y] (one fma chain in increasing channel, the reference's
 * att_scores / dot chain; fma(a, b, c) = fma(b, a, c)), spread over the
 * group (each work-item four of them), then each derived value (p, e, g)
 * exactly as the reference computes it. Chains that run over keys or
 * queries (the max, the sum, dot, out, dq, dk, dv) are each owned by one
 * work-item, which walks the tile's columns in increasing order, tiles in
 * increasing order, skipping (not adding zeros for) the masked ones, so
 * every output sees the reference's operations in the reference's order.
 *
 *   ct_atg_fwd: group (query tile, b*NH + h): max, sum, out and stat.
 *   ct_atg_dq:  group (query tile, b*NH + h): dot of each row (written
 *               for ct_atg_dkv), then dq += the chain over keys.
 *   ct_atg_dkv: group (key tile, b*NH + h): dk, dv += chains over queries.
 * Launched with local size CT_ATG_NT over (tiles * CT_ATG_NT, B*NH).
 */
#define CT_ATG_B 32			/* rows per tile */
#define CT_ATG_HS 64			/* widest head */
#define CT_ATG_NT 256			/* work-items per group */
#define CT_ATG_LD (CT_ATG_HS + 1)	/* local row stride (no bank conflicts) */
#define CT_ATG_PL (CT_ATG_B + 1)
#define CT_ATG_SPT (CT_ATG_B * CT_ATG_B / CT_ATG_NT)	/* dots per work-item */
#define CT_ATG_OPT (CT_ATG_B * CT_ATG_HS / CT_ATG_NT)	/* outputs per work-item */
/* (the loops over a work-item's dots and outputs are unrolled so that
 * they stay in registers) */

/* dst[r][i] = src[(r0 + r) * ld + i] for r < CT_ATG_B, i < hs (0 past T). */
static inline void ct_atg_load(__local float *dst, const __global float *src, int ld,
			       int r0, int T, int hs, int lid)
{
	for (int e = lid; e < CT_ATG_B * hs; e += CT_ATG_NT) {
		int r = e / hs, i = e % hs;

		dst[r * CT_ATG_LD + i] = r0 + r < T ? src[(size_t)(r0 + r) * ld + i] : 0.0f;
	}
}

/* Work-item lid's dots s[j] = X[x_j] . Y[y] (x_j = lid / B + j * NT / B,
 * y = lid % B), each an fma chain over i < hs from 0. */
static inline void ct_atg_dots(float *s, const __local float *X, const __local float *Y,
			       int hs, int lid)
{
	int y = lid % CT_ATG_B, x0 = lid / CT_ATG_B;

#pragma unroll
	for (int j = 0; j < CT_ATG_SPT; j++)
		s[j] = 0.0f;
	for (int i = 0; i < hs; i++) {
		float yi = Y[y * CT_ATG_LD + i];

#pragma unroll
		for (int j = 0; j < CT_ATG_SPT; j++)
			s[j] = fma(X[(x0 + j * (CT_ATG_NT / CT_ATG_B)) * CT_ATG_LD + i], yi, s[j]);
	}
}

/* Row x of a tile's dot pairs for work-item lid's j-th dot. */
static inline int ct_atg_x(int lid, int j)
{
	return lid / CT_ATG_B + j * (CT_ATG_NT / CT_ATG_B);
}

/* One row's chain over a tile of the other side: acc = fma(W[x][y],
 * R[y][i], acc) for y ascending with lo <= y < hi. */
static inline float ct_atg_chain(float acc, const __local float *W, const __local float *R,
				 int x, int i, int lo, int hi)
{
	for (int y = lo; y < hi; y++)
		acc = fma(W[x * CT_ATG_PL + y], R[y * CT_ATG_LD + i], acc);
	return acc;
}

/* The work-item's outputs (row x, channel i) of a query tile at q0 each
 * advance their chain over the key tile at k0: keys up to the row's own. */
static inline void ct_atg_causal(float *acc, const __local float *W, const __local float *R,
				 int hs, int lid, int q0, int k0)
{
#pragma unroll
	for (int o = 0; o < CT_ATG_OPT; o++) {
		int e = lid + o * CT_ATG_NT, x = e / hs, i = e % hs;

		if (x < CT_ATG_B)
			acc[o] = ct_atg_chain(acc[o], W, R, x, i, 0, min(CT_ATG_B, q0 + x - k0 + 1));
	}
}

/* Forward. Group (query tile qt, bh): rows t = qt*B + x. Three sweeps
 * over the key tiles 0..qt recompute the scores: the max, the sum of the
 * exponentials, then out = the chain of p * v. */
__kernel __attribute__((reqd_work_group_size(CT_ATG_NT, 1, 1)))
void ct_atg_fwd(CT_BUF(__global, out), CT_BUF(__global, stat), CT_BUF(const __global, qkv),
		int B, int T, int C, int NH)
{
	__local float Qs[CT_ATG_B * CT_ATG_LD], Ks[CT_ATG_B * CT_ATG_LD];
	__local float Vs[CT_ATG_B * CT_ATG_LD], Ps[CT_ATG_B * CT_ATG_PL];
	__local float mxs[CT_ATG_B], sms[CT_ATG_B];
	int lid = get_local_id(0), qt = get_group_id(0), bh = get_group_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C, q0 = qt * CT_ATG_B;
	float scale = ct_att_scale(hs), s[CT_ATG_SPT], acc[CT_ATG_OPT];
	const __global float *base;

	CT_AT(out); CT_AT(stat); CT_AT(qkv);
	base = qkv + (size_t)b * T * C3 + h * hs;
	ct_atg_load(Qs, base, C3, q0, T, hs, lid);
	for (int pass = 0; pass < 3; pass++) {
#pragma unroll
		for (int o = 0; o < CT_ATG_OPT; o++)
			acc[o] = 0.0f;
		for (int k0 = 0; k0 <= q0; k0 += CT_ATG_B) {
			barrier(CLK_LOCAL_MEM_FENCE);
			ct_atg_load(Ks, base + C, C3, k0, T, hs, lid);
			if (pass == 2)
				ct_atg_load(Vs, base + 2 * C, C3, k0, T, hs, lid);
			barrier(CLK_LOCAL_MEM_FENCE);
			ct_atg_dots(s, Qs, Ks, hs, lid);
#pragma unroll
			for (int j = 0; j < CT_ATG_SPT; j++) {	/* x: query, y: key */
				int x = ct_atg_x(lid, j), y = lid % CT_ATG_B;
				float v = s[j] * scale;

				if (pass == 1)
					v = ct_expf(v - mxs[x]);
				else if (pass == 2)
					v = ct_expf(v - mxs[x]) / sms[x];
				Ps[x * CT_ATG_PL + y] = v;
			}
			barrier(CLK_LOCAL_MEM_FENCE);
			if (pass < 2 && lid < CT_ATG_B) {	/* the row's max or sum */
				int x = lid, hi = min(CT_ATG_B, q0 + x - k0 + 1);
				float m = k0 == 0 ? 0.0f : (pass == 0 ? mxs[x] : sms[x]);

				for (int y = 0; y < hi; y++) {
					float v = Ps[x * CT_ATG_PL + y];

					if (pass == 0)
						m = (k0 + y == 0 || v > m) ? v : m;
					else
						m = m + v;
				}
				if (pass == 0)
					mxs[x] = m;
				else
					sms[x] = m;
			} else if (pass == 2) {
				ct_atg_causal(acc, Ps, Vs, hs, lid, q0, k0);
			}
		}
	}
#pragma unroll
	for (int o = 0; o < CT_ATG_OPT; o++) {
		int e = lid + o * CT_ATG_NT, x = e / hs, i = e % hs;

		if (x < CT_ATG_B && q0 + x < T)
			out[((size_t)b * T + q0 + x) * C + h * hs + i] = acc[o];
	}
	if (lid < CT_ATG_B && q0 + lid < T) {
		stat[((size_t)bh * T + q0 + lid) * 2] = mxs[lid];
		stat[((size_t)bh * T + q0 + lid) * 2 + 1] = sms[lid];
	}
}

/* Backward, query side. Group (query tile, bh): sweep 1 over the key
 * tiles gives each row's dot = the chain of p * da (written to dot for
 * ct_atg_dkv), sweep 2 the g's and dq += the chain of g * k. */
__kernel __attribute__((reqd_work_group_size(CT_ATG_NT, 1, 1)))
void ct_atg_dq(CT_BUF(__global, dqkv), CT_BUF(__global, dot), CT_BUF(const __global, dout),
	       CT_BUF(const __global, qkv), CT_BUF(const __global, stat),
	       int B, int T, int C, int NH)
{
	__local float Qs[CT_ATG_B * CT_ATG_LD], Ks[CT_ATG_B * CT_ATG_LD];
	__local float Ys[CT_ATG_B * CT_ATG_LD], Vs[CT_ATG_B * CT_ATG_LD];
	__local float Ps[CT_ATG_B * CT_ATG_PL], Ds[CT_ATG_B * CT_ATG_PL];
	__local float mxs[CT_ATG_B], sms[CT_ATG_B], dts[CT_ATG_B];
	int lid = get_local_id(0), qt = get_group_id(0), bh = get_group_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C, q0 = qt * CT_ATG_B;
	float scale = ct_att_scale(hs), s[CT_ATG_SPT], da[CT_ATG_SPT], acc[CT_ATG_OPT];
	const __global float *base, *dyb;

	CT_AT(dqkv); CT_AT(dot); CT_AT(dout); CT_AT(qkv); CT_AT(stat);
	base = qkv + (size_t)b * T * C3 + h * hs;
	dyb = dout + (size_t)b * T * C + h * hs;
	ct_atg_load(Qs, base, C3, q0, T, hs, lid);
	ct_atg_load(Ys, dyb, C, q0, T, hs, lid);
	if (lid < CT_ATG_B) {
		mxs[lid] = q0 + lid < T ? stat[((size_t)bh * T + q0 + lid) * 2] : 0.0f;
		sms[lid] = q0 + lid < T ? stat[((size_t)bh * T + q0 + lid) * 2 + 1] : 1.0f;
		dts[lid] = 0.0f;
	}
	for (int pass = 0; pass < 2; pass++) {
#pragma unroll
		for (int o = 0; o < CT_ATG_OPT; o++)
			acc[o] = 0.0f;
		for (int k0 = 0; k0 <= q0; k0 += CT_ATG_B) {
			barrier(CLK_LOCAL_MEM_FENCE);
			ct_atg_load(Ks, base + C, C3, k0, T, hs, lid);
			ct_atg_load(Vs, base + 2 * C, C3, k0, T, hs, lid);
			barrier(CLK_LOCAL_MEM_FENCE);
			ct_atg_dots(s, Qs, Ks, hs, lid);
			ct_atg_dots(da, Ys, Vs, hs, lid);
#pragma unroll
			for (int j = 0; j < CT_ATG_SPT; j++) {	/* x: query, y: key */
				int x = ct_atg_x(lid, j), y = lid % CT_ATG_B;
				float p = ct_expf(s[j] * scale - mxs[x]) / sms[x];

				Ps[x * CT_ATG_PL + y] = p;
				Ds[x * CT_ATG_PL + y] = pass == 0 ? da[j]
					: ct_att_gp(p, da[j], dts[x], scale);
			}
			barrier(CLK_LOCAL_MEM_FENCE);
			if (pass == 0 && lid < CT_ATG_B) {
				int x = lid, hi = min(CT_ATG_B, q0 + x - k0 + 1);
				float a = dts[x];

				for (int y = 0; y < hi; y++)
					a = fma(Ps[x * CT_ATG_PL + y], Ds[x * CT_ATG_PL + y], a);
				dts[x] = a;
			} else if (pass == 1) {
				ct_atg_causal(acc, Ds, Ks, hs, lid, q0, k0);
			}
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
#pragma unroll
	for (int o = 0; o < CT_ATG_OPT; o++) {
		int e = lid + o * CT_ATG_NT, x = e / hs, i = e % hs;
		__global float *d = dqkv + ((size_t)b * T + q0 + x) * C3 + h * hs + i;

		if (x < CT_ATG_B && q0 + x < T)
			*d = *d + acc[o];
	}
	if (lid < CT_ATG_B && q0 + lid < T)
		dot[(size_t)bh * T + q0 + lid] = dts[lid];
}

/* Backward, key side. Group (key tile, bh): rows t2 = kt*B + x; over the
 * query tiles kt.. the p's and g's, then dk += the chain of g * q and
 * dv += the chain of p * dout, queries t >= t2 in increasing order. */
__kernel __attribute__((reqd_work_group_size(CT_ATG_NT, 1, 1)))
void ct_atg_dkv(CT_BUF(__global, dqkv), CT_BUF(const __global, dot),
		CT_BUF(const __global, dout), CT_BUF(const __global, qkv),
		CT_BUF(const __global, stat), int B, int T, int C, int NH)
{
	__local float Qs[CT_ATG_B * CT_ATG_LD], Ks[CT_ATG_B * CT_ATG_LD];
	__local float Ys[CT_ATG_B * CT_ATG_LD], Vs[CT_ATG_B * CT_ATG_LD];
	__local float Ps[CT_ATG_B * CT_ATG_PL], Gs[CT_ATG_B * CT_ATG_PL];
	__local float mxs[CT_ATG_B], sms[CT_ATG_B], dts[CT_ATG_B];
	int lid = get_local_id(0), kt = get_group_id(0), bh = get_group_id(1);
	int b = bh / NH, h = bh % NH, hs = C / NH, C3 = 3 * C, k0 = kt * CT_ATG_B;
	float scale = ct_att_scale(hs), s[CT_ATG_SPT], da[CT_ATG_SPT];
	float ak[CT_ATG_OPT], av[CT_ATG_OPT];
	const __global float *base, *dyb;

	CT_AT(dqkv); CT_AT(dot); CT_AT(dout); CT_AT(qkv); CT_AT(stat);
	base = qkv + (size_t)b * T * C3 + h * hs;
	dyb = dout + (size_t)b * T * C + h * hs;
	ct_atg_load(Ks, base + C, C3, k0, T, hs, lid);
	ct_atg_load(Vs, base + 2 * C, C3, k0, T, hs, lid);
#pragma unroll
	for (int o = 0; o < CT_ATG_OPT; o++) {
		ak[o] = 0.0f;
		av[o] = 0.0f;
	}
	for (int q0 = k0; q0 < T; q0 += CT_ATG_B) {
		barrier(CLK_LOCAL_MEM_FENCE);
		ct_atg_load(Qs, base, C3, q0, T, hs, lid);
		ct_atg_load(Ys, dyb, C, q0, T, hs, lid);
		if (lid < CT_ATG_B) {
			size_t r = (size_t)bh * T + q0 + lid;

			mxs[lid] = q0 + lid < T ? stat[r * 2] : 0.0f;
			sms[lid] = q0 + lid < T ? stat[r * 2 + 1] : 1.0f;
			dts[lid] = q0 + lid < T ? dot[r] : 0.0f;
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		ct_atg_dots(s, Ks, Qs, hs, lid);
		ct_atg_dots(da, Vs, Ys, hs, lid);
#pragma unroll
		for (int j = 0; j < CT_ATG_SPT; j++) {	/* x: key, y: query */
			int x = ct_atg_x(lid, j), y = lid % CT_ATG_B;
			float p = ct_expf(s[j] * scale - mxs[y]) / sms[y];

			Ps[x * CT_ATG_PL + y] = p;
			Gs[x * CT_ATG_PL + y] = ct_att_gp(p, da[j], dts[y], scale);
		}
		barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
		for (int o = 0; o < CT_ATG_OPT; o++) {
			int e = lid + o * CT_ATG_NT, x = e / hs, i = e % hs;
			/* queries t = q0 + y with t >= k0 + x and t < T */
			int lo = max(0, k0 + x - q0), hi = min(CT_ATG_B, T - q0);

			if (x < CT_ATG_B) {
				ak[o] = ct_atg_chain(ak[o], Gs, Qs, x, i, lo, hi);
				av[o] = ct_atg_chain(av[o], Ps, Ys, x, i, lo, hi);
			}
		}
	}
#pragma unroll
	for (int o = 0; o < CT_ATG_OPT; o++) {
		int e = lid + o * CT_ATG_NT, x = e / hs, i = e % hs;
		__global float *d = dqkv + ((size_t)b * T + k0 + x) * C3 + h * hs + i;

		if (x < CT_ATG_B && k0 + x < T) {
			d[C] = d[C] + ak[o];
			d[2 * C] = d[2 * C] + av[o];
		}
	}
}
