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

/* Every probe check on the device; the failures listed if any. */
static void expect_probes(unsigned flags, int want_ok)
{
	struct ct_conform_report rep;
	struct ct_ocl_devinfo *devs = NULL;
	const char *dev = getenv("CT_TEST_DEVICE");
	int n = 0, rc;

	ct_ocl_enumerate(&devs, &n);
	free(devs);
	if (n == 0)
		skip();
	rc = ct_ocl_conform_probes(dev ? dev : "opencl", flags, &rep);
	if (rc < 0)
		fail_msg("probes: %s", ct_errmsg(rc));
	assert_int_equal(rep.n, 5);
	for (int i = 0; i < rep.n; i++) {
		print_message("%s: %s %s\n", rep.check[i].name, rep.check[i].ok ? "ok" : "FAILED",
			      rep.check[i].detail);
		assert_int_equal(rep.check[i].ok, want_ok);
		assert_true(want_ok ? rep.check[i].detail[0] == '\0' : rep.check[i].detail[0] != '\0');
	}
}

static void test_probes_pass(void **state)
{
	(void)state;
	expect_probes(0, 1);
}

/* A reference spoilt by one bit anywhere must fail every check. */
static void test_probes_catch_wrong_reference(void **state)
{
	(void)state;
	expect_probes(CT_CONFORM_CORRUPT_REF, 0);
}

/* no crowdtune kernel cache in tests unless the caller sets one */
static int before(void)
{
	if (getenv("CTUNE_KERNEL_CACHE") == NULL)
		setenv("CTUNE_KERNEL_CACHE", "", 1);
	return 0;
}

static const struct ct_test_plan plan = {
	.before = before,
};

CT_TEST_MAIN_WITH(&plan, test_reference_digest, test_bad_device, test_device_conforms,
	test_probes_pass, test_probes_catch_wrong_reference)
