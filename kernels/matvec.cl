#pragma OPENCL FP_CONTRACT OFF
/*
 * matvec.cl - the forward matmul for few rows (sampling: one new row per
 * step), reading the weights in place.
 *
 *   out[t, o] = fma chain over i ascending of inp[t, i] * w[o, i],
 *               starting at bias[o] (or 0)
 * with w (OC, C) row-major: the very chain of ct_mm's forward (and of the
 * C reference, doc/workunit.md §3), so the same bits. ct_mm with BT = 1
 * computes a 32-wide panel of which one column is real; here nothing is
 * packed and no fma is wasted.
 *
 * A work-item owns CT_MV_O = 16 consecutive outputs (the lanes of one
 * float16 accumulator per row) and NT rows. Per 16 values of i it loads
 * the 16 weight rows' runs (16 contiguous float16 loads), transposes the
 * 16 x 16 block in registers (four butterfly stages of shuffle2, each
 * swapping one bit of the row index with one bit of the lane index), and
 * then takes 16 fma steps, lane j being output o0 + j. Outputs past OC
 * recompute row OC - 1 and are not stored; rows past BT recompute row
 * BT - 1. A last partial run of i (C % 16) goes one i at a time.
 * Global size (ceil(OC / 16), ceil(BT / NT)).
 */
#define CT_MV_O 16

/* The lanes' masks of one butterfly stage with block s: lo keeps lanes
 * with bit s clear from x and takes y's lane l - s into lanes with it set;
 * hi takes x's lane l + s into lanes with bit s clear and keeps y's. */
#define CT_MV_LO8 (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23)
#define CT_MV_HI8 (uint16)(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31)
#define CT_MV_LO4 (uint16)(0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27)
#define CT_MV_HI4 (uint16)(4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31)
#define CT_MV_LO2 (uint16)(0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29)
#define CT_MV_HI2 (uint16)(2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31)
#define CT_MV_LO1 (uint16)(0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30)
#define CT_MV_HI1 (uint16)(1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31)

/* One butterfly stage over rows j, j + s (j's bit s clear). */
#define CT_MV_STAGE(r, s, LO, HI) do { \
	_Pragma("unroll") \
	for (int j_ = 0; j_ < 16; j_++) { \
		if (j_ & (s)) \
			continue; \
		float16 x_ = r[j_], y_ = r[j_ + (s)]; \
		r[j_] = shuffle2(x_, y_, LO); \
		r[j_ + (s)] = shuffle2(x_, y_, HI); \
	} \
} while (0)

/* r[j] lane l = M[j][l]  ->  r[k] lane l = M[l][k]. */
static inline void ct_mv_transpose(float16 r[16])
{
	CT_MV_STAGE(r, 8, CT_MV_LO8, CT_MV_HI8);
	CT_MV_STAGE(r, 4, CT_MV_LO4, CT_MV_HI4);
	CT_MV_STAGE(r, 2, CT_MV_LO2, CT_MV_HI2);
	CT_MV_STAGE(r, 1, CT_MV_LO1, CT_MV_HI1);
}

/* ct_matvec1 / ct_matvec2 / ct_matvec4: NT = 1, 2, 4 rows per work-item. */
#define CT_MV_KERNEL(NAME, NT) \
__kernel void NAME(const __global float *inp, ulong ioff, \
		   const __global float *w, ulong woff, \
		   const __global float *bias, ulong boff, int has_bias, \
		   __global float *out, ulong ooff, int BT, int C, int OC) \
{ \
	int o0 = get_global_id(0) * CT_MV_O, t0 = get_global_id(1) * (NT); \
	const __global float *x[NT]; \
	size_t ro[CT_MV_O]; \
	float16 acc[NT], r[CT_MV_O], init; \
	float b[CT_MV_O]; \
	int i = 0; \
	if (o0 >= OC || t0 >= BT) \
		return; \
	w += woff; \
	_Pragma("unroll") \
	for (int j = 0; j < CT_MV_O; j++) { \
		int o = o0 + j < OC ? o0 + j : OC - 1; \
		ro[j] = (size_t)o * C; \
		b[j] = has_bias ? bias[boff + o] : 0.0f; \
	} \
	init = vload16(0, b); \
	_Pragma("unroll") \
	for (int t = 0; t < (NT); t++) { \
		x[t] = inp + ioff + (size_t)(t0 + t < BT ? t0 + t : BT - 1) * C; \
		acc[t] = init; \
	} \
	for (; i + 16 <= C; i += 16) { \
		_Pragma("unroll") \
		for (int j = 0; j < CT_MV_O; j++) \
			r[j] = vload16(0, w + ro[j] + i); \
		ct_mv_transpose(r); \
		_Pragma("unroll") \
		for (int k = 0; k < 16; k++) \
			_Pragma("unroll") \
			for (int t = 0; t < (NT); t++) \
				acc[t] = fma((float16)(x[t][i + k]), r[k], acc[t]); \
	} \
	for (; i < C; i++) { \
		float16 c; \
		_Pragma("unroll") \
		for (int j = 0; j < CT_MV_O; j++) \
			b[j] = w[ro[j] + i]; \
		c = vload16(0, b); \
		_Pragma("unroll") \
		for (int t = 0; t < (NT); t++) \
			acc[t] = fma((float16)(x[t][i]), c, acc[t]); \
	} \
	out += ooff; \
	_Pragma("unroll") \
	for (int t = 0; t < (NT); t++) { \
		float res[CT_MV_O]; \
		if (t0 + t >= BT) \
			break; \
		vstore16(acc[t], 0, res); \
		for (int j = 0; j < CT_MV_O && o0 + j < OC; j++) \
			out[(size_t)(t0 + t) * OC + o0 + j] = res[j]; \
	} \
}

CT_MV_KERNEL(ct_matvec1, 1)
CT_MV_KERNEL(ct_matvec2, 2)
CT_MV_KERNEL(ct_matvec4, 4)
