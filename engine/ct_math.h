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

#endif
