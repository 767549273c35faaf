/*
 * ct_bench.h - the options the model benchmarks (bench_train, bench_lora)
 * share: which shape (--config), the batch (--batch B --seq T), how many
 * timed steps (--steps N) and on which devices (--device D, repeatable).
 * Header-only (static inline).
 */
#ifndef CT_BENCH_H
#define CT_BENCH_H

#include <getopt.h>
#include <stdlib.h>

struct ct_bench_run {
	const char *which;	/* a config's name, or "all" */
	int B, T, steps;
	char *devs[8];		/* --device in order, up to 8 */
	int ndev;
};

/* The defaults: every config, B=4, T=64, 3 steps, no device named. */
#define CT_BENCH_RUN_INIT { .which = "all", .B = 4, .T = 64, .steps = 3 }

/* Their entries in a getopt_long table (short letters c B T n d). */
#define CT_BENCH_RUN_OPTIONS \
	{ "config", required_argument, NULL, 'c' }, \
	{ "batch", required_argument, NULL, 'B' }, \
	{ "seq", required_argument, NULL, 'T' }, \
	{ "steps", required_argument, NULL, 'n' }, \
	{ "device", required_argument, NULL, 'd' }

/* Takes getopt's option c with its argument arg into *r: 1 if c is one of
 * these options, else 0 (r unchanged). */
static inline int ct_bench_run_opt(struct ct_bench_run *r, int c, char *arg)
{
	switch (c) {
	case 'c': r->which = arg; return 1;
	case 'B': r->B = atoi(arg); return 1;
	case 'T': r->T = atoi(arg); return 1;
	case 'n': r->steps = atoi(arg); return 1;
	case 'd': if (r->ndev < 8) r->devs[r->ndev++] = arg; return 1;
	}
	return 0;
}

/* 1 if the batch (T at most 1024) or the steps are out of range, else 0. */
static inline int ct_bench_run_bad(const struct ct_bench_run *r)
{
	return r->B < 1 || r->T < 1 || r->T > 1024 || r->steps < 1;
}

#endif
