/*
 * bench_sample.c - sampling speed of `ctune sample` (engine/ct_sample.h):
 * tokens generated per second on the C reference ("cpu") and on the
 * OpenCL backend, for the demo's byte-level model (L=2, C=64, V=256,
 * maxT=64), a small GPT-2 (L=4, C=256) and GPT-2 124M's shape (L=12,
 * C=768), the last two with GPT-2's vocabulary; random init.
 *
 *   bench/bench_sample [--config demo|small|124m|all] [--prompt P]
 *                      [--tokens N] [--device D]... [--check]
 *
 * Each row: a prompt of P tokens (default 16), then N tokens (default 32)
 * at temperature 1, top-k 40, seed 1; ms per generated token, tokens/s, and
 * the process CPU time per token (all threads: on a shared machine the
 * wall clock depends on the neighbours). Every step runs a forward pass
 * over the whole context (no key/value cache), so the cost grows with
 * P + N. The last row of each config times the host-side choice alone
 * (ct_sample_pick on that vocabulary). --check requires the same tokens
 * from every device.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_engine.h"
#include "ct_err.h"
#include "ct_log.h"
#include "ct_sample.h"
#include "ct_time.h"

struct bcfg {
	const char *name;
	struct ct_model_config cfg;
};

static const struct bcfg configs[] = {
	{ "demo", { .maxT = 64, .V = 256, .L = 2, .NH = 4, .C = 64, .Vp = 256 } },
	{ "small", { .maxT = 1024, .V = 50257, .L = 4, .NH = 4, .C = 256, .Vp = 50304 } },
	{ "124m", { .maxT = 1024, .V = 50257, .L = 12, .NH = 12, .C = 768, .Vp = 50304 } },
};

/* Generate on dev; ids (N) get the tokens. */
static int run(const struct bcfg *c, const struct ct_gpt2 *m, const char *dev,
	       const ct_tok *prompt, int P, int N, ct_tok *ids)
{
	struct ct_sample_params sp;
	struct ct_tokvec out = { 0 };
	double t0, c0, dt, dc;
	int rc;

	ct_sample_params_default(&sp);
	sp.ntokens = N;
	t0 = ct_time_mono_s();
	c0 = ct_time_cpu_s();
	uint32_t wide[P > 0 ? P : 1];

	for (int i = 0; i < P; i++)
		wide[i] = prompt[i];
	rc = ct_sample_generate(m, dev, wide, (size_t)P, &sp, NULL, NULL, &out);
	dt = (ct_time_mono_s() - t0) / N;
	dc = (ct_time_cpu_s() - c0) / N;
	if (rc == 0) {
		for (int i = 0; i < N; i++)
			ids[i] = (ct_tok)out.v[i];
		printf("| %-6s | %-8s | %3d+%-3d | %10.2f | %9.1f | %10.2f |\n", c->name, dev,
		       P, N, dt * 1e3, 1.0 / dt, dc * 1e3);
	} else {
		printf("| %-6s | %-8s | %3d+%-3d | %s |\n", c->name, dev, P, N, ct_errmsg(rc));
	}
	fflush(stdout);
	ct_tokvec_free(&out);
	return rc;
}

/* The host-side choice alone, over the vocabulary of c. */
static void pick_only(const struct bcfg *c)
{
	const int V = c->cfg.V, reps = 200;
	float *x = malloc((size_t)V * sizeof(float)), *z = malloc((size_t)V * sizeof(float));
	int *ix = malloc((size_t)V * sizeof(int));
	struct ct_sample_rng r;
	double t0, dt;

	if (!x || !z || !ix)
		goto out;
	ct_sample_rng_seed(&r, 3);
	for (int i = 0; i < V; i++)
		x[i] = 8.0f * ct_sample_uniform(&r) - 4.0f;
	t0 = ct_time_mono_s();
	for (int k = 0; k < reps; k++)
		(void)ct_sample_pick(x, V, 1.0f, 40, ct_sample_uniform(&r), z, ix);
	dt = (ct_time_mono_s() - t0) / reps;
	printf("| %-6s | %-8s | %-7s | %10.3f | %9.0f | %10s |\n", c->name, "pick", "top-40",
	       dt * 1e3, 1.0 / dt, "-");
out:
	free(x);
	free(z);
	free(ix);
}

static int bench(const struct bcfg *c, const char **devs, int ndev, int P, int N, int check)
{
	struct ct_gpt2 m = { 0 };
	ct_tok *prompt = malloc((size_t)P * sizeof(ct_tok));
	ct_tok *ids = calloc((size_t)ndev * N, sizeof(ct_tok));
	int rc = (prompt && ids) ? ct_gpt2_alloc(&m, &c->cfg) : CT_ENOMEM;

	if (rc == 0)
		rc = ct_gpt2_init_random(&c->cfg, 1, m.params);
	for (int i = 0; rc == 0 && i < P; i++)
		prompt[i] = (ct_tok)((i * 37 + 11) % c->cfg.V);
	for (int d = 0; rc == 0 && d < ndev; d++)
		rc = run(c, &m, devs[d], prompt, P, N, ids + (size_t)d * N);
	if (rc == 0)
		pick_only(c);
	for (int d = 1; rc == 0 && check && d < ndev; d++)
		if (memcmp(ids, ids + (size_t)d * N, (size_t)N * sizeof(ct_tok)) != 0) {
			fprintf(stderr, "bench_sample: %s: %s and %s sampled different tokens\n",
				c->name, devs[0], devs[d]);
			rc = CT_EMISMATCH;
		}
	if (rc == 0 && check && ndev > 1)
		printf("|        | check    | same %d tokens on every device |  |  |  |\n", N);
	ct_gpt2_free(&m);
	free(prompt);
	free(ids);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", 1, NULL, 'c' }, { "prompt", 1, NULL, 'p' },
		{ "tokens", 1, NULL, 'n' }, { "device", 1, NULL, 'd' },
		{ "check", 0, NULL, 'k' }, { "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *which = "all", *devs[8];
	int ndev = 0, P = 16, N = 32, check = 0, c, rc = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': which = optarg; break;
		case 'p': P = atoi(optarg); break;
		case 'n': N = atoi(optarg); break;
		case 'd': if (ndev < 8) devs[ndev++] = optarg; break;
		case 'k': check = 1; break;
		default:
			fprintf(stderr, "usage: bench_sample [--config demo|small|124m|all] "
				"[--prompt P] [--tokens N] [--device D]... [--check]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (P < 1 || N < 1 || N > CT_SAMPLE_MAX_TOKENS) {
		fprintf(stderr, "bench_sample: need --prompt >= 1 and --tokens 1..%d\n",
			CT_SAMPLE_MAX_TOKENS);
		return 2;
	}
	if (ndev == 0) {
		devs[ndev++] = "cpu";
		devs[ndev++] = "opencl";
	}
	/* a strong reference, so the static library links the OpenCL backend */
	if (ct_ocl_backend_ops.name == NULL)
		return 1;
	ct_log_set_level(CT_LOG_WARN);
	printf("| config | device   | P+N     | ms / token | tokens/s  | CPU ms/tok |\n"
	       "|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]) && rc == 0; i++)
		if (strcmp(which, "all") == 0 || strcmp(which, configs[i].name) == 0)
			rc = bench(&configs[i], (const char **)devs, ndev, P, N, check);
	if (rc < 0)
		fprintf(stderr, "bench_sample: %s\n", ct_errmsg(rc));
	return rc < 0 ? 1 : 0;
}
