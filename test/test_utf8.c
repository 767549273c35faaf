/*
 * Unit tests for lib/ct_utf8: the RFC 3629 table of valid and invalid
 * sequences (overlong, surrogate, above U+10FFFF, truncated, stray
 * continuation bytes), and fitting a peer's string to a column: cut on a
 * character boundary, invalid bytes scrubbed, result always valid.
 */
#include "ct_test.h"
#include "ct_utf8.h"

static void test_char_len(void **state)
{
	(void)state;
	assert_int_equal(ct_utf8_char_len("A", 1), 1);
	assert_int_equal(ct_utf8_char_len("\xc3\xa9", 2), 2);		/* é */
	assert_int_equal(ct_utf8_char_len("\xe2\x82\xac", 3), 3);	/* € */
	assert_int_equal(ct_utf8_char_len("\xf0\x9f\x98\x80", 4), 4);	/* 😀 */
	assert_int_equal(ct_utf8_char_len("\xf4\x8f\xbf\xbf", 4), 4);	/* U+10FFFF */
	assert_int_equal(ct_utf8_char_len("\xef\xbf\xbd", 3), 3);	/* U+FFFD */
	/* invalid */
	assert_int_equal(ct_utf8_char_len("\xc3\xa9", 1), 0);		/* cut short */
	assert_int_equal(ct_utf8_char_len("\xa9", 1), 0);		/* stray continuation */
	assert_int_equal(ct_utf8_char_len("\xc0\xaf", 2), 0);		/* overlong '/' */
	assert_int_equal(ct_utf8_char_len("\xc1\xbf", 2), 0);
	assert_int_equal(ct_utf8_char_len("\xe0\x80\xaf", 3), 0);	/* overlong */
	assert_int_equal(ct_utf8_char_len("\xf0\x80\x80\xaf", 4), 0);	/* overlong */
	assert_int_equal(ct_utf8_char_len("\xed\xa0\x80", 3), 0);	/* U+D800 */
	assert_int_equal(ct_utf8_char_len("\xed\xbf\xbf", 3), 0);	/* U+DFFF */
	assert_int_equal(ct_utf8_char_len("\xf4\x90\x80\x80", 4), 0);	/* U+110000 */
	assert_int_equal(ct_utf8_char_len("\xf5\x80\x80\x80", 4), 0);
	assert_int_equal(ct_utf8_char_len("\xff", 1), 0);
	assert_int_equal(ct_utf8_char_len("\xe2\x28\xa1", 3), 0);	/* bad 2nd byte */
	assert_int_equal(ct_utf8_char_len("\xe2\x82\x28", 3), 0);	/* bad 3rd byte */
	assert_int_equal(ct_utf8_char_len("", 1), 0);
}

static void test_valid(void **state)
{
	(void)state;
	assert_true(ct_utf8_valid(""));
	assert_true(ct_utf8_valid("plain ASCII"));
	assert_true(ct_utf8_valid("Gr\xc3\xbc\xc3\x9f" "e \xe2\x82\xac \xf0\x9f\x98\x80"));
	assert_false(ct_utf8_valid("abc\xc3"));
	assert_false(ct_utf8_valid("a\x80" "b"));
	assert_false(ct_utf8_valid("\xed\xa0\x80"));
}

static void test_fit_cuts_on_boundary(void **state)
{
	/* string, cap: what ct_utf8_fit returns and leaves */
	static const struct {
		const char *in;
		size_t cap, len;
		const char *out;
	} fits[] = {
		/* a 4-byte character straddling the cap is dropped whole */
		{ "ab\xf0\x9f\x98\x80", 5, 2, "ab" },
		{ "ab\xf0\x9f\x98\x80", 6, 6, "ab\xf0\x9f\x98\x80" },
		/* shorter than the cap: unchanged */
		{ "\xe2\x82\xac", 255, 3, "\xe2\x82\xac" },
		{ "xyz", 0, 0, "" },
	};
	char s[300];
	(void)state;

	/* the host: 254 ASCII bytes + one 2-byte character, cap 255 */
	memset(s, 'a', 254);
	memcpy(s + 254, "\xc3\xa9", 3);
	assert_int_equal(ct_utf8_fit(s, 255), 254);
	assert_int_equal(strlen(s), 254);
	assert_true(ct_utf8_valid(s));
	for (size_t i = 0; i < sizeof(fits) / sizeof(fits[0]); i++) {
		strcpy(s, fits[i].in);
		assert_int_equal(ct_utf8_fit(s, fits[i].cap), fits[i].len);
		assert_string_equal(s, fits[i].out);
	}
}

static void test_fit_scrubs(void **state)
{
	char s[64];
	(void)state;

	strcpy(s, "a\xff" "b\xc3(\xed\xa0\x80" "c");
	assert_int_equal(ct_utf8_fit(s, 63), 9);
	assert_string_equal(s, "a?b?(???c");
	assert_true(ct_utf8_valid(s));
	/* a truncated character at the very end */
	strcpy(s, "ok\xe2\x82");
	ct_utf8_fit(s, 63);
	assert_string_equal(s, "ok??");
}

CT_TEST_MAIN(test_char_len, test_valid, test_fit_cuts_on_boundary, test_fit_scrubs)
