/*
 * ct_math.h - the C side of crowdtune's portable math (ct_expf, ct_logf,
 * ct_tanhf, GELU and AdamW element functions).
 *
 * The definitions live in kernels/ct_math.clh, shared verbatim with the
 * OpenCL kernels so both backends compute the same bits; read that file for
 * the methods and accuracy. Everything is static inline: include this
 * header wherever the reference needs them. Build with -ffp-contract=off.
 */
#ifndef CT_MATH_H
#define CT_MATH_H

#include "../kernels/ct_math.clh"

/* The tail of an attention row's softmax, in place over row[0..n) once its
 * max mx is known: e = ct_expf(x - mx), summed in increasing order, then
 * each e divided by the sum (doc/workunit.md, attention). Returns the sum.
 * Both reference attentions (stored and recomputed) use it. */
static inline float ct_softmax_tail(float *row, int n, float mx)
{
	float sum = 0.0f;

	for (int i = 0; i < n; i++) {
		float e = ct_expf(row[i] - mx);

		row[i] = e;
		sum = sum + e;
	}
	for (int i = 0; i < n; i++)
		row[i] = row[i] / sum;
	return sum;
}

#endif
