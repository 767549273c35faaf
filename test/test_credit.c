/*
 * Unit tests for server/credit: the WU credit of doc/credit.md's worked
 * example, and the RAC update against values computed by hand there.
 */
#include "ct_test.h"
#include "validate/credit.h"
#include "ct_gpt2.h"

#include <math.h>

static void test_wu_credit_gpt2_small(void **state)
{
	const struct ct_model_config cfg = { .maxT = 1024, .V = 50257, .L = 12, .NH = 12,
					    .C = 768, .Vp = 50304 };
	double flops = ct_credit_wu_flops(&cfg, 1024, 4, 10);

	(void)state;
	/* 40,960 tokens x 798,087,168 FLOPs */
	assert_true(fabs(flops - 3.269e13) < 0.001e13);
	assert_true(fabs(ct_credit_from_flops(flops) - 75.67048704) < 1e-6);
	/* twice the steps, twice the credit; the sequence length counts
	 * more than linearly (attention) */
	assert_true(fabs(ct_credit_wu_flops(&cfg, 1024, 4, 20) - 2 * flops) < 1.0);
	assert_true(ct_credit_wu_flops(&cfg, 512, 8, 10) < flops);
}

static void test_rac_hand_computed(void **state)
{
	double rac = 0.0, t = 0.0, t0 = 1.7e9;

	(void)state;
	/* first grant: the dt -> 0 limit, 100 * ln2 / 7 */
	ct_credit_rac_update(&rac, &t, 100.0, t0);
	assert_true(fabs(rac - 9.90210257942779) < 1e-9);
	assert_true(t == t0);
	/* one day later: 9.902 * w + (1 - w) * 100 / 1 day, w = exp(-ln2/7) */
	ct_credit_rac_update(&rac, &t, 100.0, t0 + 86400.0);
	assert_true(fabs(rac - 18.39620220576575) < 1e-9);
	/* read a week later: half */
	assert_true(fabs(ct_credit_rac_now(rac, t, t + 7 * 86400.0) - 9.198101102882875) < 1e-9);
	/* reading in the past or at the same instant does not change it */
	assert_true(ct_credit_rac_now(rac, t, t - 5.0) == rac);
}

static void test_rac_clock_backwards(void **state)
{
	double rac = 10.0, t = 2e9, before = rac;

	(void)state;
	/* a grant stamped before expavg_time (two servers' clocks) counts as
	 * now: no decay, the same limit term, and the time does not go back */
	ct_credit_rac_update(&rac, &t, 70.0, 2e9 - 100.0);
	assert_true(fabs(rac - (before + 70.0 * M_LN2 / 7.0)) < 1e-9);
	assert_true(t == 2e9);
}

static void test_rac_steady_rate(void **state)
{
	double rac = 0.0, t = 0.0;

	(void)state;
	/* 50 cobblestones a day for 200 days: RAC tends to 50 per day */
	for (int d = 0; d < 200; d++)
		ct_credit_rac_update(&rac, &t, 50.0, 1e9 + d * 86400.0);
	assert_true(fabs(rac - 50.0) < 0.5);
	/* granted in 24 hourly pieces instead, the same */
	rac = 0.0, t = 0.0;
	for (int h = 0; h < 200 * 24; h++)
		ct_credit_rac_update(&rac, &t, 50.0 / 24.0, 1e9 + h * 3600.0);
	assert_true(fabs(rac - 50.0) < 0.5);
}

CT_TEST_MAIN(test_wu_credit_gpt2_small, test_rac_hand_computed, test_rac_clock_backwards,
	test_rac_steady_rate)
