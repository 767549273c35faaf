/*
 * bench_lora.c - what LoRA saves a volunteer: upload bytes per result,
 * peak memory of training, and time per step, LoRA vs full fine-tuning on
 * the same model, for a small GPT-2 (L=4, C=256, NH=4) and GPT-2 124M's
 * shape (L=12, C=768, NH=12), both with GPT-2's vocabulary, random init.
 *
 *   bench/bench_lora [--config small|124m|all] [--batch B] [--seq T]
 *                    [--steps N] [--device D]... [--rank R]... [--targets LIST]
 *
 * Every row is one child process (fork), so peak memory is that run's
 * alone: the child loads the model, opens a work unit the way `ctune
 * train` does (ct_wu_open: full, or LoRA rank R with alpha = R on LIST,
 * default all four targets), runs one warm-up step and N timed steps, and
 * reports
 *   - ms per step and tokens/s (mean of the N steps) and process CPU ms;
 *   - peak RSS (VmHWM) after training, before encoding the result;
 *   - for OpenCL, the bytes of device buffers allocated (ct_ocl_alloc_total:
 *     an upper bound, buffers grown on demand count every size they had);
 *   - the upload: the trained weights (full) or adapters (LoRA) encoded by
 *     ct_delta exactly as a volunteer's result, lossless and int8.
 * Defaults: all configs, B=4, T=64, 3 steps, device cpu, ranks 8.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ct_bench.h"
#include "ct_buf.h"
#include "ct_delta.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_ocl.h"
#include "ct_time.h"

struct bcfg {
	const char *name;
	struct ct_model_config cfg;
};

static const struct bcfg configs[] = {
	{ "small", { .maxT = 1024, .V = 50257, .L = 4, .NH = 4, .C = 256, .Vp = 50304 } },
	{ "124m", { .maxT = 1024, .V = 50257, .L = 12, .NH = 12, .C = 768, .Vp = 50304 } },
};

struct result {
	double ms, cpu_ms, tok_s;
	double rss_mb, dev_mb;
	double lossless, int8;		/* bytes */
	size_t trained;			/* floats trained */
	float loss;
	int rc;
};

/* Peak resident set of this process (kB from /proc/self/status), in MB. */
static double peak_rss_mb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmHWM:", 6) == 0)
			kb = atof(line + 6);
	if (f)
		fclose(f);
	return kb / 1024.0;
}

/* Encode what the WU trained both ways; sizes into r. */
static int encode(struct ct_wu *wu, const struct ct_gpt2 *m, const struct ct_wu_hparams *hp,
		  struct result *r)
{
	const struct ct_model_config *c = &m->cfg;
	struct ct_delta_model dm = { (uint32_t)c->maxT, (uint32_t)c->V, (uint32_t)c->Vp,
				     (uint32_t)c->L, (uint32_t)c->NH, (uint32_t)c->C };
	struct ct_delta_lora sec = { (uint32_t)hp->lora.rank, hp->lora.targets,
				     hp->lora.alpha, hp->lora_seed, CT_ARCH_GPT2 };
	unsigned char sha[32] = { 0 };
	size_t n = ct_wu_nparams_trained(wu);
	float *w = malloc(n * sizeof(float)), *init = NULL;
	struct ct_buf buf = CT_BUF_INIT(0);
	int rc = w ? 0 : ct_error(CT_ENOMEM, "weights");

	if (rc == 0)
		rc = ct_wu_read_trained(wu, w);
	if (rc == 0 && hp->lora.rank > 0) {
		init = malloc(n * sizeof(float));
		rc = init ? ct_lora_init(c, &hp->lora, hp->lora_seed, init)
			  : ct_error(CT_ENOMEM, "adapters");
	}
	for (int e = 0; e < 2 && rc == 0; e++) {
		int enc = e == 0 ? CT_DELTA_LOSSLESS : CT_DELTA_INT8;

		ct_buf_reset(&buf);
		/* lossless adapters as the client writes them (ct_lora_result.h) */
		rc = init ? ct_delta_encode_lora(init, w, n, &dm, sha, &sec,
						 e == 0 ? CT_DELTA_LOSSLESS_TENSOR : enc, -1, &buf)
			  : ct_delta_encode(m->params, w, n, &dm, sha, enc, -1, &buf);
		if (rc == 0)
			*(e == 0 ? &r->lossless : &r->int8) = (double)buf.len;
	}
	r->trained = n;
	ct_buf_free(&buf);
	free(w);
	free(init);
	return rc;
}

/* The child's work: one WU of steps+1 steps; fills r. */
static int measure(const struct bcfg *c, const char *dev, int B, int T, int steps,
		   const struct ct_lora_spec *lora, struct result *r)
{
	struct ct_gpt2 m = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams hp;
	struct ct_wu *wu = NULL;
	size_t ntok = (size_t)(steps + 1) * B * T + 1;
	ct_tok *t = malloc(ntok * sizeof(ct_tok));
	double t0 = 0, c0 = 0;
	int rc = t ? ct_gpt2_alloc(&m, &c->cfg) : ct_error(CT_ENOMEM, "tokens");

	if (rc == 0)
		rc = ct_gpt2_init_random(&c->cfg, 1337, m.params);
	for (size_t i = 0; rc == 0 && i < ntok; i++)
		t[i] = (ct_tok)((i * 2654435761u) % (unsigned)c->cfg.V);
	if (rc == 0)
		rc = ct_tokens_from_array(&tok, t, ntok);
	ct_wu_hparams_default(&hp);
	hp.steps = steps + 1;
	hp.B = B;
	hp.T = T;
	hp.grad_clip = 1.0f;
	hp.lora = *lora;
	hp.lora_seed = 7;
	if (rc == 0)
		rc = ct_wu_open(&m, &tok, &hp, dev, &wu);
	for (int s = 0; rc == 0 && s <= steps; s++) {
		if (s == 1) {
			t0 = ct_time_mono_s();
			c0 = ct_time_cpu_s();
		}
		rc = ct_wu_step(wu, &r->loss);
	}
	if (rc == 0) {
		r->ms = (ct_time_mono_s() - t0) / steps * 1e3;
		r->cpu_ms = (ct_time_cpu_s() - c0) / steps * 1e3;
		r->tok_s = B * T / (r->ms / 1e3);
		r->rss_mb = peak_rss_mb();
		r->dev_mb = strcmp(dev, "cpu") == 0 ? 0 : ct_ocl_alloc_total() / 1048576.0;
		rc = encode(wu, &m, &hp, r);
	}
	ct_wu_close(wu);
	ct_tokens_free(&tok);
	ct_gpt2_free(&m);
	free(t);
	return rc;
}

/* measure() in a child process; its result comes back through a pipe. */
static int run_child(const struct bcfg *c, const char *dev, int B, int T, int steps,
		     const struct ct_lora_spec *lora, struct result *r)
{
	int fd[2], st = 0;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe(fd) < 0)
		return ct_error(CT_EIO, "pipe");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return ct_error(CT_EIO, "fork");
	if (pid == 0) {
		close(fd[0]);
		r->rc = measure(c, dev, B, T, steps, lora, r);
		if (r->rc < 0)
			fprintf(stderr, "bench_lora: %s %s: %s\n", c->name, dev, ct_errmsg(r->rc));
		_exit(write(fd[1], r, sizeof(*r)) == (ssize_t)sizeof(*r) ? 0 : 1);
	}
	close(fd[1]);
	if (read(fd[0], r, sizeof(*r)) != (ssize_t)sizeof(*r))
		r->rc = ct_error(CT_EIO, "child %s %s died", c->name, dev);
	close(fd[0]);
	waitpid(pid, &st, 0);
	return r->rc;
}

static void row(const struct bcfg *c, const char *dev, const struct ct_lora_spec *l,
		const struct result *r, const struct result *full)
{
	char mode[32];

	if (l->rank > 0)
		snprintf(mode, sizeof(mode), "LoRA r=%d", l->rank);
	else
		snprintf(mode, sizeof(mode), "full");
	printf("| %s | %s | %s | %zu | %.0f | %.4f%% | %.0f | %.1f | %.2f | %.0f | %.2f | %.0f | %.2f | %.1f | %.2f | %.0f |\n",
	       c->name, dev, mode, r->trained, r->lossless,
	       100.0 * r->lossless / full->lossless, r->int8, r->rss_mb,
	       r->rss_mb / full->rss_mb, r->dev_mb, full->dev_mb > 0 ? r->dev_mb / full->dev_mb : 0,
	       r->tok_s, r->ms / full->ms, r->ms, r->cpu_ms / full->cpu_ms, r->cpu_ms);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		CT_BENCH_RUN_OPTIONS,
		{ "rank", required_argument, NULL, 'r' },
		{ "targets", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	struct ct_bench_run run = CT_BENCH_RUN_INIT;
	int ranks[8];
	unsigned targets = CT_LORA_ALL;
	int nrank = 0, c, rc = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ct_bench_run_opt(&run, c, optarg))
			continue;
		switch (c) {
		case 'r': if (nrank < 8) ranks[nrank++] = atoi(optarg); break;
		case 'g':
			if (ct_lora_targets_parse(optarg, &targets) < 0) {
				fprintf(stderr, "bench_lora: %s\n", ct_errmsg(CT_EINVAL));
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: %s [--config small|124m|all] [--batch B] [--seq T]\n"
				"       [--steps N] [--device D]... [--rank R]... [--targets LIST]\n",
				argv[0]);
			return 2;
		}
	}
	if (run.ndev == 0)
		run.devs[run.ndev++] = "cpu";
	if (nrank == 0)
		ranks[nrank++] = 8;
	if (ct_bench_run_bad(&run)) {
		fprintf(stderr, "bad --batch/--seq/--steps\n");
		return 2;
	}
	/* the OpenCL backend must be complete */
	if (ct_ocl_backend_ops.name == NULL)
		return 1;
	printf("B=%d T=%d, %d timed steps after one warm-up; LoRA alpha = r, targets 0x%x\n\n",
	       run.B, run.T, run.steps, targets);
	printf("| config | device | mode | trained floats | upload lossless (B) | vs full |"
	       " upload int8 (B) | peak RSS (MB) | vs full | device buffers (MB) | vs full |"
	       " tokens/s | step time vs full | ms/step | CPU time vs full | CPU ms/step |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; rc == 0 && i < sizeof(configs) / sizeof(configs[0]); i++) {
		if (strcmp(run.which, "all") != 0 && strcmp(run.which, configs[i].name) != 0)
			continue;
		for (int d = 0; d < run.ndev && rc == 0; d++) {
			struct ct_lora_spec none = { 0 };
			struct result full, r;

			rc = run_child(&configs[i], run.devs[d], run.B, run.T, run.steps, &none,
				       &full);
			if (rc == 0)
				row(&configs[i], run.devs[d], &none, &full, &full);
			for (int k = 0; k < nrank && rc == 0; k++) {
				struct ct_lora_spec l = { .rank = ranks[k], .alpha = (float)ranks[k],
							  .targets = targets };

				rc = run_child(&configs[i], run.devs[d], run.B, run.T, run.steps,
					       &l, &r);
				if (rc == 0)
					row(&configs[i], run.devs[d], &l, &r, &full);
			}
		}
	}
	if (rc < 0)
		fprintf(stderr, "bench_lora: %s\n", ct_errmsg(rc));
	return rc < 0 ? 1 : 0;
}
