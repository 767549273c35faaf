/*
 * test_sample.c - the sampler's pieces (engine/ct_sample.h): the splitmix64
 * uniform generator against the published splitmix64 outputs, the pick
 * rules (greedy, top-k, cumulative sum, NaN), and generation on the cpu
 * backend against a direct ct_model_forward() of the same context.
 */
#include "ct_test.h"
#include "ct_test_engine.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_model.h"
#include "ct_sample.h"

#include <math.h>

/* splitmix64 seeded with 0: 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, ...
 * (the reference sequence of Vigna's splitmix64.c). */
static void test_uniform_is_splitmix64(void **state)
{
	struct ct_sample_rng r;

	(void)state;
	ct_sample_rng_seed(&r, 0);
	assert_true(ct_sample_uniform(&r) == (float)0xe220a8 * 0x1.0p-24f);
	assert_true(ct_sample_uniform(&r) == (float)0x6e789e * 0x1.0p-24f);
	for (int i = 0; i < 100000; i++) {
		float u = ct_sample_uniform(&r);

		assert_true(u >= 0.0f && u < 1.0f);
	}
}

static void test_pick_greedy(void **state)
{
	float x[5] = { 1.0f, 3.0f, -2.0f, 3.0f, NAN };

	(void)state;
	assert_int_equal(ct_sample_pick(x, 5, 0.0f, 0, 0.9f, NULL, NULL), 1);
	/* top-k 1 is greedy whatever u is */
	assert_int_equal(ct_sample_pick(x, 5, 1.0f, 1, 0.999f, NULL, NULL), 1);
	assert_int_equal(ct_sample_pick(x, 5, 1.0f, 1, 0.0f, NULL, NULL), 1);
}

/* probabilities 1/4, 3/4: the cumulative sum splits [0,1) at 1/4 */
static void test_pick_cumulative(void **state)
{
	float x[2] = { 0.0f, logf(3.0f) };
	float z[2];
	int ix[2];

	(void)state;
	assert_int_equal(ct_sample_pick(x, 2, 1.0f, 0, 0.0f, z, ix), 0);
	assert_int_equal(ct_sample_pick(x, 2, 1.0f, 0, 0.24f, z, ix), 0);
	assert_int_equal(ct_sample_pick(x, 2, 1.0f, 0, 0.26f, z, ix), 1);
	assert_int_equal(ct_sample_pick(x, 2, 1.0f, 0, 0.99999994f, z, ix), 1);
	/* a high temperature flattens: z = (0, 1.0986/100) -> about 1/2 each */
	assert_int_equal(ct_sample_pick(x, 2, 100.0f, 0, 0.49f, z, ix), 0);
	assert_int_equal(ct_sample_pick(x, 2, 100.0f, 0, 0.51f, z, ix), 1);
}

static void test_pick_top_k(void **state)
{
	/* top-2: indices 0 and 3, with equal weight */
	float x[5] = { 5.0f, -1.0f, 2.0f, 5.0f, NAN };
	int seen[5] = { 0 };
	struct ct_sample_rng r;

	(void)state;
	ct_sample_rng_seed(&r, 42);
	for (int i = 0; i < 2000; i++) {
		int id = ct_sample_pick(x, 5, 1.0f, 2, ct_sample_uniform(&r), NULL, NULL);

		assert_true(id >= 0 && id < 5);
		seen[id]++;
	}
	assert_int_equal(seen[1] + seen[2] + seen[4], 0);
	assert_true(seen[0] > 800 && seen[3] > 800);
	/* without top-k the 2.0 gets picked sometimes, NaN never */
	x[2] = 4.0f;
	memset(seen, 0, sizeof(seen));
	for (int i = 0; i < 2000; i++)
		seen[ct_sample_pick(x, 5, 1.0f, 0, ct_sample_uniform(&r), NULL, NULL)]++;
	assert_true(seen[2] > 100);
	assert_int_equal(seen[4], 0);
}

static int cmp_rank(const void *a, const void *b, void *arg)
{
	const float *x = arg;
	int i = *(const int *)a, j = *(const int *)b;

	if (x[i] != x[j])
		return x[i] > x[j] ? -1 : 1;
	return (i > j) - (i < j);
}

/* With many ties (values on a coarse grid), the candidates are exactly the
 * first k of (value descending, index ascending), as a full sort says:
 * every pick is one of them, and with k small each gets picked. */
static void test_pick_top_k_ties(void **state)
{
	enum { V = 300 };
	static const int ks[] = { 1, 2, 5, 40, 299 };
	float x[V];
	int order[V], in[V];
	struct ct_sample_rng r;

	(void)state;
	ct_sample_rng_seed(&r, 9);
	for (int i = 0; i < V; i++) {
		x[i] = (float)(int)(ct_sample_uniform(&r) * 6.0f) * 0.25f;
		order[i] = i;
	}
	qsort_r(order, V, sizeof(int), cmp_rank, x);
	for (size_t t = 0; t < sizeof(ks) / sizeof(ks[0]); t++) {
		int k = ks[t], hit[V] = { 0 }, nhit = 0;

		memset(in, 0, sizeof(in));
		for (int i = 0; i < k; i++)
			in[order[i]] = 1;
		for (int n = 0; n < 4000; n++) {
			int id = ct_sample_pick(x, V, 0.5f, k, ct_sample_uniform(&r), NULL, NULL);

			assert_true(id >= 0 && id < V);
			assert_true(in[id]);
			nhit += !hit[id];
			hit[id] = 1;
		}
		if (k <= 40)
			assert_int_equal(nhit, k);
	}
}

static void test_params_check(void **state)
{
	struct ct_sample_params p;

	(void)state;
	ct_sample_params_default(&p);
	assert_int_equal(ct_sample_params_check(&p, 256), 0);
	p.top_k = 257;
	assert_int_equal(ct_sample_params_check(&p, 256), CT_EINVAL);
	ct_sample_params_default(&p);
	p.temperature = -1.0f;
	assert_int_equal(ct_sample_params_check(&p, 256), CT_EINVAL);
	p.temperature = NAN;
	assert_int_equal(ct_sample_params_check(&p, 256), CT_EINVAL);
}

/* Greedy generation must pick the argmax of the reference forward pass of
 * the growing context, also once the context is longer than maxT. */
static void test_generate_matches_forward(void **state)
{
	const struct ct_model_config cfg = CT_TEST_TINY_CONFIG;
	struct ct_gpt2 model = { 0 };
	struct ct_sample_params p;
	struct ct_tokvec out = { 0 }, again = { 0 };
	ct_tok ctx[64] = { 3, 14, 15 };
	size_t n = 3;

	(void)state;
	assert_int_equal(ct_gpt2_alloc(&model, &cfg), 0);
	assert_int_equal(ct_gpt2_init_random(&cfg, 7, model.params), 0);
	ct_sample_params_default(&p);
	p.temperature = 0.0f;
	p.ntokens = 20;		/* 3 + 20 > maxT = 16 */
	assert_int_equal(ct_sample_generate(&model, "cpu", ctx, n, &p, NULL, NULL, &out), 0);
	assert_int_equal(out.n, 20);
	for (size_t k = 0; k < out.n; k++) {
		size_t w = n < (size_t)cfg.maxT ? n : (size_t)cfg.maxT;
		struct ct_model m;
		const float *lg;
		int best = 0;

		assert_int_equal(ct_model_init(&m, &cfg, model.params, 1, (int)w, 0), 0);
		ct_model_forward(&m, ctx + n - w, NULL);
		lg = m.acts.logits + (w - 1) * cfg.Vp;
		for (int i = 1; i < cfg.V; i++)
			if (lg[i] > lg[best])
				best = i;
		ct_model_free(&m);
		assert_int_equal(out.v[k], best);
		ctx[n++] = out.v[k];
	}
	/* sampling: same seed, same tokens; another seed, other tokens */
	p.temperature = 1.0f;
	p.top_k = 0;
	ct_tokvec_free(&out);
	assert_int_equal(ct_sample_generate(&model, "cpu", ctx, 3, &p, NULL, NULL, &out), 0);
	assert_int_equal(ct_sample_generate(&model, "cpu", ctx, 3, &p, NULL, NULL, &again), 0);
	assert_memory_equal(out.v, again.v, out.n * sizeof(uint32_t));
	ct_tokvec_free(&again);
	p.seed = 2;
	assert_int_equal(ct_sample_generate(&model, "cpu", ctx, 3, &p, NULL, NULL, &again), 0);
	assert_memory_not_equal(out.v, again.v, out.n * sizeof(uint32_t));
	/* a prompt token outside the vocabulary is refused */
	ctx[0] = 60;
	assert_int_equal(ct_sample_generate(&model, "cpu", ctx, 3, &p, NULL, NULL, &again),
			 CT_EMISMATCH);
	ct_tokvec_free(&out);
	ct_tokvec_free(&again);
	ct_gpt2_free(&model);
}

CT_TEST_MAIN(test_uniform_is_splitmix64, test_pick_greedy, test_pick_cumulative,
	test_pick_top_k, test_pick_top_k_ties, test_params_check,
	test_generate_matches_forward)
