#pragma OPENCL FP_CONTRACT OFF
/*
 * matvec.cl - the forward matmul for few rows (sampling: one new row per
 * step), reading the weights in place.
 *
 *   out[t, o] = fma chain over i ascending of inp[t, i] * w[o, i],
 *               starting at bias[o] (or 0)
 * with w (OC, C) row-major: the very chain of ct_mm's forward (and of the
 * C reference, doc/workunit.md §3), so the same bits. ct_mm with BT = 1
 * computes a 32-wide panel of which one column is real, in k pieces with
 * parked accumulators; here nothing is packed and no fma is wasted.
 *
 * A work-item owns NO consecutive outputs and NT rows (NO x NT = 16
 * independent scalar chains, which hide the fma latency and fit the
 * registers) and walks i once: per i, NT input values and NO weights (NO
 * streams, one per weight row), NO x NT fmas. Outputs past OC recompute
 * row OC - 1 and rows past BT recompute row BT - 1; neither is stored.
 * Global size (ceil(OC / NO), ceil(BT / NT)).
 *
 * Scalar on purpose: a step reads every weight once, so it is bound by
 * memory bandwidth, and PoCL turns this into fmas with a memory operand.
 * Measured slower on PoCL (AVX-512): float16 lanes across 16 outputs with
 * each 16 x 16 block of weights transposed in registers by shuffle2 (LLVM
 * rewrote the shuffles of the loads into 8-byte loads, inserts and spills).
 */
#define CT_MV_KERNEL(NAME, NO, NT) \
__kernel void NAME(const __global float *inp, ulong ioff, \
		   const __global float *w, ulong woff, \
		   const __global float *bias, ulong boff, int has_bias, \
		   __global float *out, ulong ooff, int BT, int C, int OC) \
{ \
	int o0 = get_global_id(0) * (NO), t0 = get_global_id(1) * (NT); \
	const __global float *x[NT], *wr[NO]; \
	float acc[NT][NO]; \
	if (o0 >= OC || t0 >= BT) \
		return; \
	_Pragma("unroll") \
	for (int j = 0; j < (NO); j++) { \
		int o = o0 + j < OC ? o0 + j : OC - 1; \
		float b = has_bias ? bias[boff + o] : 0.0f; \
		wr[j] = w + woff + (size_t)o * C; \
		_Pragma("unroll") \
		for (int t = 0; t < (NT); t++) \
			acc[t][j] = b; \
	} \
	_Pragma("unroll") \
	for (int t = 0; t < (NT); t++) \
		x[t] = inp + ioff + (size_t)(t0 + t < BT ? t0 + t : BT - 1) * C; \
	for (int i = 0; i < C; i++) { \
		float xi[NT]; \
		_Pragma("unroll") \
		for (int t = 0; t < (NT); t++) \
			xi[t] = x[t][i]; \
		_Pragma("unroll") \
		for (int j = 0; j < (NO); j++) { \
			float wi = wr[j][i]; \
			_Pragma("unroll") \
			for (int t = 0; t < (NT); t++) \
				acc[t][j] = fma(xi[t], wi, acc[t][j]); \
		} \
	} \
	out += ooff; \
	_Pragma("unroll") \
	for (int t = 0; t < (NT); t++) \
		_Pragma("unroll") \
		for (int j = 0; j < (NO); j++) \
			if (t0 + t < BT && o0 + j < OC) \
				out[(size_t)(t0 + t) * OC + o0 + j] = acc[t][j]; \
}

/* ct_matvec1: 16 outputs x 1 row; ct_matvec2: 8 outputs x 2 rows */
CT_MV_KERNEL(ct_matvec1, 16, 1)
CT_MV_KERNEL(ct_matvec2, 8, 2)
