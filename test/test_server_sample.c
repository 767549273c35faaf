/*
 * test_server_sample.c - the UTF-8 cleaning of stored samples
 * (ct_sample_utf8_clean, server/daemons/sample.h): valid text passes unchanged,
 * every invalid byte (stray continuation, truncated sequence, overlong
 * form, surrogate, past U+10FFFF) and control character but \n and \t
 * becomes one U+FFFD, and the output is always valid UTF-8.
 */
#include "ct_test.h"
#include "daemons/sample.h"

#define FFFD "\xEF\xBF\xBD"

static void check(const char *in, size_t n, const char *want)
{
	struct ct_buf out = CT_BUF_INIT(0);

	assert_int_equal(ct_sample_utf8_clean(in, n, &out), 0);
	assert_int_equal(out.len, strlen(want));
	assert_memory_equal(out.len ? (const char *)out.data : "", want, strlen(want));
	ct_buf_free(&out);
}

static void test_valid_passes(void **state)
{
	(void)state;
	check("", 0, "");
	check("plain text\n\twith tabs", 21, "plain text\n\twith tabs");
	check("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", 14, "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
}

static void test_invalid_replaced(void **state)
{
	(void)state;
	check("a\x80" "b", 3, "a" FFFD "b");		/* stray continuation */
	check("a\xC3", 2, "a" FFFD);			/* truncated at the end */
	check("\xE2\x82" "x", 3, FFFD FFFD "x");	/* truncated in the middle */
	check("\xC0\xAF", 2, FFFD FFFD);		/* overlong '/' */
	check("\xED\xA0\x80", 3, FFFD FFFD FFFD);	/* surrogate U+D800 */
	check("\xF4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD);	/* U+110000 */
	check("\xFF", 1, FFFD);
	check("a\0b\x1b[0m\x7f", 8, "a" FFFD "b" FFFD "[0m" FFFD);
}

/* Every byte string of length 3 over a mix of interesting bytes comes out
 * as valid UTF-8 (checked by a second pass: cleaning it again changes
 * nothing). */
static void test_output_always_valid(void **state)
{
	static const unsigned char b[] = { 'a', '\n', 0, 0x1f, 0x7f, 0x80, 0xbf, 0xc2,
					   0xc0, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff };
	const size_t nb = sizeof(b);

	(void)state;
	for (size_t i = 0; i < nb * nb * nb; i++) {
		char in[3] = { (char)b[i % nb], (char)b[i / nb % nb], (char)b[i / nb / nb] };
		struct ct_buf once = CT_BUF_INIT(0), twice = CT_BUF_INIT(0);

		assert_int_equal(ct_sample_utf8_clean(in, 3, &once), 0);
		assert_int_equal(ct_sample_utf8_clean((const char *)once.data, once.len,
						      &twice), 0);
		assert_int_equal(once.len, twice.len);
		assert_memory_equal(once.data, twice.data, once.len);
		ct_buf_free(&once);
		ct_buf_free(&twice);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_passes),
		cmocka_unit_test(test_invalid_replaced),
		cmocka_unit_test(test_output_always_valid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
