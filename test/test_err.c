/* Unit tests for lib/ct_err: the code table, messages and thread-local detail. */
#include "ct_test.h"
#include "ct_err.h"

#include <errno.h>

static void test_codes_have_messages(void **state)
{
	(void)state;
	assert_string_equal(ct_strerror(CT_ENOMEM), "out of memory");
	assert_string_equal(ct_strerror(CT_OK), "success");
	assert_string_equal(ct_errname(CT_EHASH), "HASH");
	assert_string_equal(ct_errname(-9999), "UNKNOWN");
	assert_non_null(strstr(ct_strerror(-9999), "-9999"));
}

static void test_codes_are_distinct(void **state)
{
	static const int codes[] = {
#define X_(name, val, msg) val,
		CT_ERRNO_MAP(X_)
#undef X_
	};
	size_t n = sizeof(codes) / sizeof(codes[0]);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		assert_true(codes[i] < 0);
		for (size_t j = i + 1; j < n; j++)
			assert_int_not_equal(codes[i], codes[j]);
	}
}

static void test_detail(void **state)
{
	int rc;

	(void)state;
	rc = ct_error(CT_EFORMAT, "%s: bad magic %d", "m.bin", 7);
	assert_int_equal(rc, CT_EFORMAT);
	assert_string_equal(ct_errmsg(CT_EFORMAT), "m.bin: bad magic 7");
	/* A different code falls back to the generic message. */
	assert_string_equal(ct_errmsg(CT_EIO), "input/output error");
	ct_error_clear();
	assert_string_equal(ct_errmsg(CT_EFORMAT), "malformed data");
}

static void test_errno_mapping(void **state)
{
	int rc;

	(void)state;
	assert_int_equal(ct_from_errno(ENOENT), CT_ENOENT);
	assert_int_equal(ct_from_errno(ENOSPC), CT_ENOSPC);
	assert_int_equal(ct_from_errno(EACCES), CT_EPERM);
	errno = ENOENT;
	rc = ct_error_errno("open %s", "x");
	assert_int_equal(rc, CT_ENOENT);
	assert_non_null(strstr(ct_errmsg(rc), "open x: "));
}

CT_TEST_MAIN(test_codes_have_messages, test_codes_are_distinct, test_detail,
	test_errno_mapping)
