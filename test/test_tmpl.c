/* Unit tests for server/web/tmpl: HTML escaping in text and attributes, the
 * escaping printf, URL encoding, templates, credit and date formatting. */
#include "ct_test.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "web/tmpl.h"

static void test_script_name_stays_text(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);

	(void)state;
	assert_int_equal(ct_tmpl_escape(&b, "<script>alert(1)</script>"), 0);
	assert_string_equal(ct_buf_cstr(&b),
			    "&lt;script&gt;alert(1)&lt;/script&gt;");
	assert_null(strchr(ct_buf_cstr(&b), '<'));
	ct_buf_free(&b);
}

static void test_attribute_breakout_escaped(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);

	(void)state;
	/* A name that tries to leave a quoted attribute (either quote). */
	assert_int_equal(ct_tmpl_printf(&b, "<a title=\"%s\" data-x='%s'>",
		"\" onmouseover=\"x()", "' onclick='y()"), 0);
	assert_string_equal(ct_buf_cstr(&b),
		"<a title=\"&quot; onmouseover=&quot;x()\" "
		"data-x='&#39; onclick=&#39;y()'>");
	ct_buf_reset(&b);
	assert_int_equal(ct_tmpl_escape(&b, "Tom & Jerry's"), 0);
	assert_string_equal(ct_buf_cstr(&b), "Tom &amp; Jerry&#39;s");
	/* Already-escaped text is escaped again: no double-decoding tricks. */
	ct_buf_reset(&b);
	assert_int_equal(ct_tmpl_escape(&b, "&lt;"), 0);
	assert_string_equal(ct_buf_cstr(&b), "&amp;lt;");
	ct_buf_free(&b);
}

static void test_escapen_drops_nul(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);

	(void)state;
	assert_int_equal(ct_tmpl_escapen(&b, "a\0<b", 4), 0);
	assert_int_equal(b.len, 6);
	assert_memory_equal(b.data, "a&lt;b", 6);
	ct_buf_free(&b);
}

static void test_printf_numbers_and_strings(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);
	const char *volatile none = NULL;	/* hidden from -Wformat */

	(void)state;
	assert_int_equal(ct_tmpl_printf(&b,
		"%d|%5lld|%-3u|%zu|%.2f|%x|%c|%s|%%|%*d|%.*f|%s",
		-7, 42LL, 3u, (size_t)9, 3.14159, 255u, 'z', "<b>", 4, 1,
		1, 2.25, none), 0);
	assert_string_equal(ct_buf_cstr(&b),
		"-7|   42|3  |9|3.14|ff|z|&lt;b&gt;|%|   1|2.2|");
	ct_buf_free(&b);
}

static void test_printf_rejects_bad_format(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);
	const char *fmt = "x %n y";	/* kept out of the compiler's sight */
	int dummy = 0;

	(void)state;
	assert_int_equal(ct_tmpl_printf(&b, fmt, &dummy), CT_EINVAL);
	assert_int_equal(dummy, 0);
	ct_buf_free(&b);
}

static void test_printf_respects_cap(void **state)
{
	struct ct_buf b = CT_BUF_INIT(16);

	(void)state;
	/* 5 characters become 25 bytes of entities: over the cap. */
	assert_int_equal(ct_tmpl_printf(&b, "%s", "<<<<<"), CT_ETOOBIG);
	assert_true(b.len <= 16);
	ct_buf_free(&b);
}

static void test_urlencode(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);

	(void)state;
	assert_int_equal(ct_tmpl_urlencode(&b, "a b&c=d/é~"), 0);
	assert_string_equal(ct_buf_cstr(&b), "a%20b%26c%3Dd%2F%C3%A9~");
	ct_buf_free(&b);
}

static void test_render(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);
	const struct ct_tmpl_var vars[] = {
		{ "title", "Top <users>" },
		{ "body", "<p>ok</p>" },
		{ "empty", NULL },
	};

	(void)state;
	assert_int_equal(ct_tmpl_render(&b,
		"<title>{{title}}</title>{{ &body }}[{{empty}}][{{nosuch}}]{{open",
		vars, 3), 0);
	assert_string_equal(ct_buf_cstr(&b),
		"<title>Top &lt;users&gt;</title><p>ok</p>[][]{{open");
	ct_buf_free(&b);
}

static void test_credit_and_date(void **state)
{
	char s[32];

	(void)state;
	assert_string_equal(ct_tmpl_credit(s, sizeof(s), 12.345), "12.35");
	assert_string_equal(ct_tmpl_credit(s, sizeof(s), 0), "0.00");
	assert_string_equal(ct_tmpl_credit(s, sizeof(s), 1234567.4), "1,234,567");
	assert_string_equal(ct_tmpl_credit(s, sizeof(s), 999.6), "1,000");
	assert_string_equal(ct_tmpl_credit(s, sizeof(s), 100), "100");
	assert_string_equal(ct_tmpl_credit(s, sizeof(s), 6.0088e-07), "6e-07");
	assert_string_equal(ct_tmpl_date(s, sizeof(s), 1795305600), "2026-11-22");
	assert_string_equal(ct_tmpl_date(s, sizeof(s), 0), "-");
}

CT_TEST_MAIN(test_script_name_stays_text, test_attribute_breakout_escaped,
	test_escapen_drops_nul, test_printf_numbers_and_strings,
	test_printf_rejects_bad_format, test_printf_respects_cap, test_urlencode,
	test_render, test_credit_and_date)
