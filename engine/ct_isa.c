/*
 * ct_isa.c - the choice of the C reference's kernel path (ct_isa.h): what
 * the CPU runs, from GCC's __builtin_cpu_supports (CPUID, and XGETBV for
 * the OS saving the AVX and AVX-512 state), and $CTUNE_ISA.
 */
#include "config.h"
#include "ct_isa.h"
#include "ct_err.h"
#include "ct_options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

atomic_int ct_isa_cur_ = -1;

static const char *const isa_names[CT_ISA_N] = {
	[CT_ISA_BASE] = "x86-64",
	[CT_ISA_AVX2] = "avx2",
	[CT_ISA_AVX512] = "avx512",
};

const char *ct_isa_name(int isa)
{
	return isa >= 0 && isa < CT_ISA_N ? isa_names[isa] : "?";
}

int ct_isa_parse(const char *name)
{
	for (int i = 0; i < CT_ISA_N; i++)
		if (strcmp(name, isa_names[i]) == 0)
			return i;
	return -1;
}

int ct_isa_supported(int isa)
{
	switch (isa) {
	case CT_ISA_BASE:
		return 1;
#if CT_ISA_MULTI
	case CT_ISA_AVX2:
		__builtin_cpu_init();
		return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	case CT_ISA_AVX512:
		__builtin_cpu_init();
		return ct_isa_supported(CT_ISA_AVX2) && __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512vl") &&
		       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
#endif
	default:
		return 0;
	}
}

int ct_isa_best(void)
{
	int best = CT_ISA_BASE;

	for (int i = 0; i < CT_ISA_N; i++)
		if (ct_isa_supported(i))
			best = i;
	return best;
}

int ct_isa_set(int isa)
{
	if (isa < 0 || isa >= CT_ISA_N)
		return CT_EINVAL;
	if (!ct_isa_supported(isa))
		return CT_EUNSUPP;
	atomic_store(&ct_isa_cur_, isa);
	return 0;
}

/* First use: $CTUNE_ISA or the best. Threads racing here all compute the
 * same answer; only the first one's message is printed. */
int ct_isa_choose_(void)
{
	static atomic_int warned;
	const char *e = ct_opt_str(CT_OPT_ISA);
	int isa = ct_isa_best(), want;

	if (e != NULL && *e != '\0' && strcmp(e, "auto") != 0) {
		want = ct_isa_parse(e);
		if (want >= 0 && ct_isa_supported(want))
			isa = want;
		else if (atomic_exchange(&warned, 1) == 0)
			fprintf(stderr, "crowdtune: CTUNE_ISA=%s: %s; using %s\n", e,
				want < 0 ? "no such kernel path (x86-64, avx2, avx512, auto)"
					 : "this CPU does not run it", ct_isa_name(isa));
	}
	int expected = -1;

	if (!atomic_compare_exchange_strong(&ct_isa_cur_, &expected, isa))
		isa = expected;
	return isa;
}
