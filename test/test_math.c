/*
 * test_math.c - ct_expf / ct_logf / ct_tanhf / GELU against libm in double.
 *
 * The portable math must be accurate (a few ulp) over the ranges training
 * uses, handle the special values as documented in kernels/ct_math.clh, and
 * never return subnormals from ct_expf. Inputs are swept over float bit
 * patterns with a stride, so every binade of each range is covered.
 */
#include "ct_test.h"
#include "ct_math.h"
#include "ct_model.h"

#include <float.h>
#include <math.h>

/* Error of got against the exact value, in units of the float ulp at the
 * exact value's magnitude. */
static double ulp_err(float got, double exact)
{
	double a = fabs(exact);
	int e;

	if (a < FLT_MIN)
		a = FLT_MIN;
	frexp(a, &e);			/* a = f * 2^e, f in [0.5, 1) */
	return fabs((double)got - exact) / ldexp(1.0, e - 24);
}

static float from_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* Max ulp error of fn vs ref over the floats in [lo, hi] (same sign),
 * visiting every `stride`-th bit pattern. */
static double sweep(float (*fn)(float), double (*ref)(double), float lo, float hi,
		    uint32_t stride)
{
	uint32_t a, b;
	double worst = 0.0;
	float x;

	memcpy(&a, &lo, 4);
	memcpy(&b, &hi, 4);
	if (a > b) {
		uint32_t t = a;

		a = b;
		b = t;
	}
	for (uint64_t u = a; u <= b; u += stride) {
		double e;

		x = from_bits((uint32_t)u);
		e = ulp_err(fn(x), ref((double)x));
		if (e > worst)
			worst = e;
	}
	return worst;
}

static float f_exp(float x) { return ct_expf(x); }
static float f_log(float x) { return ct_logf(x); }
static float f_tanh(float x) { return ct_tanhf(x); }

static void test_exp_accuracy(void **state)
{
	double w;

	(void)state;
	w = sweep(f_exp, exp, -87.0f, -1e-30f, 101);
	printf("ct_expf max error on [-87, 0): %.3f ulp\n", w);
	assert_true(w <= 2.0);
	w = sweep(f_exp, exp, 1e-30f, 88.7f, 101);
	printf("ct_expf max error on (0, 88.7]: %.3f ulp\n", w);
	assert_true(w <= 2.0);
}

static void test_exp_special(void **state)
{
	(void)state;
	assert_true(ct_expf(0.0f) == 1.0f);
	assert_true(ct_expf(-0.0f) == 1.0f);
	assert_true(isinf(ct_expf(89.0f)) && ct_expf(89.0f) > 0);
	assert_true(isinf(ct_expf(INFINITY)));
	assert_true(ct_expf(-INFINITY) == 0.0f);
	assert_true(isnan(ct_expf(NAN)));
	/* no subnormal results: below FLT_MIN is exactly 0 */
	assert_true(ct_expf(-87.5f) == 0.0f);
	assert_true(ct_expf(-100.0f) == 0.0f);
	for (float x = -87.4f; x < -87.0f; x += 0.001f) {
		float y = ct_expf(x);

		assert_true(y == 0.0f || y >= FLT_MIN);
	}
	/* near the overflow threshold the result is finite */
	assert_true(isfinite(ct_expf(88.72f)));
}

static void test_log_accuracy(void **state)
{
	double w;

	(void)state;
	w = sweep(f_log, log, FLT_MIN, 0.5f, 97);
	printf("ct_logf max error on [FLT_MIN, 0.5]: %.3f ulp\n", w);
	assert_true(w <= 2.0);
	w = sweep(f_log, log, 0.5f, 2.0f, 7);
	printf("ct_logf max error on [0.5, 2]: %.3f ulp\n", w);
	assert_true(w <= 2.0);
	w = sweep(f_log, log, 2.0f, FLT_MAX, 97);
	printf("ct_logf max error on [2, FLT_MAX]: %.3f ulp\n", w);
	assert_true(w <= 2.0);
	/* subnormal inputs are rescaled, not flushed */
	w = sweep(f_log, log, from_bits(1), from_bits(0x007fffff), 9973);
	printf("ct_logf max error on subnormals: %.3f ulp\n", w);
	assert_true(w <= 2.0);
}

static void test_log_special(void **state)
{
	(void)state;
	assert_true(ct_logf(1.0f) == 0.0f);
	assert_true(isinf(ct_logf(0.0f)) && ct_logf(0.0f) < 0);
	assert_true(isinf(ct_logf(-0.0f)) && ct_logf(-0.0f) < 0);
	assert_true(isnan(ct_logf(-1.0f)));
	assert_true(isnan(ct_logf(NAN)));
	assert_true(isinf(ct_logf(INFINITY)) && ct_logf(INFINITY) > 0);
	/* exp and log invert each other closely */
	for (float x = -20.0f; x < 20.0f; x += 0.37f)
		assert_true(fabsf(ct_logf(ct_expf(x)) - x) <= 4e-6f * (1.0f + fabsf(x)));
}

static void test_tanh_accuracy(void **state)
{
	double w;

	(void)state;
	w = sweep(f_tanh, tanh, 1e-30f, 20.0f, 53);
	printf("ct_tanhf max error on (0, 20]: %.3f ulp\n", w);
	assert_true(w <= 3.0);
	w = sweep(f_tanh, tanh, -20.0f, -1e-30f, 53);
	printf("ct_tanhf max error on [-20, 0): %.3f ulp\n", w);
	assert_true(w <= 3.0);
}

static void test_tanh_special(void **state)
{
	(void)state;
	assert_true(ct_tanhf(0.0f) == 0.0f && !signbit(ct_tanhf(0.0f)));
	assert_true(signbit(ct_tanhf(-0.0f)));
	assert_true(ct_tanhf(50.0f) == 1.0f);
	assert_true(ct_tanhf(-50.0f) == -1.0f);
	assert_true(ct_tanhf(INFINITY) == 1.0f);
	assert_true(ct_tanhf(-INFINITY) == -1.0f);
	assert_true(isnan(ct_tanhf(NAN)));
	/* odd symmetry is exact */
	for (float x = 0.001f; x < 10.0f; x *= 1.1f)
		assert_true(ct_tanhf(-x) == -ct_tanhf(x));
}

static double gelu_d(double x)
{
	return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

static void test_gelu(void **state)
{
	(void)state;
	for (float x = -8.0f; x <= 8.0f; x += 0.013f) {
		double want = gelu_d(x), h = 1e-4;
		double dwant = (gelu_d(x + h) - gelu_d(x - h)) / (2 * h);

		assert_true(fabs(ct_gelu_forward_elem(x) - want) <= 1e-6 * (1 + fabs(want)));
		assert_true(fabs(ct_gelu_grad_elem(x) - dwant) <= 2e-6 * (1 + fabs(dwant)));
	}
	assert_true(ct_gelu_forward_elem(0.0f) == 0.0f);
	assert_true(ct_gelu_grad_elem(0.0f) == 0.5f);
}

/* AdamW element functions and host bias corrections against double. */
static void test_adamw(void **state)
{
	float bc1, bc2;

	(void)state;
	ct_adamw_bias_corrections(0.9f, 0.999f, 1, &bc1, &bc2);
	assert_true(bc1 == 1.0f - 0.9f && bc2 == 1.0f - 0.999f);
	ct_adamw_bias_corrections(0.9f, 0.999f, 10, &bc1, &bc2);
	assert_true(fabs(bc1 - (1 - pow(0.9f, 10))) < 1e-6);
	assert_true(fabs(bc2 - (1 - pow(0.999f, 10))) < 1e-6);
	/* repeated multiplication in float, not powf */
	{
		float b = 1.0f;

		for (int i = 0; i < 1000; i++)
			b = b * 0.999f;
		ct_adamw_bias_corrections(0.9f, 0.999f, 1000, &bc1, &bc2);
		assert_true(bc2 == 1.0f - b);
	}
	/* step 1 from zero state: p' = p - lr*(sign(g)/(1 + eps/|g|) + wd*p) */
	{
		float g = 0.25f, p = 1.0f, m, v, q;

		ct_adamw_bias_corrections(0.9f, 0.999f, 1, &bc1, &bc2);
		m = ct_adamw_m_elem(0.0f, g, 0.9f);
		v = ct_adamw_v_elem(0.0f, g, 0.999f);
		q = ct_adamw_p_elem(p, m, v, 1e-3f, 1e-8f, 0.1f, bc1, bc2);
		assert_true(fabs(q - (1.0 - 1e-3 * (1.0 + 0.1))) < 1e-6);
	}
}

/* Gradient norm uses 65536-element chunks; clipping scales exactly. */
static void test_grad_clip(void **state)
{
	size_t n = 200000;
	float *g = malloc(n * sizeof(float));
	double ss = 0;
	float norm;

	(void)state;
	assert_non_null(g);
	for (size_t i = 0; i < n; i++) {
		g[i] = (float)((int)(i % 17) - 8) * 0.01f;
		ss += (double)g[i] * g[i];
	}
	norm = ct_grad_norm(g, n);
	assert_true(fabs(norm - sqrt(ss)) < 1e-3 * sqrt(ss));
	/* exactly the chunked order of the spec */
	{
		float sum = 0.0f;

		for (size_t k0 = 0; k0 < n; k0 += 65536) {
			float part = 0.0f;

			for (size_t j = k0; j < n && j < k0 + 65536; j++)
				part = fmaf(g[j], g[j], part);
			sum = sum + part;
		}
		assert_true(norm == sqrtf(sum));
	}
	assert_true(ct_grad_clip(g, n, 1e9f) == norm);	/* no clip above */
	ct_grad_clip(g, n, 1.0f);
	assert_true(fabs(ct_grad_norm(g, n) - 1.0) < 1e-3);
	free(g);
}

CT_TEST_MAIN(test_exp_accuracy, test_exp_special, test_log_accuracy, test_log_special,
	test_tanh_accuracy, test_tanh_special, test_gelu, test_adamw, test_grad_clip)
