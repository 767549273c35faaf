/*
 * Unit tests for server/web/page_cache.c: single flight for the web content
 * cache. Many threads missing the same key at once run one build; a build
 * that ends (put or abandon) wakes the waiters; keys are independent.
 */
#include "ct_test.h"
#include "page_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

static atomic_int builds, cached;

/* What a page handler does on a miss: build when it owns the flight,
 * otherwise find what the builder cached. */
static void *request(void *arg)
{
	const char *key = arg;

	if (atomic_load(&cached))
		return NULL;
	if (ct_page_flight_begin(key)) {
		atomic_fetch_add(&builds, 1);
		usleep(200000);	/* the slow queries */
		atomic_store(&cached, 1);
		ct_page_flight_end(key);
	} else {
		assert_true(atomic_load(&cached));
	}
	return NULL;
}

static void test_one_build_for_many(void **state)
{
	pthread_t t[8];

	(void)state;
	atomic_store(&builds, 0);
	atomic_store(&cached, 0);
	for (int i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&t[i], NULL, request, "job:1"), 0);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(atomic_load(&builds), 1);
}

static void *begin_other(void *arg)
{
	*(int *)arg = ct_page_flight_begin("k");
	return NULL;
}

static void test_abandon_wakes_and_keys_independent(void **state)
{
	pthread_t t;
	int got = -1;

	(void)state;
	assert_int_equal(ct_page_flight_begin("k"), 1);
	assert_int_equal(ct_page_flight_begin("other"), 1);	/* another key: no wait */
	assert_int_equal(pthread_create(&t, NULL, begin_other, &got), 0);
	usleep(100000);
	assert_int_equal(got, -1);	/* waiting for our build */
	ct_page_flight_end("k");	/* failed build: abandoned */
	pthread_join(t, NULL);
	assert_int_equal(got, 0);	/* woke; looks in the cache (a miss) */
	/* the flight is over: the next request builds */
	assert_int_equal(ct_page_flight_begin("k"), 1);
	ct_page_flight_end("k");
	ct_page_flight_end("other");
	ct_page_flight_end("never begun");	/* no-op */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_build_for_many),
		cmocka_unit_test(test_abandon_wakes_and_keys_independent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
