/*
 * bench_lora_upload - upload bytes of one result, LoRA vs full weights,
 * from real work units on the C reference, and the server's merge time.
 *
 * For a model shape (GPT-2 initialisation from a seed) and a token stream
 * (synthetic language text, bench/ct_corpus), it runs the same WU
 * (steps, B, T, lr) once training all weights and once per LoRA rank
 * training adapters on all four targets (alpha = 2r), and encodes each
 * result exactly as the client uploads it: the full weights as a ct_delta
 * against the base, the adapters as a LoRA result file (ct_lora_result.h).
 * Columns: trained floats, upload bytes (lossless / int8), upload vs the
 * full-weight lossless result, and the seconds the WU took. Then the
 * assimilator's exact merge (ct_lora_merge) of K shards' adapters into the
 * model, timed.
 *
 *   bench/bench_lora_upload [--config lofi|small|124m] [--steps N]
 *                           [--batch B] [--seq T] [--ranks 4,8,16]
 *                           [--no-full] [--merge-k K]
 */
#include "config.h"
#include "ct_buf.h"
#include "ct_corpus.h"
#include "ct_delta.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_lora.h"
#include "ct_lora_result.h"
#include "ct_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	struct ct_model_config cfg;
} configs[] = {
	{ "lofi", { .maxT = 64, .V = CT_CORPUS_V, .L = 2, .NH = 4, .C = 64, .Vp = 32 } },
	{ "small", { .maxT = 1024, .V = 50257, .L = 4, .NH = 4, .C = 256, .Vp = 50304 } },
	{ "124m", { .maxT = 1024, .V = 50257, .L = 12, .NH = 12, .C = 768, .Vp = 50304 } },
};

struct opts {
	struct ct_model_config cfg;
	const char *config;
	int steps, B, T, full, merge_k;
	int ranks[8], nranks;
};

static double now(void)
{
	return ct_time_mono_s();
}

/* Run the WU (lora.rank 0: all weights) and encode its result both ways. */
static int run_one(const struct opts *o, const struct ct_gpt2 *m, const struct ct_tokens *tok,
		   int rank, double full_bytes, double *lossless_out)
{
	struct ct_wu_hparams hp;
	struct ct_buf a = CT_BUF_INIT(0), b = CT_BUF_INIT(0);
	struct ct_delta_model dm;
	unsigned char sha[32] = { 0xba, 0x5e };
	size_t n;
	float *out;
	double t0, dt;
	int rc;

	ct_wu_hparams_default(&hp);
	hp.steps = o->steps, hp.B = o->B, hp.T = o->T, hp.lr = 1e-3f, hp.grad_clip = 1.0f;
	if (rank > 0) {
		hp.lora = (struct ct_lora_spec){ .rank = rank, .alpha = 2.0f * rank,
						 .targets = CT_LORA_ALL };
		hp.lora_seed = 12345;
	}
	n = rank > 0 ? ct_lora_nparams(&m->cfg, &hp.lora) : m->lay.total;
	out = malloc(n * sizeof(float));
	if (out == NULL)
		return CT_ENOMEM;
	t0 = now();
	rc = ct_wu_run(m, tok, &hp, "cpu", out, NULL);
	dt = now() - t0;
	ct_lora_result_model(&m->cfg, &dm);
	if (rc == 0 && rank > 0) {
		rc = ct_lora_result_encode(&m->cfg, &hp.lora, hp.lora_seed, sha, out,
					   CT_DELTA_LOSSLESS, &a);
		if (rc == 0)
			rc = ct_lora_result_encode(&m->cfg, &hp.lora, hp.lora_seed, sha, out,
						   CT_DELTA_INT8, &b);
	} else if (rc == 0) {
		rc = ct_delta_encode(m->params, out, n, &dm, sha, CT_DELTA_LOSSLESS, -1, &a);
		if (rc == 0)
			rc = ct_delta_encode(m->params, out, n, &dm, sha, CT_DELTA_INT8, -1, &b);
	}
	if (rc == 0) {
		char what[32];

		snprintf(what, sizeof(what), rank > 0 ? "LoRA r=%d" : "full", rank);
		if (full_bytes <= 0)
			full_bytes = (double)a.len;
		printf("| %s | %s | %zu | %zu | %zu | %.2f%% | %.1f |\n", o->config, what, n,
		       a.len, b.len, 100.0 * (double)a.len / full_bytes, dt);
		fflush(stdout);
		*lossless_out = (double)a.len;
	}
	free(out);
	ct_buf_free(&a);
	ct_buf_free(&b);
	return rc;
}

/* ct_lora_merge of K random adapter sets of rank r into the model. */
static int time_merge(const struct ct_gpt2 *m, int r, int K)
{
	struct ct_lora_spec sp = { .rank = r, .alpha = 2.0f * r, .targets = CT_LORA_ALL };
	size_t n = ct_lora_nparams(&m->cfg, &sp);
	float **ads = calloc((size_t)K, sizeof(*ads));
	float *w = malloc(m->lay.total * sizeof(float));
	double t0, dt;
	int rc = ads && w ? 0 : CT_ENOMEM;

	for (int k = 0; rc == 0 && k < K; k++) {
		ads[k] = malloc(n * sizeof(float));
		rc = ads[k] ? ct_lora_init(&m->cfg, &sp, (uint64_t)k + 1, ads[k]) : CT_ENOMEM;
		for (size_t i = 0; rc == 0 && i < n; i++)
			ads[k][i] += 1e-3f;	/* B non-zero */
	}
	if (rc == 0) {
		memcpy(w, m->params, m->lay.total * sizeof(float));
		t0 = now();
		rc = ct_lora_merge(&m->cfg, &sp, w, (const float *const *)ads, K);
		dt = now() - t0;
		if (rc == 0)
			printf("merge r=%d K=%d into %zu weights: %.3f s\n", r, K, m->lay.total, dt);
	}
	for (int k = 0; ads && k < K; k++)
		free(ads[k]);
	free(ads);
	free(w);
	return rc;
}

static int parse(int argc, char **argv, struct opts *o)
{
	const char *cfg = "small";

	memset(o, 0, sizeof(*o));
	o->steps = 2, o->B = 1, o->T = 64, o->full = 1, o->merge_k = 8;
	o->ranks[0] = 4, o->ranks[1] = 8, o->ranks[2] = 16, o->nranks = 3;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(argv[i], "--no-full") == 0) {
			o->full = 0;
			continue;
		}
		if (v == NULL)
			return -1;
		if (strcmp(argv[i], "--config") == 0)
			cfg = v;
		else if (strcmp(argv[i], "--steps") == 0)
			o->steps = atoi(v);
		else if (strcmp(argv[i], "--batch") == 0)
			o->B = atoi(v);
		else if (strcmp(argv[i], "--seq") == 0)
			o->T = atoi(v);
		else if (strcmp(argv[i], "--merge-k") == 0)
			o->merge_k = atoi(v);
		else if (strcmp(argv[i], "--ranks") == 0) {
			char *p = (char *)v;

			o->nranks = 0;
			while (*p && o->nranks < 8) {
				o->ranks[o->nranks++] = (int)strtol(p, &p, 10);
				if (*p == ',')
					p++;
			}
		} else
			return -1;
		i++;
	}
	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++)
		if (strcmp(cfg, configs[c].name) == 0) {
			o->cfg = configs[c].cfg;
			o->config = configs[c].name;
			return o->steps > 0 && o->B > 0 && o->T > 0 ? 0 : -1;
		}
	return -1;
}

int main(int argc, char **argv)
{
	struct ct_corpus_lang lang;
	struct ct_gpt2 m = { 0 };
	struct ct_tokens tok = { 0 };
	struct opts o;
	size_t ntok;
	ct_tok *buf;
	double full = 0, got = 0;
	int rc;

	if (parse(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: %s [--config lofi|small|124m] [--steps N] [--batch B] "
			"[--seq T] [--ranks 4,8,16] [--no-full] [--merge-k K]\n", argv[0]);
		return 2;
	}
	rc = ct_gpt2_alloc(&m, &o.cfg);
	if (rc == 0)
		rc = ct_gpt2_init_random(&o.cfg, 1, m.params);
	ntok = (size_t)o.steps * o.B * o.T + 1;
	buf = malloc(ntok * sizeof(ct_tok));
	tok.tok = buf;
	tok.n = ntok;
	if (rc == 0 && buf == NULL)
		rc = CT_ENOMEM;
	if (rc == 0) {
		ct_corpus_lang_build(&lang, 7, NULL, 0.0);
		ct_corpus_generate(&lang, 1, buf, ntok);
	}
	if (rc < 0)
		goto out;
	printf("%s: %zu weights, WU of %d steps x %d x %d tokens, lr 1e-3, C reference\n\n",
	       o.config, m.lay.total, o.steps, o.B, o.T);
	printf("| config | trains | floats | upload lossless (B) | upload int8 (B) | "
	       "lossless vs full | WU s |\n|---|---|---|---|---|---|---|\n");
	if (o.full)
		rc = run_one(&o, &m, &tok, 0, 0, &full);
	for (int i = 0; rc == 0 && i < o.nranks; i++)
		rc = run_one(&o, &m, &tok, o.ranks[i], full, &got);
	printf("\n");
	for (int i = 0; rc == 0 && i < o.nranks && o.merge_k > 0; i++)
		rc = time_merge(&m, o.ranks[i], o.merge_k);
out:
	free(buf);
	ct_gpt2_free(&m);
	if (rc < 0)
		fprintf(stderr, "bench_lora_upload: %s\n", ct_errmsg(rc));
	return rc < 0 ? 1 : 0;
}
