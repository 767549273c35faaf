/*
 * Unit tests for server/validate/quorum.c: the validator's sanity checks (with a
 * real training run of the engine for the update bound) and quorum
 * decisions on crafted results, and adaptive replication.
 */
#include "ct_test.h"
#include "daemons/daemons.h"
#include "data/db.h"
#include "data/result_state.h"
#include "ct_delta.h"
#include "ct_engine.h"
#include "ct_err.h"

#include <math.h>

#define N 1000

static uint64_t rng = 0x243F6A8885A308D3ull;

static double urand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static void test_adaptive(void **state)
{
	(void)state;
	assert_false(ct_adaptive_decide(0, 0.0));
	assert_false(ct_adaptive_decide(9, 0.0));	/* not trusted yet */
	assert_true(ct_adaptive_decide(10, 0.85));	/* 0.85 < 1 - 1/10 */
	assert_false(ct_adaptive_decide(10, 0.95));	/* the 1/10 spot check */
	assert_true(ct_adaptive_decide(100, 0.98));
	assert_false(ct_adaptive_decide(100, 0.995));
	/* over many draws, a host with n = 20 is replicated 1/20 of the time */
	int replicated = 0;
	for (int i = 0; i < 100000; i++)
		replicated += !ct_adaptive_decide(20, urand());
	assert_true(replicated > 4500 && replicated < 5500);
}

static const struct ct_val_bound adam = { .steps = 10, .lr = 1e-3, .beta1 = 0.9,
					  .beta2 = 0.999, .weight_decay = 0.0 };

static void test_adam_bound(void **state)
{
	struct ct_val_bound one = adam, b = adam;

	(void)state;
	one.steps = 1;
	/* the first Adam step moves a weight by at most lr (m_hat/sqrt(v_hat) = +-1) */
	assert_true(fabs(ct_val_adam_bound(&one, 1.0) - 1.01e-3) < 1e-6);
	/* early steps stay near lr each; the bound grows with steps */
	double b10 = ct_val_adam_bound(&adam, 1.0);
	assert_true(b10 > 10e-3 && b10 < 12e-3);
	b.steps = 1000;
	assert_true(ct_val_adam_bound(&b, 1.0) > 100 * b10);
	/* weight decay adds lr * wd * |p| per step */
	b = adam;
	b.weight_decay = 0.1;
	assert_true(ct_val_adam_bound(&b, 2.0) > b10 + 10 * 1e-3 * 0.1 * 2.0 * 0.99);
	/* betas with no bound */
	b = adam;
	b.beta1 = 0.99, b.beta2 = 0.9;
	assert_true(isinf(ct_val_adam_bound(&b, 1.0)));
}

/* A real WU on a tiny model: the honest update passes the checks and sits
 * close to the bound, so the same update scaled x10 cannot. */
static void test_sanity_on_real_training(void **state)
{
	const struct ct_model_config cfg = { .maxT = 16, .V = 64, .L = 1, .NH = 2, .C = 16,
					    .Vp = 64 };
	struct ct_wu_hparams hp;
	struct ct_gpt2 m = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_val_stats st;
	struct ct_val_bound b;
	ct_tok data[400];
	float *out, *x10;

	(void)state;
	assert_int_equal(ct_gpt2_alloc(&m, &cfg), 0);
	assert_int_equal(ct_gpt2_init_random(&cfg, 7, m.params), 0);
	for (int i = 0; i < 400; i++)
		data[i] = (ct_tok)(urand() * 64);
	assert_int_equal(ct_tokens_from_array(&tok, data, 400), 0);
	ct_wu_hparams_default(&hp);
	hp.steps = 5, hp.B = 2, hp.T = 8, hp.lr = 1e-2f;
	out = malloc(m.lay.total * sizeof(float));
	x10 = malloc(m.lay.total * sizeof(float));
	assert_int_equal(ct_wu_run(&m, &tok, &hp, "cpu", out, NULL), 0);
	b = (struct ct_val_bound){ .steps = hp.steps, .lr = hp.lr, .beta1 = hp.beta1,
				   .beta2 = hp.beta2, .weight_decay = hp.weight_decay };
	ct_val_stats(m.params, out, m.lay.total, &st);
	assert_int_equal(ct_val_sanity(&st, &b, 1.0), CT_VAL_OK);
	assert_true(st.update_max > 0.3 * ct_val_adam_bound(&b, st.base_max));
	for (size_t i = 0; i < m.lay.total; i++)
		x10[i] = m.params[i] + 10.0f * (out[i] - m.params[i]);
	ct_val_stats(m.params, x10, m.lay.total, &st);
	assert_int_equal(ct_val_sanity(&st, &b, 1.0), CT_VAL_TOO_LARGE);
	/* lazy: the base back */
	ct_val_stats(m.params, m.params, m.lay.total, &st);
	assert_int_equal(ct_val_sanity(&st, &b, 1.0), CT_VAL_NO_UPDATE);
	/* one NaN */
	memcpy(x10, out, m.lay.total * sizeof(float));
	x10[123] = NAN;
	ct_val_stats(m.params, x10, m.lay.total, &st);
	assert_int_equal(ct_val_sanity(&st, &b, 1.0), CT_VAL_NONFINITE);
	free(out), free(x10);
	ct_tokens_free(&tok);
	ct_gpt2_free(&m);
}

static void test_relative_cap_and_loss(void **state)
{
	struct ct_val_stats st = { .base_norm = 10.0, .update_norm = 2.0, .update_max = 1e-4,
				   .base_max = 1.0, .finite = 1 };

	(void)state;
	assert_int_equal(ct_val_sanity(&st, &adam, 0.5), CT_VAL_OK);
	assert_int_equal(ct_val_sanity(&st, &adam, 0.1), CT_VAL_TOO_LARGE);
	assert_int_equal(ct_val_sanity(&st, &adam, 0.0), CT_VAL_OK);	/* no cap */
	assert_true(ct_val_loss_ok(3.0, 3.1, 0.05));
	assert_true(ct_val_loss_ok(3.15, 3.1, 0.05));
	assert_false(ct_val_loss_ok(3.2, 3.1, 0.05));
	assert_false(ct_val_loss_ok(NAN, 3.1, 0.05));
	assert_false(ct_val_loss_ok(INFINITY, 3.1, 0.05));
	/* eval batches shrink to what a short eval file holds */
	assert_int_equal(ct_eval_batch(4, 8, 100), 4);
	assert_int_equal(ct_eval_batch(4, 8, 33), 4);
	assert_int_equal(ct_eval_batch(4, 8, 32), 3);
	assert_int_equal(ct_eval_batch(4, 8, 9), 1);
	assert_int_equal(ct_eval_batch(4, 8, 5), 1);
}

/* The probe's size: a quarter of a WU's tokens, at least one sequence, at
 * most 1024 (the round evaluation's default); the job's own setting wins. */
static void test_probe_tokens(void **state)
{
	(void)state;
	assert_int_equal(ct_val_probe_tokens(3, 2, 64, 0), 96);	/* 384 / 4 */
	assert_int_equal(ct_val_probe_tokens(1, 1, 64, 0), 64);	/* one sequence */
	assert_int_equal(ct_val_probe_tokens(16, 4, 64, 0), 1024);	/* exactly the cap */
	assert_int_equal(ct_val_probe_tokens(100, 4, 256, 0), 1024);	/* 102,400 / 4 capped */
	assert_int_equal(ct_val_probe_tokens(100, 4, 256, 5000), 5000);	/* the job's */
	assert_int_equal(ct_val_probe_tokens(3, 2, 64, 16), 16);
}

/* ---- quorum on crafted results ------------------------------------------ */

static float base[N], honest[N], honest_nc[N], noise[N], scaled[N];

static void make(void)
{
	for (int i = 0; i < N; i++) {
		double d = (urand() - 0.5) * 2e-3;

		base[i] = (float)((urand() - 0.5) * 0.1);
		honest[i] = base[i] + (float)d;
		/* another device's rounding: 1e-5 relative difference */
		honest_nc[i] = base[i] + (float)(d * (1.0 + 1e-5 * (urand() - 0.5)));
		noise[i] = base[i] + (float)((urand() - 0.5) * 2e-3);
		scaled[i] = base[i] + (float)(10.0 * d);
	}
}

static struct ct_val_cand cand(int64_t id, const float *w, int conforming, double loss)
{
	struct ct_val_cand c = { .id = id, .state = CT_VS_INIT, .conforming = conforming,
				 .w = w, .probe_loss = loss };
	double s = 0.0;

	ct_delta_weights_sha(w, N, c.sha);
	for (int i = 0; i < N; i++)
		s += ((double)w[i] - base[i]) * ((double)w[i] - base[i]);
	c.update_norm = sqrt(s);
	return c;
}

/* ct_val_decide_fn's distance from the candidates' weights, counted. */
static int ndist;

static int dist_from_w(void *ctx, size_t i, size_t j, double *dist)
{
	const struct ct_val_cand *c = ctx;
	double s = 0.0;

	assert_true(i < j);
	ndist++;
	for (int k = 0; k < N; k++) {
		double d = (double)c[i].w[k] - (double)c[j].w[k];

		s += d * d;
	}
	*dist = sqrt(s);
	return 0;
}

/* ct_val_decide, with the check that ct_val_decide_fn (the validator's
 * streaming quorum) takes the very same decisions and asks each pair's
 * distance at most once. */
static int decide(struct ct_val_cand *c, size_t nc, size_t n, int q, double tol)
{
	struct ct_val_cand d[8];
	int best_fn, best;

	assert_true(nc <= 8);
	memcpy(d, c, nc * sizeof(*c));
	ndist = 0;
	assert_int_equal(ct_val_decide_fn(d, nc, q, tol, dist_from_w, d, &best_fn), 0);
	assert_true(ndist <= (int)(nc * (nc - 1) / 2));
	best = ct_val_decide(c, nc, n, q, tol);
	assert_int_equal(best_fn, best);
	for (size_t i = 0; i < nc; i++)
		assert_int_equal(d[i].new_state, c[i].new_state);
	return best;
}

/* Equal hashes decide without any distance; a failing distance is the
 * caller's error. */
static int dist_fails(void *ctx, size_t i, size_t j, double *dist)
{
	(void)ctx, (void)i, (void)j, (void)dist;
	return CT_ENOENT;
}

static void test_decide_fn_by_hash(void **state)
{
	struct ct_val_cand c[3];
	int best;

	(void)state;
	make();
	c[0] = cand(1, honest, 0, 3.0);
	c[1] = cand(2, honest, 0, 3.0);
	c[2] = cand(3, honest, 0, 3.0);
	assert_int_equal(ct_val_decide_fn(c, 3, 2, 1e-3, dist_fails, NULL, &best), 0);
	assert_int_equal(best, 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(c[i].new_state, CT_VS_VALID);
	c[1] = cand(2, scaled, 0, 3.0);
	assert_int_equal(ct_val_decide_fn(c, 3, 2, 1e-3, dist_fails, NULL, &best), CT_ENOENT);
}

static void test_honest_pair(void **state)
{
	struct ct_val_cand c[2];

	(void)state;
	make();
	c[0] = cand(1, honest, 1, 3.0);
	c[1] = cand(2, honest, 1, 3.0);
	assert_int_equal(decide(c, 2, N, 2, 1e-3), 0);
	assert_int_equal(c[0].new_state, CT_VS_VALID);
	assert_int_equal(c[1].new_state, CT_VS_VALID);
	/* not conforming, a little different: within the tolerance */
	c[0] = cand(1, honest, 0, 3.0);
	c[1] = cand(2, honest_nc, 0, 3.0 + 1e-6);
	assert_int_equal(decide(c, 2, N, 2, 1e-3), 0);
	assert_int_equal(c[1].new_state, CT_VS_VALID);
	/* the same pair from two conforming devices must match bit for bit */
	c[0] = cand(1, honest, 1, 3.0);
	c[1] = cand(2, honest_nc, 1, 3.0);
	assert_int_equal(decide(c, 2, N, 2, 1e-3), -1);
	assert_int_equal(c[0].new_state, CT_VS_INCONCLUSIVE);
	assert_int_equal(c[1].new_state, CT_VS_INCONCLUSIVE);
}

static void test_disagreement_then_third(void **state)
{
	struct ct_val_cand c[3];

	(void)state;
	make();
	/* honest vs noise: no quorum, both inconclusive (a third is needed) */
	c[0] = cand(1, noise, 0, 3.0);
	c[1] = cand(2, honest, 0, 3.0);
	assert_int_equal(decide(c, 2, N, 2, 1e-3), -1);
	assert_int_equal(c[0].new_state, CT_VS_INCONCLUSIVE);
	/* the third agrees with the honest one */
	c[0].state = c[1].state = CT_VS_INCONCLUSIVE;
	c[2] = cand(3, honest_nc, 0, 3.0);
	assert_int_equal(decide(c, 3, N, 2, 1e-3), 1);
	assert_int_equal(c[0].new_state, CT_VS_INVALID);
	assert_int_equal(c[1].new_state, CT_VS_VALID);
	assert_int_equal(c[2].new_state, CT_VS_VALID);
	/* x10 and honest: no agreement either */
	c[0] = cand(1, scaled, 0, 3.0);
	c[1] = cand(2, honest, 0, 3.0);
	assert_int_equal(decide(c, 2, N, 2, 1e-3), -1);
	/* same weights but probe losses far apart cannot agree by tolerance */
	c[0] = cand(1, honest, 0, 3.0);
	c[1] = cand(2, honest_nc, 0, 3.5);
	assert_int_equal(decide(c, 2, N, 2, 1e-3), -1);
}

/* An int8 upload of the honest weights against the exact ones: the
 * quantisation error (~0.6% of the update) is far over a 1e-3 tolerance,
 * but the decoder's bound on it lets them agree; a doubled update still
 * does not. */
static void test_int8_against_exact(void **state)
{
	static const struct ct_delta_model dm = { 16, 64, 64, 1, 2, 16 };
	static float dec[N], doubled[N], ddec[N];
	unsigned char sha[32] = { 0 };
	struct ct_buf out = CT_BUF_INIT(0);
	struct ct_delta_info info, dinfo;
	struct ct_val_cand c[2];

	(void)state;
	make();
	assert_int_equal(ct_delta_encode(base, honest, N, &dm, sha, CT_DELTA_INT8, -1, &out), 0);
	assert_int_equal(ct_delta_decode(out.data, out.len, base, N, dec, &info), 0);
	for (int i = 0; i < N; i++)
		doubled[i] = base[i] + 2.0f * (honest[i] - base[i]);
	ct_buf_reset(&out);
	assert_int_equal(ct_delta_encode(base, doubled, N, &dm, sha, CT_DELTA_INT8, -1, &out), 0);
	assert_int_equal(ct_delta_decode(out.data, out.len, base, N, ddec, &dinfo), 0);
	ct_buf_free(&out);
	c[0] = cand(1, honest, 1, 3.0);
	c[1] = cand(2, dec, 1, 3.0);
	c[1].quant_error = info.quant_error;
	assert_true(info.quant_error > 0.0);
	assert_int_equal(decide(c, 2, N, 2, 1e-3), 0);
	assert_int_equal(c[1].new_state, CT_VS_VALID);
	/* without the allowance they would not agree */
	c[1].quant_error = 0.0;
	c[0].conforming = c[1].conforming = 0;
	assert_false(ct_val_agree(&c[0], &c[1], N, 1e-3));
	c[1] = cand(2, ddec, 0, 3.0);
	c[1].quant_error = dinfo.quant_error;
	assert_false(ct_val_agree(&c[0], &c[1], N, 1e-3));
}

static void test_canonical_and_late(void **state)
{
	struct ct_val_cand c[3];

	(void)state;
	make();
	c[0] = cand(1, honest, 1, 3.0);
	c[0].state = CT_VS_VALID;	/* decided earlier */
	c[1] = cand(2, honest, 1, 3.0);
	c[2] = cand(3, noise, 0, 3.0);
	assert_int_equal(decide(c, 3, N, 2, 1e-3), 0);
	assert_int_equal(c[0].new_state, CT_VS_VALID);
	assert_int_equal(c[1].new_state, CT_VS_VALID);
	assert_int_equal(c[2].new_state, CT_VS_INVALID);
	/* a WU sent to one trusted host (min_quorum 1) */
	c[0] = cand(1, honest, 0, 3.0);
	assert_int_equal(decide(c, 1, N, 1, 1e-3), 0);
	assert_int_equal(c[0].new_state, CT_VS_VALID);
	/* with quorum 3, two agreeing are not enough */
	c[0] = cand(1, honest, 1, 3.0);
	c[1] = cand(2, honest, 1, 3.0);
	assert_int_equal(decide(c, 2, N, 3, 1e-3), -1);
}

CT_TEST_MAIN(test_adaptive, test_adam_bound, test_sanity_on_real_training,
	test_relative_cap_and_loss, test_probe_tokens, test_honest_pair, test_decide_fn_by_hash,
	test_disagreement_then_third, test_int8_against_exact, test_canonical_and_late)
