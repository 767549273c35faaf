/*
 * bench_mask.c - what the loss mask of version 3 token files costs: a
 * training step on tokens with a chat-like mask (runs of trained tokens,
 * about a third of them, as replies after prompts) against the same step
 * on the same tokens without one, per device and model, random init.
 *
 *   bench/bench_mask [--config small|llama|all] [--batch B] [--seq T]
 *                    [--steps N] [--device D]... [--lora-rank R]
 *
 * The two work units step alternately (unmasked, masked, unmasked, ...;
 * one warm-up step each), so a neighbour's load on a shared machine falls
 * on both alike. Prints one row per (config, device): the median ms per
 * step of each, masked over unmasked (the goal: <= 1.02), and the
 * process CPU time per step of each (all threads) and their ratio: on a
 * machine shared with other work the CPU time is the steadier figure. Defaults: both
 * configs, B=4, T=64, 7 steps, devices cpu and opencl (skipped when there
 * is none). small: GPT-2 L=4 C=256 NH=4 V=50257; llama: a Llama-family
 * L=4 C=256 8 heads sharing 4 KV heads, MLP 688, V=49152, tied (SmolLM2's
 * vocabulary). --lora-rank R steps LoRA adapters instead (all four
 * targets, alpha R).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ct_engine.h"
#include "ct_err.h"
#include "ct_llama.h"

#define MAX_STEPS 64

static double now(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static struct ct_model_config config(const char *name)
{
	if (strcmp(name, "llama") == 0)
		return (struct ct_model_config){ .maxT = 1024, .V = 49152, .Vp = 49152, .L = 4,
						.NH = 8, .C = 256, .arch = CT_ARCH_LLAMA, .KVH = 4,
						.F = 688, .flags = CT_LLAMA_TIED,
						.rope_theta = 100000.0, .rms_eps = 1e-5 };
	return (struct ct_model_config){ .maxT = 1024, .V = 50257, .Vp = 50304, .L = 4, .NH = 4,
					.C = 256 };
}

/* Two WUs on the same tokens, one masked: steps alternate. */
static int run(const char *cfgname, const char *dev, int B, int T, int steps, int rank)
{
	struct ct_model_config cfg = config(cfgname);
	struct ct_gpt2 model = { 0 };
	struct ct_tokens plain = { 0 }, masked = { 0 };
	struct ct_wu_hparams hp;
	struct ct_wu *wu[2] = { NULL, NULL };
	size_t n = (size_t)B * T * (size_t)(steps + 1) + 1;
	ct_tok *tok = malloc(n * sizeof(*tok));
	uint8_t *train = malloc(n);
	double ms[2][MAX_STEPS], cpu[2][MAX_STEPS];
	uint64_t s = 42;
	int rc;

	if (tok == NULL || train == NULL)
		return ct_error(CT_ENOMEM, "tokens");
	for (size_t i = 0; i < n; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		tok[i] = (ct_tok)((s >> 33) % (uint64_t)cfg.V);
		train[i] = (i / 17) % 3 == 2;	/* runs of 17 trained after 34 */
	}
	rc = ct_gpt2_alloc(&model, &cfg);
	if (rc == 0)
		rc = ct_gpt2_init_random(&cfg, 1, model.params);
	if (rc == 0)
		rc = ct_tokens_from_array(&plain, tok, n);
	if (rc == 0)
		rc = ct_tokens_from_array(&masked, tok, n);
	if (rc == 0)
		rc = ct_tokens_set_mask(&masked, train);
	ct_wu_hparams_default(&hp);
	hp.steps = steps + 1;
	hp.B = B;
	hp.T = T;
	hp.lr = 1e-4f;
	if (rank > 0) {
		hp.lora = (struct ct_lora_spec){ .rank = rank, .alpha = (float)rank,
						 .targets = CT_LORA_ALL };
		hp.lora_seed = 1;
	}
	if (rc == 0)
		rc = ct_wu_open(&model, &plain, &hp, dev, &wu[0]);
	if (rc == 0)
		rc = ct_wu_open(&model, &masked, &hp, dev, &wu[1]);
	for (int i = 0; i <= steps && rc == 0; i++) {
		for (int k = 0; k < 2 && rc == 0; k++) {
			double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
			float loss;

			rc = ct_wu_step(wu[k], &loss);
			if (i > 0) {	/* step 0 warms up */
				ms[k][i - 1] = (now(CLOCK_MONOTONIC) - w0) * 1e3;
				cpu[k][i - 1] = (now(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e3;
			}
		}
	}
	if (rc == 0) {
		double m0 = median(ms[0], steps), m1 = median(ms[1], steps);

		double c0 = median(cpu[0], steps), c1 = median(cpu[1], steps);

		printf("%-9s %-9s %4d %5d %4d %12.2f %12.2f %8.3f %12.2f %12.2f %8.3f\n",
		       cfgname, dev, B, T, rank, m0, m1, m1 / m0, c0, c1, c1 / c0);
		fflush(stdout);
	}
	ct_wu_close(wu[0]);
	ct_wu_close(wu[1]);
	ct_tokens_free(&plain);
	ct_tokens_free(&masked);
	ct_gpt2_free(&model);
	free(tok);
	free(train);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", 1, NULL, 'c' }, { "batch", 1, NULL, 'B' }, { "seq", 1, NULL, 'T' },
		{ "steps", 1, NULL, 'n' }, { "device", 1, NULL, 'd' },
		{ "lora-rank", 1, NULL, 'r' }, { NULL, 0, NULL, 0 },
	};
	const char *which = "all", *devs[8];
	int ndev = 0, B = 4, T = 64, steps = 7, rank = 0, c, rc = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c': which = optarg; break;
		case 'B': B = atoi(optarg); break;
		case 'T': T = atoi(optarg); break;
		case 'n': steps = atoi(optarg); break;
		case 'd': if (ndev < 8) devs[ndev++] = optarg; break;
		case 'r': rank = atoi(optarg); break;
		default: return 2;
		}
	}
	if (B < 1 || T < 1 || T > 1024 || steps < 1 || steps > MAX_STEPS || rank < 0) {
		fprintf(stderr, "bench_mask: bad --batch, --seq (<= 1024), --steps (1..%d) or "
			"--lora-rank\n", MAX_STEPS);
		return 2;
	}
	if (ndev == 0) {
		devs[ndev++] = "cpu";
		devs[ndev++] = "opencl";
	}
	printf("%-9s %-9s %4s %5s %4s %12s %12s %8s %12s %12s %8s\n", "config", "device", "B",
	       "T", "rank", "unmasked_ms", "masked_ms", "ratio", "cpu_ms_plain", "cpu_ms_mask",
	       "cpu_ratio");
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "llama" : "small";

		if (strcmp(which, "all") != 0 && strcmp(which, name) != 0)
			continue;
		for (int d = 0; d < ndev; d++) {
			int r = run(name, devs[d], B, T, steps, rank);

			if (r == CT_ENOTFOUND || r == CT_EUNSUPP) {
				fprintf(stderr, "bench_mask: %s: %s (skipped)\n", devs[d],
					ct_errmsg(r));
				continue;
			}
			if (r < 0) {
				fprintf(stderr, "bench_mask: %s on %s: %s\n", name, devs[d],
					ct_errmsg(r));
				rc = 1;
			}
		}
	}
	return rc;
}
