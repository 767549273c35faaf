/*
 * ct_options.h - the settings the engine and the libraries take from the
 * process environment, in one table with one checked parser: nothing else
 * in engine/, lib/ or server/ calls getenv, and nothing calls setenv.
 *
 * Each option has a variable name, a kind (an integer in a range, 0|1, one
 * of a few words, or free text such as a path) and a line of help
 * (`ctune options`). A program checks them all once at start
 * (ct_options_check: a value that does not parse is refused by name, as
 * OpenCL set-up does), and reads them where it uses them: a value set in
 * this process (ct_opt_set: the server's daemons.eval_threads, tests)
 * comes first, then the environment. Empty values count as unset.
 *
 * The OpenCL options tune or test the kernels: results never change with
 * them (doc/workunit.md; engine/ct_ocl_ops.h says what each forces).
 */
#ifndef CT_OPTIONS_H
#define CT_OPTIONS_H

enum ct_opt {
	CT_OPT_THREADS,		/* CTUNE_THREADS: C reference worker threads */
	CT_OPT_ISA,		/* CTUNE_ISA: the C reference's CPU kernel path */
	CT_OPT_KERNEL_CACHE,	/* CTUNE_KERNEL_CACHE: OpenCL program cache */
	CT_OPT_XDG_CACHE_HOME,	/* XDG_CACHE_HOME, HOME: its default place */
	CT_OPT_HOME,
	CT_OPT_TOKENIZER_DIR,	/* CTUNE_TOKENIZER_DIR: GPT-2's tokenizer files */
	CT_OPT_INFLATE,		/* CT_INFLATE: zlib or isal for inflating */
	CT_OPT_TMPDIR,		/* TMPDIR */
	CT_OPT_OCL_EW,
	CT_OPT_OCL_ATT_R,
	CT_OPT_OCL_MM,
	CT_OPT_OCL_MMT,
	CT_OPT_OCL_MM_TILED,
	CT_OPT_OCL_ATT_TILED,
	CT_OPT_OCL_RED_TILED,
	CT_OPT_OCL_LOCAL,
	CT_OPT_OCL_KC,
	CT_OPT_OCL_MATVEC,
	CT_OPT_OCL_FWD,
	CT_OPT_OCL_WIDE_MAX,
	CT_OPT_OCL_HEAD_ROWS,
	CT_OPT_OCL_LEAN,
	CT_OPT_OCL_LEAN_ROWS,
	CT_OPT_OCL_ALLOC_LOG,
	CT_OPT_OCL_PROFILE,
	CT_OPT_OCL_TEST_OPTIONS,
	CT_OPT_DB_PROFILE,
	CT_OPT_COUNT
};

/* The option's value, or NULL when it is unset or its value does not
 * parse (ct_options_check says which). Valid until it is set again. */
const char *ct_opt_str(enum ct_opt o);

/* An integer or 0|1 option's value, or `def` when it is unset. */
long ct_opt_int(enum ct_opt o, long def);

/* Set (value) or clear (NULL: back to the environment's) an option in
 * this process, checked as the environment's values are. Returns 0 or
 * CT_EINVAL (the detail names the variable and what it wants). */
int ct_opt_set(enum ct_opt o, const char *value);

/* 0, or CT_EINVAL naming the first option whose value does not parse. */
int ct_options_check(void);

/* The variable's name ("CTUNE_THREADS"). */
const char *ct_opt_name(enum ct_opt o);

#endif
