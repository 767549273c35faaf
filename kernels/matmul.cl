#pragma OPENCL FP_CONTRACT OFF
/*
 * matmul.cl - the matrix products of the model (ARITH.md rule 4).
 *
 * One kernel, ct_mm, computes every product the model needs:
 *   out[m, n] = init + sum_{k=0..K-1} A[m, k] * B[k, n]
 * with each output's sum a sequential fma chain from k = 0, exactly the C
 * reference's: acc = init; acc = fma(A[m,k], B[k,n], acc) for k ascending.
 *   forward:   m = bt, n = o, k = i; A = inp, B = w^T; init = bias[o] or 0
 *   dinp:      m = bt, n = i, k = o; A = dout, B = w; out = out + acc
 *   dweight:   m = o, n = i, k = bt; A = dout^T, B = inp; out = out + acc
 * A is read through strides (A[m,k] = A[m*sam + k*sak]) so no transpose of
 * A is ever needed. B is first packed by ct_mm_pack into panels of PW =
 * CT_MM_VW*CT_MM_NV columns, zero padded past N, so that the inner loop
 * reads one contiguous run of PW floats per k with no edge cases.
 *
 * Speed comes from register blocking (each work-item owns CT_MM_R rows x
 * PW columns of outputs in vector accumulators), not from local memory:
 * on CPUs (PoCL) local-memory tiles are slow. Blocking changes which
 * outputs a work-item owns, never the order of any output's operations.
 * The block sizes are -D options chosen per device type by the host.
 * Every buffer argument is followed by an offset in floats (the model's
 * tensors live in a few large buffers).
 */
#ifndef CT_MM_R
#define CT_MM_R 8
#endif
#ifndef CT_MM_VW
#define CT_MM_VW 16
#endif
#ifndef CT_MM_NV
#define CT_MM_NV 2
#endif
#define CT_MM_PW (CT_MM_VW * CT_MM_NV)

#define CT_MM_CAT_(a, b) a##b
#define CT_MM_CAT(a, b) CT_MM_CAT_(a, b)
typedef CT_MM_CAT(float, CT_MM_VW) ct_mmvec;
#define CT_MM_VLOAD CT_MM_CAT(vload, CT_MM_VW)
#define CT_MM_VSTORE CT_MM_CAT(vstore, CT_MM_VW)

/* Bp[p][k][j] = B[k, p*PW + j] (0 past N), with B[k, n] = src[k*sk + n*sn].
 * Global size (npanels*PW, K). */
__kernel void ct_mm_pack(const __global float *src, ulong soff, int sk, int sn,
			 __global float *Bp, int K, int N)
{
	int c = get_global_id(0);
	int k = get_global_id(1);
	int p = c / CT_MM_PW, j = c % CT_MM_PW;
	float v = 0.0f;

	src += soff;
	if (c < N)
		v = src[(size_t)k * sk + (size_t)c * sn];
	Bp[((size_t)p * K + k) * CT_MM_PW + j] = v;
}

/* out[m*ldo + n] for m < M, n < N (see above). Global size (ceil(M/R),
 * npanels). accumulate: 0 -> out = acc with acc starting at bias[n] (or 0
 * when has_bias is 0); 1 -> acc starts at 0 and out = out + acc. */
__kernel void ct_mm(const __global float *A, ulong aoff, int sam, int sak,
		    const __global float *Bp,
		    const __global float *bias, ulong boff, int has_bias,
		    __global float *out, ulong ooff, int ldo,
		    int M, int N, int K, int accumulate)
{
	int m0 = get_global_id(0) * CT_MM_R;
	int p = get_global_id(1);
	int n0 = p * CT_MM_PW;
	const __global float *bp = Bp + (size_t)p * K * CT_MM_PW;
	size_t arow[CT_MM_R];
	ct_mmvec acc[CT_MM_R][CT_MM_NV];
	float init[CT_MM_PW];

	if (m0 >= M)
		return;
	A += aoff;
	bias += boff;
	out += ooff;
	for (int j = 0; j < CT_MM_PW; j++)
		init[j] = (has_bias && !accumulate && n0 + j < N) ? bias[n0 + j] : 0.0f;
#pragma unroll
	for (int r = 0; r < CT_MM_R; r++) {
		/* rows past M recompute row M-1 and are not stored */
		int m = m0 + r < M ? m0 + r : M - 1;
		arow[r] = (size_t)m * sam;
#pragma unroll
		for (int v = 0; v < CT_MM_NV; v++)
			acc[r][v] = CT_MM_VLOAD(v, init);
	}
	for (int k = 0; k < K; k++) {
		ct_mmvec b[CT_MM_NV];
		size_t ak = (size_t)k * sak;
#pragma unroll
		for (int v = 0; v < CT_MM_NV; v++)
			b[v] = CT_MM_VLOAD(v, bp + (size_t)k * CT_MM_PW);
#pragma unroll
		for (int r = 0; r < CT_MM_R; r++) {
			ct_mmvec a = (ct_mmvec)(A[arow[r] + ak]);
#pragma unroll
			for (int v = 0; v < CT_MM_NV; v++)
				acc[r][v] = fma(a, b[v], acc[r][v]);
		}
	}
#pragma unroll
	for (int r = 0; r < CT_MM_R; r++) {
		__global float *o = out + (size_t)(m0 + r) * ldo + n0;
		float res[CT_MM_PW];

		if (m0 + r >= M)
			break;
#pragma unroll
		for (int v = 0; v < CT_MM_NV; v++)
			CT_MM_VSTORE(acc[r][v], v, res);
		if (accumulate) {
			for (int j = 0; j < CT_MM_PW && n0 + j < N; j++)
				o[j] = o[j] + res[j];
		} else {
			for (int j = 0; j < CT_MM_PW && n0 + j < N; j++)
				o[j] = res[j];
		}
	}
}

/* dbias[o] = dbias[o] + sum_{bt} dout[bt, o], the sum sequential over bt
 * from 0. One work-item per o. */
__kernel void ct_mm_dbias(const __global float *dout, ulong doff,
			  __global float *dbias, ulong dboff, int BT, int OC)
{
	int o = get_global_id(0);
	float acc = 0.0f;

	if (o >= OC)
		return;
	dout += doff;
	dbias += dboff;
	for (int bt = 0; bt < BT; bt++)
		acc = acc + dout[(size_t)bt * OC + o];
	dbias[o] = dbias[o] + acc;
}
