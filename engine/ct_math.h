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

/* The reference's hot loops are CT_KERNELs (ct_isa.h): compiled for
 * AVX-512, AVX2 + FMA and plain x86-64 and picked once per process, on
 * Linux and Windows alike. Only speed differs: the sources spell every
 * fused multiply-add (fmaf) and -ffp-contract=off forbids the rest, so
 * all paths compute the same bits.
 *
 * CT_FMA_CLONES is the older form (GCC's target_clones, an ifunc: Linux
 * only, and no way to force a path); it stays for code not yet moved to
 * CT_KERNEL and is plain code elsewhere. */
#include "ct_isa.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
	defined(__linux__)
#define CT_FMA_CLONES __attribute__((target_clones("arch=x86-64-v4", "fma", "default"), \
					       optimize("O3")))
#else
#define CT_FMA_CLONES
#endif

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
