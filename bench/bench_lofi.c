/*
 * bench_lofi.c - does lo-fi fine-tuning work, and what do its uploads cost?
 * In-process (no server): the engine library runs every work unit exactly
 * as a volunteer's client would (ct_wu_run), and ct_avg / ct_delta do what
 * the assimilator and the uploads do.
 *
 *   bench/bench_lofi [--quick] [--device D] [--seed S] [--steps N]
 *                    [--epochs E] [--pretrain-steps N] [--control-steps N]
 *                    [--rounds R] [--max-shards K] [--lr F] [--inner-lr F]
 *                    [--eval-batches N] [--lora-ranks R,R,...] [--lora-lr F]
 *                    [--lora-seed-per-shard] [--outer none|METHOD:LR:MU,...]
 *                    [--outer-k K] [--no-stragglers] [--only-k K]
 *
 * Setup, all from --seed: two synthetic languages of bench/ct_corpus.h, A
 * and B (B keeps half of A's words, new word order); a GPT-2 (L=2, C=64,
 * NH=4, maxT=64, V=29, Vp=32) initialised at random and pretrained on A:
 * the base. B's training text is cut into max-shards shards of
 * (steps/E)*B*T + 1 tokens, so one WU of `steps` steps reads its shard
 * exactly E times (the WU's data order, doc/workunit.md); B's held-out
 * text (another seed) gives every eval loss.
 *
 * Definitions (what the tables compare), for K shards and round r:
 * - lo-fi: round 1 starts from the base; every round runs K WUs, WU k
 *   trains `steps` steps on shard k from the current model (fresh AdamW),
 *   and the mean of the K results (ct_avg) is the next round's model.
 * - single shard k alone, round r: r WUs on shard k only, each from the
 *   previous one's result (what one volunteer with that shard could do).
 * - centralized, round r: ONE run (one AdamW state) from the base on the K
 *   shards concatenated, r*K*steps steps at the same batch size, i.e. r*E
 *   passes over the same data: the same data and the same total steps as
 *   r lo-fi rounds, done sequentially by one machine.
 * - gap = (lo-fi - centralized) / centralized; share of the drop =
 *   (base - lo-fi) / (base - centralized).
 * - control: two models trained control-steps steps, each on one half of
 *   the shards, from the pretrained base or from two different random
 *   initialisations (no pretraining), and their average.
 * - uploads: each round-r result encoded with ct_delta against that round's
 *   start model, losslessly and as int8; the int8 average is the mean of
 *   the decoded int8 results (one round only: the next round still starts
 *   from the lossless average).
 * - LoRA lo-fi (--lora-ranks): the same rounds, but WU k trains LoRA
 *   adapters of rank r (alpha = r, all four targets, AdamW lr --lora-lr,
 *   one adapter seed per round, as the server's work generator gives) on
 *   the frozen current model, and the server's cross-shard check runs on
 *   the adapter updates (server/validate/lora_robust.c); the round's model
 *   is the exact merge of the K shards' adapters (ct_lora_merge: mean of
 *   the K products B_k A_k); uploads are the adapters' lossless ct_delta
 *   files against their initial adapters.
 *
 * Tables go to stdout as Markdown, progress to stderr. The default device
 * is the OpenCL backend: bit-identical to the C reference (checked on one
 * WU at start-up) and about twice as fast on 2 cores through PoCL. Default
 * sizes take about 10 minutes there; --quick well under one.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_avg.h"
#include "ct_buf.h"
#include "ct_corpus.h"
#include "ct_delta.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_outer.h"
#include "ct_time.h"
#include "validate/robust.h"

#define MAXK 8
#define MAXR 16
#define MAXRANKS 6
#define MAXOUTER 8

struct opts {
	const char *device;
	uint64_t seed;
	int quick;
	int steps;		/* per WU */
	int epochs;		/* passes of a WU over its shard */
	int pre_steps;		/* pretraining on A */
	int ctl_steps;		/* each control member */
	int rounds;		/* R, <= MAXR */
	int maxk;		/* largest K: 1, 2, 3, 4, 8 <= MAXK */
	int B, T;
	float lr, pre_lr;	/* fine-tuning (every WU, centralized), pretraining */
	int eval_batches;
	int lora_ranks[MAXRANKS];	/* LoRA lo-fi at these ranks */
	int nranks;
	float lora_lr;
	int lora_seed_per_shard;	/* the old policy: each WU its own A */
	struct ct_outer outer[MAXOUTER];	/* the outer optimizers compared */
	int nouter;
	int outer_k;			/* ... at this K (0: the largest) */
	int stragglers;			/* the straggler table (--no-stragglers: 0) */
	int only_k;			/* --only-k: lo-fi and centralized at that K alone */
};

/* One row of the straggler table: rounds closed with nin of K WUs. */
struct strag_row {
	int K, nin;
	double wall;			/* a round's simulated wall time / the median WU's */
	float loss[MAXR];
};

/* One row of the outer-optimizer table: K shards, one setting, R rounds. */
struct outer_row {
	int K;
	struct ct_outer o;
	float loss[MAXR];
};

/* One row of the LoRA table: K shards, round r, rank. */
struct lora_row {
	int K, r, rank;
	float loss;
	double upload;		/* mean lossless bytes of one result */
	/* the cross-shard check of the adapter updates (server/validate/lora_robust.c),
	 * K >= 3: lowest cosine, outliers (-1: K < 3) */
	double cos_min;
	int outliers;
};

/* One row of the quality table: K shards, after round r. */
struct lofi_row {
	int K, r;
	float best, worst, avg, central;
	/* the server's cross-shard check (server/validate/robust.c) on this round's
	 * honest results, K >= 3: lowest cosine, size ratio range, outliers */
	double cos_min, ratio_lo, ratio_hi;
	int outliers;
};

/* One row of the uploads table: mean bytes per result of round r. */
struct upl_row {
	int K, r;
	double lossless, int8, int8z9;
	float loss_exact, loss_int8;
};

struct bench {
	struct opts o;
	struct ct_gpt2 base;		/* pretrained on A */
	size_t n;			/* nparams */
	ct_tok *b_train;		/* maxk shards, back to back */
	size_t shard_len;		/* steps*B*T + 1 */
	struct ct_tokens a_eval, b_eval;
	struct ct_wu_hparams hp;	/* fine-tuning */
	float base_a, base_b, init_b;	/* eval losses */
	int identical;			/* device result == cpu result (-1: not run) */
	double t0;
	struct lofi_row rows[(MAXK + 1) * MAXR];
	int nrows;
	struct upl_row ups[(MAXK + 1) * MAXR];
	int nups;
	float ctl[2][3];		/* [shared base, random inits][m1, m2, avg] */
	struct lora_row lrows[(MAXK + 1) * MAXR * MAXRANKS];
	int nlrows;
	struct outer_row orows[MAXOUTER];
	int norows;
	struct strag_row srows[3];
	int nsrows;
};

static void progress(const struct bench *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void progress(const struct bench *b, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "[%6.1fs] ", ct_time_mono_s() - b->t0);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- small helpers on the engine --------------------------------------- */

/* The base model's config and layout with other weights (a borrowed view:
 * never ct_gpt2_free() it). */
static struct ct_gpt2 view(const struct bench *b, const float *params)
{
	struct ct_gpt2 m = b->base;

	m.params = (float *)params;
	return m;
}

/* Tokens [off, off+n) of an array, as a borrowed ct_tokens. */
static struct ct_tokens tok_view(const ct_tok *tok, size_t off, size_t n)
{
	struct ct_tokens t = { .tok = tok + off, .n = n };

	return t;
}

static struct ct_tokens shard(const struct bench *b, int k, int count)
{
	return tok_view(b->b_train, (size_t)k * b->shard_len, (size_t)count * b->shard_len);
}

/* Train `steps` steps from `start` on tokens t; the weights go to out
 * (may not alias start). */
static int run_wu(const struct bench *b, const float *start, const struct ct_tokens *t,
		  int steps, const char *device, float *out)
{
	struct ct_gpt2 m = view(b, start);
	struct ct_wu_hparams hp = b->hp;

	hp.steps = steps;
	return ct_wu_run(&m, t, &hp, device, out, NULL);
}

/* Held-out loss of params on B (or A with on_a). */
static int eval(const struct bench *b, const float *params, int on_a, float *loss)
{
	struct ct_gpt2 m = view(b, params);

	return ct_eval(&m, on_a ? &b->a_eval : &b->b_eval, b->hp.B, b->hp.T,
		       b->o.eval_batches, b->o.device, loss);
}

static float *falloc(size_t n)
{
	return malloc(n * sizeof(float));
}

/* n tokens of language L's text `seed`, owned by *t. */
static int make_text(const struct ct_corpus_lang *L, uint64_t seed, size_t n,
		     struct ct_tokens *t)
{
	ct_tok *tok = malloc(n * sizeof(*tok));
	int rc;

	if (tok == NULL)
		return ct_error(CT_ENOMEM, "out of memory for %zu tokens", n);
	ct_corpus_generate(L, seed, tok, n);
	rc = ct_tokens_from_array(t, tok, n);
	free(tok);
	return rc;
}

/* ---- setup -------------------------------------------------------------- */

/* Pretrain the random init in b->base.params on `a_train`, printing the
 * loss ten times along the way. */
static int pretrain(struct bench *b, const struct ct_tokens *a_train)
{
	struct ct_wu_hparams hp = b->hp;
	struct ct_wu *wu = NULL;
	float loss = 0.0f;
	int rc;

	hp.steps = b->o.pre_steps;
	hp.lr = b->o.pre_lr;
	rc = ct_wu_open(&b->base, a_train, &hp, b->o.device, &wu);
	while (rc == 0 && !ct_wu_done(wu)) {
		rc = ct_wu_step(wu, &loss);
		int s = ct_wu_steps_done(wu);
		if (rc == 0 && (s % (hp.steps / 10 > 0 ? hp.steps / 10 : 1) == 0))
			progress(b, "pretrain on A: step %d/%d, loss %.4f", s, hp.steps, loss);
	}
	if (rc == 0)
		rc = ct_wu_read_params(wu, b->base.params);
	ct_wu_close(wu);
	return rc;
}

/* Run one WU on the chosen device and on the C reference; compare bits. */
static int check_identical(struct bench *b)
{
	struct ct_tokens s0 = shard(b, 0, 1);
	float *x = falloc(b->n), *y = falloc(b->n);
	int rc = CT_ENOMEM;

	b->identical = -1;
	if (x == NULL || y == NULL || strcmp(b->o.device, "cpu") == 0) {
		rc = x && y ? 0 : ct_error(CT_ENOMEM, "out of memory");
		goto out;
	}
	rc = run_wu(b, b->base.params, &s0, b->o.steps, b->o.device, x);
	if (rc == 0)
		rc = run_wu(b, b->base.params, &s0, b->o.steps, "cpu", y);
	if (rc == 0)
		b->identical = memcmp(x, y, b->n * sizeof(float)) == 0;
out:
	free(x);
	free(y);
	return rc;
}

static int setup(struct bench *b)
{
	const struct opts *o = &b->o;
	struct ct_model_config cfg = { .maxT = 64, .V = CT_CORPUS_V, .L = 2, .NH = 4,
				      .C = 64, .Vp = 32 };
	struct ct_corpus_lang la, lb;
	struct ct_tokens a_train = { 0 }, b_train = { 0 };
	size_t bt = (size_t)o->B * o->T;
	int rc;

	ct_wu_hparams_default(&b->hp);
	b->hp.B = o->B;
	b->hp.T = o->T;
	b->hp.lr = o->lr;
	ct_corpus_lang_build(&la, o->seed, NULL, 0);
	ct_corpus_lang_build(&lb, o->seed + 1000, &la, 0.5);
	b->shard_len = (size_t)(o->steps / o->epochs) * bt + 1;
	rc = make_text(&la, o->seed * 16 + 1, (size_t)o->pre_steps * bt + 1, &a_train);
	if (rc == 0)
		rc = make_text(&la, o->seed * 16 + 2, (size_t)o->eval_batches * bt + 1, &b->a_eval);
	if (rc == 0)
		rc = make_text(&lb, o->seed * 16 + 3, (size_t)o->maxk * b->shard_len, &b_train);
	if (rc == 0)
		rc = make_text(&lb, o->seed * 16 + 4, (size_t)o->eval_batches * bt + 1, &b->b_eval);
	if (rc == 0)
		rc = ct_gpt2_alloc(&b->base, &cfg);
	if (rc < 0)
		goto out;
	b->b_train = b_train.owned;	/* keep the array, drop the struct */
	b_train.owned = NULL;
	b->n = b->base.lay.total;
	rc = ct_gpt2_init_random(&cfg, o->seed, b->base.params);
	if (rc == 0)
		rc = eval(b, b->base.params, 0, &b->init_b);
	if (rc == 0)
		rc = pretrain(b, &a_train);
	if (rc == 0)
		rc = eval(b, b->base.params, 1, &b->base_a);
	if (rc == 0)
		rc = eval(b, b->base.params, 0, &b->base_b);
	if (rc == 0)
		rc = check_identical(b);
out:
	ct_tokens_free(&a_train);
	ct_tokens_free(&b_train);
	return rc;
}

/* ---- uploads ------------------------------------------------------------ */

/* Encode the K results of a round against its start model both ways,
 * average the int8-decoded ones, and fill one uploads row. */
static int uploads(struct bench *b, const float *start, float *const *res, int K,
		   int r, float loss_exact)
{
	struct ct_model_config *c = &b->base.cfg;
	struct ct_delta_model dm = { (uint32_t)c->maxT, (uint32_t)c->V, (uint32_t)c->Vp,
				     (uint32_t)c->L, (uint32_t)c->NH, (uint32_t)c->C };
	struct upl_row *u = &b->ups[b->nups];
	unsigned char sha[32];
	struct ct_buf buf = CT_BUF_INIT(0);
	float *q[MAXK] = { 0 }, *avg = falloc(b->n);
	int rc = ct_delta_weights_sha(start, b->n, sha);

	memset(u, 0, sizeof(*u));
	for (int k = 0; k < K && rc == 0; k++) {
		q[k] = falloc(b->n);
		if (q[k] == NULL || avg == NULL) {
			rc = ct_error(CT_ENOMEM, "out of memory");
			break;
		}
		ct_buf_reset(&buf);
		rc = ct_delta_encode(start, res[k], b->n, &dm, sha, CT_DELTA_LOSSLESS, -1, &buf);
		u->lossless += (double)buf.len / K;
		ct_buf_reset(&buf);
		if (rc == 0)
			rc = ct_delta_encode(start, res[k], b->n, &dm, sha, CT_DELTA_INT8, -1, &buf);
		u->int8 += (double)buf.len / K;
		if (rc == 0)
			rc = ct_delta_decode(buf.data, buf.len, start, b->n, q[k], NULL);
		ct_buf_reset(&buf);
		if (rc == 0)
			rc = ct_delta_encode(start, res[k], b->n, &dm, sha, CT_DELTA_INT8, 9, &buf);
		u->int8z9 += (double)buf.len / K;
	}
	if (rc == 0)
		rc = ct_avg(avg, (const float *const *)q, (size_t)K, b->n, CT_AVG_MEAN, 0);
	if (rc == 0)
		rc = eval(b, avg, 0, &u->loss_int8);
	if (rc == 0) {
		u->K = K;
		u->r = r;
		u->loss_exact = loss_exact;
		b->nups++;
	}
	for (int k = 0; k < K; k++)
		free(q[k]);
	free(avg);
	ct_buf_free(&buf);
	return rc;
}

/* ---- lo-fi, singles, centralized --------------------------------------- */

struct kstate {
	int K;
	float *cur;			/* current lo-fi model */
	float *res[MAXK];		/* this round's WU results */
	float *single[MAXK];		/* shard k alone, after r rounds */
	float *tmp;
};

static void kstate_free(struct kstate *s)
{
	free(s->cur);
	free(s->tmp);
	for (int k = 0; k < MAXK; k++) {
		free(s->res[k]);
		free(s->single[k]);
	}
	memset(s, 0, sizeof(*s));
}

static int kstate_alloc(struct kstate *s, const struct bench *b, int K)
{
	int ok;

	memset(s, 0, sizeof(*s));
	s->K = K;
	s->cur = falloc(b->n);
	s->tmp = falloc(b->n);
	ok = s->cur && s->tmp;
	for (int k = 0; k < K; k++) {
		s->res[k] = falloc(b->n);
		s->single[k] = falloc(b->n);
		ok = ok && s->res[k] && s->single[k];
	}
	if (!ok) {
		kstate_free(s);
		return ct_error(CT_ENOMEM, "out of memory");
	}
	memcpy(s->cur, b->base.params, b->n * sizeof(float));
	return 0;
}

/* Advance every single-shard chain by one WU (round r >= 2) and record the
 * best and worst of their losses in row. For round 1 the chains are the
 * lo-fi round's own results. */
static int singles(struct bench *b, struct kstate *s, int r, struct lofi_row *row)
{
	int rc = 0;

	row->best = 1e30f;
	row->worst = -1e30f;
	for (int k = 0; k < s->K && rc == 0; k++) {
		struct ct_tokens t = shard(b, k, 1);
		float loss = 0.0f;
		float *p;

		if (r == 1) {
			memcpy(s->single[k], s->res[k], b->n * sizeof(float));
		} else if (s->K > 1) {	/* K = 1: the lo-fi chain is that chain */
			rc = run_wu(b, s->single[k], &t, b->o.steps, b->o.device, s->tmp);
			p = s->single[k];
			s->single[k] = s->tmp;
			s->tmp = p;
		}
		if (rc == 0)
			rc = eval(b, s->K > 1 || r == 1 ? s->single[k] : s->res[k], 0, &loss);
		if (rc == 0 && loss < row->best)
			row->best = loss;
		if (rc == 0 && loss > row->worst)
			row->worst = loss;
	}
	return rc;
}

/* The cross-shard check the assimilator runs before averaging, at its
 * default limits, on the K honest results of a round (K >= 3). */
static int xshard(const float *start, float *const *res, int K, size_t n,
		  struct lofi_row *row)
{
	const struct ct_robust_limits lim = { .min_cos = 0.0, .max_ratio = 4.0 };
	struct ct_robust r;
	int out[MAXK], rc;

	row->outliers = -1;
	if (K < 3)
		return 0;
	rc = ct_robust_init(&r, K, n);
	if (rc < 0)
		return rc;
	for (int k = 0; k < K; k++)
		ct_robust_add(&r, k, start, res[k]);
	for (int k = 0; k < K; k++)
		ct_robust_score(&r, k, start, res[k]);
	row->outliers = ct_robust_verdict(&r, &lim, out);
	row->cos_min = r.cos[0];
	row->ratio_lo = row->ratio_hi = r.ratio[0];
	for (int k = 1; k < K; k++) {
		row->cos_min = r.cos[k] < row->cos_min ? r.cos[k] : row->cos_min;
		row->ratio_lo = r.ratio[k] < row->ratio_lo ? r.ratio[k] : row->ratio_lo;
		row->ratio_hi = r.ratio[k] > row->ratio_hi ? r.ratio[k] : row->ratio_hi;
	}
	ct_robust_free(&r);
	return 0;
}

/* R lo-fi rounds with K shards: fills R rows (not their central column)
 * and R uploads rows. */
static int lofi(struct bench *b, int K, struct lofi_row *rows)
{
	struct kstate s;
	int rc = kstate_alloc(&s, b, K);

	for (int r = 1; r <= b->o.rounds && rc == 0; r++) {
		struct lofi_row *row = &rows[r - 1];

		for (int k = 0; k < K && rc == 0; k++) {
			struct ct_tokens t = shard(b, k, 1);

			rc = run_wu(b, s.cur, &t, b->o.steps, b->o.device, s.res[k]);
		}
		if (rc == 0)
			rc = singles(b, &s, r, row);
		if (rc == 0)
			rc = xshard(s.cur, s.res, K, b->n, row);
		if (rc == 0)
			rc = ct_avg(s.tmp, (const float *const *)s.res, (size_t)K, b->n,
				    CT_AVG_MEAN, 0);
		if (rc == 0)
			rc = eval(b, s.tmp, 0, &row->avg);
		if (rc == 0)
			rc = uploads(b, s.cur, s.res, K, r, row->avg);
		if (rc == 0)
			memcpy(s.cur, s.tmp, b->n * sizeof(float));
		row->K = K;
		row->r = r;
		if (rc == 0)
			progress(b, "K=%d round %d: lo-fi %.4f, singles %.4f..%.4f", K, r,
				 row->avg, row->best, row->worst);
	}
	kstate_free(&s);
	return rc;
}

/* One run over the K shards concatenated, evaluated after every K*steps
 * steps (= after each of the R rounds' worth of steps). */
static int central(struct bench *b, int K, struct lofi_row *rows)
{
	struct ct_tokens all = shard(b, 0, K);
	struct ct_wu_hparams hp = b->hp;
	struct ct_wu *wu = NULL;
	float *p = falloc(b->n), loss;
	int rc;

	hp.steps = b->o.rounds * K * b->o.steps;
	rc = p ? ct_wu_open(&b->base, &all, &hp, b->o.device, &wu)
	       : ct_error(CT_ENOMEM, "out of memory");
	for (int r = 1; r <= b->o.rounds && rc == 0; r++) {
		for (int i = 0; i < K * b->o.steps && rc == 0; i++)
			rc = ct_wu_step(wu, &loss);
		if (rc == 0)
			rc = ct_wu_read_params(wu, p);
		if (rc == 0)
			rc = eval(b, p, 0, &rows[r - 1].central);
		if (rc == 0)
			progress(b, "K=%d centralized after %d steps: %.4f", K,
				 r * K * b->o.steps, rows[r - 1].central);
	}
	ct_wu_close(wu);
	free(p);
	return rc;
}

/* ---- outer optimizers ------------------------------------------------------ */

/* R lo-fi rounds with K shards, each closed with the WUs of shards
 * 0..nin-1 only, whose mean goes through outer optimizer o (lib/ct_outer.h,
 * as the assimilator does it; CT_OUTER_MEAN: none): the losses, loss[R]. */
static int lofi_rounds(struct bench *b, int K, int nin, const struct ct_outer *o, float *loss)
{
	struct kstate s;
	float *mom = falloc(b->n);
	int rc = mom ? kstate_alloc(&s, b, K) : ct_error(CT_ENOMEM, "out of memory");

	if (rc < 0) {
		free(mom);
		return rc;
	}
	for (int r = 1; r <= b->o.rounds && rc == 0; r++) {
		for (int k = 0; k < nin && rc == 0; k++) {
			struct ct_tokens t = shard(b, k, 1);

			rc = run_wu(b, s.cur, &t, b->o.steps, b->o.device, s.res[k]);
		}
		if (rc == 0)
			rc = ct_avg(s.tmp, (const float *const *)s.res, (size_t)nin, b->n,
				    CT_AVG_MEAN, 0);
		if (rc == 0) {
			ct_outer_step(o, s.cur, s.tmp, mom, r > 1, b->n);
			rc = eval(b, s.tmp, 0, &loss[r - 1]);
		}
		if (rc == 0) {
			memcpy(s.cur, s.tmp, b->n * sizeof(float));
			progress(b, "K=%d, %d WUs a round, %s lr %g mu %g, round %d: %.4f", K, nin,
				 ct_outer_name(o->method), (double)o->lr, (double)o->momentum, r,
				 loss[r - 1]);
		}
	}
	kstate_free(&s);
	free(mom);
	return rc;
}

static int lofi_outer(struct bench *b, int K, const struct ct_outer *o, struct outer_row *row)
{
	row->K = K;
	row->o = *o;
	return lofi_rounds(b, K, K, o, row->loss);
}

/* ---- rounds that do not wait for stragglers ------------------------------ */

/* The simulated volunteers of the straggler table, K of them, WU times in
 * units of the median volunteer's: K-2 spread evenly over 0.8..1.2, one 10x
 * slower, one that vanishes (its WU comes back re-issued after its
 * deadline, STRAG_DEADLINE, plus a median WU). */
#define STRAG_DEADLINE 4.0
static double strag_time(int k, int K)
{
	if (k == K - 1)
		return STRAG_DEADLINE + 1.0;
	if (k == K - 2)
		return 10.0;
	return K > 3 ? 0.8 + 0.4 * k / (double)(K - 3) : 1.0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A round's wall time with its nin fastest of K WUs, over the median
 * volunteer's WU time (1: the middle of the regular volunteers' 0.8..1.2). */
static double strag_wall(int K, int nin)
{
	double t[MAXK];

	for (int k = 0; k < K; k++)
		t[k] = strag_time(k, K);
	qsort(t, (size_t)K, sizeof(double), cmp_dbl);
	return t[nin - 1];
}

/* R rounds with K shards, each closed with its nin fastest WUs (those of
 * shards 0..nin-1: the slow and the vanishing volunteer hold the last two),
 * as --round-quorum nin/K does: the losses, and the wall time of a round,
 * the nin-th WU's arrival (strag_wall). */
static int lofi_strag(struct bench *b, int K, int nin, struct strag_row *row)
{
	const struct ct_outer mean = { CT_OUTER_MEAN, 1.0f, 0.0f };

	row->K = K;
	row->nin = nin;
	row->wall = strag_wall(K, nin);
	return lofi_rounds(b, K, nin, &mean, row->loss);
}

static void print_strag(const struct bench *b)
{
	const struct lofi_row *full = NULL;
	int R = b->o.rounds;

	if (b->nsrows == 0)
		return;
	for (int j = 0; j < b->nrows; j++)
		if (b->rows[j].K == b->srows[0].K && b->rows[j].r == R)
			full = &b->rows[j];
	printf("\n## rounds that do not wait for stragglers (K = %d: %d volunteers at "
	       "0.8..1.2x the median volunteer's WU time, one 10x slower, one that vanishes and whose "
	       "WU is re-issued after a deadline of %gx; wall time simulated, losses "
	       "computed)\n\n", b->srows[0].K, b->srows[0].K - 2, STRAG_DEADLINE);
	printf("| --round-quorum | WUs a round | round wall time / the median volunteer's WU |");
	for (int r = 1; r <= R; r++)
		printf(" loss after round %d |", r);
	printf(" vs all WUs |\n|---|---|---|");
	for (int r = 0; r <= R; r++)
		printf("---|");
	printf("\n");
	for (int i = 0; i < b->nsrows; i++) {
		const struct strag_row *w = &b->srows[i];

		printf("| %.3g | %d of %d | %.2fx |", (double)w->nin / w->K, w->nin, w->K,
		       w->wall);
		for (int r = 0; r < R; r++)
			printf(" %.4f |", (double)w->loss[r]);
		if (full != NULL)
			printf(" %+.2f%% |\n", 100.0 * ((double)w->loss[R - 1] - full->avg) /
			       full->avg);
		else
			printf(" |\n");
	}
}

/* The first round (1-based) whose loss is at most want, or 0. */
static int rounds_to(const float *loss, int R, float want)
{
	for (int r = 0; r < R; r++)
		if (loss[r] <= want)
			return r + 1;
	return 0;
}

static void print_outer(const struct bench *b)
{
	int R = b->o.rounds;

	if (b->norows == 0)
		return;
	printf("\n## outer optimizers on the round's mean (K = %d; eval loss after each "
	       "round; %d steps a WU)\n\n", b->orows[0].K, b->o.steps);
	printf("| outer | lr | momentum |");
	for (int r = 1; r <= R; r++)
		printf(" round %d |", r);
	printf(" gap vs centralized | rounds to the mean's final loss |\n|---|---|---|");
	for (int r = 0; r <= R + 1; r++)
		printf("---|");
	printf("\n");
	for (int i = 0; i < b->nrows; i++) {	/* the plain mean: the quality table's row */
		const struct lofi_row *w = &b->rows[i];

		if (w->K != b->orows[0].K)
			continue;
		if (w->r == 1)
			printf("| mean (today) | | |");
		printf(" %.4f |", (double)w->avg);
		if (w->r == R)
			printf(" %+.2f%% | %d of %d |\n", 100.0 * ((double)w->avg - w->central) /
			       w->central, R, R);
	}
	for (int i = 0; i < b->norows; i++) {
		const struct outer_row *o = &b->orows[i];
		const struct lofi_row *mean = NULL;
		int hit;

		for (int j = 0; j < b->nrows; j++)
			if (b->rows[j].K == o->K && b->rows[j].r == R)
				mean = &b->rows[j];
		printf("| %s | %g | %g |", ct_outer_name(o->o.method), (double)o->o.lr,
		       (double)o->o.momentum);
		for (int r = 0; r < R; r++)
			printf(" %.4f |", (double)o->loss[r]);
		if (mean == NULL) {
			printf(" | |\n");
			continue;
		}
		hit = rounds_to(o->loss, R, mean->avg);
		printf(" %+.2f%% | ", 100.0 * ((double)o->loss[R - 1] - mean->central) /
		       mean->central);
		if (hit > 0)
			printf("%d of %d |\n", hit, R);
		else
			printf("not within %d |\n", R);
	}
	printf("\ncentralized after the same total steps: ");
	for (int j = 0; j < b->nrows; j++)
		if (b->rows[j].K == b->orows[0].K)
			printf("%s%.4f", b->rows[j].r == 1 ? "" : ", ", (double)b->rows[j].central);
	printf("\n");
}

/* ---- LoRA lo-fi ---------------------------------------------------------- */

/* One LoRA WU from `start` on shard k of round r: adapters into ad, the
 * lossless upload size added to *bytes. */
static int lora_wu(struct bench *b, const float *start, const struct ct_lora_spec *sp,
		   int K, int r, int k, float *ad, float *init, double *bytes)
{
	const struct ct_model_config *c = &b->base.cfg;
	struct ct_delta_model dm = { (uint32_t)c->maxT, (uint32_t)c->V, (uint32_t)c->Vp,
				     (uint32_t)c->L, (uint32_t)c->NH, (uint32_t)c->C };
	struct ct_gpt2 m = view(b, start);
	struct ct_tokens t = shard(b, k, 1);
	struct ct_wu_hparams hp = b->hp;
	struct ct_delta_lora sec;
	struct ct_buf buf = CT_BUF_INIT(0);
	unsigned char sha[32];
	size_t n = ct_lora_nparams(c, sp);
	int rc;

	hp.steps = b->o.steps;
	hp.lr = b->o.lora_lr;
	hp.lora = *sp;
	hp.lora_seed = b->o.seed * 1000003u + (uint64_t)(K * 64 + r * 8) +	/* the round's */
		       (b->o.lora_seed_per_shard ? (uint64_t)k : 0);
	sec = (struct ct_delta_lora){ (uint32_t)sp->rank, sp->targets, sp->alpha, hp.lora_seed,
				     CT_ARCH_GPT2 };
	rc = ct_wu_run(&m, &t, &hp, b->o.device, ad, NULL);
	if (rc == 0)
		rc = ct_lora_init(c, sp, hp.lora_seed, init);
	if (rc == 0)
		rc = ct_delta_weights_sha(start, b->n, sha);
	if (rc == 0)
		rc = ct_delta_encode_lora(init, ad, n, &dm, sha, &sec, CT_DELTA_LOSSLESS_TENSOR,
					  -1, &buf);
	if (rc == 0)
		*bytes += (double)buf.len / K;
	ct_buf_free(&buf);
	return rc;
}

/* R LoRA lo-fi rounds with K shards at one rank: R rows. */
static int lofi_lora(struct bench *b, int K, int rank)
{
	struct ct_lora_spec sp = { .rank = rank, .alpha = (float)rank, .targets = CT_LORA_ALL };
	size_t n = ct_lora_nparams(&b->base.cfg, &sp);
	float *cur = falloc(b->n), *init = falloc(n), *ad[MAXK] = { 0 };
	int rc = cur && init ? 0 : ct_error(CT_ENOMEM, "out of memory");

	for (int k = 0; k < K && rc == 0; k++)
		if ((ad[k] = falloc(n)) == NULL)
			rc = ct_error(CT_ENOMEM, "out of memory");
	if (rc == 0)
		memcpy(cur, b->base.params, b->n * sizeof(float));
	for (int r = 1; r <= b->o.rounds && rc == 0; r++) {
		struct lora_row *w = &b->lrows[b->nlrows];

		memset(w, 0, sizeof(*w));
		for (int k = 0; k < K && rc == 0; k++)
			rc = lora_wu(b, cur, &sp, K, r, k, ad[k], init, &w->upload);
		if (rc == 0) {	/* init: the round's initial adapters */
			struct lofi_row x = { 0 };

			rc = xshard(init, ad, K, n, &x);
			w->cos_min = x.cos_min;
			w->outliers = x.outliers;
		}
		if (rc == 0)
			rc = ct_lora_merge(&b->base.cfg, &sp, cur, (const float *const *)ad, K);
		if (rc == 0)
			rc = eval(b, cur, 0, &w->loss);
		if (rc == 0) {
			w->K = K;
			w->r = r;
			w->rank = rank;
			b->nlrows++;
			progress(b, "K=%d round %d: LoRA r=%d lo-fi %.4f", K, r, rank, w->loss);
		}
	}
	for (int k = 0; k < K; k++)
		free(ad[k]);
	free(cur);
	free(init);
	return rc;
}

static void print_lora(const struct bench *b)
{
	printf("\n## LoRA lo-fi (eval loss on B's held-out text; base %.4f; alpha = r, "
	       "all four targets, lr %g; full-weight lo-fi lr %g)\n\n", (double)b->base_b,
	       (double)b->o.lora_lr, (double)b->o.lr);
	printf("| K | round | rank | LoRA lo-fi | full lo-fi | centralized | LoRA vs full lo-fi |"
	       " LoRA upload, lossless (B) | full upload, lossless (B) | ratio |"
	       " cross-shard: lowest cosine | outliers |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < b->nlrows; i++) {
		const struct lora_row *w = &b->lrows[i];
		const struct lofi_row *f = NULL;
		const struct upl_row *u = NULL;

		for (int j = 0; j < b->nrows; j++)
			if (b->rows[j].K == w->K && b->rows[j].r == w->r)
				f = &b->rows[j];
		for (int j = 0; j < b->nups; j++)
			if (b->ups[j].K == w->K && b->ups[j].r == w->r)
				u = &b->ups[j];
		if (f == NULL || u == NULL)
			continue;
		printf("| %d | %d | %d | %.4f | %.4f | %.4f | %+.2f%% | %.0f | %.0f | %.4f |",
		       w->K, w->r, w->rank, (double)w->loss, (double)f->avg, (double)f->central,
		       100.0 * ((double)w->loss - f->avg) / f->avg, w->upload, u->lossless,
		       w->upload / u->lossless);
		if (w->outliers < 0)
			printf(" | |\n");
		else
			printf(" %.3f | %d |\n", w->cos_min, w->outliers);
	}
}

/* ---- control: no shared base ------------------------------------------ */

/* Two members trained control-steps steps on the two halves of the shards,
 * from the pretrained base (which = 0) or from two different random
 * initialisations (which = 1), and their average. */
static int control(struct bench *b, int which)
{
	int half = b->o.maxk / 2 > 0 ? b->o.maxk / 2 : 1;
	float *m[2] = { falloc(b->n), falloc(b->n) }, *start = falloc(b->n);
	float *avg = falloc(b->n);
	int rc = m[0] && m[1] && start && avg ? 0 : ct_error(CT_ENOMEM, "out of memory");

	for (int i = 0; i < 2 && rc == 0; i++) {
		struct ct_tokens t = shard(b, i * half, half);

		if (which == 0)
			memcpy(start, b->base.params, b->n * sizeof(float));
		else
			rc = ct_gpt2_init_random(&b->base.cfg, b->o.seed + 101 + (uint64_t)i, start);
		if (rc == 0)
			rc = run_wu(b, start, &t, b->o.ctl_steps, b->o.device, m[i]);
		if (rc == 0)
			rc = eval(b, m[i], 0, &b->ctl[which][i]);
	}
	if (rc == 0)
		rc = ct_avg(avg, (const float *const *)m, 2, b->n, CT_AVG_MEAN, 0);
	if (rc == 0)
		rc = eval(b, avg, 0, &b->ctl[which][2]);
	if (rc == 0)
		progress(b, "control (%s): members %.4f %.4f, average %.4f",
			 which ? "random inits" : "shared base", b->ctl[which][0],
			 b->ctl[which][1], b->ctl[which][2]);
	free(m[0]);
	free(m[1]);
	free(start);
	free(avg);
	return rc;
}

/* ---- tables ------------------------------------------------------------- */

static void print_setup(const struct bench *b)
{
	const struct opts *o = &b->o;
	const struct ct_model_config *c = &b->base.cfg;

	printf("## Setup\n\n");
	printf("model: GPT-2 L=%d C=%d NH=%d maxT=%d V=%d Vp=%d, %zu parameters; "
	       "device %s; seed %llu\n", c->L, c->C, c->NH, c->maxT, c->V, c->Vp, b->n,
	       o->device, (unsigned long long)o->seed);
	printf("batch B=%d T=%d; AdamW lr %g (pretraining %g), no clipping, no weight decay\n",
	       o->B, o->T, (double)o->lr, (double)o->pre_lr);
	printf("pretraining: %d steps on language A; fine-tuning: %d steps per WU = "
	       "%d pass(es) over a shard of %zu tokens of language B; %d round(s)\n",
	       o->pre_steps, o->steps, o->epochs, b->shard_len, o->rounds);
	printf("eval: %d batches of held-out text (%d tokens)\n", o->eval_batches,
	       o->eval_batches * o->B * o->T);
	printf("\n| model | eval loss on A | eval loss on B |\n|---|---|---|\n");
	printf("| random init | | %.4f |\n", (double)b->init_b);
	printf("| base (pretrained on A) | %.4f | %.4f |\n", (double)b->base_a,
	       (double)b->base_b);
	if (b->identical >= 0)
		printf("\nOne WU on %s vs the C reference: weights %s.\n", o->device,
		       b->identical ? "bit-identical" : "DIFFERENT");
}

static void print_quality(const struct bench *b)
{
	printf("\n## lo-fi quality (eval loss on B's held-out text; base %.4f)\n\n",
	       (double)b->base_b);
	printf("| K | rounds | total steps | base | best single shard | worst single shard |"
	       " lo-fi average | centralized | gap vs centralized | share of centralized's"
	       " drop |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < b->nrows; i++) {
		const struct lofi_row *w = &b->rows[i];

		printf("| %d | %d | %d | %.4f | %.4f | %.4f | %.4f | %.4f | %+.2f%% | %.1f%% |\n",
		       w->K, w->r, w->K * w->r * b->o.steps, (double)b->base_b, (double)w->best,
		       (double)w->worst, (double)w->avg, (double)w->central,
		       100.0 * ((double)w->avg - w->central) / w->central,
		       100.0 * ((double)b->base_b - w->avg) / ((double)b->base_b - w->central));
	}
	printf("\n### the cross-shard check on these honest rounds (server defaults: "
	       "cosine >= 0, size within 1/4..4x of the others' median)\n\n");
	printf("| K | round | lowest cosine | size ratios | outliers (false positives) |\n");
	printf("|---|---|---|---|---|\n");
	for (int i = 0; i < b->nrows; i++) {
		const struct lofi_row *w = &b->rows[i];

		if (w->outliers >= 0)
			printf("| %d | %d | %.3f | %.2f..%.2f | %d |\n", w->K, w->r, w->cos_min,
			       w->ratio_lo, w->ratio_hi, w->outliers);
	}
	printf("\n### control: averaging needs a shared base (%d steps per member)\n\n",
	       b->o.ctl_steps);
	printf("| members start from | member 1 | member 2 | average of the two |\n");
	printf("|---|---|---|---|\n");
	printf("| the pretrained base | %.4f | %.4f | %.4f |\n", (double)b->ctl[0][0],
	       (double)b->ctl[0][1], (double)b->ctl[0][2]);
	printf("| two different random inits | %.4f | %.4f | %.4f |\n", (double)b->ctl[1][0],
	       (double)b->ctl[1][1], (double)b->ctl[1][2]);
}

static void print_uploads(const struct bench *b)
{
	double raw = 4.0 * (double)b->n;

	printf("\n## uploads (mean bytes of one result; raw = %zu float32 weights)\n\n", b->n);
	printf("| K | round | raw fp32 | lossless delta | ratio | int8 | ratio |"
	       " int8, zlib 9 | ratio | avg loss, lossless | avg loss, int8 | change |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < b->nups; i++) {
		const struct upl_row *u = &b->ups[i];

		printf("| %d | %d | %.0f | %.0f | %.3f | %.0f | %.3f | %.0f | %.3f | %.4f | %.4f |"
		       " %+.3f%% |\n", u->K, u->r, raw, u->lossless, u->lossless / raw, u->int8,
		       u->int8 / raw, u->int8z9, u->int8z9 / raw, (double)u->loss_exact, (double)u->loss_int8,
		       100.0 * ((double)u->loss_int8 - u->loss_exact) / u->loss_exact);
	}
}

/* ---- command line ------------------------------------------------------- */

static void usage(FILE *f)
{
	fputs("usage: bench_lofi [--quick] [--device D] [--seed S] [--steps N]\n"
	      "                  [--epochs E] [--pretrain-steps N] [--control-steps N]\n"
	      "                  [--rounds R] [--max-shards K] [--lr F] [--inner-lr F]\n"
	      "                  [--eval-batches N]\n"
	      "                  [--lora-ranks R,R,...] [--lora-lr F] [--lora-seed-per-shard]\n"
	      "                  [--outer none|METHOD:LR:MU,...] [--outer-k K]\n"
	      "                  [--no-stragglers] [--only-k K]\n"
	      "Pretrains a small GPT-2 on synthetic language A, fine-tunes it on\n"
	      "language B by lo-fi rounds with K = 1, 2, 3, 4, 8 shards and by one\n"
	      "centralized run, and prints quality, control and upload tables.\n"
	      "Defaults: device opencl, seed 1, 160 steps per WU, 4 passes over\n"
	      "each shard, 1500 pretraining steps, 600 control steps, 3 rounds (at\n"
	      "most 16), up to 8 shards, lr 2e-3, 16 eval batches. --lr sets\n"
	      "pretraining's and fine-tuning's AdamW lr; --inner-lr fine-tuning's\n"
	      "alone (the WUs', the centralized run's and the controls'), leaving\n"
	      "the base as it is.\n"
	      "--quick: 20 steps, 2 passes, 300 pretraining, 100 control, 2 rounds,\n"
	      "4 shards, 8 eval batches.\n"
	      "--lora-ranks adds LoRA lo-fi at those ranks (AdamW lr --lora-lr,\n"
	      "default 1e-2) and its table; one adapter seed per round as the\n"
	      "server gives, or with --lora-seed-per-shard one per WU (the old policy).\n"
	      "--outer: outer optimizers (lib/ct_outer.h) on the round's mean, compared\n"
	      "at K = --outer-k (default the largest K) against the plain mean and the\n"
	      "centralized run; default nesterov:0.7:0.9,nesterov:1:0.5,nesterov:0.5:0.5,\n"
	      "sgd:1:0.5; none skips the table. The straggler table (at the largest\n"
	      "K >= 4; --no-stragglers skips it) closes rounds with K-1 and K-2 WUs.\n"
	      "--only-k K (1, 2, 3, 4 or 8) runs the lo-fi tables at that K alone.\n", f);
}

static void defaults(struct opts *o, int quick)
{
	o->device = "opencl";
	o->seed = 1;
	o->quick = quick;
	o->steps = quick ? 20 : 160;
	o->epochs = quick ? 2 : 4;
	o->pre_steps = quick ? 300 : 1500;
	o->ctl_steps = quick ? 100 : 600;
	o->rounds = quick ? 2 : 3;
	o->maxk = quick ? 4 : 8;
	o->B = 8;
	o->T = 64;
	o->lr = 2e-3f;
	o->pre_lr = 2e-3f;
	o->eval_batches = quick ? 8 : 16;
	o->nranks = 0;
	o->lora_lr = 1e-2f;
	/* the outer optimizers compared by default (--outer) */
	o->outer[0] = (struct ct_outer){ CT_OUTER_NESTEROV, 0.7f, 0.9f };
	o->outer[1] = (struct ct_outer){ CT_OUTER_NESTEROV, 1.0f, 0.5f };
	o->outer[2] = (struct ct_outer){ CT_OUTER_NESTEROV, 0.5f, 0.5f };
	o->outer[3] = (struct ct_outer){ CT_OUTER_SGD, 1.0f, 0.5f };
	o->nouter = 4;
	o->stragglers = 1;
}

/* "4,8,16" into o->lora_ranks. Returns 0 or -1. */
static int parse_ranks(const char *s, struct opts *o)
{
	char *end;

	o->nranks = 0;
	while (*s != '\0' && o->nranks < MAXRANKS) {
		long r = strtol(s, &end, 10);

		if (end == s || r < 1 || r > CT_LORA_MAX_RANK)
			return -1;
		o->lora_ranks[o->nranks++] = (int)r;
		s = *end == ',' ? end + 1 : end;
		if (*end != ',' && *end != '\0')
			return -1;
	}
	return *s == '\0' ? 0 : -1;
}

/* "none" or "METHOD:LR:MU,..." into o->outer. Returns 0 or -1. */
static int parse_outer(const char *s, struct opts *o)
{
	char buf[64];

	o->nouter = 0;
	if (strcmp(s, "none") == 0)
		return 0;
	while (*s != '\0') {
		size_t len = strcspn(s, ",");
		struct ct_outer *x = &o->outer[o->nouter];
		char *lr, *mu;

		if (o->nouter >= MAXOUTER || len >= sizeof(buf))
			return -1;
		memcpy(buf, s, len);
		buf[len] = '\0';
		lr = strchr(buf, ':');
		mu = lr ? strchr(lr + 1, ':') : NULL;
		if (mu == NULL)
			return -1;
		*lr++ = '\0';
		*mu++ = '\0';
		x->lr = strtof(lr, NULL);
		x->momentum = strtof(mu, NULL);
		if (ct_outer_parse(buf, &x->method) < 0 || x->method == CT_OUTER_MEAN ||
		    ct_outer_check(x) < 0)
			return -1;
		o->nouter++;
		s += len + (s[len] == ',');
	}
	return 0;
}

/* Returns 0, or 2 on a usage error (message printed). */
static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "device", required_argument, NULL, 'd' },
		{ "seed", required_argument, NULL, 's' },
		{ "steps", required_argument, NULL, 'n' },
		{ "epochs", required_argument, NULL, 'E' },
		{ "pretrain-steps", required_argument, NULL, 'p' },
		{ "control-steps", required_argument, NULL, 'c' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "max-shards", required_argument, NULL, 'k' },
		{ "lr", required_argument, NULL, 'l' },
		{ "inner-lr", required_argument, NULL, 'i' },
		{ "eval-batches", required_argument, NULL, 'e' },
		{ "lora-ranks", required_argument, NULL, 'R' },
		{ "lora-lr", required_argument, NULL, 'L' },
		{ "lora-seed-per-shard", no_argument, NULL, 'S' },
		{ "outer", required_argument, NULL, 'O' },
		{ "outer-k", required_argument, NULL, 'K' },
		{ "no-stragglers", no_argument, NULL, 'N' },
		{ "only-k", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, quick = 0, have_inner = 0;
	float inner_lr = 0.0f;		/* --inner-lr, whatever the order with --lr */

	for (int i = 1; i < argc; i++)	/* --quick sets the defaults the rest override */
		quick = quick || strcmp(argv[i], "--quick") == 0;
	defaults(o, quick);
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'q': break;
		case 'd': o->device = optarg; break;
		case 's': o->seed = strtoull(optarg, NULL, 10); break;
		case 'n': o->steps = atoi(optarg); break;
		case 'E': o->epochs = atoi(optarg); break;
		case 'p': o->pre_steps = atoi(optarg); break;
		case 'c': o->ctl_steps = atoi(optarg); break;
		case 'r': o->rounds = atoi(optarg); break;
		case 'k': o->maxk = atoi(optarg); break;
		case 'l': o->lr = o->pre_lr = (float)atof(optarg); break;
		case 'i': inner_lr = (float)atof(optarg); have_inner = 1; break;
		case 'e': o->eval_batches = atoi(optarg); break;
		case 'R':
			if (parse_ranks(optarg, o) < 0) {
				usage(stderr);
				return 2;
			}
			break;
		case 'L': o->lora_lr = (float)atof(optarg); break;
		case 'S': o->lora_seed_per_shard = 1; break;
		case 'O':
			if (parse_outer(optarg, o) < 0) {
				usage(stderr);
				return 2;
			}
			break;
		case 'K': o->outer_k = atoi(optarg); break;
		case 'N': o->stragglers = 0; break;
		case 'J': o->only_k = atoi(optarg); o->maxk = o->only_k; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (have_inner)
		o->lr = inner_lr;
	if (optind != argc || o->steps < 1 || o->steps > 100000 || o->epochs < 1 ||
	    o->steps % o->epochs != 0 || o->pre_steps < 1 ||
	    o->pre_steps > 1000000 || o->ctl_steps < 1 || o->ctl_steps > 1000000 ||
	    o->rounds < 1 || o->rounds > MAXR || o->maxk < 1 || o->maxk > MAXK ||
	    o->outer_k < 0 || o->outer_k > o->maxk ||
	    (o->only_k != 0 && o->only_k != 1 && o->only_k != 2 && o->only_k != 3 &&
	     o->only_k != 4 && o->only_k != 8) ||
	    !(o->lr > 0.0f) || !(o->lr < 1.0f) || !(o->pre_lr > 0.0f) || o->eval_batches < 1 || o->eval_batches > 100000) {
		usage(stderr);
		return 2;
	}
	return 0;
}

/* All K = 1, 2, 3, 4, 8 up to maxk: lo-fi rounds, then centralized. */
static int run_all(struct bench *b)
{
	int rc = 0;

	for (int K = 1; K <= b->o.maxk && rc == 0; K = K < 4 ? K + 1 : 2 * K) {
		struct lofi_row *rows = &b->rows[b->nrows];

		if (b->o.only_k > 0 && K != b->o.only_k)
			continue;
		rc = lofi(b, K, rows);
		if (rc == 0)
			rc = central(b, K, rows);
		if (rc == 0)
			b->nrows += b->o.rounds;
		for (int i = 0; i < b->o.nranks && rc == 0; i++)
			rc = lofi_lora(b, K, b->o.lora_ranks[i]);
	}
	if (b->o.stragglers && b->rows[b->nrows - 1].K >= 4) {	/* at the largest K */
		int K = b->rows[b->nrows - 1].K;
		int nins[3] = { K, K - 1, K - 2 };

		for (int i = 0; i < 3 && rc == 0; i++) {
			struct strag_row *w = &b->srows[b->nsrows];

			if (nins[i] == K) {	/* every WU: the lo-fi rows' losses */
				w->K = K;
				w->nin = K;
				for (int r = 0; r < b->o.rounds; r++)
					w->loss[r] = b->rows[b->nrows - b->o.rounds + r].avg;
				w->wall = strag_wall(K, K);
			} else {
				rc = lofi_strag(b, K, nins[i], w);
			}
			if (rc == 0)
				b->nsrows++;
		}
	}
	for (int i = 0; i < b->o.nouter && rc == 0; i++) {
		int K = b->o.outer_k > 0 ? b->o.outer_k : b->rows[b->nrows - 1].K;

		rc = lofi_outer(b, K, &b->o.outer[i], &b->orows[b->norows]);
		if (rc == 0)
			b->norows++;
	}
	for (int which = 0; which < 2 && rc == 0; which++)
		rc = control(b, which);
	return rc;
}

int main(int argc, char **argv)
{
	static struct bench b;	/* big row arrays: not on the stack */
	int rc;

	rc = parse(argc, argv, &b.o);
	if (rc != 0)
		return rc;
	b.t0 = ct_time_mono_s();
	/* A strong reference, so the OpenCL backend is linked in from the
	 * static library (see ct_engine.h). */
	if (strcmp(b.o.device, "cpu") != 0 && ct_ocl_backend_ops.name == NULL)
		return 1;
	rc = setup(&b);
	if (rc == 0) {
		print_setup(&b);
		fflush(stdout);
		rc = run_all(&b);
	}
	if (rc == 0) {
		print_quality(&b);
		print_outer(&b);
		print_strag(&b);
		print_uploads(&b);
		if (b.o.nranks > 0)
			print_lora(&b);
		progress(&b, "done");
	}
	ct_gpt2_free(&b.base);
	ct_tokens_free(&b.a_eval);
	ct_tokens_free(&b.b_eval);
	free(b.b_train);
	if (rc < 0) {
		fprintf(stderr, "bench_lofi: %s\n", ct_errmsg(rc));
		return 1;
	}
	return 0;
}
