/*
 * Unit tests for server/robust: the cross-shard check flags the update
 * that points away from the others (sign-flipped), the one far smaller
 * (near-zero) or far larger than their median, and none of a set of
 * honest-like updates (a shared direction plus each shard's own part);
 * rounds of fewer than 3 shards are never flagged; the streaming result
 * equals the cosines computed directly.
 */
#include <math.h>

#include "ct_test.h"
#include "ct_err.h"
#include "validate/robust.h"

#define N 4000
#define K 6

static float base[N], w[K][N];

static uint64_t rs = 88172645463325252ull;
static double rnd(void)	/* uniform in [-1, 1) */
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (double)(rs >> 11) / 4503599627370496.0 - 1.0;
}

/* K honest-like updates: 0.6 shared direction + 0.4 own, norms within 20% */
static void honest(void)
{
	static double shared[N];

	for (size_t j = 0; j < N; j++) {
		base[j] = (float)rnd();
		shared[j] = rnd();
	}
	for (int i = 0; i < K; i++) {
		double scale = 1e-3 * (0.9 + 0.04 * i);

		for (size_t j = 0; j < N; j++)
			w[i][j] = base[j] + (float)(scale * (0.6 * shared[j] + 0.4 * rnd()));
	}
}

static int run(int k, double min_cos, double max_ratio, int *out, struct ct_robust *r)
{
	struct ct_robust_limits lim = { min_cos, max_ratio };
	int n;

	assert_int_equal(ct_robust_init(r, k, N), 0);
	for (int i = 0; i < k; i++)
		ct_robust_add(r, i, base, w[i]);
	for (int i = 0; i < k; i++)
		ct_robust_score(r, i, base, w[i]);
	n = ct_robust_verdict(r, &lim, out);
	ct_robust_free(r);
	return n;
}

static void test_honest_pass(void **state)
{
	struct ct_robust r;
	int out[K];
	(void)state;

	honest();
	assert_int_equal(run(K, 0.0, 4.0, out, &r), 0);
	for (int i = 0; i < K; i++) {
		assert_true(r.cos[i] > 0.5);
		assert_true(r.ratio[i] > 0.7 && r.ratio[i] < 1.4);
	}
}

static void test_direct_cosine(void **state)
{
	struct ct_robust r;
	int out[K];
	double dot = 0, n0 = 0, no = 0;
	(void)state;

	honest();
	run(K, 0.0, 4.0, out, &r);
	for (size_t j = 0; j < N; j++) {
		double u = (double)w[0][j] - base[j], o = 0;

		for (int i = 1; i < K; i++)
			o += (double)w[i][j] - base[j];
		dot += u * o;
		n0 += u * u;
		no += o * o;
	}
	assert_true(fabs(r.cos[0] - dot / sqrt(n0 * no)) < 1e-9);
}

static void test_attacks_flagged(void **state)
{
	struct ct_robust r;
	int out[K];
	(void)state;

	honest();	/* shard 2 sign-flipped */
	for (size_t j = 0; j < N; j++)
		w[2][j] = base[j] - (w[2][j] - base[j]);
	assert_int_equal(run(K, 0.0, 4.0, out, &r), 1);
	assert_true(out[2]);
	assert_true(r.cos[2] < -0.5);
	honest();	/* shard 4 near zero (1e-3 of the size) */
	for (size_t j = 0; j < N; j++)
		w[4][j] = base[j] + 1e-3f * (w[4][j] - base[j]);
	assert_int_equal(run(K, 0.0, 4.0, out, &r), 1);
	assert_true(out[4]);
	honest();	/* shard 0 scaled x10 */
	for (size_t j = 0; j < N; j++)
		w[0][j] = base[j] + 10.0f * (w[0][j] - base[j]);
	assert_int_equal(run(K, 0.0, 4.0, out, &r), 1);
	assert_true(out[0]);
}

static void test_two_shards_never_flagged(void **state)
{
	struct ct_robust r;
	int out[K];
	(void)state;

	honest();
	for (size_t j = 0; j < N; j++)
		w[1][j] = base[j] - (w[1][j] - base[j]);
	assert_int_equal(run(2, 0.0, 4.0, out, &r), 0);
	assert_int_equal(ct_robust_init(&r, 0, N), CT_EINVAL);
}

CT_TEST_MAIN(test_honest_pass, test_direct_cosine, test_attacks_flagged,
	test_two_shards_never_flagged)
