/*
 * Unit tests for server/web/web_mail: which recipients it accepts (a
 * header or an SMTP command can never be smuggled in through one), and
 * the [mail] keys it checks (scheme, a sender with an address, tls).
 * Sending itself is test/test_web_mail.sh's, against a real SMTP sink.
 */
#include "ct_test.h"
#include "ct_conf.h"
#include "ct_err.h"
#include "web/web_mail.h"

static void test_addresses(void **state)
{
	(void)state;
	assert_true(ct_mail_addr_ok("bob@example.org"));
	assert_true(ct_mail_addr_ok("a.b+tag@sub.example.org"));
	assert_false(ct_mail_addr_ok("bob"));
	assert_false(ct_mail_addr_ok("@example.org"));
	assert_false(ct_mail_addr_ok("bob@"));
	assert_false(ct_mail_addr_ok("bob@a@b"));
	assert_false(ct_mail_addr_ok("bob@example.org\r\nBcc: x@y"));
	assert_false(ct_mail_addr_ok("bob@example.org>\r\nRCPT TO:<x@y"));
	assert_false(ct_mail_addr_ok("bob smith@example.org"));
	assert_false(ct_mail_addr_ok("\"bob\"@example.org"));
}

static int load(const char *text, struct ct_mail_conf *mc)
{
	struct ct_conf *c = NULL;
	int rc = ct_conf_parse(text, strlen(text), "test.conf", &c);

	assert_int_equal(rc, 0);
	rc = ct_mail_conf_load(c, mc);
	ct_conf_free(c);
	return rc;
}

static void test_config(void **state)
{
	struct ct_mail_conf mc;

	(void)state;
	/* off without smtp_url */
	assert_int_equal(load("[mail]\nfrom = a@b.org\n", &mc), 0);
	assert_string_equal(mc.url, "");
	/* a sender's address from "Name <addr>", defaults */
	assert_int_equal(load("[mail]\nsmtp_url = smtp://127.0.0.1:25\n"
			      "from = \"My project <noreply@example.org>\"\n", &mc), 0);
	assert_string_equal(mc.from_addr, "noreply@example.org");
	assert_int_equal(mc.tls, CT_MAIL_TLS_TRY);
	assert_int_equal(mc.timeout_s, 30);
	assert_int_equal(load("[mail]\nsmtp_url = smtps://mail.example.org\nfrom = x@example.org\n"
			      "tls = required\ntimeout = 5\n", &mc), 0);
	assert_int_equal(mc.tls, CT_MAIL_TLS_REQUIRED);
	assert_string_equal(mc.from_addr, "x@example.org");
	/* refused: another scheme, no sender, a sender without an address,
	 * an unknown tls, a timeout out of range */
	assert_int_equal(load("[mail]\nsmtp_url = http://x\nfrom = a@b.org\n", &mc), CT_ECONFIG);
	assert_int_equal(load("[mail]\nsmtp_url = smtp://x\n", &mc), CT_ECONFIG);
	assert_int_equal(load("[mail]\nsmtp_url = smtp://x\nfrom = \"Me <nobody>\"\n", &mc),
			 CT_ECONFIG);
	assert_int_equal(load("[mail]\nsmtp_url = smtp://x\nfrom = \"Me <a@b.org> x\"\n", &mc),
			 CT_ECONFIG);
	assert_int_equal(load("[mail]\nsmtp_url = smtp://x\nfrom = a@b.org\ntls = maybe\n", &mc),
			 CT_ECONFIG);
	assert_int_equal(load("[mail]\nsmtp_url = smtp://x\nfrom = a@b.org\ntimeout = 0\n", &mc),
			 CT_ECONFIG);
}

/* A message for a bad recipient or with a two-line subject is refused
 * before any connection (the URL points nowhere that answers). */
static void test_refused_before_sending(void **state)
{
	struct ct_mail_conf mc;

	(void)state;
	assert_int_equal(load("[mail]\nsmtp_url = smtp://127.0.0.1:1\nfrom = a@b.org\n"
			      "timeout = 1\n", &mc), 0);
	assert_int_equal(ct_mail_send(&mc, "x@y.org\r\nBcc: z@w.org", "s", "b\n"), CT_EINVAL);
	assert_int_equal(ct_mail_send(&mc, "x@y.org", "s\r\nBcc: z@w.org", "b\n"), CT_EINVAL);
	assert_int_equal(ct_mail_send(&mc, "x@y.org", "s", "b\n"), CT_EIO);
}

CT_TEST_MAIN(test_addresses, test_config, test_refused_before_sending)
