#ifdef CT_TEST_CONTRACT	/* tests only: prove the self-test sees contraction */
#pragma OPENCL FP_CONTRACT ON
#else
#pragma OPENCL FP_CONTRACT OFF
#endif
/*
 * mm_tiled.cl - the GPU-shaped variant of ct_mm (matmul.cl): the same
 * products with the same bits, through local-memory tiles and register
 * blocks.
 *
 *   out[m*som + n*son] = init + sum over k = 0..K-1 of A[m*sam + k*sak] *
 *                        B[k*sk + n*sn], one fma chain in increasing k
 * with init = bias (bias[m] when bias_row, else bias[n]) or 0, and with
 * accumulate: out = out + chain (the chain from 0).
 *
 * A work-group of TX x TY work-items (TX = BN / RN, TY = BM / RM) computes
 * a BM x BN block of outputs; work-item (tx, ty) owns the RM x RN outputs
 * of rows ty*RM + i and columns tx*RN + j, each in a register. The k range
 * is walked in slices of BK: the group stages the A slice (BM x BK) and the
 * B slice (BK x BN) in local memory, each work-item loading its share with
 * reads that are contiguous across neighbouring work-items along whichever
 * of the operand's strides is 1, and fetching the next slice into
 * registers while the current one is used. Every output continues its own
 * chain slice after slice, one fma per k in increasing k, so the order of
 * each output's operations is the reference's whatever the tile sizes; the
 * last partial slice stops at K (no padded fma ever touches a chain).
 *
 * ct_mm_tiled's sizes are -D options chosen by the host from the device's
 * limits (CT_MMT_BM, CT_MMT_BN, CT_MMT_BK, CT_MMT_RM, CT_MMT_RN; see
 * ct_ocl.c); ct_mm_tiled_m and ct_mm_tiled_s are the same with fixed
 * medium (64 x 64, 4 x 4 per work-item) and small (32 x 32, 2 x 2) tiles
 * for products too small to fill the device with big ones. Both share the code below, whose size arguments are constants
 * once inlined. Launched with local size (TX, TY) over (ceil(N/BN)*TX,
 * ceil(M/BM)*TY).
 */
#ifndef CT_MMT_BM
#define CT_MMT_BM 64
#endif
#ifndef CT_MMT_BN
#define CT_MMT_BN 64
#endif
#ifndef CT_MMT_BK
#define CT_MMT_BK 16
#endif
#ifndef CT_MMT_RM
#define CT_MMT_RM 4
#endif
#ifndef CT_MMT_RN
#define CT_MMT_RN 4
#endif
/* (#pragma unroll below: full unrolling of the loops over a work-item's
 * outputs and shares keeps them in registers; it never changes an output's
 * operations) */
#define CT_MMT_TX (CT_MMT_BN / CT_MMT_RN)
#define CT_MMT_TY (CT_MMT_BM / CT_MMT_RM)
#define CT_MMT_NT (CT_MMT_TX * CT_MMT_TY)
/* The sizes of one variant: tile bm x bn, k slice bk, rm x rn outputs per
 * work-item, tx x ty = nt work-items, la and lb elements of the A and B
 * slices loaded by each (rounded up). */
#define CT_MMT_DIMS const int bm, const int bn, const int bk, const int rm, const int rn
#define CT_MMT_ARGS bm, bn, bk, rm, rn
/* row strides of the staged slices: padded by 4 (keeping 16-byte rows for
 * vector reads) when the owned runs are read four at a time, else by 1 */
#define CT_MMT_LDA (rm % 4 == 0 ? bm + 4 : bm + 1)
#define CT_MMT_LDB (rn % 4 == 0 ? bn + 4 : bn + 1)

/* Fetch this work-item's share (n elements) of a slice of an operand:
 * `width` rows o0.. (of O) of A, or columns of B, by bk values of k from
 * k0 (of K), element (o, k) at src[o*so + k*sk]. Element e = lid + nt*i of
 * the slice is (o e/bk, k e%bk) when so != 1 (k runs contiguous across
 * work-items, as A's rows do), else (o e%width, k e/width); 0 outside
 * the matrix. */
static inline void ct_mmt_fetch(float *r, const __global float *src, int so, int sk,
				int o0, int k0, int O, int K, int lid, int width, int bk,
				int nt, int n)
{
#pragma unroll
	for (int i = 0; i < n; i++) {
		int e = lid + nt * i;
		int o = so != 1 ? e / bk : e % width, kk = so != 1 ? e % bk : e / width;

		r[i] = e < width * bk && o0 + o < O && k0 + kk < K
			? src[(size_t)(o0 + o) * so + (size_t)(k0 + kk) * sk] : 0.0f;
	}
}

/* Store a fetched share into the staged slice dst[k][o] (row stride ld). */
static inline void ct_mmt_put(__local float *dst, int ld, const float *r, int so, int lid,
			      int width, int bk, int nt, int n)
{
#pragma unroll
	for (int i = 0; i < n; i++) {
		int e = lid + nt * i;
		int o = so != 1 ? e / bk : e % width, kk = so != 1 ? e % bk : e / width;

		if (e < width * bk)
			dst[kk * ld + o] = r[i];
	}
}

/* One k step of every owned output: acc = fma(A[m,k], B[k,n], acc). The
 * work-item's rm rows (and rn columns) are contiguous in the tile, read
 * four at a time where rm (rn) is a multiple of 4. */
static inline void ct_mmt_step(float *acc, const __local float *As, const __local float *Bs,
			       int kk, int tx, int ty, CT_MMT_DIMS)
{
	const __local float *ap = As + kk * CT_MMT_LDA + ty * rm;
	const __local float *bp = Bs + kk * CT_MMT_LDB + tx * rn;
	float a[16], b[16];

	if (rm % 4 == 0) {
#pragma unroll
		for (int i = 0; i < rm; i += 4)
			vstore4(vload4(0, ap + i), 0, a + i);
	} else {
#pragma unroll
		for (int i = 0; i < rm; i++)
			a[i] = ap[i];
	}
	if (rn % 4 == 0) {
#pragma unroll
		for (int j = 0; j < rn; j += 4)
			vstore4(vload4(0, bp + j), 0, b + j);
	} else {
#pragma unroll
		for (int j = 0; j < rn; j++)
			b[j] = bp[j];
	}
#pragma unroll
	for (int x = 0; x < rm * rn; x++)
		acc[x] = fma(a[x / rn], b[x % rn], acc[x]);
}

/* The whole product for one work-group (see the top of the file); acc
 * (rm*rn), ra and rb (the fetch shares) are the caller's private arrays. */
static inline void ct_mmt_run(const __global float *A, int sam, int sak,
			      const __global float *B, int sk, int sn,
			      const __global float *bias, int has_bias, int bias_row,
			      __global float *out, int som, int son,
			      int M, int N, int K, int accumulate, __local float *As,
			      __local float *Bs, float *acc, float *ra, float *rb, CT_MMT_DIMS)
{
	const int txn = bn / rn, nt = txn * (bm / rm);
	const int la = (bm * bk + nt - 1) / nt, lb = (bk * bn + nt - 1) / nt;
	int tx = get_local_id(0), ty = get_local_id(1), lid = ty * txn + tx;
	int n0 = get_group_id(0) * bn, m0 = get_group_id(1) * bm;

#pragma unroll
	for (int x = 0; x < rm * rn; x++) {
		int m = min(m0 + ty * rm + x / rn, M - 1), n = min(n0 + tx * rn + x % rn, N - 1);

		acc[x] = !accumulate && has_bias ? bias[bias_row ? m : n] : 0.0f;
	}
	for (int k0 = 0; k0 < K; k0 += bk) {
		int kn = min(bk, K - k0);

		if (k0 == 0) {
			ct_mmt_fetch(ra, A, sam, sak, m0, 0, M, K, lid, bm, bk, nt, la);
			ct_mmt_fetch(rb, B, sn, sk, n0, 0, N, K, lid, bn, bk, nt, lb);
		}
		ct_mmt_put(As, CT_MMT_LDA, ra, sam, lid, bm, bk, nt, la);
		ct_mmt_put(Bs, CT_MMT_LDB, rb, sn, lid, bn, bk, nt, lb);
		barrier(CLK_LOCAL_MEM_FENCE);
		if (k0 + bk < K) {	/* the next slice, while this one is used */
			ct_mmt_fetch(ra, A, sam, sak, m0, k0 + bk, M, K, lid, bm, bk, nt, la);
			ct_mmt_fetch(rb, B, sn, sk, n0, k0 + bk, N, K, lid, bn, bk, nt, lb);
		}
		if (kn == bk) {
#pragma unroll
			for (int kk = 0; kk < bk; kk++)
				ct_mmt_step(acc, As, Bs, kk, tx, ty, CT_MMT_ARGS);
		} else {
			for (int kk = 0; kk < kn; kk++)
				ct_mmt_step(acc, As, Bs, kk, tx, ty, CT_MMT_ARGS);
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
#pragma unroll
	for (int x = 0; x < rm * rn; x++) {
		int m = m0 + ty * rm + x / rn, n = n0 + tx * rn + x % rn;
		__global float *o = out + (size_t)m * som + (size_t)n * son;

		if (m < M && n < N)
			*o = accumulate ? *o + acc[x] : acc[x];
	}
}

#define CT_MMT_TX (CT_MMT_BN / CT_MMT_RN)
#define CT_MMT_TY (CT_MMT_BM / CT_MMT_RM)
#define CT_MMT_NT (CT_MMT_TX * CT_MMT_TY)
#define CT_MMT_LA ((CT_MMT_BM * CT_MMT_BK + CT_MMT_NT - 1) / CT_MMT_NT)
#define CT_MMT_LB ((CT_MMT_BK * CT_MMT_BN + CT_MMT_NT - 1) / CT_MMT_NT)

__kernel __attribute__((reqd_work_group_size(CT_MMT_TX, CT_MMT_TY, 1)))
void ct_mm_tiled(const __global float *A, ulong aoff, int sam, int sak,
		 const __global float *B, ulong boff, int sk, int sn,
		 const __global float *bias, ulong biasoff, int has_bias, int bias_row,
		 __global float *out, ulong ooff, int som, int son,
		 int M, int N, int K, int accumulate)
{
	__local float As[CT_MMT_BK * (CT_MMT_BM + 4)] __attribute__((aligned(16)));
	__local float Bs[CT_MMT_BK * (CT_MMT_BN + 4)] __attribute__((aligned(16)));
	float acc[CT_MMT_RM * CT_MMT_RN], ra[CT_MMT_LA], rb[CT_MMT_LB];

	ct_mmt_run(A + aoff, sam, sak, B + boff, sk, sn, bias + biasoff, has_bias, bias_row,
		   out + ooff, som, son, M, N, K, accumulate, As, Bs, acc, ra, rb,
		   CT_MMT_BM, CT_MMT_BN, CT_MMT_BK, CT_MMT_RM, CT_MMT_RN);
}

/* Medium tiles: 64 x 64 outputs per group of 16 x 16 (4 x 4 each). */
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void ct_mm_tiled_m(const __global float *A, ulong aoff, int sam, int sak,
		   const __global float *B, ulong boff, int sk, int sn,
		   const __global float *bias, ulong biasoff, int has_bias, int bias_row,
		   __global float *out, ulong ooff, int som, int son,
		   int M, int N, int K, int accumulate)
{
	__local float As[16 * 68] __attribute__((aligned(16)));
	__local float Bs[16 * 68] __attribute__((aligned(16)));
	float acc[16], ra[4], rb[4];

	ct_mmt_run(A + aoff, sam, sak, B + boff, sk, sn, bias + biasoff, has_bias, bias_row,
		   out + ooff, som, son, M, N, K, accumulate, As, Bs, acc, ra, rb,
		   64, 64, 16, 4, 4);
}

/* Small tiles: 32 x 32 outputs per group of 16 x 16, k slices of 16. */
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void ct_mm_tiled_s(const __global float *A, ulong aoff, int sam, int sak,
		   const __global float *B, ulong boff, int sk, int sn,
		   const __global float *bias, ulong biasoff, int has_bias, int bias_row,
		   __global float *out, ulong ooff, int som, int son,
		   int M, int N, int K, int accumulate)
{
	__local float As[16 * 33], Bs[16 * 33];	/* rm = rn = 2: strides 33 */
	float acc[4], ra[2], rb[2];

	ct_mmt_run(A + aoff, sam, sak, B + boff, sk, sn, bias + biasoff, has_bias, bias_row,
		   out + ooff, som, son, M, N, K, accumulate, As, Bs, acc, ra, rb,
		   32, 32, 16, 2, 2);
}
