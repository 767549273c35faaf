/*
 * Unit tests for server/proxy: the client address behind a trusted
 * reverse proxy. Only a trusted peer's header is read, from the right,
 * and the first untrusted hop is the client, so whatever a client writes
 * into the header (spoofed left entries, trusted-looking addresses,
 * garbage, thousands of hops, quotes and brackets) never becomes its
 * address; IPv6 in brackets with ports, IPv4 with ports, mapped IPv4 and
 * RFC 7239 quoting parse; the trusted list takes addresses and CIDRs of
 * both families and refuses bad entries by name.
 */
#include "ct_test.h"
#include "ct_err.h"
#include "rpc/proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>

/* The client behind peer `peer` with header `hdr`, as text. */
static const char *resolve(const char *trusted, const char *peer, enum ct_proxy_header kind,
			   const char *hdr)
{
	static char out[CT_ADDR_STRLEN];
	struct ct_proxy_list l;
	struct ct_addr p, c;

	assert_int_equal(ct_proxy_list_parse(trusted, &l), 0);
	assert_int_equal(ct_addr_parse(peer, strlen(peer), &p), 0);
	ct_proxy_resolve(&l, &p, kind, hdr, &c);
	ct_addr_format(&c, out);
	return out;
}

static const char *xff(const char *trusted, const char *peer, const char *hdr)
{
	return resolve(trusted, peer, CT_PROXY_XFF, hdr);
}

static const char *fwd(const char *trusted, const char *peer, const char *hdr)
{
	return resolve(trusted, peer, CT_PROXY_FORWARDED, hdr);
}

static void test_addresses(void **state)
{
	struct ct_addr a, b;
	char s[CT_ADDR_STRLEN];

	(void)state;
	assert_int_equal(ct_addr_parse("192.0.2.1", 9, &a), 0);
	assert_int_equal(a.family, AF_INET);
	assert_int_equal(ct_addr_parse("::ffff:192.0.2.1", 16, &b), 0);
	assert_true(ct_addr_equal(&a, &b));	/* one host, one key */
	assert_int_equal(ct_addr_parse("2001:DB8::1", 11, &a), 0);
	ct_addr_format(&a, s);
	assert_string_equal(s, "2001:db8::1");
	static const char *bad[] = { "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4x",
				     "[::1]", "::1%eth0", "fe80::1::2", "1.2.3.4:80", "x",
				     "1.2.3.4 " };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ct_addr_parse(bad[i], strlen(bad[i]), &a), CT_EINVAL);
	assert_int_equal(ct_addr_parse("1.2.3.4\0.5", 10, &a), CT_EINVAL);
	char longs[200];
	memset(longs, '1', sizeof(longs));
	assert_int_equal(ct_addr_parse(longs, sizeof(longs), &a), CT_EINVAL);
}

static void test_trusted_list(void **state)
{
	struct ct_proxy_list l;
	struct ct_addr a;

	(void)state;
	assert_int_equal(ct_proxy_list_parse("127.0.0.1, 10.0.0.0/8\tfd00::/8 ::1,,", &l), 0);
	assert_int_equal(l.n, 4);
	static const char *in[] = { "127.0.0.1", "10.200.3.4", "fd12::9", "::1",
				    "::ffff:10.0.0.1" };
	static const char *out[] = { "127.0.0.2", "11.0.0.1", "fe00::1", "::2", "0.0.0.0" };
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(ct_addr_parse(in[i], strlen(in[i]), &a), 0);
		assert_true(ct_proxy_trusted(&l, &a));
		assert_int_equal(ct_addr_parse(out[i], strlen(out[i]), &a), 0);
		assert_false(ct_proxy_trusted(&l, &a));
	}
	/* host bits are cleared, /0 takes everything, odd prefixes work */
	assert_int_equal(ct_proxy_list_parse("192.168.1.77/23 0.0.0.0/0", &l), 0);
	assert_int_equal(ct_proxy_list_parse("192.168.1.77/23", &l), 0);
	assert_int_equal(ct_addr_parse("192.168.0.1", 11, &a), 0);
	assert_true(ct_proxy_trusted(&l, &a));
	assert_int_equal(ct_addr_parse("192.168.2.1", 11, &a), 0);
	assert_false(ct_proxy_trusted(&l, &a));
	assert_int_equal(ct_proxy_list_parse("", &l), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(ct_proxy_list_parse(NULL, &l), 0);
	static const char *bad[] = { "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/-1",
				     "10.0.0.0/8x", "proxy.example.org", "10.0.0.0/0008",
				     "[::1]", "1.2.3.4:80" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ct_proxy_list_parse(bad[i], &l), CT_ECONFIG);
	char many[64 * 12 + 20] = "";
	for (int i = 0; i < CT_PROXY_MAX_NETS + 1; i++)
		sprintf(many + strlen(many), "10.0.%d.1 ", i);
	assert_int_equal(ct_proxy_list_parse(many, &l), CT_ECONFIG);
}

/* An untrusted peer's header is never read; none is trusted by default. */
static void test_untrusted_peer(void **state)
{
	(void)state;
	assert_string_equal(xff("", "203.0.113.9", "198.51.100.1"), "203.0.113.9");
	assert_string_equal(xff("127.0.0.1", "203.0.113.9", "198.51.100.1"), "203.0.113.9");
	assert_string_equal(fwd("127.0.0.1", "203.0.113.9", "for=198.51.100.1"),
			    "203.0.113.9");
}

static void test_rightmost_untrusted(void **state)
{
	const char *t = "127.0.0.1 10.0.0.0/8";

	(void)state;
	assert_string_equal(xff(t, "127.0.0.1", "198.51.100.7"), "198.51.100.7");
	/* spoofed entries on the left are the client's own writing */
	assert_string_equal(xff(t, "127.0.0.1", "1.1.1.1, 2.2.2.2, 198.51.100.7"),
			    "198.51.100.7");
	/* trusted hops are walked through, even when the client names one */
	assert_string_equal(xff(t, "127.0.0.1", "10.0.0.5, 198.51.100.7, 10.1.1.1, 10.2.2.2"),
			    "198.51.100.7");
	/* several header lines joined by the caller */
	assert_string_equal(xff(t, "127.0.0.1", "6.6.6.6,198.51.100.7,10.0.0.3"),
			    "198.51.100.7");
	/* all trusted: the leftmost */
	assert_string_equal(xff(t, "127.0.0.1", "10.0.0.9, 10.0.0.8"), "10.0.0.9");
	/* absent or empty: the proxy itself */
	assert_string_equal(xff(t, "127.0.0.1", NULL), "127.0.0.1");
	assert_string_equal(xff(t, "127.0.0.1", ""), "127.0.0.1");
}

static void test_ports_and_brackets(void **state)
{
	const char *t = "127.0.0.1 ::1";

	(void)state;
	assert_string_equal(xff(t, "127.0.0.1", "198.51.100.7:4711"), "198.51.100.7");
	assert_string_equal(xff(t, "127.0.0.1", "[2001:db8::17]:4711"), "2001:db8::17");
	assert_string_equal(xff(t, "127.0.0.1", "[2001:db8::17]"), "2001:db8::17");
	assert_string_equal(xff(t, "127.0.0.1", " 2001:db8::17 "), "2001:db8::17");
	assert_string_equal(xff(t, "::1", "::ffff:198.51.100.7"), "198.51.100.7");
	assert_string_equal(fwd(t, "127.0.0.1", "for=\"[2001:db8:cafe::17]:4711\""),
			    "2001:db8:cafe::17");
	assert_string_equal(fwd(t, "127.0.0.1", "for=\"198.51.100.7:80\";proto=https"),
			    "198.51.100.7");
	assert_string_equal(fwd(t, "127.0.0.1",
				"for=192.0.2.43, For=198.51.100.17;by=203.0.113.60;proto=http"),
			    "198.51.100.17");
	assert_string_equal(fwd(t, "::1", "proto=https; for=198.51.100.7 ;host=x"),
			    "198.51.100.7");
}

/* A hop that does not parse ends the walk at the address before it. */
static void test_garbage(void **state)
{
	const char *t = "127.0.0.1 10.0.0.0/8";
	static const char *junk[] = {
		"unknown", "_hidden", "[2001:db8::1", "[2001:db8::1]x", "[2001:db8::1]:",
		"[2001:db8::1]:123456", "[192.0.2.1]", "1.2.3.4:80:90", "1.2.3.4:port",
		"\"1.2.3.4\"", "%00", "1.2.3.4\t5", "1.2.3.4;for=5.6.7.8", "\xff\xfe",
		"999.1.1.1", "",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		char h[128];

		snprintf(h, sizeof(h), "198.51.100.7, %s", junk[i]);
		assert_string_equal(xff(t, "127.0.0.1", h), "127.0.0.1");
		snprintf(h, sizeof(h), "198.51.100.7, %s, 10.0.0.2", junk[i]);
		assert_string_equal(xff(t, "127.0.0.1", h), "10.0.0.2");
		snprintf(h, sizeof(h), "%s, 198.51.100.7", junk[i]);
		assert_string_equal(xff(t, "127.0.0.1", h), "198.51.100.7");
	}
	static const char *fjunk[] = {
		"for=unknown", "for=_gazonk", "for=\"[2001:db8::1]", "for=\"1.2.3.4", "by=1.2.3.4",
		"for=1.2.3.4;for=5.6.7.8", "for=\"1.2.\\3.4\"", "for=[2001:db8::1]x", "for",
		"for=", "=1.2.3.4", "fore=1.2.3.4",
	};
	for (size_t i = 0; i < sizeof(fjunk) / sizeof(fjunk[0]); i++) {
		char h[128];

		snprintf(h, sizeof(h), "for=198.51.100.7, %s", fjunk[i]);
		assert_string_equal(fwd(t, "127.0.0.1", h), "127.0.0.1");
	}
	/* a comma inside a quoted value does not split the element */
	assert_string_equal(fwd(t, "127.0.0.1", "for=198.51.100.7, for=\"5.5.5.5,10.0.0.1\""),
			    "127.0.0.1");
	/* an unbalanced quote swallows the rest: one bad hop */
	assert_string_equal(fwd(t, "127.0.0.1", "for=\"6.6.6.6, for=10.0.0.1"), "127.0.0.1");
}

/* Thousands of hops: only the rightmost CT_PROXY_MAX_HOPS are looked at,
 * in time linear in the header. */
static void test_many_hops(void **state)
{
	size_t n = 5000, cap = n * 16 + 64;
	char *h = malloc(cap);
	size_t len = 0;

	(void)state;
	assert_non_null(h);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(h + len, cap - len, "6.6.%zu.%zu, ", (i / 256) % 256,
					i % 256);
	snprintf(h + len, cap - len, "198.51.100.7");
	assert_string_equal(xff("127.0.0.1", "127.0.0.1", h), "198.51.100.7");
	/* all trusted and too many: the leftmost examined, a trusted one */
	len = 0;
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(h + len, cap - len, "%s10.0.%zu.%zu", i ? "," : "",
					(i / 256) % 256, i % 256);
	const char *got = xff("127.0.0.1 10.0.0.0/8", "127.0.0.1", h);
	char want[32];
	size_t k = n - CT_PROXY_MAX_HOPS;
	snprintf(want, sizeof(want), "10.0.%zu.%zu", (k / 256) % 256, k % 256);
	assert_string_equal(got, want);
	free(h);
}

CT_TEST_MAIN(test_addresses, test_trusted_list, test_untrusted_peer, test_rightmost_untrusted,
	     test_ports_and_brackets, test_garbage, test_many_hops)
