#ifdef CT_TEST_CONTRACT	/* tests only: prove the self-test sees contraction */
#pragma OPENCL FP_CONTRACT ON
#else
#pragma OPENCL FP_CONTRACT OFF
#endif
/*
 * mm_tiled.cl - the GPU-shaped variant of ct_mm (matmul.cl): the same
 * products with the same bits, through local-memory tiles.
 *
 *   out[m*som + n*son] = init + sum over k = 0..K-1 of A[m*sam + k*sak] *
 *                        B[k*sk + n*sn], one fma chain in increasing k
 * with init = bias (bias[m] when bias_row, else bias[n]) or 0, and with
 * accumulate: out = out + chain (the chain from 0). A work-group of
 * CT_MMT x CT_MMT work-items computes a CT_MMT x CT_MMT block of outputs,
 * one per work-item; the k range is walked in tiles of CT_MMT that the
 * group stages in local memory, and each work-item continues its own chain
 * tile after tile, so the order of every output's operations is the
 * reference's whatever the tile size. Launched with local size
 * (CT_MMT, CT_MMT) over (N, M) rounded up.
 */
#ifndef CT_MMT
#define CT_MMT 16
#endif

__kernel void ct_mm_tiled(const __global float *A, ulong aoff, int sam, int sak,
			  const __global float *B, ulong boff, int sk, int sn,
			  const __global float *bias, ulong biasoff, int has_bias, int bias_row,
			  __global float *out, ulong ooff, int som, int son,
			  int M, int N, int K, int accumulate)
{
	__local float As[CT_MMT][CT_MMT + 1], Bs[CT_MMT][CT_MMT + 1];
	int lx = get_local_id(0), ly = get_local_id(1);
	int n = get_group_id(0) * CT_MMT + lx, m = get_group_id(1) * CT_MMT + ly;
	int m0 = get_group_id(1) * CT_MMT, n0 = get_group_id(0) * CT_MMT;
	float acc = 0.0f;

	A += aoff;
	B += boff;
	bias += biasoff;
	out += ooff;
	if (!accumulate && has_bias && m < M && n < N)
		acc = bias[bias_row ? m : n];
	for (int k0 = 0; k0 < K; k0 += CT_MMT) {
		int ka = k0 + lx, kb = k0 + ly;

		/* As[row][kk] = A[m0+row, k0+kk]; Bs[kk][col] = B[k0+kk, n0+col] */
		As[ly][lx] = m0 + ly < M && ka < K ? A[(size_t)(m0 + ly) * sam + (size_t)ka * sak]
						   : 0.0f;
		Bs[ly][lx] = kb < K && n0 + lx < N ? B[(size_t)kb * sk + (size_t)(n0 + lx) * sn]
						   : 0.0f;
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int kk = 0; kk < CT_MMT && k0 + kk < K; kk++)
			acc = fma(As[ly][kk], Bs[kk][lx], acc);
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (m < M && n < N) {
		__global float *o = out + (size_t)m * som + (size_t)n * son;

		*o = accumulate ? *o + acc : acc;
	}
}
