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
#if CT_MM_VW == 16	/* half a vector's width, for nf4's bytes (base.cl) */
#define CT_MM_HW 8
#elif CT_MM_VW == 8
#define CT_MM_HW 4
#else
#define CT_MM_HW 2
#endif

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

/* This work-item's tile: its first k and column, how many of each, and
 * where it goes in Bp (floats); 0 when the work-item has none. */
static inline int ct_mm_pack_tile(int K, int N, int *k0, int *n0, int *kn, int *jn,
				  size_t *dst)
{
	int p = get_global_id(0);

	*k0 = get_global_id(1) * CT_MM_PACK_K;
	*n0 = p * CT_MM_PW;
	*kn = K - *k0 < CT_MM_PACK_K ? K - *k0 : CT_MM_PACK_K;
	*jn = N - *n0 < CT_MM_PW ? N - *n0 : CT_MM_PW;
	*dst = ((size_t)p * K + *k0) * CT_MM_PW;
	return *kn > 0 && *n0 < N;
}

__kernel void ct_mm_pack(const __global float *src, ulong soff, int sk, int sn,
			 __global float *Bp, int K, int N)
{
	int k0, n0, kn, jn;
	size_t d;
	__global float *dst;

	if (!ct_mm_pack_tile(K, N, &k0, &n0, &kn, &jn, &d))
		return;
	dst = Bp + d;
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

/* dst[n*ldd + k] = src[k*lds + n] for k < K, n < N: a transpose, every
 * value copied unchanged (the weight gradient's A, dout^T, made row-major:
 * read in place its k run a row of dout apart, and the row blocks' loads
 * of A stall). One work-item per tile of CT_MM_TR k x CT_MM_TR n, read a
 * row of src at a time and written a row of dst at a time. Global size
 * (ceil(N / CT_MM_TR), ceil(K / CT_MM_TR)). */
#define CT_MM_TR 16

/* One tile, kn x nn (inlined: constant bounds for a whole tile). */
static inline __attribute__((always_inline)) void
ct_mm_tr_tile(const __global float *src, int lds, __global float *dst, int ldd, int kn, int nn)
{
	float t[CT_MM_TR][CT_MM_TR];

	for (int k = 0; k < kn; k++)
		for (int n = 0; n < nn; n++)
			t[n][k] = src[(size_t)k * lds + n];
	for (int n = 0; n < nn; n++)
		for (int k = 0; k < kn; k++)
			dst[(size_t)n * ldd + k] = t[n][k];
}

/* An 8 x 8 block, rows of src (lds apart) to rows of dst (ldd apart),
 * through the unpack, shuffle and half-swap steps of an AVX transpose:
 * shuffle2 moves floats, it changes none. */
static inline __attribute__((always_inline)) void
ct_mm_tr8(const __global float *src, int lds, __global float *dst, int ldd)
{
	const uint8 lo2 = (uint8)(0, 8, 1, 9, 4, 12, 5, 13), hi2 = (uint8)(2, 10, 3, 11, 6, 14, 7, 15);
	const uint8 lo4 = (uint8)(0, 1, 8, 9, 4, 5, 12, 13), hi4 = (uint8)(2, 3, 10, 11, 6, 7, 14, 15);
	const uint8 lo8 = (uint8)(0, 1, 2, 3, 8, 9, 10, 11), hi8 = (uint8)(4, 5, 6, 7, 12, 13, 14, 15);
	float8 r[8], t[8], u[8];

#pragma unroll
	for (int k = 0; k < 8; k++)
		r[k] = vload8(0, src + (size_t)k * lds);
#pragma unroll
	for (int i = 0; i < 8; i += 2) {
		t[i] = shuffle2(r[i], r[i + 1], lo2);
		t[i + 1] = shuffle2(r[i], r[i + 1], hi2);
	}
#pragma unroll
	for (int h = 0; h < 8; h += 4) {
		u[h] = shuffle2(t[h], t[h + 2], lo4);
		u[h + 1] = shuffle2(t[h], t[h + 2], hi4);
		u[h + 2] = shuffle2(t[h + 1], t[h + 3], lo4);
		u[h + 3] = shuffle2(t[h + 1], t[h + 3], hi4);
	}
#pragma unroll
	for (int j = 0; j < 4; j++) {
		vstore8(shuffle2(u[j], u[j + 4], lo8), 0, dst + (size_t)j * ldd);
		vstore8(shuffle2(u[j], u[j + 4], hi8), 0, dst + (size_t)(j + 4) * ldd);
	}
}

__kernel void ct_mm_tr(const __global float *src, ulong soff, int lds,
		       __global float *dst, ulong doff, int ldd, int K, int N)
{
	int n0 = get_global_id(0) * CT_MM_TR, k0 = get_global_id(1) * CT_MM_TR;
	int nn = N - n0 < CT_MM_TR ? N - n0 : CT_MM_TR;
	int kn = K - k0 < CT_MM_TR ? K - k0 : CT_MM_TR;

	if (nn <= 0 || kn <= 0)
		return;
	src += soff + (size_t)k0 * lds + n0;
	dst += doff + (size_t)n0 * ldd + k0;
	if (nn == CT_MM_TR && kn == CT_MM_TR) {
#pragma unroll
		for (int b = 0; b < 4; b++) {
			int kb = (b >> 1) * 8, nb = (b & 1) * 8;

			ct_mm_tr8(src + (size_t)kb * lds + nb, lds, dst + (size_t)nb * ldd + kb, ldd);
		}
	} else
		ct_mm_tr_tile(src, lds, dst, ldd, kn, nn);
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
	if (son == 1 && n0 + CT_MM_PW <= N) {
		/* a whole panel of contiguous columns: a vector at a time (the
		 * same single add per element as below; the scalar loop was
		 * ~10% of a weight gradient's time at K = BT = 256) */
#pragma unroll
		for (int r = 0; r < CT_MM_R; r++) {
			__global float *o = out + (size_t)(m0 + r) * som + n0;

			if (m0 + r >= M)
				break;
#pragma unroll
			for (int v = 0; v < CT_MM_NV; v++)
				CT_MM_VSTORE(accumulate ? CT_MM_VLOAD(v, o) + acc[r][v] : acc[r][v],
					     v, o);
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

/* Element i of an operand stored in format fmt: float32 (0), or a
 * compact weight (ct_base.h: 1 bf16, 2 q8, 3 nf4) read as the widening
 * kernels of base.cl write it (ct_mm_elem, defined there), so the same
 * value. */
static float ct_mm_elem(const __global uchar *w, size_t i, int fmt);

/* CT_MM_VW consecutive elements of a compact operand from element g on:
 * bf16 as one vector load; q8/nf4 (blocks of 32/64) with the block's scale
 * loaded once when inblock says the vector lies in one block (g a
 * multiple of CT_MM_VW, which divides 32), else element by element. The
 * values of ct_mm_elem. (ct_mm_vec is in base.cl.) */
static ct_mmvec ct_mm_vec(const __global uchar *w, size_t g, int fmt, int inblock);

/* One k of ct_mm_body's loop: B's row (float32, or a compact panel read
 * in place when bc), each of the CT_MM_R rows' A element times it into
 * the accumulators; the operands' cursors moved on one k. */
static inline __attribute__((always_inline)) void
ct_mm_k1(ct_mmvec acc[CT_MM_R][CT_MM_NV], const size_t ro[CT_MM_R],
	 const __global uchar *A, size_t *ai, const __global float **ak, int sak, int afmt,
	 const __global uchar *B, size_t *bi, int ldb, int bfmt, int bvec, int bc,
	 const __global float **bp, size_t bstride)
{
	ct_mmvec b[CT_MM_NV];

	if (bc) {
#pragma unroll
		for (int v = 0; v < CT_MM_NV; v++)
			b[v] = ct_mm_vec(B, *bi + (size_t)v * CT_MM_VW, bfmt, bvec);
		*bi += ldb;
	} else {
#pragma unroll
		for (int v = 0; v < CT_MM_NV; v++)
			b[v] = CT_MM_VLOAD(v, *bp);
		*bp += bstride;
	}
#pragma unroll
	for (int r = 0; r < CT_MM_R; r++) {
		ct_mmvec a = (ct_mmvec)(afmt == 0 ? (*ak)[ro[r]]
						  : ct_mm_elem(A, *ai + ro[r], afmt));
#pragma unroll
		for (int v = 0; v < CT_MM_NV; v++)
			acc[r][v] = fma(a, b[v], acc[r][v]);
	}
	if (afmt == 0)
		*ak += sak;
	else
		*ai += sak;
}

/* The body of ct_mm and ct_mm_c: A and B of format afmt, bfmt (B's
 * format matters for the panels read in place only: packed panels are
 * float32). ct_mm inlines it with both 0, so its loads stay the plain
 * float loads. */
static inline __attribute__((always_inline)) void
ct_mm_body(const __global uchar *A, ulong aoff, int sam, int sak, int afmt,
	   const __global uchar *B, ulong bdoff, int ldb, int bfmt,
	   const __global float *Bp, int direct,
	   const __global float *bias, ulong boff, int has_bias, int bias_row,
	   __global float *out, ulong ooff, int som, int son,
	   int M, int N, int K, int accumulate, int pfast,
	   __global float *accb, int lda, int k0, int k1, int kb, int kp)
{
	int g0 = get_global_id(0), g1 = get_global_id(1);
	int m0 = (pfast ? g1 : g0) * CT_MM_R;
	int p = pfast ? g0 : g1;
	int n0 = p * CT_MM_PW;
	const __global float *bp, *ak = NULL;
	size_t bstride, ro[CT_MM_R], ai = 0, bi = 0;
	ct_mmvec acc[CT_MM_R][CT_MM_NV];
	float init[CT_MM_PW];
	int use_bias = has_bias && !accumulate, bc = 0, brow = k0;
	/* q8/nf4 panels whose vectors never straddle a block (see ct_mm_vec) */
	int bvec = bfmt >= 2 && bdoff % CT_MM_VW == 0 && ldb % CT_MM_VW == 0;
	/* a compact A whose rows run along k, read a vector of each row at a
	 * time: q8/nf4 only where every vector lies in one block */
	int avec = afmt != 0 && bfmt == 0 && sak == 1 &&
		   (afmt == 1 || (aoff % CT_MM_VW == 0 && sam % CT_MM_VW == 0));
	int k;

	if (m0 >= M || n0 >= N)
		return;
	bias += boff;
	out += ooff;
	if (direct && n0 + CT_MM_PW <= N) {
		bp = (const __global float *)B + bdoff + n0;
		bstride = ldb;
		bc = bfmt != 0;		/* a compact panel, element bi on */
		bi = bdoff + n0 + (size_t)k0 * ldb;
	} else {
		/* Bp's panels: kp rows each, from k = kb */
		bp = Bp + (direct ? 0 : (size_t)p * kp * CT_MM_PW);
		bstride = CT_MM_PW;
		brow = k0 - kb;
	}
	bp += bc ? 0 : (size_t)brow * bstride;
	for (int j = 0; j < CT_MM_PW; j++)
		init[j] = (use_bias && !bias_row && n0 + j < N) ? bias[n0 + j] : 0.0f;
	if (afmt == 0)
		ak = (const __global float *)A + aoff + (size_t)m0 * sam + (size_t)k0 * sak;
	else
		ai = aoff + (size_t)m0 * sam + (size_t)k0 * sak;
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
	k = k0;
	if (avec) {
		/* a compact A decoded CT_MM_VW elements of each row at a time
		 * (ct_mm_vec, once per vector instead of once per element);
		 * the chains are the scalar loop's, fma by fma */
		for (; k < k1 && k % CT_MM_VW != 0; k++)
			ct_mm_k1(acc, ro, A, &ai, &ak, sak, afmt, B, &bi, ldb, bfmt, bvec, bc, &bp,
				 bstride);
		for (; k + CT_MM_VW <= k1; k += CT_MM_VW) {
			float at[CT_MM_R][CT_MM_VW];

#pragma unroll
			for (int r = 0; r < CT_MM_R; r++)
				CT_MM_VSTORE(ct_mm_vec(A, ai + ro[r], afmt, 1), 0, at[r]);
#pragma unroll
			for (int kk = 0; kk < CT_MM_VW; kk++) {
				ct_mmvec b[CT_MM_NV];

#pragma unroll
				for (int v = 0; v < CT_MM_NV; v++)
					b[v] = CT_MM_VLOAD(v, bp);
				bp += bstride;
#pragma unroll
				for (int r = 0; r < CT_MM_R; r++)
#pragma unroll
					for (int v = 0; v < CT_MM_NV; v++)
						acc[r][v] = fma((ct_mmvec)(at[r][kk]), b[v],
								acc[r][v]);
			}
			ai += CT_MM_VW;
		}
	}
	for (; k < k1; k++)
		ct_mm_k1(acc, ro, A, &ai, &ak, sak, afmt, B, &bi, ldb, bfmt, bvec, bc, &bp, bstride);
	if (k1 < K)		/* not the last piece: park the accumulators */
		ct_mm_park(acc, accb, lda, m0, n0, M);
	else
		ct_mm_store(acc, out, som, son, m0, n0, M, N, accumulate);
}

/* out[m*som + n*son] for m < M, n < N (see above; son = 1 normally, and
 * som = 1 when the product is computed transposed, as the forward is when
 * packing the inputs is cheaper than packing the weights). Work-item (row
 * block, panel) = (gid0, gid1), or (gid1, gid0) when pfast is set (the
 * host picks the order that keeps the larger operand's reuse in cache).
 * B: when direct is set, full panels are read straight from B (row stride
 * ldb, B[k, n] = B[k*ldb + n]) and only a last partial panel from Bp
 * (packed alone, kp x PW); else every panel p from Bp + p*kp*PW, each
 * holding rows kb .. kb+kp-1 of B's k (kb = 0 and kp = K when all of B is
 * packed; a k piece's rows alone, kb = k0, when only the piece is).
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
		    __global float *accb, int lda, int k0, int k1, int kb, int kp)
{
	ct_mm_body((const __global uchar *)A, aoff, sam, sak, 0, (const __global uchar *)B,
		   bdoff, ldb, 0, Bp, direct, bias, boff, has_bias, bias_row, out, ooff, som,
		   son, M, N, K, accumulate, pfast, accb, lda, k0, k1, kb, kp);
}

/* ct_mm with a compact weight read where it is, as A (the forward
 * computed transposed, A = w) or as the panels of B read in place (the
 * input gradient, B = w), one kernel per operand and format (h bf16, q
 * q8, n nf4: the format a constant, so that each inlines its own loads);
 * offsets count elements of the operand's own format (for q8/nf4, of the
 * image's block grid). Every element is the value the widening kernels
 * would have written, and each output's chain is ct_mm's: the same bits
 * as widening first. */
#define CT_MM_C(name, afmt, bfmt) \
__kernel void name(const __global uchar *A, ulong aoff, int sam, int sak, \
		   const __global uchar *B, ulong bdoff, int ldb, \
		   const __global float *Bp, int direct, \
		   const __global float *bias, ulong boff, int has_bias, int bias_row, \
		   __global float *out, ulong ooff, int som, int son, \
		   int M, int N, int K, int accumulate, int pfast, \
		   __global float *accb, int lda, int k0, int k1, int kb, int kp) \
{ \
	ct_mm_body(A, aoff, sam, sak, afmt, B, bdoff, ldb, bfmt, Bp, direct, bias, boff, \
		   has_bias, bias_row, out, ooff, som, son, M, N, K, accumulate, pfast, \
		   accb, lda, k0, k1, kb, kp); \
}
CT_MM_C(ct_mm_ah, 1, 0)
CT_MM_C(ct_mm_aq, 2, 0)
CT_MM_C(ct_mm_an, 3, 0)
CT_MM_C(ct_mm_bh, 0, 1)
CT_MM_C(ct_mm_bq, 0, 2)
CT_MM_C(ct_mm_bn, 0, 3)

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
