/*
 * Tests of the lock order (server/data/lock_order.h): the scheduler's reports
 * of one RPC are sorted by WU id, then result id, so its transaction locks
 * WU rows ascending. (That no deadlocks remain is measured with
 * bench/bench_sched on an external server: doc/operator.md.)
 */
#include "ct_test.h"
#include "data/lock_order.h"

static void test_cmp(void **state)
{
	(void)state;
	assert_true(ct_lock_order_cmp(1, 9, 2, 1) < 0);
	assert_true(ct_lock_order_cmp(2, 1, 1, 9) > 0);
	assert_true(ct_lock_order_cmp(5, 3, 5, 4) < 0);
	assert_true(ct_lock_order_cmp(5, 4, 5, 3) > 0);
	assert_int_equal(ct_lock_order_cmp(5, 4, 5, 4), 0);
	/* ids past 32 bits compare right (no subtraction overflow) */
	assert_true(ct_lock_order_cmp(INT64_MAX, 0, INT64_MIN + 1, 0) > 0);
	assert_true(ct_lock_order_cmp(7, INT64_MIN + 1, 7, INT64_MAX) < 0);
}

CT_TEST_MAIN(test_cmp)
