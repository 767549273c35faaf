/*
 * Unit tests for server/eligibility: the network key of a peer address
 * (IPv4 /24, IPv6 /48, IPv4-mapped IPv6 as IPv4, loopback exempt unless
 * asked, nothing when the project turns networks off or the address does
 * not parse) and the policy read from the config.
 */
#include "ct_test.h"
#include "ct_err.h"
#include "eligibility.h"

static const char *key(const char *ip, int nets, int loop)
{
	static char out[CT_ELIG_NETLEN];
	struct ct_elig_policy p = { .separate_networks = nets, .separate_loopback = loop };

	ct_elig_net_key(ip, &p, out);
	return out;
}

static void test_net_key(void **state)
{
	(void)state;
	assert_string_equal(key("203.0.113.7", 1, 0), "4:203.0.113");
	assert_string_equal(key("203.0.113.250", 1, 0), "4:203.0.113");
	assert_string_equal(key("203.0.114.7", 1, 0), "4:203.0.114");
	assert_string_equal(key("::ffff:203.0.113.9", 1, 0), "4:203.0.113");
	assert_string_equal(key("2001:db8:abcd:12::1", 1, 0), "6:2001:0db8:abcd");
	assert_string_equal(key("2001:DB8:ABCD:ffff::2", 1, 0), "6:2001:0db8:abcd");
	assert_string_equal(key("2001:db8:abce::1", 1, 0), "6:2001:0db8:abce");
	/* loopback: no network unless the policy says so */
	assert_string_equal(key("127.0.0.1", 1, 0), "");
	assert_string_equal(key("::1", 1, 0), "");
	assert_string_equal(key("::ffff:127.0.0.1", 1, 0), "");
	assert_string_equal(key("127.0.7.1", 1, 1), "4:127.0.7");
	assert_string_equal(key("::1", 1, 1), "6:0000:0000:0000");
	/* off, or not an address */
	assert_string_equal(key("203.0.113.7", 0, 0), "");
	assert_string_equal(key("", 1, 0), "");
	assert_string_equal(key("not-an-ip", 1, 0), "");
	assert_string_equal(key("203.0.113", 1, 0), "");
	assert_string_equal(key(NULL, 1, 0), "");
}

static void test_policy(void **state)
{
	struct ct_elig_policy p;
	struct ct_conf *c = NULL;
	static const char text[] = "[sched]\nseparate_networks = no\nseparate_loopback = yes\n";
	static const char bad[] = "[sched]\nseparate_networks = maybe\n";
	(void)state;

	assert_int_equal(ct_elig_policy_load(NULL, &p), 0);
	assert_int_equal(p.separate_networks, 1);
	assert_int_equal(p.separate_loopback, 0);
	assert_int_equal(ct_conf_parse(text, strlen(text), "t", &c), 0);
	assert_int_equal(ct_elig_policy_load(c, &p), 0);
	assert_int_equal(p.separate_networks, 0);
	assert_int_equal(p.separate_loopback, 1);
	ct_conf_free(c);
	c = NULL;
	assert_int_equal(ct_conf_parse(bad, strlen(bad), "t", &c), 0);
	assert_int_equal(ct_elig_policy_load(c, &p), CT_ECONFIG);
	ct_conf_free(c);
}

CT_TEST_MAIN(test_net_key, test_policy)
