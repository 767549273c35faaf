/* Unit tests for lib/ct_buf: growth, the hard cap, formatting, steal. */
#include "ct_test.h"
#include "ct_buf.h"
#include "ct_err.h"

static void test_append_and_grow(void **state)
{
	struct ct_buf b;
	char chunk[1000];

	(void)state;
	ct_buf_init(&b, 0);
	assert_string_equal(ct_buf_cstr(&b), "");
	memset(chunk, 'a', sizeof(chunk));
	for (int i = 0; i < 100; i++)
		assert_int_equal(ct_buf_append(&b, chunk, sizeof(chunk)), 0);
	assert_int_equal(b.len, 100000);
	assert_int_equal(b.data[99999], 'a');
	assert_int_equal(b.data[100000], '\0');
	ct_buf_free(&b);
}

static void test_cap_is_hard(void **state)
{
	struct ct_buf b = CT_BUF_INIT(10);

	(void)state;
	assert_int_equal(ct_buf_appends(&b, "0123456789"), 0);
	assert_int_equal(ct_buf_appends(&b, "x"), CT_ETOOBIG);
	/* A failed append leaves the contents as they were. */
	assert_int_equal(b.len, 10);
	assert_string_equal(ct_buf_cstr(&b), "0123456789");
	ct_buf_reset(&b);
	assert_int_equal(ct_buf_appendf(&b, "%s-%d", "abcdefgh", 12), CT_ETOOBIG);
	assert_int_equal(b.len, 0);
	assert_int_equal(ct_buf_appendf(&b, "%d<%s>", 42, "ok"), 0);
	assert_string_equal(ct_buf_cstr(&b), "42<ok>");
	ct_buf_free(&b);
}

static void test_steal(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);
	unsigned char *p;
	size_t n;

	(void)state;
	assert_int_equal(ct_buf_appends(&b, "hello"), 0);
	p = ct_buf_steal(&b, &n);
	assert_int_equal(n, 5);
	assert_memory_equal(p, "hello", 5);
	assert_int_equal(b.len, 0);
	assert_null(b.data);
	free(p);
}

CT_TEST_MAIN(test_append_and_grow, test_cap_is_hard, test_steal)
