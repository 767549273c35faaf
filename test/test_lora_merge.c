/*
 * Unit tests for ct_lora_merge (engine/ct_lora_merge.c): the exact lo-fi merge
 * of K shards' adapters. For K = 1..4, several ranks and target sets it
 * must equal, bit for bit, a plain float32 loop written straight from the
 * header's formula (same order, fmaf), agree with the same merge computed
 * in float64 within float rounding, leave every weight outside the target
 * matrices untouched, give the same bits on 1 or several threads, and be
 * the mean of the products (not the product of the means).
 */
#include "ct_test.h"
#include "ct_err.h"
#include "ct_gpt2.h"
#include "ct_lora.h"

#include <math.h>

static const struct ct_model_config tiny = { .maxT = 16, .V = 60, .L = 2, .NH = 2, .C = 32,
					    .Vp = 64 };
/* big enough that the merge runs on several threads */
static const struct ct_model_config wide = { .maxT = 8, .V = 60, .L = 2, .NH = 4, .C = 96,
					    .Vp = 64 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static float frand(float scale)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return scale * ((float)(rng >> 40) / (float)(1 << 24) * 2.0f - 1.0f);
}

static float *rand_floats(size_t n, float scale)
{
	float *p = malloc(n * sizeof(float));

	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = frand(scale);
	return p;
}

/* The header's formula, as plainly as it can be written. */
static void naive_merge(const struct ct_model_config *cfg, const struct ct_lora_spec *sp,
			float *params, const float *const *ad, int K)
{
	float s = sp->alpha / (float)sp->rank;

	for (int si = 0; si < ct_lora_nslots(cfg, sp); si++) {
		struct ct_lora_slot sl;

		ct_lora_slot(cfg, sp, si, &sl);
		for (int o = 0; o < sl.out; o++) {
			for (int i = 0; i < sl.in; i++) {
				float acc = 0.0f;

				for (int k = 0; k < K; k++) {
					float d = 0.0f;

					for (int j = 0; j < sp->rank; j++)
						d = fmaf(ad[k][sl.b_off + (size_t)o * sp->rank + j],
							 ad[k][sl.a_off + (size_t)j * sl.in + i], d);
					acc = acc + d;
				}
				params[sl.w_off + (size_t)o * sl.in + i] =
					params[sl.w_off + (size_t)o * sl.in + i] +
					(s * (acc / (float)K));
			}
		}
	}
}

/* base + s * mean_k(B_k A_k) in float64, compared element by element with
 * got: |got - want| <= 1e-6 * (|base| + s * sum |products| / K) + 1e-9
 * (float rounding of a chain of r fmas, a K-term sum and the final add). Also returns the
 * number of elements that changed from the base. */
static size_t check_f64(const struct ct_model_config *cfg, const struct ct_lora_spec *sp,
			const float *base, const float *got, const float *const *ad, int K)
{
	double s = (double)sp->alpha / sp->rank;
	size_t changed = 0;

	for (int si = 0; si < ct_lora_nslots(cfg, sp); si++) {
		struct ct_lora_slot sl;

		ct_lora_slot(cfg, sp, si, &sl);
		for (int o = 0; o < sl.out; o++) {
			for (int i = 0; i < sl.in; i++) {
				size_t w = sl.w_off + (size_t)o * sl.in + i;
				double sum = 0.0, mag = 0.0, want, tol;

				for (int k = 0; k < K; k++)
					for (int j = 0; j < sp->rank; j++) {
						double p = (double)ad[k][sl.b_off + (size_t)o * sp->rank + j] *
							   (double)ad[k][sl.a_off + (size_t)j * sl.in + i];
						sum += p;
						mag += fabs(p);
					}
				want = base[w] + s * (sum / K);
				tol = 1e-6 * (fabs(base[w]) + s * mag / K) + 1e-9;
				if (fabs(got[w] - want) > tol)
					fail_msg("slot %d (%d,%d): got %.9g want %.9g", si, o, i,
						 (double)got[w], want);
				changed += got[w] != base[w];
			}
		}
	}
	return changed;
}

/* Every element of no target matrix is bit-identical to the base. */
static void check_untouched(const struct ct_model_config *cfg, const struct ct_lora_spec *sp,
			    const float *base, const float *got, size_t n)
{
	char *in_target = calloc(n, 1);

	assert_non_null(in_target);
	for (int si = 0; si < ct_lora_nslots(cfg, sp); si++) {
		struct ct_lora_slot sl;

		ct_lora_slot(cfg, sp, si, &sl);
		memset(in_target + sl.w_off, 1, (size_t)sl.out * sl.in);
	}
	for (size_t i = 0; i < n; i++)
		if (!in_target[i] && memcmp(&base[i], &got[i], 4) != 0)
			fail_msg("weight %zu outside the targets changed", i);
	free(in_target);
}

struct merge_case {
	int rank;
	float alpha;
	unsigned targets;
};

static void run_case(const struct ct_model_config *cfg, const struct merge_case *mc, int K)
{
	struct ct_lora_spec sp = { .rank = mc->rank, .alpha = mc->alpha, .targets = mc->targets };
	struct ct_gpt2_layout lay;
	size_t na = ct_lora_nparams(cfg, &sp);
	float *ad[4], *base, *fast, *slow;

	ct_gpt2_layout(cfg, &lay);
	base = rand_floats(lay.total, 0.1f);
	fast = malloc(lay.total * sizeof(float));
	slow = malloc(lay.total * sizeof(float));
	assert_non_null(fast);
	assert_non_null(slow);
	memcpy(fast, base, lay.total * sizeof(float));
	memcpy(slow, base, lay.total * sizeof(float));
	for (int k = 0; k < K; k++)
		ad[k] = rand_floats(na, 0.05f + 0.01f * k);
	assert_int_equal(ct_lora_merge(cfg, &sp, fast, (const float *const *)ad, K), 0);
	naive_merge(cfg, &sp, slow, (const float *const *)ad, K);
	if (memcmp(fast, slow, lay.total * sizeof(float)) != 0)
		fail_msg("rank %d targets 0x%x K %d: merge differs from the naive loop",
			 sp.rank, sp.targets, K);
	/* nearly every target weight moves; the check is not vacuous */
	assert_true(check_f64(cfg, &sp, base, fast, (const float *const *)ad, K) >
		    na / (size_t)sp.rank);
	check_untouched(cfg, &sp, base, fast, lay.total);
	for (int k = 0; k < K; k++)
		free(ad[k]);
	free(base);
	free(fast);
	free(slow);
}

static void test_merge_matches_reference(void **state)
{
	static const struct merge_case cases[] = {
		{ 1, 1.0f, CT_LORA_ALL },
		{ 4, 8.0f, CT_LORA_ALL },
		{ 8, 16.0f, CT_LORA_QKV | CT_LORA_FCPROJ },
		{ 3, 0.7f, CT_LORA_ATTPROJ },
		{ 8, 8.0f, CT_LORA_FC },
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		for (int K = 1; K <= 4; K++)
			run_case(&tiny, &cases[c], K);
}

/* The same bits on one thread and on several (rows are shared out). */
static void test_merge_threads(void **state)
{
	struct ct_lora_spec sp = { .rank = 8, .alpha = 16.0f, .targets = CT_LORA_ALL };
	struct ct_gpt2_layout lay;
	size_t na = ct_lora_nparams(&wide, &sp);
	float *ad[4], *base, *one, *many;

	(void)state;
	ct_gpt2_layout(&wide, &lay);
	base = rand_floats(lay.total, 0.1f);
	one = malloc(lay.total * sizeof(float));
	many = malloc(lay.total * sizeof(float));
	assert_non_null(one);
	assert_non_null(many);
	for (int k = 0; k < 4; k++)
		ad[k] = rand_floats(na, 0.05f);
	memcpy(one, base, lay.total * sizeof(float));
	memcpy(many, base, lay.total * sizeof(float));
	setenv("CTUNE_THREADS", "1", 1);
	assert_int_equal(ct_lora_merge(&wide, &sp, one, (const float *const *)ad, 4), 0);
	setenv("CTUNE_THREADS", "3", 1);
	assert_int_equal(ct_lora_merge(&wide, &sp, many, (const float *const *)ad, 4), 0);
	unsetenv("CTUNE_THREADS");
	assert_memory_equal(one, many, lay.total * sizeof(float));
	assert_memory_not_equal(one, base, lay.total * sizeof(float));
	for (int k = 0; k < 4; k++)
		free(ad[k]);
	free(base);
	free(one);
	free(many);
}

/* Two identical shards merge to exactly the one-shard result (d + d and
 * a halving are exact), and two different shards give the mean of their
 * products, which is not the product of their mean adapters. */
static void test_merge_is_mean_of_products(void **state)
{
	struct ct_lora_spec sp = { .rank = 4, .alpha = 4.0f, .targets = CT_LORA_ALL };
	struct ct_gpt2_layout lay;
	size_t na = ct_lora_nparams(&tiny, &sp), n;
	float *a0, *a1, *mean, *base, *w1, *w2, *wm;
	const float *pair[2];

	(void)state;
	ct_gpt2_layout(&tiny, &lay);
	n = lay.total;
	base = rand_floats(n, 0.1f);
	a0 = rand_floats(na, 0.1f);
	a1 = rand_floats(na, 0.1f);
	mean = malloc(na * sizeof(float));
	w1 = malloc(n * 4), w2 = malloc(n * 4), wm = malloc(n * 4);
	assert_true(mean && w1 && w2 && wm);
	memcpy(w1, base, n * 4), memcpy(w2, base, n * 4), memcpy(wm, base, n * 4);
	assert_int_equal(ct_lora_merge(&tiny, &sp, w1, (const float *const *)&a0, 1), 0);
	pair[0] = a0, pair[1] = a0;
	assert_int_equal(ct_lora_merge(&tiny, &sp, w2, pair, 2), 0);
	assert_memory_equal(w1, w2, n * 4);

	memcpy(w2, base, n * 4);
	pair[1] = a1;
	assert_int_equal(ct_lora_merge(&tiny, &sp, w2, pair, 2), 0);
	for (size_t i = 0; i < na; i++)
		mean[i] = 0.5f * (a0[i] + a1[i]);
	assert_int_equal(ct_lora_merge(&tiny, &sp, wm, (const float *const *)&mean, 1), 0);
	/* both moved the weights, to different places */
	assert_memory_not_equal(w2, base, n * 4);
	assert_memory_not_equal(w2, wm, n * 4);
	assert_true(check_f64(&tiny, &sp, base, w2, pair, 2) > 0);
	free(a0), free(a1), free(mean), free(base), free(w1), free(w2), free(wm);
}

static void test_merge_rejects(void **state)
{
	struct ct_lora_spec sp = { .rank = 4, .alpha = 4.0f, .targets = CT_LORA_ALL };
	struct ct_lora_spec none = { 0 }, bad = { .rank = 4, .alpha = NAN, .targets = 1 };
	struct ct_gpt2_layout lay;
	float *ad = rand_floats(ct_lora_nparams(&tiny, &sp), 0.1f), *w, *copy;
	const float *two[2] = { ad, NULL };

	(void)state;
	ct_gpt2_layout(&tiny, &lay);
	w = rand_floats(lay.total, 0.1f);
	copy = malloc(lay.total * 4);
	assert_non_null(copy);
	memcpy(copy, w, lay.total * 4);
	assert_int_equal(ct_lora_merge(&tiny, &sp, w, (const float *const *)&ad, 0), CT_EINVAL);
	assert_int_equal(ct_lora_merge(&tiny, &sp, w, two, 2), CT_EINVAL);
	assert_int_equal(ct_lora_merge(&tiny, &none, w, (const float *const *)&ad, 1),
			 CT_EINVAL);
	assert_int_equal(ct_lora_merge(&tiny, &bad, w, (const float *const *)&ad, 1), CT_EINVAL);
	assert_int_equal(ct_lora_merge(&tiny, &sp, NULL, (const float *const *)&ad, 1),
			 CT_EINVAL);
	assert_memory_equal(w, copy, lay.total * 4);
	free(ad), free(w), free(copy);
}

CT_TEST_MAIN(test_merge_matches_reference, test_merge_threads,
	test_merge_is_mean_of_products, test_merge_rejects)
