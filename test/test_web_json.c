/* Unit tests for server/web/web_json: string escaping (quotes, control bytes,
 * HTML-significant characters, invalid UTF-8), nesting and commas, numbers,
 * sticky errors. Outputs are compared byte for byte: the format is fully
 * specified, so any change is one a client of the API would see. */
#include <math.h>

#include "ct_test.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "web/web_json.h"

/* ct_json_escape of the n bytes s gives want, byte for byte. */
static void expect_escape(const char *s, size_t n, const char *want)
{
	struct ct_buf b = CT_BUF_INIT(0);

	assert_int_equal(ct_json_escape(&b, s, n), 0);
	assert_string_equal(ct_buf_cstr(&b), want);
	ct_buf_free(&b);
}

static void test_escape_specials(void **state)
{
	const char s[] = "a\"b\\c\n\t\r\x01</script>&";

	(void)state;
	expect_escape(s, sizeof(s) - 1,
		      "\"a\\\"b\\\\c\\n\\t\\r\\u0001\\u003c/script\\u003e\\u0026\"");
}

static void test_escape_utf8(void **state)
{
	/* valid 2/3/4-byte sequences pass; a lone continuation byte, a
	 * truncated sequence, an overlong '/' and a surrogate are replaced. */
	const char s[] = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\x80|\xe2\x82|\xc0\xaf|\xed\xa0\x80";

	(void)state;
	expect_escape(s, sizeof(s) - 1,
		      "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\\ufffd|\\ufffd\\ufffd|"
		      "\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\"");
}

static void test_embedded_nul(void **state)
{
	(void)state;
	expect_escape("a\0b", 3, "\"a\\u0000b\"");
}

static void test_nesting_and_commas(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);
	struct ct_json j;

	(void)state;
	ct_json_init(&j, &b);
	ct_json_obj_begin(&j);
	ct_json_kstr(&j, "name", "<script>alert(1)</script>");
	ct_json_kint(&j, "id", -3);
	ct_json_key(&j, "list");
	ct_json_arr_begin(&j);
	ct_json_num(&j, 12.5);
	ct_json_num(&j, 0.1);
	ct_json_num(&j, NAN);
	ct_json_bool(&j, 1);
	ct_json_null(&j);
	ct_json_obj_begin(&j);
	ct_json_obj_end(&j);
	ct_json_arr_begin(&j);
	ct_json_arr_end(&j);
	ct_json_arr_end(&j);
	ct_json_kstr(&j, "none", NULL);
	ct_json_obj_end(&j);
	assert_int_equal(ct_json_finish(&j), 0);
	assert_string_equal(ct_buf_cstr(&b),
		"{\"name\":\"\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\","
		"\"id\":-3,\"list\":[12.5,0.1,null,true,null,{},[]],"
		"\"none\":null}");
	ct_buf_free(&b);
}

static void test_numbers_round_trip(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);
	struct ct_json j;
	const double v[] = { 1.0 / 3, 123456789.123, 1e-300, -2.5e17 };

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		ct_buf_reset(&b);
		ct_json_init(&j, &b);
		ct_json_num(&j, v[i]);
		assert_int_equal(ct_json_finish(&j), 0);
		assert_true(strtod(ct_buf_cstr(&b), NULL) == v[i]);
	}
	ct_buf_free(&b);
}

static void test_unbalanced_is_error(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);
	struct ct_json j;

	(void)state;
	ct_json_init(&j, &b);
	ct_json_obj_begin(&j);
	ct_json_key(&j, "x");
	assert_int_equal(ct_json_finish(&j), CT_ESTATE);
	ct_buf_reset(&b);
	ct_json_init(&j, &b);
	ct_json_arr_end(&j);
	assert_int_equal(ct_json_finish(&j), CT_ESTATE);
	ct_buf_free(&b);
}

static void test_cap_error_is_sticky(void **state)
{
	struct ct_buf b = CT_BUF_INIT(20);
	struct ct_json j;

	(void)state;
	ct_json_init(&j, &b);
	ct_json_arr_begin(&j);
	for (int i = 0; i < 100; i++)
		ct_json_kstr(&j, "k", "long enough value");
	ct_json_arr_end(&j);
	assert_int_equal(ct_json_finish(&j), CT_ETOOBIG);
	assert_true(b.len <= 20);
	ct_buf_free(&b);
}

CT_TEST_MAIN(test_escape_specials, test_escape_utf8, test_embedded_nul,
	test_nesting_and_commas, test_numbers_round_trip, test_unbalanced_is_error,
	test_cap_error_is_sticky)
