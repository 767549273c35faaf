/*
 * ct_options.c - the options table and its one parser (see ct_options.h).
 * Values set in this process are kept as copies that are never freed while
 * the process runs (a set is rare: a configuration value at start, tests),
 * so a pointer a reader holds stays valid.
 */
#include "ct_options.h"

#include "ct_err.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum kind { K_INT, K_BOOL, K_WORD, K_TEXT };

struct opt_def {
	const char *name;
	enum kind kind;
	long lo, hi;		/* K_INT */
	const char *words;	/* K_WORD: "a|b|c" */
	const char *help;
};

static const struct opt_def defs[CT_OPT_COUNT] = {
	[CT_OPT_THREADS] = { "CTUNE_THREADS", K_INT, 1, 4096, NULL,
			     "worker threads of the C reference (default: the online CPUs)" },
	[CT_OPT_ISA] = { "CTUNE_ISA", K_TEXT, 0, 0, NULL,
			 "the C reference's CPU kernel path: auto, x86-64, avx2, avx512 "
			 "(engine/ct_isa.c warns of others and takes the best this CPU runs)" },
	[CT_OPT_KERNEL_CACHE] = { "CTUNE_KERNEL_CACHE", K_TEXT, 0, 0, NULL,
				  "OpenCL program cache directory" },
	[CT_OPT_XDG_CACHE_HOME] = { "XDG_CACHE_HOME", K_TEXT, 0, 0, NULL,
				    "its default: $XDG_CACHE_HOME/crowdtune/kernels" },
	[CT_OPT_HOME] = { "HOME", K_TEXT, 0, 0, NULL,
			  "else $HOME/.cache/crowdtune/kernels" },
	[CT_OPT_TOKENIZER_DIR] = { "CTUNE_TOKENIZER_DIR", K_TEXT, 0, 0, NULL,
				   "directory with GPT-2's tokenizer files, before the installed ones" },
	[CT_OPT_INFLATE] = { "CT_INFLATE", K_WORD, 0, 0, "zlib|isal",
			     "inflating uploads: ISA-L when built with it (default), or zlib" },
	[CT_OPT_TMPDIR] = { "TMPDIR", K_TEXT, 0, 0, NULL, "temporary files (default /tmp)" },
	[CT_OPT_OCL_EW] = { "CT_OCL_EW", K_INT, 1, 64, NULL,
			    "elements per work-item of the elementwise kernels" },
	[CT_OPT_OCL_ATT_R] = { "CT_OCL_ATT_R", K_INT, 1, 8, NULL,
			       "rows per work-item of the attention kernels" },
	[CT_OPT_OCL_MM] = { "CT_OCL_MM", K_TEXT, 0, 0, NULL, "matmul register blocks R,VW,NV" },
	[CT_OPT_OCL_MMT] = { "CT_OCL_MMT", K_TEXT, 0, 0, NULL,
			     "tiled matmul tiles BM,BN,BK,RM,RN" },
	[CT_OPT_OCL_MM_TILED] = { "CT_OCL_MM_TILED", K_WORD, 0, 0, "0|1|b|m|s",
				  "local-memory tiled matmuls: off, on, big, medium or small tiles" },
	[CT_OPT_OCL_ATT_TILED] = { "CT_OCL_ATT_TILED", K_BOOL, 0, 1, NULL,
				   "tiled attention kernels" },
	[CT_OPT_OCL_RED_TILED] = { "CT_OCL_RED_TILED", K_BOOL, 0, 1, NULL,
				   "tiled reductions" },
	[CT_OPT_OCL_LOCAL] = { "CT_OCL_LOCAL", K_WORD, 0, 0, "cpu|gpu",
			       "work-group shapes as for CPUs or for GPUs" },
	[CT_OPT_OCL_KC] = { "CT_OCL_KC", K_INT, 1, 1L << 30, NULL,
			    "matmul inner-dimension piece" },
	[CT_OPT_OCL_MATVEC] = { "CT_OCL_MATVEC", K_BOOL, 0, 1, NULL,
				"matrix-vector kernel for one or two rows" },
	[CT_OPT_OCL_FWD] = { "CT_OCL_FWD", K_WORD, 0, 0, "n|t",
			     "forward matmul as out (n) or out transposed (t)" },
	[CT_OPT_OCL_WIDE_MAX] = { "CT_OCL_WIDE_MAX", K_INT, 1, 1L << 30, NULL,
				  "largest piece of a widened bf16 weight block, in elements" },
	[CT_OPT_OCL_HEAD_ROWS] = { "CT_OCL_HEAD_ROWS", K_INT, 1, 1L << 30, NULL,
				   "rows of the vocabulary head per evaluation piece" },
	[CT_OPT_OCL_LEAN] = { "CT_OCL_LEAN", K_BOOL, 0, 1, NULL,
			      "recompute activations in the backward pass" },
	[CT_OPT_OCL_LEAN_ROWS] = { "CT_OCL_LEAN_ROWS", K_INT, 1, 1L << 30, NULL,
				   "rows of a lean pass's MLP block" },
	[CT_OPT_OCL_ALLOC_LOG] = { "CT_OCL_ALLOC_LOG", K_BOOL, 0, 1, NULL,
				   "print each device buffer's size as it is allocated" },
	[CT_OPT_OCL_PROFILE] = { "CT_OCL_PROFILE", K_BOOL, 0, 1, NULL,
				 "print each kernel's time at exit" },
	[CT_OPT_OCL_TEST_OPTIONS] = { "CT_OCL_TEST_OPTIONS", K_TEXT, 0, 0, NULL,
				      "extra OpenCL build options (tests: deliberately wrong builds)" },
	[CT_OPT_DB_PROFILE] = { "CT_DB_PROFILE", K_TEXT, 0, 0, NULL,
				"file (\"-\": stderr) for each database statement's calls and "
				"time, written when the process closes the database" },
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const char *set_value[CT_OPT_COUNT];	/* ct_opt_set's copies */
static int is_set[CT_OPT_COUNT];

/* 0 when `v` is a valid value of option o, else CT_EINVAL naming it. */
static int check(enum ct_opt o, const char *v)
{
	const struct opt_def *d = &defs[o];
	char *end;
	long n;

	switch (d->kind) {
	case K_INT:
	case K_BOOL:
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno == 0 && end != v && *end == '\0' && n >= d->lo && n <= d->hi)
			return 0;
		if (d->kind == K_BOOL)
			return ct_error(CT_EINVAL, "%s='%s': want 0 or 1", d->name, v);
		return ct_error(CT_EINVAL, "%s='%s': want %ld..%ld", d->name, v, d->lo, d->hi);
	case K_WORD:
		for (const char *w = d->words; *w;) {
			size_t l = strcspn(w, "|");

			if (strlen(v) == l && strncmp(v, w, l) == 0)
				return 0;
			w += l + (w[l] == '|');
		}
		return ct_error(CT_EINVAL, "%s='%s': want one of %s", d->name, v, d->words);
	case K_TEXT:
		return 0;
	}
	return CT_EINVAL;
}

/* The raw value: this process's, else the environment's; NULL if unset. */
static const char *raw(enum ct_opt o)
{
	const char *v;

	pthread_mutex_lock(&mu);
	v = is_set[o] ? set_value[o] : getenv(defs[o].name);
	pthread_mutex_unlock(&mu);
	return v != NULL && v[0] != '\0' ? v : NULL;
}

const char *ct_opt_str(enum ct_opt o)
{
	const char *v = raw(o);

	return v != NULL && check(o, v) == 0 ? v : NULL;
}

long ct_opt_int(enum ct_opt o, long def)
{
	const char *v = ct_opt_str(o);

	return v != NULL && (defs[o].kind == K_INT || defs[o].kind == K_BOOL)
		? strtol(v, NULL, 10) : def;
}

int ct_opt_set(enum ct_opt o, const char *value)
{
	char *copy = NULL;

	if (value != NULL && value[0] != '\0') {
		int rc = check(o, value);

		if (rc < 0)
			return rc;
		copy = strdup(value);
		if (copy == NULL)
			return ct_error(CT_ENOMEM, "%s", defs[o].name);
	}
	pthread_mutex_lock(&mu);
	set_value[o] = copy;	/* an earlier copy stays: readers may hold it */
	is_set[o] = value != NULL;
	pthread_mutex_unlock(&mu);
	return 0;
}

int ct_options_check(void)
{
	for (int o = 0; o < CT_OPT_COUNT; o++) {
		const char *v = raw((enum ct_opt)o);
		int rc = v != NULL ? check((enum ct_opt)o, v) : 0;

		if (rc < 0)
			return rc;
	}
	return 0;
}

const char *ct_opt_name(enum ct_opt o)
{
	return defs[o].name;
}
