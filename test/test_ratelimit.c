/*
 * Unit tests for server/ratelimit: token buckets per exact key. Two
 * addresses never share a counter (the old 256-slot table let a second
 * address in the same slot reset the first's), but an IPv6 /64 is one
 * address; the per-account limit holds across addresses, buckets refill at the configured rate, the
 * answer says how long to wait, loopback is exempt unless configured,
 * a table full of limited keys refuses new keys instead of forgetting
 * old ones, and two tables (two servers in one process) share nothing.
 * Each test gets a fresh table from its setup.
 */
#include "ct_test.h"
#include "ct_conf.h"
#include "rpc/ratelimit.h"

static int allow(struct ct_rl *rl, const struct ct_conf *c, enum ct_rl_action a, const char *ip,
		 const char *acct, int64_t now)
{
	int wait = 0;

	return ct_rl_allow(rl, c, a, ip, acct, now, &wait);
}

/* Each test's own table, in *state. */
static int setup(void **state)
{
	struct ct_rl *rl = NULL;

	if (ct_rl_new(&rl) < 0)
		return -1;
	*state = rl;
	return 0;
}

static int teardown(void **state)
{
	ct_rl_free(*state);
	*state = NULL;
	return 0;
}

static void test_exact_per_address(void **state)
{
	int wait = 0;
	char ip[32];
	struct ct_rl *rl = *state;

	/* 10 sign-ins from one address, then refused; the 11th says when */
	for (int i = 0; i < 10; i++)
		assert_true(allow(rl, NULL, CT_RL_LOGIN, "203.0.113.5", NULL, 1000));
	assert_false(ct_rl_allow(rl, NULL, CT_RL_LOGIN, "203.0.113.5", NULL, 1000, &wait));
	assert_in_range(wait, 1, 61);	/* 60 an hour: one a minute */
	/* many other addresses (any would have shared a slot before) do not
	 * reset it, and are not limited by it */
	for (int i = 0; i < 600; i++) {
		snprintf(ip, sizeof(ip), "198.51.%d.%d", i / 250, i % 250);
		assert_true(allow(rl, NULL, CT_RL_LOGIN, ip, NULL, 1000));
	}
	assert_false(allow(rl, NULL, CT_RL_LOGIN, "203.0.113.5", NULL, 1000));
	/* refilled one a minute */
	assert_true(allow(rl, NULL, CT_RL_LOGIN, "203.0.113.5", NULL, 1061));
	assert_false(allow(rl, NULL, CT_RL_LOGIN, "203.0.113.5", NULL, 1061));
	/* an IPv6 /64 is one address: rotating within it does not help */
	for (int i = 0; i < 10; i++) {
		snprintf(ip, sizeof(ip), "2001:db8:1:2::%x", i + 1);
		assert_true(allow(rl, NULL, CT_RL_LOGIN, ip, NULL, 2000));
	}
	assert_false(allow(rl, NULL, CT_RL_LOGIN, "2001:db8:1:2:ffff::1", NULL, 2000));
	assert_true(allow(rl, NULL, CT_RL_LOGIN, "2001:db8:1:3::1", NULL, 2000));
}

static void test_per_account(void **state)
{
	char ip[32];
	struct ct_rl *rl = *state;

	/* 5 guesses at one account, each from another address, then refused
	 * whatever the address; e-mail case does not matter */
	for (int i = 0; i < 5; i++) {
		snprintf(ip, sizeof(ip), "192.0.2.%d", i + 1);
		assert_true(allow(rl, NULL, CT_RL_LOGIN, ip, i % 2 ? "Alice@Example.org" :
				  "alice@example.org", 50));
	}
	assert_false(allow(rl, NULL, CT_RL_LOGIN, "192.0.2.77", "alice@example.org", 50));
	assert_true(allow(rl, NULL, CT_RL_LOGIN, "192.0.2.77", "bob@example.org", 50));
	/* a refused attempt takes no token from the address's bucket */
	for (int i = 0; i < 9; i++)	/* 10 - bob's one */
		assert_true(allow(rl, NULL, CT_RL_LOGIN, "192.0.2.77", NULL, 50));
	assert_false(allow(rl, NULL, CT_RL_LOGIN, "192.0.2.77", NULL, 50));
}

static void test_signup_and_config(void **state)
{
	static const char text[] = "[limits]\nsignup_ip_burst = 2\nsignup_ip_per_hour = 3600\n"
				   "loopback = 1\n";
	struct ct_conf *c = NULL;
	struct ct_rl *rl = *state;

	for (int i = 0; i < 3; i++)
		assert_true(allow(rl, NULL, CT_RL_SIGNUP, "203.0.113.9", NULL, 10));
	assert_false(allow(rl, NULL, CT_RL_SIGNUP, "203.0.113.9", NULL, 10));
	/* sign-up and sign-in are separate buckets */
	assert_true(allow(rl, NULL, CT_RL_LOGIN, "203.0.113.9", NULL, 10));
	/* loopback is exempt by default */
	for (int i = 0; i < 50; i++)
		assert_true(allow(rl, NULL, CT_RL_SIGNUP, "127.0.0.1", NULL, 10));
	ct_rl_free(rl);
	assert_int_equal(ct_rl_new(&rl), 0);
	*state = rl;
	assert_int_equal(ct_conf_parse(text, strlen(text), "t", &c), 0);
	assert_true(allow(rl, c, CT_RL_SIGNUP, "127.0.0.1", NULL, 10));
	assert_true(allow(rl, c, CT_RL_SIGNUP, "127.0.0.1", NULL, 10));
	assert_false(allow(rl, c, CT_RL_SIGNUP, "127.0.0.1", NULL, 10));
	assert_true(allow(rl, c, CT_RL_SIGNUP, "127.0.0.1", NULL, 11));	/* 1 a second */
	ct_conf_free(c);
}

static void test_full_table_fails_closed(void **state)
{
	char ip[32];
	int refused = 0;
	struct ct_rl *rl = *state;

	/* fill the table with limited keys: each address spends its burst */
	for (int i = 0; i < CT_RL_CAP; i++) {
		snprintf(ip, sizeof(ip), "10.%d.%d.1", i / 256, i % 256);
		for (int k = 0; k < 3; k++)
			(void)allow(rl, NULL, CT_RL_SIGNUP, ip, NULL, 5);
	}
	/* the first address is still limited (not evicted) */
	assert_false(allow(rl, NULL, CT_RL_SIGNUP, "10.0.0.1", NULL, 5));
	/* a new key is refused while the table is full of limited keys */
	refused = !allow(rl, NULL, CT_RL_SIGNUP, "172.16.0.1", NULL, 5);
	assert_true(refused);
	/* once they refill (3 at 6 an hour: 30 min) they go, and new keys fit */
	assert_true(allow(rl, NULL, CT_RL_SIGNUP, "172.16.0.1", NULL, 5 + 1800));
}

/* Two servers' tables: spending one address's burst in one leaves the
 * other's untouched. */
static void test_tables_independent(void **state)
{
	struct ct_rl *rl = *state, *other = NULL;
	int wait = 0;

	assert_int_equal(ct_rl_new(&other), 0);
	for (int i = 0; i < 3; i++)
		assert_true(allow(rl, NULL, CT_RL_SIGNUP, "203.0.113.7", NULL, 10));
	assert_false(allow(rl, NULL, CT_RL_SIGNUP, "203.0.113.7", NULL, 10));
	assert_true(ct_rl_allow(other, NULL, CT_RL_SIGNUP, "203.0.113.7", NULL, 10, &wait));
	ct_rl_free(other);
}

/* Recovery mails: 2 per address asked (any case) from any client address,
 * 5 per client address; neither counts against sign-in. */
static void test_reset_mails(void **state)
{
	struct ct_rl *rl = *state;
	char who[32];

	assert_true(allow(rl, NULL, CT_RL_RESET, "203.0.113.8", "Bob@example.org", 10));
	assert_true(allow(rl, NULL, CT_RL_RESET, "198.51.100.1", "bob@example.org", 10));
	assert_false(allow(rl, NULL, CT_RL_RESET, "198.51.100.2", "bob@EXAMPLE.org", 10));
	for (int i = 0; i < 4; i++) {
		snprintf(who, sizeof(who), "u%d@example.org", i);
		assert_true(allow(rl, NULL, CT_RL_RESET, "203.0.113.8", who, 10));
	}
	/* five from this address (the refused one came from another): a
	 * sixth is refused */
	assert_false(allow(rl, NULL, CT_RL_RESET, "203.0.113.8", "carol@example.org", 10));
	assert_true(allow(rl, NULL, CT_RL_LOGIN, "203.0.113.8", "bob@example.org", 10));
	/* refilled: 4 an hour per address asked */
	assert_true(allow(rl, NULL, CT_RL_RESET, "198.51.100.2", "bob@example.org", 10 + 901));
}

CT_TEST_MAIN_EACH(setup, teardown, test_exact_per_address, test_per_account,
	test_signup_and_config, test_full_table_fails_closed, test_tables_independent,
	test_reset_mails)
