/*
 * bench_tolerance.c - how the validator's tolerance path does: results of
 * the same work units from devices that do not conform (OpenCL built to
 * contract multiply-adds, or to flush subnormals, as the self-test's
 * tests build it) and small cheats, each held against the conforming
 * result by the validator's own agreement rule (ct_val_agree,
 * server/validate/quorum.c) at several tolerances.
 *
 *   bench_tolerance [--wus N] [--steps S] [--device opencl:0] [--layers L]
 *                   [--channels C] [--seq T] [--tolerance T1,T2,...]
 *
 * N work units (default 8) of S steps (default 20) of a GPT-2 (default
 * L=2, C=64, T=64; the lo-fi benchmark's character language, B=4), each from
 * the same random base on its own shard. The conforming result is the C
 * reference's; OpenCL's conforming build must equal it bit for bit. Every
 * other candidate claims a non-conforming device, which is what sends a
 * pair down the tolerance path (an honest volunteer's slightly different
 * GPU, or a cheater pretending to have one):
 *
 *   contracting / flushing build  honest work on a non-conforming device,
 *                                 with the kernels PoCL picks on a CPU and
 *                                 with the GPU-shaped ones forced (tiled
 *                                 matmuls, attention, reductions); and
 *                                 builds a fast driver may make
 *                                 (-cl-mad-enable, -cl-fast-relaxed-math)
 *   update x (1 + e)              the trained update scaled
 *   update + noise e              the update plus e times its own norm of
 *                                 noise, spread over every weight
 *   S-1 steps, S/2 steps          work left undone
 *   another shard                 trained on the wrong data
 *
 * For each, the table gives the distance the rule measures,
 * ||w_a - w_b|| / max(||d_a||, ||d_b||) (d the update from the base), as
 * the median and largest over the WUs, and how many of the N the rule
 * accepts at each tolerance. The validator's probe loss is computed on a
 * held-out text of the same language (4 batches) for both.
 */
#include "ct_corpus.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_gpt2.h"
#include "ct_hash.h"
#include "ct_options.h"
#include "ct_tokens.h"
#include "validate/quorum.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WUS 64
#define MAX_TOLS 8
#define PROBE_BATCHES 4
#define CONTRACT "-DCT_TEST_CONTRACT"	/* the self-test's tests' wrong builds */
#define FLUSH "-cl-denorms-are-zero"
#define MAD CONTRACT " -cl-mad-enable"	/* a * b + c at reduced accuracy */
#define RELAXED CONTRACT " -cl-fast-relaxed-math"	/* what a fast driver may do */

struct opts {
	int wus, steps, L, C, T;
	const char *device;
	double tol[MAX_TOLS];
	int ntol;
};

/* What a candidate is, and how it is made from the WU's conforming result
 * or trained anew. */
enum kind {
	K_OCL, K_CONTRACT, K_FLUSH, K_GPU, K_GPU_CONTRACT, K_GPU_FLUSH, K_MAD, K_RELAXED, K_SCALE3, K_SCALE2, K_NOISE3, K_NOISE2, K_SHORT1,
	K_HALF, K_SHARD, K_COUNT
};

static const char *const kind_name[K_COUNT] = {
	"OpenCL, conforming build", "OpenCL, contracting build (honest)",
	"OpenCL, subnormals flushed (honest)", "OpenCL, GPU kernels, conforming build",
	"OpenCL, GPU kernels, contracting build (honest)",
	"OpenCL, GPU kernels, subnormals flushed (honest)",
	"OpenCL, GPU kernels, -cl-mad-enable (honest)",
	"OpenCL, GPU kernels, -cl-fast-relaxed-math (honest)", "cheat: update x 1.001",
	"cheat: update x 1.01", "cheat: update + noise 1e-3", "cheat: update + noise 1e-2",
	"cheat: S-1 steps", "cheat: S/2 steps", "cheat: another shard",
};

struct bench {
	struct opts o;
	struct ct_gpt2 base;
	struct ct_wu_hparams hp;
	struct ct_corpus_lang lang;
	struct ct_tokens probe;
	ct_tok *probe_tok;
	size_t n, shard_len;
	double dist[K_COUNT][MAX_WUS];
	int accepted[K_COUNT][MAX_TOLS];
	int identical[K_COUNT];
};

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Shard k's tokens (owned by the caller: free() them). */
static ct_tok *shard_tokens(const struct bench *b, int k)
{
	ct_tok *t = malloc(b->shard_len * sizeof(*t));

	if (t != NULL)
		ct_corpus_generate(&b->lang, 100 + (uint64_t)k, t, b->shard_len);
	return t;
}

/* The OpenCL options that force the GPU-shaped kernels (tiled matmuls,
 * attention and reductions) on any device: on or cleared. */
static int gpu_paths(int on)
{
	static const enum ct_opt o[] = { CT_OPT_OCL_MM_TILED, CT_OPT_OCL_ATT_TILED,
					 CT_OPT_OCL_RED_TILED };
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < sizeof(o) / sizeof(o[0]); i++)
		rc = ct_opt_set(o[i], on ? "1" : NULL);
	return rc;
}

/* Train WU k (its own shard, or shard `data`) for steps on device into
 * out; opts: OpenCL build options for this run, or NULL; gpu: with the
 * GPU-shaped kernels. */
static int train(const struct bench *b, int data, int steps, const char *device,
		 const char *opts, int gpu, float *out)
{
	struct ct_wu_hparams hp = b->hp;
	ct_tok *tok = shard_tokens(b, data);
	struct ct_tokens t = { .tok = tok, .n = b->shard_len };
	int rc = tok ? 0 : CT_ENOMEM;

	hp.steps = steps;
	if (rc == 0)
		rc = ct_opt_set(CT_OPT_OCL_TEST_OPTIONS, opts);
	if (rc == 0)
		rc = gpu_paths(gpu);
	if (rc == 0)
		rc = ct_wu_run(&b->base, &t, &hp, device, out, NULL);
	ct_opt_set(CT_OPT_OCL_TEST_OPTIONS, NULL);
	gpu_paths(0);
	free(tok);
	return rc;
}

static double norm_diff(const float *a, const float *b, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++) {
		double d = (double)a[i] - (double)b[i];

		s += d * d;
	}
	return sqrt(s);
}

/* A candidate as the validator sees it: hash, update norm, probe loss. */
static int candidate(const struct bench *b, const float *w, int conforming,
		     struct ct_val_cand *c)
{
	struct ct_gpt2 m = b->base;
	float loss = 0;
	int rc;

	memset(c, 0, sizeof(*c));
	c->conforming = conforming;
	c->w = w;
	ct_sha256(w, b->n * sizeof(float), c->sha);
	c->update_norm = norm_diff(w, b->base.params, b->n);
	m.params = (float *)w;
	rc = ct_eval(&m, &b->probe, b->hp.B, b->hp.T, PROBE_BATCHES, "cpu", &loss);
	c->probe_loss = loss;
	return rc;
}

/* Make candidate `k` of WU `wu` from its conforming result wc into w. */
static int make(const struct bench *b, int wu, enum kind k, const float *wc, float *w)
{
	const float *w0 = b->base.params;
	uint64_t s = 0x5eed0000u + (uint64_t)wu * 131 + (uint64_t)k;
	int S = b->o.steps;

	switch (k) {
	case K_OCL: return train(b, wu, S, b->o.device, NULL, 0, w);
	case K_CONTRACT: return train(b, wu, S, b->o.device, CONTRACT, 0, w);
	case K_FLUSH: return train(b, wu, S, b->o.device, FLUSH, 0, w);
	case K_GPU: return train(b, wu, S, b->o.device, NULL, 1, w);
	case K_GPU_CONTRACT: return train(b, wu, S, b->o.device, CONTRACT, 1, w);
	case K_GPU_FLUSH: return train(b, wu, S, b->o.device, FLUSH, 1, w);
	case K_MAD: return train(b, wu, S, b->o.device, MAD, 1, w);
	case K_RELAXED: return train(b, wu, S, b->o.device, RELAXED, 1, w);
	case K_SHORT1: return train(b, wu, S > 1 ? S - 1 : 1, "cpu", NULL, 0, w);
	case K_HALF: return train(b, wu, S > 1 ? S / 2 : 1, "cpu", NULL, 0, w);
	case K_SHARD: return train(b, MAX_WUS + wu, S, "cpu", NULL, 0, w);	/* no WU's */
	case K_SCALE3:
	case K_SCALE2: {
		double f = k == K_SCALE3 ? 1.001 : 1.01;

		for (size_t i = 0; i < b->n; i++)
			w[i] = (float)(w0[i] + f * ((double)wc[i] - w0[i]));
		return 0;
	}
	case K_NOISE3:
	case K_NOISE2: {
		/* noise of norm e * ||d||: each weight +-e * ||d|| / sqrt(n) */
		double e = k == K_NOISE3 ? 1e-3 : 1e-2;
		double amp = e * norm_diff(wc, w0, b->n) / sqrt((double)b->n);

		for (size_t i = 0; i < b->n; i++)
			w[i] = (float)(wc[i] + ((splitmix(&s) & 1) ? amp : -amp));
		return 0;
	}
	case K_COUNT: break;
	}
	return CT_EINVAL;
}

static int run_wu(struct bench *b, int wu, float *wc, float *w)
{
	struct ct_val_cand cc, ck;
	int rc = train(b, wu, b->o.steps, "cpu", NULL, 0, wc);

	if (rc == 0)
		rc = candidate(b, wc, 1, &cc);
	for (int k = 0; rc == 0 && k < K_COUNT; k++) {
		rc = make(b, wu, (enum kind)k, wc, w);
		if (rc == 0)	/* every candidate claims a non-conforming device */
			rc = candidate(b, w, 0, &ck);
		if (rc < 0)
			break;
		double dmax = fmax(cc.update_norm, ck.update_norm);

		b->dist[k][wu] = dmax > 0 ? norm_diff(wc, w, b->n) / dmax : 0;
		b->identical[k] += memcmp(cc.sha, ck.sha, sizeof(cc.sha)) == 0;
		for (int t = 0; t < b->o.ntol; t++)
			b->accepted[k][t] += ct_val_agree(&cc, &ck, b->n, b->o.tol[t]) == 1;
	}
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void print_table(const struct bench *b)
{
	printf("| candidate against the conforming result | distance median | largest | "
	       "bit-identical |");
	for (int t = 0; t < b->o.ntol; t++)
		printf(" accepted at %g |", b->o.tol[t]);
	printf("\n|---|---|---|---|");
	for (int t = 0; t < b->o.ntol; t++)
		printf("---|");
	printf("\n");
	for (int k = 0; k < K_COUNT; k++) {
		double d[MAX_WUS];

		memcpy(d, b->dist[k], sizeof(double) * (size_t)b->o.wus);
		qsort(d, (size_t)b->o.wus, sizeof(double), cmp_double);
		printf("| %s | %.3g | %.3g | %d/%d |", kind_name[k], d[b->o.wus / 2],
		       d[b->o.wus - 1], b->identical[k], b->o.wus);
		for (int t = 0; t < b->o.ntol; t++)
			printf(" %d/%d |", b->accepted[k][t], b->o.wus);
		printf("\n");
	}
}

static int parse_tols(const char *s, struct opts *o)
{
	char *end;

	o->ntol = 0;
	while (*s && o->ntol < MAX_TOLS) {
		double v = strtod(s, &end);

		if (end == s || !(v > 0) || (*end != ',' && *end != '\0'))
			return ct_error(CT_EUSAGE, "--tolerance: want positive numbers, "
					"comma-separated");
		o->tol[o->ntol++] = v;
		s = *end ? end + 1 : end;
	}
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "wus", required_argument, NULL, 'w' }, { "steps", required_argument, NULL, 's' },
		{ "device", required_argument, NULL, 'd' }, { "layers", required_argument, NULL, 'L' },
		{ "channels", required_argument, NULL, 'C' }, { "seq", required_argument, NULL, 'T' },
		{ "tolerance", required_argument, NULL, 't' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc = 0;

	*o = (struct opts){ .wus = 8, .steps = 20, .L = 2, .C = 64, .T = 64, .device = "opencl:0" };
	rc = parse_tols("1e-4,1e-3,1e-2", o);
	while (rc == 0 && (c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'w': o->wus = atoi(optarg); break;
		case 's': o->steps = atoi(optarg); break;
		case 'd': o->device = optarg; break;
		case 'L': o->L = atoi(optarg); break;
		case 'C': o->C = atoi(optarg); break;
		case 'T': o->T = atoi(optarg); break;
		case 't': rc = parse_tols(optarg, o); break;
		case 'h':
			printf("usage: bench_tolerance [--wus N] [--steps S] [--device D] "
			       "[--layers L] [--channels C] [--seq T] [--tolerance T1,T2,...]\n"
			       "Trains N WUs (default 8) of S steps (20) of a GPT-2 (L=2 C=64 "
			       "T=64) on the C reference and\nnon-conforming OpenCL builds on D "
			       "(opencl:0), makes small cheats, and prints how many\nthe "
			       "validator's tolerance rule accepts at each tolerance "
			       "(1e-4,1e-3,1e-2).\n");
			exit(0);
		default:
			return ct_error(CT_EUSAGE, "usage: bench_tolerance [--wus N] [--steps S] "
					"[--device D] [--layers L] [--channels C] [--seq T] "
					"[--tolerance T1,T2,...]");
		}
	}
	if (rc == 0 && (o->wus < 1 || o->wus > MAX_WUS || o->steps < 1 || o->steps > 100000 ||
			o->L < 1 || o->L > 48 || o->C < 4 || o->C > 4096 || o->C % 4 ||
			o->T < 1 || o->T > 1024))
		rc = ct_error(CT_EUSAGE, "--wus 1..%d, --steps 1..100000, --layers 1..48, "
			      "--channels 4..4096 (a multiple of 4), --seq 1..1024", MAX_WUS);
	return rc;
}

static void print_load(void)
{
	char line[128] = "";
	FILE *f = fopen("/proc/loadavg", "r");

	if (f != NULL && fgets(line, sizeof(line), f) != NULL)
		line[strcspn(line, "\n")] = '\0';
	if (f != NULL)
		fclose(f);
	printf("load average: %s\n", line);
}

static int setup(struct bench *b)
{
	struct ct_model_config cfg = { .maxT = b->o.T, .V = CT_CORPUS_V, .Vp = 32, .L = b->o.L,
				      .NH = 4, .C = b->o.C };
	int rc = ct_gpt2_alloc(&b->base, &cfg);

	if (rc == 0)
		rc = ct_gpt2_init_random(&cfg, 1, b->base.params);
	if (rc < 0)
		return rc;
	b->n = b->base.lay.total;
	ct_wu_hparams_default(&b->hp);
	b->hp.lr = 1e-3f;
	b->hp.T = b->o.T;
	b->shard_len = (size_t)b->o.steps * b->hp.B * b->hp.T + 1;
	ct_corpus_lang_build(&b->lang, 7, NULL, 0);
	b->probe.n = (size_t)PROBE_BATCHES * b->hp.B * b->hp.T + 1;
	b->probe_tok = malloc(b->probe.n * sizeof(ct_tok));
	if (b->probe_tok == NULL)
		return CT_ENOMEM;
	ct_corpus_generate(&b->lang, 99, b->probe_tok, b->probe.n);
	b->probe.tok = b->probe_tok;
	return 0;
}

int main(int argc, char **argv)
{
	struct bench *b = calloc(1, sizeof(*b));
	float *wc = NULL, *w = NULL;
	int rc = b ? parse(argc, argv, &b->o) : CT_ENOMEM;

	if (rc == 0)
		rc = ct_options_check();
	if (rc == 0)
		rc = setup(b);
	if (rc == 0) {
		wc = malloc(b->n * sizeof(float));
		w = malloc(b->n * sizeof(float));
		rc = wc && w ? 0 : CT_ENOMEM;
	}
	if (rc == 0) {
		printf("bench_tolerance: %d WUs of %d steps, B=%d T=%d, GPT-2 L=%d C=%d "
		       "(%zu weights), lr %g; conforming: the C reference; others on %s\n",
		       b->o.wus, b->o.steps, b->hp.B, b->hp.T, b->o.L, b->o.C, b->n,
		       (double)b->hp.lr, b->o.device);
		print_load();
	}
	for (int i = 0; rc == 0 && i < b->o.wus; i++) {
		rc = run_wu(b, i, wc, w);
		fprintf(stderr, "bench_tolerance: WU %d of %d done\n", i + 1, b->o.wus);
	}
	if (rc == 0) {
		print_table(b);
		print_load();
	} else {
		fprintf(stderr, "bench_tolerance: %s\n", ct_errmsg(rc));
	}
	free(wc);
	free(w);
	if (b != NULL) {
		free(b->probe_tok);
		ct_gpt2_free(&b->base);
	}
	free(b);
	return rc == 0 ? 0 : 1;
}
