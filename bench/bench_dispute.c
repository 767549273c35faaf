/*
 * bench_dispute.c - what settling a dispute between two replicas costs
 * the server by bisection of their hash chains (server/validate/bisect.h)
 * against today's way, a third replica (the whole WU computed again).
 *
 *   bench/bench_dispute [--config 124m|small] [--lora R] [--steps N]
 *                       [--batch B] [--seq T] [--every S] [--device D]
 *
 * One run does, on D (default cpu, the C reference):
 *  - the honest client: the WU of N steps from a random model on random
 *    tokens, its chain with a link every S steps (default: the interval
 *    the server chooses for this shape, ct_bisect_chain_every), keeping
 *    the state at the start of the last segment (what it uploads when
 *    asked);
 *  - the cheater: the honest links but another last link (a result that
 *    differs only at the end: the dispute's worst case for the server's
 *    compute is any one segment, the same size wherever it lies);
 *  - the server: the plan from the two chains, then the one segment
 *    recomputed from the uploaded state (ct_bisect_segment, which checks
 *    the state against the agreed link), whose link must be the honest
 *    one's.
 * It prints the WU's time (a third replica's compute), the segment's
 * time and its share of the WU (in steps and in time: the time includes
 * loading the state and opening the WU), the state upload's bytes, the links' hashing
 * share of the client's WU, and the load (/proc/loadavg) beside them.
 * Goals: the segment <= 10% of the WU and one state upload; the links
 * <= 1% of the WU.
 */
#include "ct_chain.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_hash.h"
#include "ct_lora.h"
#include "ct_time.h"
#include "ct_tokens.h"
#include "validate/bisect.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct opts {
	const char *config, *device;
	int steps, B, T, every, rank;
};

static const struct {
	const char *name;
	struct ct_model_config cfg;
} configs[] = {
	{ "small", { .maxT = 1024, .V = 50257, .L = 4, .NH = 4, .C = 256, .Vp = 50304 } },
	{ "124m", { .maxT = 1024, .V = 50257, .L = 12, .NH = 12, .C = 768, .Vp = 50304 } },
};

static void load(char *out, size_t cap)
{
	FILE *f = fopen("/proc/loadavg", "r");

	snprintf(out, cap, "?");
	if (f != NULL) {
		if (fgets(out, (int)cap, f) != NULL)
			out[strcspn(out, " ")] = '\0';	/* the 1-minute figure */
		fclose(f);
	}
}

/* The honest client: train, chain, keep the state after `at`. */
static int client(const struct ct_gpt2 *m, const struct ct_tokens *tok,
		  const struct ct_wu_hparams *hp, const char *dev, int every, int at,
		  const char *state, char *chain, double *t_wu, double *t_chain)
{
	struct ct_wu *wu = NULL;
	unsigned char d[32];
	size_t len = 0;
	double t0;
	float loss;
	int rc = ct_wu_open(m, tok, hp, dev, &wu);

	*t_wu = *t_chain = 0;
	while (rc == 0 && !ct_wu_done(wu)) {
		t0 = ct_time_mono_s();
		rc = ct_wu_step(wu, &loss);
		*t_wu += ct_time_mono_s() - t0;
		if (rc == 0 && ct_wu_steps_done(wu) == at)
			rc = ct_wu_save_state(wu, state);	/* not counted: kept for a request */
		if (rc == 0 && ct_chain_due(ct_wu_steps_done(wu), hp->steps, every)) {
			t0 = ct_time_mono_s();
			rc = ct_wu_chain_link(wu, d);
			*t_chain += ct_time_mono_s() - t0;
			ct_hex_encode(d, 32, chain + len);
			len += 64;
		}
	}
	ct_wu_close(wu);
	return rc;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' }, { "lora", required_argument, NULL, 'r' },
		{ "steps", required_argument, NULL, 'n' }, { "batch", required_argument, NULL, 'B' },
		{ "seq", required_argument, NULL, 'T' }, { "every", required_argument, NULL, 'S' },
		{ "device", required_argument, NULL, 'd' }, { NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .config = "124m", .device = "cpu", .steps = 10, .B = 2, .T = 64 };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'c': o->config = optarg; break;
		case 'r': o->rank = atoi(optarg); break;
		case 'n': o->steps = atoi(optarg); break;
		case 'B': o->B = atoi(optarg); break;
		case 'T': o->T = atoi(optarg); break;
		case 'S': o->every = atoi(optarg); break;
		case 'd': o->device = optarg; break;
		default: return -1;
		}
	}
	return o->steps >= 2 && o->B >= 1 && o->T >= 1 && o->T <= 1024 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct ct_gpt2 model = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams hp;
	struct ct_bisect_side a, b;
	struct ct_bisect_plan plan;
	const struct ct_model_config *cfg = NULL;
	char good[CT_CHAIN_HEX_MAX + 1] = "", bad[CT_CHAIN_HEX_MAX + 1], state[] =
		"/tmp/bench_dispute-XXXXXX", ld[2][32], shape[64];
	unsigned char got[32];
	double t_wu = 0, t_chain = 0, t0, t_seg;
	struct stat sb;
	int rc, fd, ran = 0, n;
	ct_tok *ids;

	if (parse(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: bench_dispute [--config 124m|small] [--lora R] [--steps N>=2] "
			"[--batch B] [--seq T] [--every S] [--device D]\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
		if (strcmp(configs[i].name, o.config) == 0)
			cfg = &configs[i].cfg;
	if (cfg == NULL)
		return fprintf(stderr, "bench_dispute: no config %s\n", o.config), 2;
	ct_wu_hparams_default(&hp);
	hp.steps = o.steps, hp.B = o.B, hp.T = o.T, hp.lr = 1e-4f;
	if (o.rank > 0) {
		hp.lora = (struct ct_lora_spec){ .rank = o.rank, .alpha = (float)o.rank,
						 .targets = CT_LORA_ALL };
		hp.lora_seed = 7;
	}
	if (o.every <= 0)
		o.every = ct_bisect_chain_every(cfg, &hp.lora, o.B, o.T, o.steps);
	n = ct_chain_nlinks(o.steps, o.every);
	if (n > CT_CHAIN_MAX_LINKS)
		return fprintf(stderr, "bench_dispute: over %d links\n", CT_CHAIN_MAX_LINKS), 2;
	fd = mkstemp(state);
	if (fd >= 0)
		close(fd);
	rc = fd >= 0 ? ct_gpt2_alloc(&model, cfg) : ct_error_errno("mkstemp");
	if (rc == 0)
		rc = ct_gpt2_init_random(cfg, 1, model.params);
	ids = malloc(sizeof(ct_tok) * 4096);
	for (int i = 0; rc == 0 && ids && i < 4096; i++)
		ids[i] = (ct_tok)((i * 7919u + 13u) % (unsigned)cfg->V);
	if (rc == 0)
		rc = ids ? ct_tokens_from_array(&tok, ids, 4096) : CT_ENOMEM;
	free(ids);
	load(ld[0], sizeof(ld[0]));
	/* the disputed segment is the last: its start, the link before it */
	if (rc == 0)
		rc = client(&model, &tok, &hp, o.device, o.every, ct_chain_link_step(n - 2 < 0 ? 0 : n - 2,
			    o.steps, o.every), state, good, &t_wu, &t_chain);
	if (rc == 0 && n < 2)
		rc = ct_error(CT_EINVAL, "a chain of %d link: nothing to bisect (--every smaller)", n);
	if (rc < 0)
		goto out;
	memcpy(bad, good, sizeof(bad));
	bad[64 * (n - 1)] = bad[64 * (n - 1)] == '0' ? '1' : '0';	/* another result */
	a = (struct ct_bisect_side){ .chain = good, .exact = 1 };
	b = (struct ct_bisect_side){ .chain = bad, .exact = 1 };
	ct_chain_link(good, n - 1, a.sha);
	ct_chain_link(bad, n - 1, b.sha);
	ct_bisect_plan(&a, &b, o.steps, o.every, &plan);
	t0 = ct_time_mono_s();
	{
		struct ct_bisect_inputs in = { &model, &tok, &hp, state, o.device, NULL };

		rc = plan.verdict == CT_BISECT_SEGMENT ? ct_bisect_segment(&in, &plan, got, &ran)
			: ct_error(CT_EINTERNAL, "no segment to recompute");
	}
	t_seg = ct_time_mono_s() - t0;
	if (rc == 0 && memcmp(got, plan.want_a, 32) != 0)
		rc = ct_error(CT_EMISMATCH, "the recomputed link is not the honest one");
	if (rc < 0)
		goto out;
	load(ld[1], sizeof(ld[1]));
	stat(state, &sb);
	printf("| shape | steps, every | WU (third replica) | dispute: segment | its share "
	       "(steps, time) | state upload | links' hashing | load |\n"
	       "|---|---|---:|---:|---:|---:|---:|---|\n");
	snprintf(shape, sizeof(shape), o.rank > 0 ? "%s LoRA r=%d" : "%s", o.config, o.rank);
	printf("| %s, %d x %d, %s | %d, %d (%d links) | %.2f s | %.2f s (%d steps, "
	       "link %d) | %.1f%%, %.1f%% | %.1f MB (1 upload) | %.2f%% | %s, %s |\n", shape, o.B,
	       o.T, o.device, o.steps, o.every, n, t_wu, t_seg, ran, plan.link,
	       100.0 * ran / o.steps, 100.0 * t_seg / t_wu, sb.st_size / 1e6, 100.0 * t_chain / t_wu, ld[0], ld[1]);
out:
	unlink(state);
	ct_tokens_free(&tok);
	ct_gpt2_free(&model);
	if (rc < 0) {
		fprintf(stderr, "bench_dispute: %s\n", ct_errmsg(rc));
		return 1;
	}
	return 0;
}
