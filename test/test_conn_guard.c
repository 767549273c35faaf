/*
 * Unit tests for server/conn_guard: per-address connection counts and
 * request deadlines, on a fake clock. An address at its limit is refused
 * while another is not, and is admitted again when one of its connections
 * closes; exempt (trusted proxy) connections count for nothing and never
 * expire; a trickled header expires at the header deadline whatever the
 * trickle; a body that keeps the minimum rate lives on and one that does
 * not is killed; the response phase has no deadline; a killed connection
 * is handed out once; an IPv6 /64 counts as one address; and thousands
 * of addresses coming and going keep the count table exact (the deletion
 * that shifts runs back).
 */
#include "ct_test.h"
#include "ct_err.h"
#include "rpc/conn_guard.h"

static const struct ct_guard_opts g_opts = {
	.max_conns = 64, .per_addr = 3, .header_ms = 5000, .body_ms = 10000, .min_rate = 1000,
};

static struct ct_addr addr(const char *s)
{
	struct ct_addr a;

	assert_int_equal(ct_addr_parse(s, strlen(s), &a), 0);
	return a;
}

struct killed {
	int n;
	int fd[64];
};

static void kill_cb(void *cls, int fd)
{
	struct killed *k = cls;

	k->fd[k->n++] = fd;
}

static int sweep(struct ct_guard *g, int64_t now, struct killed *k)
{
	k->n = 0;
	return ct_guard_sweep(g, now, kill_cb, k);
}

static void test_per_address(void **state)
{
	struct ct_guard *g;
	struct ct_guard_conn *c[3];
	struct ct_addr a = addr("127.0.0.2"), b = addr("127.0.0.3");

	(void)state;
	assert_int_equal(ct_guard_new(&g_opts, &g), 0);
	for (int i = 0; i < 3; i++) {
		assert_true(ct_guard_admit(g, &a));
		c[i] = ct_guard_open(g, &a, 0, 10 + i, 0);
		assert_non_null(c[i]);
	}
	assert_false(ct_guard_admit(g, &a));
	assert_true(ct_guard_admit(g, &b));
	assert_int_equal(ct_guard_count(g, &a), 3);
	ct_guard_close(g, c[1]);
	assert_true(ct_guard_admit(g, &a));
	/* a proxied request counts against its client like a connection */
	assert_true(ct_guard_acquire(g, &a));
	assert_false(ct_guard_acquire(g, &a));
	assert_false(ct_guard_admit(g, &a));
	ct_guard_release(g, &a);
	assert_int_equal(ct_guard_count(g, &a), 2);
	/* an IPv6 /64 is one address: another /64 is not */
	struct ct_addr v6[4] = { addr("2001:db8:0:1::1"), addr("2001:db8:0:1::2"),
				 addr("2001:db8:0:1:ffff::3"), addr("2001:db8:0:2::1") };
	for (int i = 0; i < 3; i++) {
		assert_true(ct_guard_admit(g, &v6[i]));
		assert_non_null(ct_guard_open(g, &v6[i], 0, 20 + i, 0));
	}
	assert_false(ct_guard_admit(g, &v6[0]));
	assert_int_equal(ct_guard_count(g, &v6[1]), 3);
	assert_true(ct_guard_admit(g, &v6[3]));
	/* exempt connections are not counted */
	for (int i = 0; i < 10; i++)
		assert_non_null(ct_guard_open(g, &b, 1, 100 + i, 0));
	assert_int_equal(ct_guard_count(g, &b), 0);
	ct_guard_free(g);
}

static void test_table_full(void **state)
{
	struct ct_guard_opts o = g_opts;
	struct ct_guard *g;
	struct ct_addr a = addr("10.0.0.1");

	(void)state;
	o.max_conns = 4;
	o.per_addr = 100;
	assert_int_equal(ct_guard_new(&o, &g), 0);
	for (int i = 0; i < 4; i++)
		assert_non_null(ct_guard_open(g, &a, 0, i, 0));
	assert_false(ct_guard_admit(g, &a));
	assert_null(ct_guard_open(g, &a, 0, 9, 0));
	ct_guard_free(g);
	o.min_rate = 0;
	assert_int_equal(ct_guard_new(&o, &g), CT_EINVAL);
	assert_null(g);
}

static void test_header_deadline(void **state)
{
	struct ct_guard *g;
	struct ct_addr a = addr("2001:db8::1");
	struct killed k;

	(void)state;
	assert_int_equal(ct_guard_new(&g_opts, &g), 0);
	ct_guard_open(g, &a, 0, 7, 1000);
	ct_guard_open(g, &a, 1, 8, 1000);	/* exempt: never expires */
	/* bytes trickling in change nothing before the headers are in */
	for (int64_t t = 1000; t <= 6000; t += 1000)
		assert_int_equal(sweep(g, t, &k), 0);
	assert_int_equal(sweep(g, 6001, &k), 1);
	assert_int_equal(k.fd[0], 7);
	assert_int_equal(sweep(g, 60000, &k), 0);	/* handed out once */
	ct_guard_free(g);
}

static void test_body_rate(void **state)
{
	struct ct_guard *g;
	struct ct_guard_conn *fast, *slow, *resp;
	struct ct_addr a = addr("192.0.2.1");
	struct killed k;

	(void)state;
	assert_int_equal(ct_guard_new(&g_opts, &g), 0);
	fast = ct_guard_open(g, &a, 0, 1, 0);
	slow = ct_guard_open(g, &a, 0, 2, 0);
	resp = ct_guard_open(g, &a, 0, 3, 0);
	ct_guard_phase(g, fast, CT_GUARD_BODY, 1000);
	ct_guard_phase(g, slow, CT_GUARD_BODY, 1000);
	ct_guard_phase(g, resp, CT_GUARD_RESPONSE, 1000);
	/* fast sends 1200 bytes a second (min 1000), slow 500 */
	for (int s = 1; s <= 60; s++) {
		ct_guard_body(g, fast, 1200);
		ct_guard_body(g, slow, 500);
		sweep(g, 1000 + s * 1000, &k);
		if (k.n > 0) {
			/* slow: 10 s grace + 500 s/1000 a second: dead at ~20 s */
			assert_int_equal(k.n, 1);
			assert_int_equal(k.fd[0], 2);
			assert_in_range(s, 19, 21);
			break;
		}
	}
	for (int s = 21; s <= 600; s++) {
		ct_guard_body(g, fast, 1200);
		assert_int_equal(sweep(g, 1000 + s * 1000, &k), 0);
	}
	/* the next request on the connection: headers again, from then */
	ct_guard_phase(g, resp, CT_GUARD_HEADERS, 601000);
	assert_int_equal(sweep(g, 606000, &k), 0);
	ct_guard_body(g, fast, 1200 * 6);
	assert_int_equal(sweep(g, 606001, &k), 1);
	assert_int_equal(k.fd[0], 3);
	ct_guard_free(g);
}

/* Many addresses through a small table: every count stays exact while
 * entries are removed from the middle of probe runs. */
static void test_counts_churn(void **state)
{
	struct ct_guard_opts o = g_opts;
	struct ct_guard *g;
	struct ct_guard_conn *c[256] = { 0 };
	struct ct_addr ad[256];
	int open[256] = { 0 };
	unsigned x = 12345;

	(void)state;
	o.max_conns = 256;
	o.per_addr = 1000;
	assert_int_equal(ct_guard_new(&o, &g), 0);
	for (int i = 0; i < 256; i++) {
		char s[32];

		snprintf(s, sizeof(s), "10.%d.%d.1", i % 7, i);
		ad[i] = addr(s);
	}
	for (int step = 0; step < 20000; step++) {
		int i;

		x = x * 1103515245u + 12345u;
		i = (int)((x >> 8) % 256);
		if (c[i] == NULL) {
			c[i] = ct_guard_open(g, &ad[i % 40], 0, i, 0);
			assert_non_null(c[i]);
			open[i % 40]++;
		} else {
			ct_guard_close(g, c[i]);
			c[i] = NULL;
			open[i % 40]--;
		}
		if (step % 997 == 0)
			for (int j = 0; j < 40; j++)
				assert_int_equal(ct_guard_count(g, &ad[j]), open[j]);
	}
	for (int j = 0; j < 40; j++)
		assert_int_equal(ct_guard_count(g, &ad[j]), open[j]);
	ct_guard_free(g);
}

CT_TEST_MAIN(test_per_address, test_table_full, test_header_deadline, test_body_rate,
	     test_counts_churn)
