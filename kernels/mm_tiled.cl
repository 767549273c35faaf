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
/* Full unrolling of the loops over a work-item's outputs and shares keeps
 * them in registers; it never changes an output's operations. (An earlier
 * form of this kernel, unrolled, gave NaNs on PoCL 3.1; this one gives
 * the reference's bits with and without the hints.) */
#define CT_MMT_UNROLL _Pragma("unroll")
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

/* Fetch this work-item's share of the A slice at k0 into ra: element e =
 * lid + nt*i of the slice is (row e/bk, k e%bk) when A's k stride is 1,
 * else (row e%bm, k e/bm); 0 outside the matrix. */
static inline void ct_mmt_fetch_a(float *ra, const __global float *A, int sam, int sak,
				  int m0, int k0, int M, int K, int lid, CT_MMT_DIMS)
{
	const int nt = (bn / rn) * (bm / rm), la = (bm * bk + nt - 1) / nt;

	CT_MMT_UNROLL
	for (int i = 0; i < la; i++) {
		int e = lid + nt * i;
		int r = sak == 1 ? e / bk : e % bm, kk = sak == 1 ? e % bk : e / bm;
		int m = m0 + r, k = k0 + kk;

		ra[i] = e < bm * bk && m < M && k < K ? A[(size_t)m * sam + (size_t)k * sak]
						      : 0.0f;
	}
}

/* The same for the B slice: element e is (k e/bn, column e%bn) when B's n
 * stride is 1, else (k e%bk, column e/bk). */
static inline void ct_mmt_fetch_b(float *rb, const __global float *B, int sk, int sn,
				  int n0, int k0, int N, int K, int lid, CT_MMT_DIMS)
{
	const int nt = (bn / rn) * (bm / rm), lb = (bk * bn + nt - 1) / nt;

	CT_MMT_UNROLL
	for (int i = 0; i < lb; i++) {
		int e = lid + nt * i;
		int kk = sn == 1 ? e / bn : e % bk, c = sn == 1 ? e % bn : e / bk;
		int n = n0 + c, k = k0 + kk;

		rb[i] = e < bk * bn && n < N && k < K ? B[(size_t)k * sk + (size_t)n * sn]
						      : 0.0f;
	}
}

/* Store the fetched shares into As[k][row] and Bs[k][column]. */
static inline void ct_mmt_stage(__local float *As, __local float *Bs, const float *ra,
				const float *rb, int sak, int sn, int lid, CT_MMT_DIMS)
{
	const int nt = (bn / rn) * (bm / rm);
	const int la = (bm * bk + nt - 1) / nt, lb = (bk * bn + nt - 1) / nt;

	CT_MMT_UNROLL
	for (int i = 0; i < la; i++) {
		int e = lid + nt * i;
		int r = sak == 1 ? e / bk : e % bm, kk = sak == 1 ? e % bk : e / bm;

		if (e < bm * bk)
			As[kk * CT_MMT_LDA + r] = ra[i];
	}
	CT_MMT_UNROLL
	for (int i = 0; i < lb; i++) {
		int e = lid + nt * i;
		int kk = sn == 1 ? e / bn : e % bk, c = sn == 1 ? e % bn : e / bk;

		if (e < bk * bn)
			Bs[kk * CT_MMT_LDB + c] = rb[i];
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
		CT_MMT_UNROLL
		for (int i = 0; i < rm; i += 4)
			vstore4(vload4(0, ap + i), 0, a + i);
	} else {
		CT_MMT_UNROLL
		for (int i = 0; i < rm; i++)
			a[i] = ap[i];
	}
	if (rn % 4 == 0) {
		CT_MMT_UNROLL
		for (int j = 0; j < rn; j += 4)
			vstore4(vload4(0, bp + j), 0, b + j);
	} else {
		CT_MMT_UNROLL
		for (int j = 0; j < rn; j++)
			b[j] = bp[j];
	}
	CT_MMT_UNROLL
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
	const int txn = bn / rn;
	int tx = get_local_id(0), ty = get_local_id(1), lid = ty * txn + tx;
	int n0 = get_group_id(0) * bn, m0 = get_group_id(1) * bm;

	CT_MMT_UNROLL
	for (int x = 0; x < rm * rn; x++) {
		int m = min(m0 + ty * rm + x / rn, M - 1), n = min(n0 + tx * rn + x % rn, N - 1);

		acc[x] = !accumulate && has_bias ? bias[bias_row ? m : n] : 0.0f;
	}
	if (K > 0) {
		ct_mmt_fetch_a(ra, A, sam, sak, m0, 0, M, K, lid, CT_MMT_ARGS);
		ct_mmt_fetch_b(rb, B, sk, sn, n0, 0, N, K, lid, CT_MMT_ARGS);
	}
	for (int k0 = 0; k0 < K; k0 += bk) {
		int kn = min(bk, K - k0);

		ct_mmt_stage(As, Bs, ra, rb, sak, sn, lid, CT_MMT_ARGS);
		barrier(CLK_LOCAL_MEM_FENCE);
		if (k0 + bk < K) {	/* the next slice, while this one is used */
			ct_mmt_fetch_a(ra, A, sam, sak, m0, k0 + bk, M, K, lid, CT_MMT_ARGS);
			ct_mmt_fetch_b(rb, B, sk, sn, n0, k0 + bk, N, K, lid, CT_MMT_ARGS);
		}
		if (kn == bk) {
			CT_MMT_UNROLL
			for (int kk = 0; kk < bk; kk++)
				ct_mmt_step(acc, As, Bs, kk, tx, ty, CT_MMT_ARGS);
		} else {
			for (int kk = 0; kk < kn; kk++)
				ct_mmt_step(acc, As, Bs, kk, tx, ty, CT_MMT_ARGS);
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	CT_MMT_UNROLL
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
