/*
 * test_cl_backoff.c - backoff after failures: the BOINC formula
 * min(base * 2^(n-1), cap) * U(0.5, 1), checked over many draws, and the
 * fake clock the daemon's timers run on.
 */
#include "ct_test.h"

#include "cl_backoff.h"
#include "ct_clock.h"

static void test_ceiling(void **unused)
{
	struct ct_backoff b;

	(void)unused;
	ct_backoff_init(&b, 0, 0, 1);
	assert_true(ct_backoff_ceiling(&b, 0) == 0);
	assert_true(ct_backoff_ceiling(&b, 1) == 60);
	assert_true(ct_backoff_ceiling(&b, 2) == 120);
	assert_true(ct_backoff_ceiling(&b, 8) == 60 * 128);
	assert_true(ct_backoff_ceiling(&b, 9) == 4 * 3600);	/* 15360 > 14400 */
	assert_true(ct_backoff_ceiling(&b, 1000) == 4 * 3600);
	ct_backoff_init(&b, 0.5, 8, 1);				/* test settings */
	assert_true(ct_backoff_ceiling(&b, 3) == 2);
	assert_true(ct_backoff_ceiling(&b, 10) == 8);
}

static void test_jitter_range(void **unused)
{
	struct ct_backoff b;
	double lo = 1e9, hi = 0, sum = 0;
	const int n = 20000;

	(void)unused;
	ct_backoff_init(&b, 60, 14400, 12345);
	for (int i = 0; i < n; i++) {
		double d = ct_backoff_delay(&b, 3);	/* ceiling 240 */

		assert_true(d >= 120 && d < 240);
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
		sum += d;
	}
	/* spread over the whole interval, mean near the middle */
	assert_true(lo < 125 && hi > 235);
	assert_true(sum / n > 175 && sum / n < 185);
	/* two generators with different seeds disagree (jitter spreads clients) */
	{
		struct ct_backoff c;

		ct_backoff_init(&c, 60, 14400, 999);
		ct_backoff_init(&b, 60, 14400, 12345);
		assert_true(ct_backoff_delay(&b, 5) != ct_backoff_delay(&c, 5));
	}
}

static void test_fake_clock(void **unused)
{
	struct ct_clock clk;
	struct ct_backoff b;
	double t = 1000, next;
	int fails = 0;

	(void)unused;
	ct_clock_fake(&clk, &t);
	ct_backoff_init(&b, 60, 14400, 7);
	/* a failing server: the gaps between tries double until the cap */
	next = ct_clock_now(&clk);
	for (int i = 0; i < 12; i++) {
		double gap;

		ct_clock_sleep(&clk, next - ct_clock_now(&clk));
		assert_true(ct_clock_now(&clk) == next);
		fails++;
		gap = ct_backoff_delay(&b, fails);
		assert_true(gap >= ct_backoff_ceiling(&b, fails) / 2);
		assert_true(gap <= 14400);
		next = ct_clock_now(&clk) + gap;
	}
	assert_true(t > 1000 + 60 * 0.5 * (1 + 2 + 4 + 8 + 16 + 32 + 64 + 128));
	assert_true(ct_clock_mono(&clk) == t);
}

CT_TEST_MAIN(test_ceiling, test_jitter_range, test_fake_clock)
