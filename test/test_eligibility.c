/*
 * Unit tests for server/eligibility: the network key of a peer address
 * (IPv4 /24, IPv6 /48, IPv4-mapped IPv6 as IPv4, loopback exempt unless
 * asked, nothing when the project turns networks off or the address does
 * not parse), the policy read from the config, and the round rules (two
 * accounts share at most max_shared WUs of a round, a network's and an
 * account's shares capped, lifted for too few volunteers or after the
 * grace), and the memory a WU needs on the backend a host computes on.
 */
#include "ct_test.h"
#include "ct_err.h"
#include "rpc/eligibility.h"

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
	assert_int_equal(p.max_shared, 1);
	assert_true(p.max_net_share == 0.25 && p.max_account_share == 0.25);
	assert_int_equal(p.grace, 600);
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

static void test_round_policy(void **state)
{
	static const char text[] = "[sched]\nmax_shared_per_round = 2\nmax_net_share = 0.5\n"
				   "max_account_share = 0\nplacement_grace = 30\n";
	static const char bad[] = "[sched]\nmax_net_share = 1.5\n";
	struct ct_elig_policy p;
	struct ct_conf *c = NULL;
	(void)state;

	assert_int_equal(ct_conf_parse(text, strlen(text), "t", &c), 0);
	assert_int_equal(ct_elig_policy_load(c, &p), 0);
	assert_int_equal(p.max_shared, 2);
	assert_true(p.max_net_share == 0.5 && p.max_account_share == 0);
	assert_int_equal(p.grace, 30);
	ct_conf_free(c);
	c = NULL;
	assert_int_equal(ct_conf_parse(bad, strlen(bad), "t", &c), 0);
	assert_int_equal(ct_elig_policy_load(c, &p), CT_ECONFIG);
	ct_conf_free(c);
}

static void test_needed(void **state)
{
	struct ct_elig_policy p;
	(void)state;

	ct_elig_policy_load(NULL, &p);
	/* one more than N(N-1)/2 >= K (quorum 2) and than 1/0.25 networks */
	assert_int_equal(ct_elig_accounts_needed(&p, 3, 2), 5);
	assert_int_equal(ct_elig_accounts_needed(&p, 6, 2), 5);
	assert_int_equal(ct_elig_accounts_needed(&p, 7, 2), 6);
	assert_int_equal(ct_elig_accounts_needed(&p, 45, 2), 11);
	assert_int_equal(ct_elig_accounts_needed(&p, 4, 3), 7);	/* 12 pairs: 5 x 4 / 2 < 12 */
	p.max_net_share = 0;	/* the account share (in progress) needs 4 */
	assert_int_equal(ct_elig_accounts_needed(&p, 3, 2), 4);
	p.max_shared = 0, p.max_account_share = 0;
	assert_int_equal(ct_elig_accounts_needed(&p, 100, 2), 2);
	assert_int_equal(ct_elig_share_cap(0.25, 4, 2), 2);
	assert_int_equal(ct_elig_share_cap(0.25, 3, 2), 2);	/* 1.5 up */
	assert_int_equal(ct_elig_share_cap(0.25, 1, 1), 1);
	assert_int_equal(ct_elig_share_cap(0, 4, 2), 0);
	assert_int_equal(ct_elig_share_cap(1, 4, 2), 0);
}

/* The round rule for these facts, with 10 accounts active, fresh replica. */
static const char *rule(const struct ct_elig_policy *p, struct ct_elig_round r)
{
	const char *why = "unset";

	if (r.active == 0)
		r.active = 10;
	if (ct_elig_round_rule(p, &r, &why) == 1)
		return why == NULL ? "ok" : "bad why";
	return why;
}

static void test_round_rule(void **state)
{
	struct ct_elig_round r = { .nwus = 4, .quorum = 2, .has_net = 1 };
	struct ct_elig_policy p;
	(void)state;

	ct_elig_policy_load(NULL, &p);
	/* the capture of the issue: B shares a first WU with A, not a second */
	assert_string_equal(rule(&p, r), "ok");
	r.shared = 1;
	assert_string_equal(rule(&p, r), "shared");
	r.shared = 0;
	/* 8 replicas: a network and an account hold 2 */
	r.net_sent = 1;
	assert_string_equal(rule(&p, r), "ok");
	r.net_sent = 2;
	assert_string_equal(rule(&p, r), "network share");
	r.has_net = 0;	/* no network (loopback): no network share */
	assert_string_equal(rule(&p, r), "ok");
	r.account_inprog = 2;
	assert_string_equal(rule(&p, r), "account share");
	r.account_inprog = 1;
	assert_string_equal(rule(&p, r), "ok");
	/* too few volunteers: 4 accounts asked, 5 needed -> per-WU rules only */
	r.shared = 5;
	r.active = 4;
	assert_string_equal(rule(&p, r), "ok");
	r.active = 5;
	assert_string_equal(rule(&p, r), "shared");
	/* waited the grace: placed */
	r.waited = 599;
	assert_string_equal(rule(&p, r), "shared");
	r.waited = 600;
	assert_string_equal(rule(&p, r), "ok");
	/* rules off */
	r.waited = 0;
	p.max_shared = 0;
	assert_string_equal(rule(&p, r), "ok");
	/* no round row: no rules */
	p.max_shared = 1;
	r.nwus = 0;
	assert_string_equal(rule(&p, r), "ok");
}

/* A host's work memory is held to the job's need on the backend it names:
 * OpenCL's for "opencl", the C reference's for "cpu", the larger of the
 * two for none or an unknown name (whichever of the two is larger); a job
 * without the C reference's bound holds "cpu" to OpenCL's. */
static void test_mem_need(void **state)
{
	struct ct_sched_job j = { .wu_mem_bytes = 1000, .wu_mem_ref_bytes = 4000 };

	(void)state;
	assert_int_equal(ct_elig_backend_parse("opencl"), CT_ELIG_BACKEND_OPENCL);
	assert_int_equal(ct_elig_backend_parse("cpu"), CT_ELIG_BACKEND_CPU);
	assert_int_equal(ct_elig_backend_parse(""), CT_ELIG_BACKEND_ANY);
	assert_int_equal(ct_elig_backend_parse(NULL), CT_ELIG_BACKEND_ANY);
	assert_int_equal(ct_elig_backend_parse("cuda"), CT_ELIG_BACKEND_ANY);
	assert_int_equal(ct_elig_backend_parse("CPU"), CT_ELIG_BACKEND_ANY);
	assert_int_equal(ct_elig_mem_need(&j, CT_ELIG_BACKEND_OPENCL), 1000);
	assert_int_equal(ct_elig_mem_need(&j, CT_ELIG_BACKEND_CPU), 4000);
	assert_int_equal(ct_elig_mem_need(&j, CT_ELIG_BACKEND_ANY), 4000);
	assert_false(ct_elig_mem_rule(ct_elig_mem_need(&j, CT_ELIG_BACKEND_CPU), 2000));
	assert_true(ct_elig_mem_rule(ct_elig_mem_need(&j, CT_ELIG_BACKEND_OPENCL), 2000));
	j.wu_mem_ref_bytes = 500;	/* a toy shape: OpenCL's scratch is the more */
	assert_int_equal(ct_elig_mem_need(&j, CT_ELIG_BACKEND_ANY), 1000);
	j.wu_mem_ref_bytes = 0;		/* a job from before the column */
	assert_int_equal(ct_elig_mem_need(&j, CT_ELIG_BACKEND_CPU), 1000);
	assert_int_equal(ct_elig_mem_need(&j, CT_ELIG_BACKEND_ANY), 1000);
}

CT_TEST_MAIN(test_net_key, test_policy, test_round_policy, test_needed, test_round_rule,
	     test_mem_need)
