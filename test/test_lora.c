/*
 * test_lora.c - LoRA in the C reference model and the work-unit runner.
 *
 *  - ct_lora_init: a pure function of the seed, drawn from the shared
 *    generator (the same stream as ct_gpt2_init_random), A ~ N(0, 1/in),
 *    B = 0;
 *  - the adapter layer equals the plain loops of its spec, bit for bit;
 *  - zero B leaves the forward pass exactly the base model's;
 *  - adapter gradients agree with the full model's weight gradient at the
 *    merged weights (dA = s B^T G, dB = s G A^T), so the input gradient
 *    flows through W and the adapters in every layer;
 *  - a LoRA model has no parameter gradients or moments;
 *  - LoRA work units are deterministic, learn, resume exactly, and refuse
 *    a state saved with another spec, seed or mode;
 *  - a WU started from carried adapters (ct_wu_set_adapters, a compact-
 *    base job's later rounds) runs from exactly those bits, and its
 *    result decodes against them only; the adapter file (ct_lora_file)
 *    round-trips and refuses every field, size and value that is not the
 *    WU's.
 */
#include "ct_test_engine.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_lora_file.h"
#include "ct_lora_model.h"
#include "ct_lora_result.h"
#include "ct_file.h"
#include "ct_rng.h"

#include <math.h>

static const struct ct_model_config tiny = CT_TEST_TINY_CONFIG;

static float *floats(size_t n)
{
	float *p = calloc(n ? n : 1, sizeof(float));

	assert_non_null(p);
	return p;
}

/* ---- init ----------------------------------------------------------- */

static void test_init(void **state)
{
	struct ct_model_config c = { .maxT = 16, .V = 60, .L = 2, .NH = 2, .C = 64, .Vp = 64 };
	struct ct_lora_spec sp = { .rank = 8, .alpha = 16.0f, .targets = CT_LORA_ALL };
	size_t n = ct_lora_nparams(&c, &sp);
	float *a = floats(n), *b = floats(n), *d = floats(n);
	struct ct_lora_slot s0, s3;
	struct ct_rng g;
	double sum = 0, sq = 0;
	size_t na;

	(void)state;
	assert_int_equal(n, (size_t)2 * 8 * (64 + 192 + 64 + 64 + 64 + 256 + 256 + 64));
	assert_int_equal(ct_lora_init(&c, &sp, 42, a), 0);
	assert_int_equal(ct_lora_init(&c, &sp, 42, b), 0);
	assert_memory_equal(a, b, n * sizeof(float));
	assert_int_equal(ct_lora_init(&c, &sp, 43, d), 0);
	assert_memory_not_equal(a, d, n * sizeof(float));
	/* the first A comes straight off the shared generator, scaled */
	ct_lora_slot(&c, &sp, 0, &s0);
	ct_rng_seed(&g, 42);
	for (size_t j = 0; j < 10; j++)
		assert_true(a[s0.a_off + j] == ct_rng_normal(&g) * (1.0f / sqrtf(64.0f)));
	/* fcproj's A is (8, 256): std 1/16; its B and every B are zero */
	ct_lora_slot(&c, &sp, 3, &s3);
	assert_int_equal(s3.target, CT_LORA_FCPROJ);
	assert_int_equal(s3.in, 256);
	na = (size_t)8 * 256;
	for (size_t j = 0; j < na; j++) {
		sum += a[s3.a_off + j];
		sq += (double)a[s3.a_off + j] * a[s3.a_off + j];
	}
	printf("fcproj A: mean %.4f std %.4f (want 0, %.4f)\n", sum / na,
	       sqrt(sq / na), 1.0 / 16);
	assert_true(fabs(sum / na) < 0.01);
	assert_true(fabs(sqrt(sq / na) - 1.0 / 16) < 0.005);
	for (int i = 0; i < ct_lora_nslots(&c, &sp); i++) {
		struct ct_lora_slot s;

		ct_lora_slot(&c, &sp, i, &s);
		for (size_t j = 0; j < (size_t)s.out * 8; j++)
			assert_true(a[s.b_off + j] == 0.0f);
	}
	sp.rank = 0;
	assert_int_equal(ct_lora_init(&c, &sp, 1, a), 0);
	sp.rank = 4;
	sp.alpha = -1.0f;
	assert_int_equal(ct_lora_init(&c, &sp, 1, a), CT_EINVAL);
	free(a);
	free(b);
	free(d);
}

/* ---- the adapter layer == its spec ---------------------------------- */

static void check_layer(int BT, int C, int OC, int r, float s)
{
	float *x = floats((size_t)BT * C), *A = floats((size_t)r * C);
	float *Bm = floats((size_t)OC * r), *y = floats((size_t)BT * OC);
	float *y0 = floats((size_t)BT * OC), *hs = floats((size_t)BT * r);
	float *u = floats((size_t)BT * OC), *dy = floats((size_t)BT * OC);
	float *dx = floats((size_t)BT * C), *dx0 = floats((size_t)BT * C);
	float *dA = floats((size_t)r * C), *dB = floats((size_t)OC * r);
	float *dA0 = floats((size_t)r * C), *dB0 = floats((size_t)OC * r);
	float *dh = floats((size_t)BT * r), *h = floats((size_t)BT * r);
	float *g = floats((size_t)BT * r);

	ct_test_fill(x, (size_t)BT * C, 1, 1.0f);
	ct_test_fill(A, (size_t)r * C, 2, 0.5f);
	ct_test_fill(Bm, (size_t)OC * r, 3, 0.5f);
	ct_test_fill(y0, (size_t)BT * OC, 4, 1.0f);
	ct_test_fill(dy, (size_t)BT * OC, 5, 1.0f);
	ct_test_fill(dx0, (size_t)BT * C, 6, 1.0f);
	ct_test_fill(dA0, (size_t)r * C, 7, 1.0f);
	ct_test_fill(dB0, (size_t)OC * r, 8, 1.0f);
	memcpy(y, y0, sizeof(float) * BT * OC);
	ct_lora_layer_forward(y, hs, u, x, A, Bm, s, BT, C, OC, r);
	for (int t = 0; t < BT; t++)
		for (int j = 0; j < r; j++) {
			h[t * r + j] = ct_test_fma_dot(0.0f, &x[t * C], 1, &A[j * C], 1, C) * s;
			assert_true(hs[t * r + j] == h[t * r + j]);
		}
	for (int t = 0; t < BT; t++)
		for (int o = 0; o < OC; o++)
			assert_true(y[t * OC + o] ==
				    y0[t * OC + o] + ct_test_fma_dot(0.0f, &h[t * r], 1, &Bm[o * r], 1, r));
	memcpy(dx, dx0, sizeof(float) * BT * C);
	memcpy(dA, dA0, sizeof(float) * r * C);
	memcpy(dB, dB0, sizeof(float) * OC * r);
	ct_lora_layer_backward(dx, dA, dB, dh, dy, x, hs, A, Bm, s, BT, C, OC, r);
	for (int t = 0; t < BT; t++)
		for (int j = 0; j < r; j++)
			g[t * r + j] = (0.0f + ct_test_fma_dot(0.0f, &dy[t * OC], 1, &Bm[j], r, OC)) * s;
	for (int o = 0; o < OC; o++)
		for (int j = 0; j < r; j++)
			assert_true(dB[o * r + j] ==
				    dB0[o * r + j] + ct_test_fma_dot(0.0f, &dy[o], OC, &h[j], r, BT));
	for (int t = 0; t < BT; t++)
		for (int i = 0; i < C; i++)
			assert_true(dx[t * C + i] ==
				    dx0[t * C + i] + ct_test_fma_dot(0.0f, &g[t * r], 1, &A[i], C, r));
	for (int j = 0; j < r; j++)
		for (int i = 0; i < C; i++)
			assert_true(dA[j * C + i] ==
				    dA0[j * C + i] + ct_test_fma_dot(0.0f, &g[j], r, &x[i], C, BT));
	free(x); free(A); free(Bm); free(y); free(y0); free(hs); free(u); free(dy);
	free(dx); free(dx0); free(dA); free(dB); free(dA0); free(dB0); free(dh);
	free(h); free(g);
}

static void test_layer_matches_spec(void **state)
{
	(void)state;
	check_layer(5, 7, 9, 1, 2.0f);
	check_layer(32, 32, 96, 4, 0.5f);
	check_layer(67, 70, 130, 8, 1.0f);
	check_layer(256, 128, 512, 16, 0.25f);	/* big enough for threads */
	check_layer(64, 3, 2, 32, 3.0f);	/* r > C, r > OC */
}

/* ---- the model ------------------------------------------------------ */

static void batch(ct_tok *in, ct_tok *tg, int n, uint32_t seed)
{
	ct_tok tok[257];

	for (int i = 0; i <= n; i++)
		tok[i] = (ct_tok)(ct_test_lcg(&seed) % tiny.V);
	memcpy(in, tok, n * sizeof(ct_tok));
	memcpy(tg, tok + 1, n * sizeof(ct_tok));
}

/* base + s * B A in double, rounded once, for every slot. */
static void merge_double(const struct ct_model_config *c, const struct ct_lora_spec *sp,
			 float *params, const float *ad)
{
	float s = sp->alpha / (float)sp->rank;

	for (int k = 0; k < ct_lora_nslots(c, sp); k++) {
		struct ct_lora_slot sl;

		ct_lora_slot(c, sp, k, &sl);
		for (int o = 0; o < sl.out; o++)
			for (int i = 0; i < sl.in; i++) {
				double d = 0;

				for (int j = 0; j < sp->rank; j++)
					d += (double)ad[sl.b_off + (size_t)o * sp->rank + j] *
					     ad[sl.a_off + (size_t)j * sl.in + i];
				params[sl.w_off + (size_t)o * sl.in + i] =
					(float)(params[sl.w_off + (size_t)o * sl.in + i] + s * d);
			}
	}
}

static void test_zero_b_is_base(void **state)
{
	struct ct_lora_spec sp = { .rank = 4, .alpha = 8.0f, .targets = CT_LORA_ALL };
	struct ct_gpt2_layout lay;
	struct ct_model full, lm;
	ct_tok in[32], tg[32];
	float *p, *ad, l0, l1;

	(void)state;
	ct_gpt2_layout(&tiny, &lay);
	p = floats(lay.total);
	ad = floats(ct_lora_nparams(&tiny, &sp));
	assert_int_equal(ct_gpt2_init_random(&tiny, 7, p), 0);
	assert_int_equal(ct_lora_init(&tiny, &sp, 9, ad), 0);
	batch(in, tg, 32, 3);
	assert_int_equal(ct_model_init(&full, &tiny, p, 2, 16, 0), 0);
	assert_int_equal(ct_model_init(&lm, &tiny, p, 2, 16, CT_MODEL_FROZEN), 0);
	assert_int_equal(ct_lora_attach(&lm, &sp, ad), 0);
	/* frozen: no parameter gradients, no moments */
	assert_null(lm.grads);
	assert_null(lm.m);
	assert_null(lm.v);
	assert_int_equal(ct_model_init(&full, &tiny, p, 2, 16, 0), 0);
	l0 = ct_model_forward(&full, in, tg);
	l1 = ct_model_forward(&lm, in, tg);
	assert_true(l0 == l1);
	assert_memory_equal(full.acts.logits, lm.acts.logits, 32 * tiny.Vp * sizeof(float));
	/* a full model cannot take adapters */
	ct_model_free(&full);
	assert_int_equal(ct_model_init(&full, &tiny, p, 2, 16, 1), 0);
	assert_int_equal(ct_lora_attach(&full, &sp, ad), CT_EINVAL);
	ct_model_free(&full);
	ct_model_free(&lm);
	free(p);
	free(ad);
}

/* Adapter gradients against the full model's weight gradient G at the
 * merged weights: dA = s B^T G, dB = s G A^T (in double). */
static void check_grads(unsigned targets, int rank)
{
	struct ct_lora_spec sp = { .rank = rank, .alpha = 2.0f * rank, .targets = targets };
	const float s = 2.0f;
	struct ct_gpt2_layout lay;
	struct ct_model full, lm;
	ct_tok in[32], tg[32];
	size_t n = ct_lora_nparams(&tiny, &sp);
	float *p, *pm, *ad, *ga, l0, l1;
	double worst = 0, gmax = 0;

	ct_gpt2_layout(&tiny, &lay);
	p = floats(lay.total);
	pm = floats(lay.total);
	ad = floats(n);
	assert_int_equal(ct_gpt2_init_random(&tiny, 11, p), 0);
	assert_int_equal(ct_lora_init(&tiny, &sp, 12, ad), 0);
	for (int k = 0; k < ct_lora_nslots(&tiny, &sp); k++) {	/* non-zero B */
		struct ct_lora_slot sl;

		ct_lora_slot(&tiny, &sp, k, &sl);
		ct_test_fill(ad + sl.b_off, (size_t)sl.out * rank, 100 + k, 0.05f);
	}
	memcpy(pm, p, lay.total * sizeof(float));
	merge_double(&tiny, &sp, pm, ad);
	batch(in, tg, 32, 5);
	assert_int_equal(ct_model_init(&full, &tiny, pm, 2, 16, 1), 0);
	assert_int_equal(ct_model_init(&lm, &tiny, p, 2, 16, CT_MODEL_FROZEN), 0);
	assert_int_equal(ct_lora_attach(&lm, &sp, ad), 0);
	ct_model_zero_grad(&full);
	l0 = ct_model_forward(&full, in, tg);
	ct_model_backward(&full, in, tg);
	memset(ct_lora_model_grads(&lm), 0, n * sizeof(float));
	l1 = ct_model_forward(&lm, in, tg);
	ct_model_backward(&lm, in, tg);
	assert_true(fabsf(l0 - l1) < 1e-4f);
	ga = ct_lora_model_grads(&lm);
	for (size_t i = 0; i < n; i++)
		gmax = fmax(gmax, fabs(ga[i]));
	for (int k = 0; k < ct_lora_nslots(&tiny, &sp); k++) {
		struct ct_lora_slot sl;
		const float *G;

		ct_lora_slot(&tiny, &sp, k, &sl);
		G = full.grads + sl.w_off;
		for (int j = 0; j < rank; j++)
			for (int i = 0; i < sl.in; i++) {
				double want = 0;

				for (int o = 0; o < sl.out; o++)
					want += (double)ad[sl.b_off + (size_t)o * rank + j] *
						G[(size_t)o * sl.in + i];
				want *= s;
				worst = fmax(worst, fabs(want - ga[sl.a_off + (size_t)j * sl.in + i]));
			}
		for (int o = 0; o < sl.out; o++)
			for (int j = 0; j < rank; j++) {
				double want = 0;

				for (int i = 0; i < sl.in; i++)
					want += (double)G[(size_t)o * sl.in + i] *
						ad[sl.a_off + (size_t)j * sl.in + i];
				want *= s;
				worst = fmax(worst, fabs(want - ga[sl.b_off + (size_t)o * rank + j]));
			}
	}
	printf("targets 0x%x rank %d: loss %.6f vs %.6f, max |grad| %.3e, worst diff %.3e\n",
	       targets, rank, (double)l0, (double)l1, gmax, worst);
	assert_true(gmax > 1e-4);
	assert_true(worst <= 1e-3 * gmax);
	ct_model_free(&full);
	ct_model_free(&lm);
	free(p);
	free(pm);
	free(ad);
}

static void test_grads_vs_full_model(void **state)
{
	(void)state;
	check_grads(CT_LORA_ALL, 4);
	check_grads(CT_LORA_QKV, 2);
	check_grads(CT_LORA_ATTPROJ | CT_LORA_FCPROJ, 3);
	check_grads(CT_LORA_FC, 8);
}

/* ---- work units ----------------------------------------------------- */

static void hp_lora(struct ct_wu_hparams *hp, int steps)
{
	ct_test_tiny_hparams(hp, steps);
	hp->lr = 1e-2f;
	hp->lora = (struct ct_lora_spec){ .rank = 4, .alpha = 8.0f, .targets = CT_LORA_ALL };
	hp->lora_seed = 77;
}

static void test_wu_learns(void **state)
{
	struct ct_gpt2 model = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams hp;
	struct ct_wu *wu = NULL;
	float losses[40], *out, *base;

	(void)state;
	ct_test_tiny_inputs(&model, &tok, 500, 10);
	hp_lora(&hp, 40);
	out = floats(ct_lora_nparams(&tiny, &hp.lora));
	base = floats(model.lay.total);
	assert_int_equal(ct_wu_run(&model, &tok, &hp, "cpu", out, losses), 0);
	printf("LoRA loss: step 1 %.4f, step 20 %.4f, step 40 %.4f\n", (double)losses[0],
	       (double)losses[19], (double)losses[39]);
	assert_true(losses[39] < 0.9f * losses[0]);	/* frozen embeddings: slower */
	assert_true(losses[39] < losses[19]);
	/* the base weights stay as they were */
	assert_int_equal(ct_wu_open(&model, &tok, &hp, "cpu", &wu), 0);
	assert_int_equal(ct_wu_nparams_trained(wu), ct_lora_nparams(&tiny, &hp.lora));
	assert_int_equal(ct_wu_step(wu, &losses[0]), 0);
	assert_int_equal(ct_wu_read_params(wu, base), 0);
	assert_memory_equal(base, model.params, model.lay.total * sizeof(float));
	ct_wu_close(wu);
	free(out);
	free(base);
	ct_tokens_free(&tok);
	ct_gpt2_free(&model);
}

static void test_wu_resume(void **state)
{
	struct ct_gpt2 model = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams hp, hp2;
	struct ct_wu *wu = NULL;
	size_t n;
	float *a, la[7];
	const char *path = ct_test_path("lora.state");

	(void)state;
	ct_test_tiny_inputs(&model, &tok, 150, 23);
	hp_lora(&hp, 7);
	hp.grad_clip = 0.5f;
	n = ct_lora_nparams(&tiny, &hp.lora);
	a = floats(n);
	ct_test_wu_twice(&model, &tok, &hp, n, a, la);
	/* the refusals: one resume point (after step 4) is enough */
	ct_test_wu_save_at(&model, &tok, &hp, 4, path);
	/* other spec, seed or a full WU: refused */
	hp2 = hp;
	hp2.lora_seed = 78;
	assert_int_equal(ct_wu_resume(path, &model, &tok, &hp2, "cpu", &wu), CT_EMISMATCH);
	hp2 = hp;
	hp2.lora.alpha = 4.0f;
	assert_int_equal(ct_wu_resume(path, &model, &tok, &hp2, "cpu", &wu), CT_EMISMATCH);
	hp2 = hp;
	hp2.lora.targets = CT_LORA_QKV;
	assert_int_equal(ct_wu_resume(path, &model, &tok, &hp2, "cpu", &wu), CT_EFORMAT);
	hp2 = hp;
	hp2.lora.rank = 0;
	assert_int_equal(ct_wu_resume(path, &model, &tok, &hp2, "cpu", &wu), CT_EMISMATCH);
	assert_null(wu);
	ct_test_wu_resume_each(&model, &tok, &hp, path, "a LoRA WU", ct_wu_read_adapters,
			       n, a, la);
	free(a);
	ct_tokens_free(&tok);
	ct_gpt2_free(&model);
}

/* ---- carried adapters ------------------------------------------------ */

/* n adapters after `steps` steps of a WU of hp, started from init when
 * not NULL. */
static void run_from(const struct ct_gpt2 *model, const struct ct_tokens *tok,
		     const struct ct_wu_hparams *hp, const float *init, float *out)
{
	struct ct_wu *wu = NULL;
	float loss;

	assert_int_equal(ct_wu_open(model, tok, hp, "cpu", &wu), 0);
	if (init != NULL)
		assert_int_equal(ct_wu_set_adapters(wu, init), 0);
	while (!ct_wu_done(wu))
		assert_int_equal(ct_wu_step(wu, &loss), 0);
	assert_int_equal(ct_wu_read_adapters(wu, out), 0);
	assert_int_equal(ct_wu_set_adapters(wu, out), CT_ESTATE);	/* steps done */
	ct_wu_close(wu);
}

static void test_wu_from_adapters(void **state)
{
	struct ct_gpt2 model = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams hp;
	struct ct_buf res = CT_BUF_INIT(0);
	unsigned char sha[32] = { 1 };
	size_t n;
	float *seed_init, *r1, *a, *b, *back;

	(void)state;
	ct_test_tiny_inputs(&model, &tok, 300, 31);
	hp_lora(&hp, 5);
	n = ct_lora_nparams(&tiny, &hp.lora);
	seed_init = floats(n), r1 = floats(n), a = floats(n), b = floats(n), back = floats(n);
	assert_int_equal(ct_lora_init(&tiny, &hp.lora, hp.lora_seed, seed_init), 0);
	/* the seed's own adapters, set: the plain WU to the bit */
	run_from(&model, &tok, &hp, NULL, r1);
	run_from(&model, &tok, &hp, seed_init, a);
	assert_memory_equal(a, r1, n * sizeof(float));
	/* round 2 from round 1's result: other bits, the same twice */
	run_from(&model, &tok, &hp, r1, a);
	run_from(&model, &tok, &hp, r1, b);
	assert_memory_equal(a, b, n * sizeof(float));
	assert_memory_not_equal(a, r1, n * sizeof(float));
	/* its result is a delta against r1: decodes with r1, not the seed */
	assert_int_equal(ct_lora_result_encode_from(&tiny, &hp.lora, hp.lora_seed, r1, sha, a,
						    CT_DELTA_LOSSLESS, &res), 0);
	assert_int_equal(ct_lora_result_decode(&tiny, &hp.lora, hp.lora_seed, r1, res.data,
					       res.len, back, NULL), 0);
	assert_memory_equal(back, a, n * sizeof(float));
	assert_true(ct_lora_result_decode(&tiny, &hp.lora, hp.lora_seed, NULL, res.data, res.len,
					  back, NULL) < 0);
	ct_buf_free(&res);
	free(seed_init), free(r1), free(a), free(b), free(back);
	ct_tokens_free(&tok);
	ct_gpt2_free(&model);
}

/* ct_lora_file_parse of the file at path with its byte at `at` set to v
 * (at < 0: as written) and its length changed by `dlen`. */
static int parse_spoiled(const char *path, long at, unsigned char v, long dlen,
			 const struct ct_lora_spec *sp, float *out)
{
	unsigned char *d = NULL, *e;
	size_t len = 0;
	int rc;

	assert_int_equal(ct_file_read_all(path, 0, &d, &len), 0);
	e = calloc(len + 8, 1);
	assert_non_null(e);
	memcpy(e, d, len);
	if (at >= 0)
		e[at] = v;
	rc = ct_lora_file_parse(e, (size_t)((long)len + dlen), &tiny, sp, out);
	free(e);
	free(d);
	return rc;
}

static void test_lora_file(void **state)
{
	struct ct_lora_spec sp = { .rank = 4, .alpha = 8.0f, .targets = CT_LORA_ALL }, o = sp;
	size_t n = ct_lora_nparams(&tiny, &sp);
	float *ad = floats(n), *back = floats(n);
	const char *path = ct_test_path("init.ctl");
	uint64_t size = 0;

	(void)state;
	assert_int_equal(ct_lora_init(&tiny, &sp, 5, ad), 0);
	ad[n - 1] = -0.0f;
	assert_int_equal(ct_lora_file_save(path, &tiny, &sp, ad), 0);
	assert_int_equal(ct_file_size(path, &size), 0);
	assert_int_equal(size, ct_lora_file_size(&tiny, &sp));
	assert_int_equal(size, CT_LORA_FILE_HDR + 4 * n);
	assert_int_equal(ct_lora_file_load(path, &tiny, &sp, back), 0);
	assert_memory_equal(back, ad, n * sizeof(float));
	/* another spec than the WU's: refused */
	o.rank = 2;
	assert_int_equal(ct_lora_file_load(path, &tiny, &o, back), CT_EMISMATCH);
	o = sp, o.alpha = 4.0f;
	assert_int_equal(ct_lora_file_load(path, &tiny, &o, back), CT_EMISMATCH);
	o = sp, o.targets = CT_LORA_QKV;
	assert_int_equal(ct_lora_file_load(path, &tiny, &o, back), CT_EMISMATCH);
	/* spoiled bytes: magic, arch, count; short, long, header only */
	assert_int_equal(parse_spoiled(path, 0, 'X', 0, &sp, back), CT_EFORMAT);
	assert_int_equal(parse_spoiled(path, 20, 7, 0, &sp, back), CT_EMISMATCH);
	assert_int_equal(parse_spoiled(path, 24, 1, 0, &sp, back), CT_EMISMATCH);
	assert_int_equal(parse_spoiled(path, -1, 0, -1, &sp, back), CT_EFORMAT);
	assert_int_equal(parse_spoiled(path, -1, 0, 4, &sp, back), CT_EFORMAT);
	assert_int_equal(parse_spoiled(path, -1, 0, -(long)(4 * n), &sp, back), CT_EFORMAT);
	assert_int_equal(parse_spoiled(path, -1, 0, -(long)(4 * n) - 1, &sp, back), CT_EFORMAT);
	/* a NaN exactly: exponent all ones, mantissa not zero */
	{
		unsigned char *d = NULL;
		size_t len = 0;

		assert_int_equal(ct_file_read_all(path, 0, &d, &len), 0);
		memcpy(d + CT_LORA_FILE_HDR, &(uint32_t){ 0x7fc00000u }, 4);
		assert_int_equal(ct_lora_file_parse(d, len, &tiny, &sp, back), CT_ECORRUPT);
		free(d);
	}
	free(ad), free(back);
}

CT_TEST_MAIN_GROUP(ct_test_dir_setup, ct_test_dir_teardown, test_init,
	test_layer_matches_spec, test_zero_b_is_base, test_grads_vs_full_model,
	test_wu_learns, test_wu_resume, test_wu_from_adapters, test_lora_file)
