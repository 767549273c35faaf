/*
 * Unit tests for lib/ct_avg: the mean, trimmed mean and median of K weight
 * vectors, checked against values computed here by hand, across block
 * boundaries, and the argument checks.
 */
#include "ct_test.h"
#include "ct_avg.h"
#include "ct_err.h"

#include <math.h>

static void test_mean_matches_reference(void **state)
{
	/* n crosses blocks and is no multiple of 16; k spans several passes */
	size_t n = 9001, k = 19;
	float *in[19], *out = malloc((n + 1) * 4);
	const float *cin[19];

	(void)state;
	for (size_t j = 0; j < k; j++) {
		in[j] = malloc(n * 4);
		cin[j] = in[j];
		for (size_t i = 0; i < n; i++)
			in[j][i] = (float)((double)((i * 7919 + j * 104729) % 1000) / 997.0 - 0.5);
	}
	out[n] = 42.0f;
	assert_int_equal(ct_avg(out, cin, k, n, CT_AVG_MEAN, 0), 0);
	for (size_t i = 0; i < n; i++) {
		float s = in[0][i];

		/* float sums in input order, then one division: the contract */
		for (size_t j = 1; j < k; j++)
			s += in[j][i];
		assert_true(out[i] == s / (float)k);
	}
	assert_true(out[n] == 42.0f);
	/* the streaming form gives the same bits */
	float *acc = malloc(n * 4);
	memcpy(acc, in[0], n * 4);
	for (size_t j = 1; j < k; j++)
		ct_avg_accumulate(acc, in[j], n);
	ct_avg_finish(acc, k, n);
	assert_memory_equal(acc, out, n * 4);
	free(acc);
	for (size_t j = 0; j < k; j++)
		free(in[j]);
	free(out);
}

static void test_mean_exact_small(void **state)
{
	const float a[] = { 1.0f, -2.0f, 0.1f }, b[] = { 3.0f, 2.0f, 0.2f };
	const float *in[] = { a, b };
	float out[3];

	(void)state;
	assert_int_equal(ct_avg(out, in, 2, 3, CT_AVG_MEAN, 0), 0);
	assert_true(out[0] == 2.0f);
	assert_true(out[1] == 0.0f);
	assert_true(out[2] == (0.1f + 0.2f) / 2.0f);
	/* K = 1 is the identity, in place allowed. */
	float c[3] = { 5.0f, 6.0f, 7.0f };
	const float *one[] = { c };
	assert_int_equal(ct_avg(c, one, 1, 3, CT_AVG_MEAN, 0), 0);
	assert_true(c[0] == 5.0f && c[1] == 6.0f && c[2] == 7.0f);
}

static void test_robust_methods(void **state)
{
	/* Per coordinate: four honest values and one outlier. */
	const float v0[] = { 1.0f, 10.0f }, v1[] = { 2.0f, 11.0f }, v2[] = { 3.0f, 12.0f },
		    v3[] = { 4.0f, 13.0f }, v4[] = { 1000.0f, -1000.0f };
	const float *in[] = { v4, v0, v3, v1, v2 };	/* unsorted on purpose */
	float out[2];

	(void)state;
	assert_int_equal(ct_avg(out, in, 5, 2, CT_AVG_MEDIAN, 0), 0);
	assert_true(out[0] == 3.0f && out[1] == 11.0f);
	assert_int_equal(ct_avg(out, in, 5, 2, CT_AVG_TRIMMED, 1), 0);
	assert_true(out[0] == 3.0f);			/* (2 + 3 + 4) / 3 */
	assert_true(out[1] == 11.0f);			/* (10 + 11 + 12) / 3 */
	assert_int_equal(ct_avg(out, in, 4, 2, CT_AVG_MEDIAN, 0), 0);
	assert_true(out[0] == 3.0f);			/* {1, 2, 4, 1000}: (2 + 4) / 2 */
	assert_int_equal(ct_avg(out, in, 5, 2, CT_AVG_TRIMMED, 0), 0);
	assert_true(out[0] == (float)(1010.0 / 5.0));	/* trim 0 = the mean */
}

static void test_bad_arguments(void **state)
{
	const float a[] = { 1.0f };
	const float *in[] = { a, a };
	float out[1];
	enum ct_avg_method m;

	(void)state;
	assert_int_equal(ct_avg(out, in, 0, 1, CT_AVG_MEAN, 0), CT_EINVAL);
	assert_int_equal(ct_avg(out, in, 2, 1, CT_AVG_TRIMMED, 1), CT_EINVAL);
	assert_int_equal(ct_avg(out, in, 2, 1, (enum ct_avg_method)9, 0), CT_EINVAL);
	assert_int_equal(ct_avg(out, in, CT_AVG_MAX_INPUTS + 1, 1, CT_AVG_MEAN, 0), CT_EINVAL);
	assert_int_equal(ct_avg_parse_method("median", &m), 0);
	assert_int_equal(m, CT_AVG_MEDIAN);
	assert_int_equal(ct_avg_parse_method("avg", &m), CT_EINVAL);
}

CT_TEST_MAIN(test_mean_matches_reference, test_mean_exact_small, test_robust_methods,
	test_bad_arguments)
