/*
 * ct_isa.h - which instruction set the C reference's hot loops run on.
 *
 * Each kernel marked CT_KERNEL is compiled once per path (plain x86-64,
 * AVX2 + FMA, AVX-512) as separate functions with target attributes, and
 * a small dispatcher calls the one chosen once per process: $CTUNE_ISA if
 * set and the CPU has it, else the best the CPU has. This works on every
 * x86-64 platform alike (Windows PE has no ifunc, so GCC's target_clones
 * cannot serve there) and lets tests force each path in turn.
 *
 * Only speed differs between paths: the kernels spell every fused
 * multiply-add (fmaf, correctly rounded in libm and in hardware), the
 * build forbids any other contraction (-ffp-contract=off) and the
 * vectoriser never reassociates float arithmetic without -ffast-math, so
 * every path computes the same bits (test/test_isa.c holds them to it by
 * memcmp, test/repro_wu.sh to the committed WU hashes).
 *
 * Other architectures (and compilers without target attributes) build one
 * path, CT_ISA_BASE.
 */
#ifndef CT_ISA_H
#define CT_ISA_H

#include <stdatomic.h>

enum ct_isa {
	CT_ISA_BASE = 0,	/* x86-64 baseline (SSE2); fmaf is a libm call */
	CT_ISA_AVX2 = 1,	/* AVX2 + FMA (x86-64-v3's vector part) */
	CT_ISA_AVX512 = 2,	/* AVX-512 F, CD, VL, BW, DQ (x86-64-v4) */
	CT_ISA_N
};

/* The path in use, chosen at the first call: $CTUNE_ISA (a name of
 * ct_isa_name(); "auto" or unset: the best supported) if this CPU runs it,
 * else the best supported (an unknown or unsupported name is reported once
 * on stderr). Thread-safe; cheap after the first call. */
static inline int ct_isa(void);

/* 1 if this CPU (and OS: the vector state is saved) runs path isa. */
int ct_isa_supported(int isa);

/* The best path this CPU runs. */
int ct_isa_best(void);

/* Use path isa from now on (for tests and benchmarks; not while kernels
 * run on other threads). Returns 0, CT_EINVAL for no such path or
 * CT_EUNSUPP if this CPU lacks it (the path in use is unchanged). */
int ct_isa_set(int isa);

/* "x86-64", "avx2", "avx512"; "?" for anything else. */
const char *ct_isa_name(int isa);

/* The path named name (as ct_isa_name writes it), or -1. */
int ct_isa_parse(const char *name);

/* ---- internals of the dispatch ------------------------------------- */

extern atomic_int ct_isa_cur_;	/* -1 until chosen */
int ct_isa_choose_(void);

static inline int ct_isa(void)
{
	int v = atomic_load_explicit(&ct_isa_cur_, memory_order_relaxed);

	return v >= 0 ? v : ct_isa_choose_();
}

#if defined(__GNUC__) && defined(__x86_64__)
#define CT_ISA_MULTI 1
#if defined(__clang__)
#define CT_ISA_O3_
#else
#define CT_ISA_O3_ __attribute__((optimize("O3")))
#endif
#define CT_ISA_ATTR_BASE_ CT_ISA_O3_
#define CT_ISA_ATTR_AVX2_ CT_ISA_O3_ __attribute__((target("avx2,fma")))
#define CT_ISA_ATTR_AVX512_ CT_ISA_O3_ \
	__attribute__((target("avx512f,avx512cd,avx512vl,avx512bw,avx512dq,avx2,fma")))
#define CT_ISA_BODY_ static inline __attribute__((always_inline))
#else
#define CT_ISA_MULTI 0
#define CT_ISA_BODY_ static inline
#endif

/* A helper called only from CT_KERNEL bodies: inlined into each path. */
#define CT_KERNEL_INLINE CT_ISA_BODY_

/*
 * CT_KERNEL(name, (params), (args)) { body } defines the void function
 * name(params) with one compiled copy of body per path and a dispatcher;
 * args names the parameters in order. Put `static` before it for a file's
 * own kernel. CT_KERNEL_RET(type, name, (params), (args)) is the same for
 * a function returning type.
 */
#if CT_ISA_MULTI
#define CT_KERNEL(name, params, args) \
	void name params; \
	CT_ISA_BODY_ void name##_k_ params; \
	CT_ISA_ATTR_BASE_ static void name##_base_ params { name##_k_ args; } \
	CT_ISA_ATTR_AVX2_ static void name##_avx2_ params { name##_k_ args; } \
	CT_ISA_ATTR_AVX512_ static void name##_avx512_ params { name##_k_ args; } \
	void name params \
	{ \
		switch (ct_isa()) { \
		case CT_ISA_AVX512: name##_avx512_ args; break; \
		case CT_ISA_AVX2: name##_avx2_ args; break; \
		default: name##_base_ args; break; \
		} \
	} \
	CT_ISA_BODY_ void name##_k_ params

#define CT_KERNEL_RET(type, name, params, args) \
	type name params; \
	CT_ISA_BODY_ type name##_k_ params; \
	CT_ISA_ATTR_BASE_ static type name##_base_ params { return name##_k_ args; } \
	CT_ISA_ATTR_AVX2_ static type name##_avx2_ params { return name##_k_ args; } \
	CT_ISA_ATTR_AVX512_ static type name##_avx512_ params { return name##_k_ args; } \
	type name params \
	{ \
		switch (ct_isa()) { \
		case CT_ISA_AVX512: return name##_avx512_ args; \
		case CT_ISA_AVX2: return name##_avx2_ args; \
		default: return name##_base_ args; \
		} \
	} \
	CT_ISA_BODY_ type name##_k_ params
#else
#define CT_KERNEL(name, params, args) void name params
#define CT_KERNEL_RET(type, name, params, args) type name params
#endif

#endif
