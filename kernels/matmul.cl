#ifdef CT_TEST_CONTRACT	/* tests only: prove the self-test sees contraction */
#pragma OPENCL FP_CONTRACT ON
#else
#pragma OPENCL FP_CONTRACT OFF
#endif
/*
 * matmul.cl - the matrix products of the model (each a dot as in
 * doc/workunit.md §3 "Arithmetic rules").
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
 * One work-item per tile of PW columns x CT_MM_PACK_K rows of k (few
 * work-items: per-work-item overhead matters on CPU devices), visiting the
 * tile in the order that reads src contiguously. Global size (npanels,
 * ceil(K / CT_MM_PACK_K)). */
#define CT_MM_PACK_K 16
__kernel void ct_mm_pack(const __global float *src, ulong soff, int sk, int sn,
			 __global float *Bp, int K, int N)
{
	int p = get_global_id(0);
	int k0 = get_global_id(1) * CT_MM_PACK_K;
	int n0 = p * CT_MM_PW;
	int kn = K - k0 < CT_MM_PACK_K ? K - k0 : CT_MM_PACK_K;
	int jn = N - n0 < CT_MM_PW ? N - n0 : CT_MM_PW;
	__global float *dst = Bp + ((size_t)p * K + k0) * CT_MM_PW;

	if (kn <= 0 || n0 >= N)
		return;
	src += soff + (size_t)k0 * sk + (size_t)n0 * sn;
	if (sn == 1) {
		for (int kk = 0; kk < kn; kk++)
			for (int j = 0; j < CT_MM_PW; j++)
				dst[kk * CT_MM_PW + j] = j < jn ? src[(size_t)kk * sk + j] : 0.0f;
	} else {
		for (int j = 0; j < CT_MM_PW; j++)
			for (int kk = 0; kk < kn; kk++)
				dst[kk * CT_MM_PW + j] = j < jn ? src[kk * sk + (size_t)j * sn] : 0.0f;
	}
}

/* Leave the accumulators of rows m0.. (< M) in accb (row stride lda). */
static inline void ct_mm_park(ct_mmvec acc[CT_MM_R][CT_MM_NV], __global float *accb,
			      int lda, int m0, int n0, int M)
{
#pragma unroll
	for (int r = 0; r < CT_MM_R; r++) {
		if (m0 + r >= M)
			break;
#pragma unroll
		for (int v = 0; v < CT_MM_NV; v++)
			CT_MM_VSTORE(acc[r][v], v, accb + (size_t)(m0 + r) * lda + n0);
	}
}

/* The result of rows m0.. (< M), columns n0.. (< N): out = acc, or
 * out = out + acc when accumulating. */
static inline void ct_mm_store(ct_mmvec acc[CT_MM_R][CT_MM_NV], __global float *out,
			       int som, int son, int m0, int n0, int M, int N,
			       int accumulate)
{
	if (som == 1 && !accumulate) {
		/* the transposed form: each column's CT_MM_R rows are adjacent
		 * in out, so write column by column (row by row, the stores
		 * run a stride of son apart, which on a CPU stalls when son is
		 * a multiple of 512: measured 2x slower at OC = 2048/3072/4096) */
		float res[CT_MM_R][CT_MM_PW];
		int rn = M - m0 < CT_MM_R ? M - m0 : CT_MM_R;

#pragma unroll
		for (int r = 0; r < CT_MM_R; r++)
#pragma unroll
			for (int v = 0; v < CT_MM_NV; v++)
				CT_MM_VSTORE(acc[r][v], v, res[r]);
		for (int j = 0; j < CT_MM_PW && n0 + j < N; j++) {
			__global float *o = out + m0 + (size_t)(n0 + j) * son;

			for (int r = 0; r < rn; r++)
				o[r] = res[r][j];
		}
		return;
	}
#pragma unroll
	for (int r = 0; r < CT_MM_R; r++) {
		__global float *o = out + (size_t)(m0 + r) * som + (size_t)n0 * son;
		float res[CT_MM_PW];

		if (m0 + r >= M)
			break;
#pragma unroll
		for (int v = 0; v < CT_MM_NV; v++)
			CT_MM_VSTORE(acc[r][v], v, res);
		if (accumulate) {
			for (int j = 0; j < CT_MM_PW && n0 + j < N; j++)
				o[(size_t)j * son] = o[(size_t)j * son] + res[j];
		} else if (son == 1) {
			for (int j = 0; j < CT_MM_PW && n0 + j < N; j++)
				o[j] = res[j];
		} else {
			for (int j = 0; j < CT_MM_PW && n0 + j < N; j++)
				o[(size_t)j * son] = res[j];
		}
	}
}

/* out[m*som + n*son] for m < M, n < N (see above; son = 1 normally, and
 * som = 1 when the product is computed transposed, as the forward is when
 * packing the inputs is cheaper than packing the weights). Work-item (row
 * block, panel) = (gid0, gid1), or (gid1, gid0) when pfast is set (the
 * host picks the order that keeps the larger operand's reuse in cache).
 * B: when direct is set, full panels are read straight from B (row stride
 * ldb, B[k, n] = B[k*ldb + n]) and only a last partial panel from Bp
 * (packed alone, K x PW); else every panel p from Bp + p*K*PW.
 * accumulate: 0 -> out = acc with acc starting at the bias (bias[n], or
 * bias[m] when bias_row is set; 0 when has_bias is 0); 1 -> acc starts at
 * 0 and out = out + acc.
 * A long k range may be cut in pieces [k0, k1) run one after the other so
 * that both operands' pieces stay in cache: a piece that does not start at
 * 0 takes its accumulators from accb (M x lda floats), a piece that does
 * not end at K leaves them there; each output's chain of fmas is the same
 * sequence either way (a float stored and reloaded is unchanged). */
__kernel void ct_mm(const __global float *A, ulong aoff, int sam, int sak,
		    const __global float *B, ulong bdoff, int ldb,
		    const __global float *Bp, int direct,
		    const __global float *bias, ulong boff, int has_bias, int bias_row,
		    __global float *out, ulong ooff, int som, int son,
		    int M, int N, int K, int accumulate, int pfast,
		    __global float *accb, int lda, int k0, int k1)
{
	int g0 = get_global_id(0), g1 = get_global_id(1);
	int m0 = (pfast ? g1 : g0) * CT_MM_R;
	int p = pfast ? g0 : g1;
	int n0 = p * CT_MM_PW;
	const __global float *bp, *ak;
	size_t bstride, ro[CT_MM_R];
	ct_mmvec acc[CT_MM_R][CT_MM_NV];
	float init[CT_MM_PW];
	int use_bias = has_bias && !accumulate;

	if (m0 >= M || n0 >= N)
		return;
	bias += boff;
	out += ooff;
	if (direct && n0 + CT_MM_PW <= N) {
		bp = B + bdoff + n0;
		bstride = ldb;
	} else {
		bp = Bp + (direct ? 0 : (size_t)p * K * CT_MM_PW);
		bstride = CT_MM_PW;
	}
	bp += (size_t)k0 * bstride;
	for (int j = 0; j < CT_MM_PW; j++)
		init[j] = (use_bias && !bias_row && n0 + j < N) ? bias[n0 + j] : 0.0f;
	ak = A + aoff + (size_t)m0 * sam + (size_t)k0 * sak;
#pragma unroll
	for (int r = 0; r < CT_MM_R; r++) {
		/* rows past M recompute row M-1 and are not stored */
		int rr = m0 + r < M ? r : M - 1 - m0;

		ro[r] = (size_t)rr * sam;
#pragma unroll
		for (int v = 0; v < CT_MM_NV; v++) {
			if (k0 != 0)
				acc[r][v] = CT_MM_VLOAD(v, accb + (size_t)(m0 + rr) * lda + n0);
			else if (use_bias && bias_row)
				acc[r][v] = (ct_mmvec)(bias[m0 + rr]);
			else
				acc[r][v] = CT_MM_VLOAD(v, init);
		}
	}
	for (int k = k0; k < k1; k++) {
		ct_mmvec b[CT_MM_NV];
#pragma unroll
		for (int v = 0; v < CT_MM_NV; v++)
			b[v] = CT_MM_VLOAD(v, bp);
#pragma unroll
		for (int r = 0; r < CT_MM_R; r++) {
			ct_mmvec a = (ct_mmvec)(ak[ro[r]]);
#pragma unroll
			for (int v = 0; v < CT_MM_NV; v++)
				acc[r][v] = fma(a, b[v], acc[r][v]);
		}
		ak += sak;
		bp += bstride;
	}
	if (k1 < K)		/* not the last piece: park the accumulators */
		ct_mm_park(acc, accb, lda, m0, n0, M);
	else
		ct_mm_store(acc, out, som, son, m0, n0, M, N, accumulate);
}

/* dbias[o] = dbias[o] + sum_{bt} dout[bt, o], the sum sequential over bt
 * from 0. One work-item per CT_EW columns o, each with its own chain (the
 * rows are read CT_EW floats at a time: one column per work-item read a
 * row apart, 124M at B=4 T=1024 took 755 ms a step on PoCL). */
__kernel void ct_mm_dbias(const __global float *dout, ulong doff,
			  __global float *dbias, ulong dboff, int BT, int OC)
{
	int o0 = get_global_id(0) * CT_EW, w = OC - o0 < CT_EW ? OC - o0 : CT_EW;
	float acc[CT_EW];

	if (o0 >= OC)
		return;
	dout += doff + o0;
	dbias += dboff + o0;
	for (int c = 0; c < CT_EW; c++)
		acc[c] = 0.0f;
	for (int bt = 0; bt < BT; bt++)
		for (int c = 0; c < w; c++)
			acc[c] = acc[c] + dout[(size_t)bt * OC + c];
	for (int c = 0; c < w; c++)
		dbias[c] = dbias[c] + acc[c];
}
