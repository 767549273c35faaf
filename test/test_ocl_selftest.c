/*
 * test_ocl_selftest.c - the conformance self-test's expected digest is
 * what the C reference produces today (if the reference's arithmetic
 * changes on purpose, CT_OCL_SELFTEST_SHA256 must be regenerated with
 * `ctune devices --digest`), a different work unit gives a different
 * digest, and the first OpenCL device (when there is one) conforms.
 */
#include "ct_test.h"

#include "ct_err.h"
#include "ct_ocl.h"
#include "ct_ocl_selftest.h"

static void test_reference_digest(void **state)
{
	unsigned char d[CT_SHA256_LEN];
	char hex[CT_SHA256_HEXLEN + 1];

	(void)state;
	assert_int_equal(ct_ocl_selftest_digest("cpu", d), 0);
	ct_hex_encode(d, sizeof(d), hex);
	assert_string_equal(hex, CT_OCL_SELFTEST_SHA256);
}

static void test_bad_device(void **state)
{
	int ok = 1;

	(void)state;
	assert_int_equal(ct_ocl_selftest("opencl:63", &ok), CT_ENOTFOUND);
	assert_int_equal(ok, 0);
	assert_int_equal(ct_ocl_selftest("tpu", &ok), CT_EINVAL);
	assert_int_equal(ok, 0);
}

static void test_device_conforms(void **state)
{
	struct ct_ocl_devinfo *devs = NULL;
	const char *dev = getenv("CT_TEST_DEVICE");
	int n = 0, ok = 0, rc;

	(void)state;
	ct_ocl_enumerate(&devs, &n);
	free(devs);
	if (n == 0)
		skip();
	rc = ct_ocl_selftest(dev ? dev : "opencl", &ok);
	if (rc < 0)
		fail_msg("self-test: %s", ct_errmsg(rc));
	assert_int_equal(ok, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_digest),
		cmocka_unit_test(test_bad_device),
		cmocka_unit_test(test_device_conforms),
	};

	if (getenv("CTUNE_KERNEL_CACHE") == NULL)
		setenv("CTUNE_KERNEL_CACHE", "", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
