/*
 * Unit tests for lib/ct_outer: the outer optimizer's step. "mean" leaves
 * the aggregate's bits alone; sgd and nesterov follow the recurrence of
 * ct_outer.h over several rounds, checked against the same recurrence in
 * double precision (an independent computation: float32 rounding is the
 * only difference allowed), on values chosen by hand, and the argument
 * checks. test/outer_torch.sh checks the same against PyTorch's SGD.
 */
#include "ct_test.h"
#include "ct_outer.h"
#include "ct_err.h"

#include <math.h>

#define N 4099
#define ROUNDS 4

/* A deterministic value in [-scale, scale). */
static float val(size_t i, size_t j, double scale)
{
	return (float)(((double)((i * 7919 + j * 104729 + 13) % 2001) / 1000.0 - 1.0) * scale);
}

static void test_mean_keeps_the_aggregate(void **state)
{
	struct ct_outer o = { CT_OUTER_MEAN, 0.7f, 0.9f };
	float theta[N], agg[N], want[N], mom[N], mom0[N];

	(void)state;
	for (size_t i = 0; i < N; i++) {
		theta[i] = val(i, 1, 2.0);
		agg[i] = want[i] = val(i, 2, 2.0);
		mom[i] = mom0[i] = val(i, 3, 1.0);
	}
	ct_outer_step(&o, theta, agg, mom, 1, N);
	assert_memory_equal(agg, want, sizeof(agg));
	assert_memory_equal(mom, mom0, sizeof(mom));
}

/* ROUNDS rounds of method m against a double-precision recurrence. */
static void check_rounds(enum ct_outer_method m, float lr, float mu)
{
	struct ct_outer o = { m, lr, mu };
	static float theta[N], agg[N], mom[N];
	static double dtheta[N], dmom[N], mtol[N], ttol[N];

	for (size_t i = 0; i < N; i++)
		dtheta[i] = theta[i] = val(i, 5, 1.0);
	for (int r = 0; r < ROUNDS; r++) {
		for (size_t i = 0; i < N; i++) {
			/* the round's aggregate: near its start model, as training moves it */
			agg[i] = theta[i] - val(i, (size_t)r + 7, 1e-2);
			double d = (double)theta[i] - (double)agg[i];
			double mm = r == 0 ? d : (double)mu * dmom[i] + d;
			double g = m == CT_OUTER_NESTEROV ? d + (double)mu * mm : mm;

			/* a rounding is relative to the terms, which may cancel */
			mtol[i] = 1e-6 * (fabs(d) + (r == 0 ? 0 : fabs((double)mu * dmom[i])));
			ttol[i] = 1e-6 * (fabs((double)theta[i]) + fabs((double)lr * g) +
					  fabs(d) + fabs(mm));
			dmom[i] = mm;
			dtheta[i] = (double)theta[i] - (double)lr * g;
		}
		ct_outer_step(&o, theta, agg, mom, r > 0, N);
		for (size_t i = 0; i < N; i++) {
			/* the float recurrence rounds each of its few operations
			 * (one float32 rounding is 6e-8 of a term); the double one
			 * starts every round from the float state */
			if (fabs((double)agg[i] - dtheta[i]) > ttol[i])
				fail_msg("%s round %d i %zu: %.9g, double %.9g", ct_outer_name(m),
					 r + 1, i, agg[i], dtheta[i]);
			if (fabs((double)mom[i] - dmom[i]) > mtol[i])
				fail_msg("%s round %d i %zu: buffer %.9g, double %.9g",
					 ct_outer_name(m), r + 1, i, mom[i], dmom[i]);
			dmom[i] = mom[i];	/* the next round starts from the float state */
			theta[i] = agg[i];
		}
	}
}

static void test_sgd_matches_double(void **state)
{
	(void)state;
	check_rounds(CT_OUTER_SGD, 0.7f, 0.9f);
	check_rounds(CT_OUTER_SGD, 1.0f, 0.0f);
}

static void test_nesterov_matches_double(void **state)
{
	(void)state;
	check_rounds(CT_OUTER_NESTEROV, 0.7f, 0.9f);
	check_rounds(CT_OUTER_NESTEROV, 0.5f, 0.5f);
}

/* Values worked by hand (exact in binary): theta 1, aggregate 0.5, so
 * d = 0.5; lr 0.5, mu 0.5. */
static void test_by_hand(void **state)
{
	struct ct_outer sgd = { CT_OUTER_SGD, 0.5f, 0.5f };
	struct ct_outer nes = { CT_OUTER_NESTEROV, 0.5f, 0.5f };
	float theta = 1.0f, a, m;

	(void)state;
	a = 0.5f;	/* first round: m = d = 0.5, g = 0.5, theta' = 1 - 0.25 */
	ct_outer_step(&sgd, &theta, &a, &m, 0, 1);
	assert_true(m == 0.5f && a == 0.75f);
	a = 0.5f;	/* second round: m = 0.5*0.5 + 0.5 = 0.75, theta' = 1 - 0.375 */
	ct_outer_step(&sgd, &theta, &a, &m, 1, 1);
	assert_true(m == 0.75f && a == 0.625f);
	a = 0.5f;	/* nesterov, first: m = 0.5, g = 0.5 + 0.25, theta' = 1 - 0.375 */
	ct_outer_step(&nes, &theta, &a, &m, 0, 1);
	assert_true(m == 0.5f && a == 0.625f);
	a = 0.5f;	/* second: m = 0.75, g = 0.5 + 0.375, theta' = 1 - 0.4375 */
	ct_outer_step(&nes, &theta, &a, &m, 1, 1);
	assert_true(m == 0.75f && a == 0.5625f);
	/* sgd, lr 1, no momentum: theta - (theta - a), a's value when exact */
	struct ct_outer plain = { CT_OUTER_SGD, 1.0f, 0.0f };
	a = 0.25f;
	ct_outer_step(&plain, &theta, &a, &m, 1, 1);
	assert_true(a == 0.25f && m == 0.75f);
}

static void test_parse_and_check(void **state)
{
	enum ct_outer_method m = CT_OUTER_MEAN;
	struct ct_outer o = { CT_OUTER_NESTEROV, 0.7f, 0.9f };

	(void)state;
	assert_int_equal(ct_outer_parse("nesterov", &m), 0);
	assert_int_equal(m, CT_OUTER_NESTEROV);
	assert_int_equal(ct_outer_parse("sgd", &m), 0);
	assert_int_equal(m, CT_OUTER_SGD);
	assert_int_equal(ct_outer_parse("mean", &m), 0);
	assert_int_equal(m, CT_OUTER_MEAN);
	assert_int_equal(ct_outer_parse("adam", &m), CT_EINVAL);
	assert_int_equal(ct_outer_parse(NULL, &m), CT_EINVAL);
	assert_string_equal(ct_outer_name(CT_OUTER_SGD), "sgd");
	assert_int_equal(ct_outer_check(&o), 0);
	o.momentum = 1.0f;
	assert_int_equal(ct_outer_check(&o), CT_EINVAL);
	o.momentum = -0.1f;
	assert_int_equal(ct_outer_check(&o), CT_EINVAL);
	o.momentum = 0.0f;
	o.lr = 0.0f;
	assert_int_equal(ct_outer_check(&o), CT_EINVAL);
	o.lr = NAN;
	assert_int_equal(ct_outer_check(&o), CT_EINVAL);
	o.lr = 11.0f;
	assert_int_equal(ct_outer_check(&o), CT_EINVAL);
	o.method = CT_OUTER_MEAN;	/* mean takes no parameters */
	assert_int_equal(ct_outer_check(&o), 0);
}

CT_TEST_MAIN(test_mean_keeps_the_aggregate, test_sgd_matches_double,
	test_nesterov_matches_double, test_by_hand, test_parse_and_check)
