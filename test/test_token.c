/*
 * test_token.c - upload tokens (server/rpc/token.h): a token works for its own
 * result until it expires, and nothing else: not for another result, not
 * with any field changed, not under another project's secret, not when
 * malformed.
 */
#include "ct_test.h"

#include <inttypes.h>

#include "ct_err.h"
#include "rpc/token.h"

static const unsigned char key[32] = "0123456789abcdef0123456789abcde";
static const unsigned char key2[32] = "another project's secret 123456";

static void test_round_trip(void **state)
{
	char t[CT_TOKEN_MAX];
	int64_t host = 0, max = 0;

	assert_int_equal(ct_token_make(key, 32, "j1-r1-s0-0", 42, 1000, 5000, t, sizeof(t)), 0);
	assert_int_equal(ct_token_check(key, 32, "j1-r1-s0-0", t, 4999, &host, &max), 0);
	assert_int_equal(host, 42);
	assert_int_equal(max, 1000);
	assert_int_equal(ct_token_check(key, 32, "j1-r1-s0-0", t, 5000, &host, &max), 0);
	assert_int_equal(ct_token_check(key, 32, "j1-r1-s0-0", t, 5001, &host, &max), CT_EEXPIRED);
}

static void test_refusals(void **state)
{
	char t[CT_TOKEN_MAX], forged[CT_TOKEN_MAX + 64];
	int64_t host = 0, max = 0;
	const char *mac;

	assert_int_equal(ct_token_make(key, 32, "j1-r1-s0-0", 42, 1000, 5000, t, sizeof(t)), 0);
	/* another result */
	assert_int_equal(ct_token_check(key, 32, "j1-r1-s0-1", t, 1, &host, &max), CT_EAUTH);
	/* another project */
	assert_int_equal(ct_token_check(key2, 32, "j1-r1-s0-0", t, 1, &host, &max), CT_EAUTH);
	/* changed fields with the old MAC */
	mac = strrchr(t, '.') + 1;
	snprintf(forged, sizeof(forged), "9999999999.42.1000.%s", mac);
	assert_int_equal(ct_token_check(key, 32, "j1-r1-s0-0", forged, 1, &host, &max), CT_EAUTH);
	snprintf(forged, sizeof(forged), "5000.43.1000.%s", mac);
	assert_int_equal(ct_token_check(key, 32, "j1-r1-s0-0", forged, 1, &host, &max), CT_EAUTH);
	snprintf(forged, sizeof(forged), "5000.42.99999999.%s", mac);
	assert_int_equal(ct_token_check(key, 32, "j1-r1-s0-0", forged, 1, &host, &max), CT_EAUTH);
	/* a flipped MAC digit */
	snprintf(forged, sizeof(forged), "%s", t);
	char *last = forged + strlen(forged) - 1;
	*last = *last == '0' ? '1' : '0';
	assert_int_equal(ct_token_check(key, 32, "j1-r1-s0-0", forged, 1, &host, &max), CT_EAUTH);
	/* malformed */
	const char *bad[] = { "", "abc", "1.2.3", "1.2.3.", "-1.2.3.00", "1..2.3",
			      "99999999999999999999.1.1.00", NULL };
	for (int i = 0; bad[i]; i++)
		assert_int_equal(ct_token_check(key, 32, "j1-r1-s0-0", bad[i], 1, &host, &max),
				 CT_EAUTH);
	assert_int_equal(ct_token_check(key, 32, "j1-r1-s0-0", NULL, 1, &host, &max), CT_EAUTH);
	/* names that could escape the upload directory never get a token */
	assert_int_equal(ct_token_make(key, 32, "../secret", 1, 1, 1, t, sizeof(t)), CT_EINVAL);
	assert_int_equal(ct_token_check(key, 32, "../x", t, 1, &host, &max), CT_EAUTH);
	/* out parameters untouched on failure */
	host = -5;
	assert_int_equal(ct_token_check(key, 32, "j1-r1-s0-1", t, 1, &host, &max), CT_EAUTH);
	assert_int_equal(host, -5);
}

/* The host secret and the upload MAC (doc/protocol.md), against values
 * computed with openssl dgst -mac HMAC; the MAC fails for another host,
 * result, body or a wrong or missing header. */
#define BODY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define GOOD_MAC "7da9898985800f6c03ac8005c57c45ebd589aae5954b8c987cf58ccfb63334ea"

static void test_upload_mac(void **state)
{
	char hs[65];

	ct_token_host_secret(key, 32, 42, hs);
	assert_string_equal(hs, "1008a170b083b1395fb03ff35664b30ad66b31c4592270b278f923494efe392d");
	assert_int_equal(ct_token_check_mac(key, 32, 42, "j1-r1-s0-0", BODY_SHA, GOOD_MAC), 0);
	assert_int_equal(ct_token_check_mac(key, 32, 43, "j1-r1-s0-0", BODY_SHA, GOOD_MAC),
			 CT_EAUTH);
	assert_int_equal(ct_token_check_mac(key2, 32, 42, "j1-r1-s0-0", BODY_SHA, GOOD_MAC),
			 CT_EAUTH);
	assert_int_equal(ct_token_check_mac(key, 32, 42, "j1-r1-s0-1", BODY_SHA, GOOD_MAC),
			 CT_EAUTH);
	assert_int_equal(ct_token_check_mac(key, 32, 42, "j1-r1-s0-0",
					    "f3b0c44298fc1c149afbf4c8996fb924"
					    "27ae41e4649b934ca495991b7852b855", GOOD_MAC), CT_EAUTH);
	assert_int_equal(ct_token_check_mac(key, 32, 42, "j1-r1-s0-0", BODY_SHA, NULL), CT_EAUTH);
	assert_int_equal(ct_token_check_mac(key, 32, 42, "j1-r1-s0-0", BODY_SHA, "7da9"),
			 CT_EAUTH);
}

CT_TEST_MAIN(test_round_trip, test_refusals, test_upload_mac)
