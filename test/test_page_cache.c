/*
 * Unit tests for server/web/page_cache.c: the web content cache and its single
 * flight. Many threads missing the same key at once run one build; a
 * build that ends (put or abandon) wakes the waiters; keys are
 * independent; entries expire after the TTL on the cache's clock (a fake
 * one here); two caches (two servers in one process) share nothing. Each
 * test makes its own cache.
 */
#include "ct_test.h"
#include "ct_clock.h"
#include "web/page_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

/* One test's cache and the counters its threads share. */
struct fx {
	struct ct_page_cache *pc;
	double t;		/* the fake clock's time */
	struct ct_clock clock;
	atomic_int builds, cached;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	f->t = 1000.0;
	ct_clock_fake(&f->clock, &f->t);
	if (ct_page_cache_new(&f->pc, &f->clock) < 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	ct_page_cache_free(f->pc);
	free(f);
	return 0;
}

/* What a page handler does on a miss: build when it owns the flight,
 * otherwise find what the builder cached. */
static void *request(void *arg)
{
	struct fx *f = arg;
	const char *key = "job:1";

	if (atomic_load(&f->cached))
		return NULL;
	if (ct_page_flight_begin(f->pc, key)) {
		atomic_fetch_add(&f->builds, 1);
		usleep(200000);	/* the slow queries */
		atomic_store(&f->cached, 1);
		ct_page_flight_end(f->pc, key);
	} else {
		assert_true(atomic_load(&f->cached));
	}
	return NULL;
}

static void test_one_build_for_many(void **state)
{
	struct fx *f = *state;
	pthread_t t[8];

	for (int i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&t[i], NULL, request, f), 0);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(atomic_load(&f->builds), 1);
}

struct other {
	struct ct_page_cache *pc;
	int got;
};

static void *begin_other(void *arg)
{
	struct other *o = arg;

	o->got = ct_page_flight_begin(o->pc, "k");
	return NULL;
}

static void test_abandon_wakes_and_keys_independent(void **state)
{
	struct fx *f = *state;
	struct other o = { f->pc, -1 };
	pthread_t t;

	assert_int_equal(ct_page_flight_begin(f->pc, "k"), 1);
	assert_int_equal(ct_page_flight_begin(f->pc, "other"), 1);	/* another key: no wait */
	assert_int_equal(pthread_create(&t, NULL, begin_other, &o), 0);
	usleep(100000);
	assert_int_equal(o.got, -1);	/* waiting for our build */
	ct_page_flight_end(f->pc, "k");	/* failed build: abandoned */
	pthread_join(t, NULL);
	assert_int_equal(o.got, 0);	/* woke; looks in the cache (a miss) */
	/* the flight is over: the next request builds */
	assert_int_equal(ct_page_flight_begin(f->pc, "k"), 1);
	ct_page_flight_end(f->pc, "k");
	ct_page_flight_end(f->pc, "other");
	ct_page_flight_end(f->pc, "never begun");	/* no-op */
}

/* A put page is served until its TTL passes on the cache's clock, then
 * built again; TTL 0 turns the cache off. */
static void test_store_expires_on_its_clock(void **state)
{
	struct fx *f = *state;
	struct ct_buf page = CT_BUF_INIT(0), out = CT_BUF_INIT(0);

	ct_page_cache_set_ttl(f->pc, 5);
	assert_int_equal(ct_buf_append(&page, "<p>users</p>", 12), 0);
	assert_int_equal(ct_page_cache_get(f->pc, "users", &out), 0);	/* ours to build */
	ct_page_cache_put(f->pc, "users", &page);
	f->t += 4.9;
	assert_int_equal(ct_page_cache_get(f->pc, "users", &out), 1);
	assert_int_equal(out.len, 12);
	assert_memory_equal(out.data, "<p>users</p>", 12);
	f->t += 0.2;	/* 5.1 s after the put */
	ct_buf_reset(&out);
	assert_int_equal(ct_page_cache_get(f->pc, "users", &out), 0);
	assert_int_equal(out.len, 0);
	ct_page_cache_abandon(f->pc, "users");
	/* off: nothing is kept */
	ct_page_cache_set_ttl(f->pc, 0);
	ct_page_cache_put(f->pc, "users", &page);
	assert_int_equal(ct_page_cache_get(f->pc, "users", &out), 0);
	ct_buf_free(&page);
	ct_buf_free(&out);
}

static void test_caches_independent(void **state)
{
	struct fx *f = *state;
	struct ct_page_cache *other = NULL;
	struct ct_buf page = CT_BUF_INIT(0), out = CT_BUF_INIT(0);

	assert_int_equal(ct_page_cache_new(&other, &f->clock), 0);
	assert_int_equal(ct_buf_append(&page, "x", 1), 0);
	assert_int_equal(ct_page_cache_get(f->pc, "k", &out), 0);
	ct_page_cache_put(f->pc, "k", &page);
	assert_int_equal(ct_page_cache_get(f->pc, "k", &out), 1);
	/* the other server's cache has no such page, and no flight of it */
	assert_int_equal(ct_page_cache_get(other, "k", &out), 0);
	ct_page_cache_abandon(other, "k");
	ct_page_cache_free(other);
	ct_buf_free(&page);
	ct_buf_free(&out);
}

CT_TEST_MAIN_EACH(setup, teardown, test_one_build_for_many,
	test_abandon_wakes_and_keys_independent, test_store_expires_on_its_clock,
	test_caches_independent)
