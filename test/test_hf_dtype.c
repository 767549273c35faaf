/*
 * Unit tests for the bf16 / f16 narrowing of exports (lib/ct_safetensors.c
 * ct_st_bf16, ct_st_f16, ct_st_write_as, ct_st_convert) and
 * lib/ct_hf_dtype.c. The roundings are held to their definition, not to
 * a second copy of the bit trick: the value stored must be the nearer of
 * its two neighbours in the narrow type (compared in double, where both
 * differences are exact), the even one on a tie, over every exponent and
 * the boundaries (largest finite, overflow, subnormals, zero, inf, NaN);
 * with GCC's _Float16 the f16 bits also equal the compiler's conversion.
 */
#include "ct_test.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hf_dtype.h"
#include "ct_safetensors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static float bits_f(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static double bf16_val(uint16_t h)
{
	return (double)bits_f((uint32_t)h << 16);
}

static double f16_val(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY)
						     : ldexp(m | 0x400, e - 25);

	return (h & 0x8000) ? -v : v;
}

/* h is the nearest-even rounding of x among the values val() gives; big
 * is where the first value past the largest finite one would be (the
 * overflow threshold is its midpoint with the largest finite). */
static int is_nearest(float x, uint16_t h, double (*val)(uint16_t), uint16_t inf, double big)
{
	const uint16_t sign = (uint16_t)(signbit(x) ? 0x8000 : 0);
	const double ax = fabs((double)x);
	uint16_t m = (uint16_t)(h & 0x7fff);
	double v, lo, hi;

	if (isnan(x))
		return (h & 0x7fff) > inf;
	if ((h & 0x8000) != sign)
		return 0;
	if (m == inf)		/* only at or past the midpoint to `big` */
		return ax >= (fabs(val((uint16_t)(inf - 1))) + big) / 2;
	v = fabs(val(m));
	lo = m > 0 ? fabs(val((uint16_t)(m - 1))) : -v;
	hi = m + 1 == inf ? big : fabs(val((uint16_t)(m + 1)));
	if (ax - v > hi - ax || v - ax > ax - lo)
		return 0;	/* a neighbour is nearer */
	if (ax - v == hi - ax || v - ax == ax - lo)
		return (m & 1) == 0;	/* a tie: the even one */
	return 1;
}

/* Floats to try: every 65,521st bit pattern, both signs, and the
 * neighbours of each narrow value's midpoints near the boundaries. */
static void try_all(uint16_t (*conv)(float), double (*val)(uint16_t), uint16_t inf, double big,
		    const char *what)
{
	static const uint32_t edge[] = {
		0, 1, 0x00800000, 0x33000000, 0x33000001, 0x337fffff, 0x33800000, 0x38800000,
		0x387fffff, 0x387fe000, 0x387ff000, 0x477fe000, 0x477fefff, 0x477ff000,
		0x477ff001, 0x7f7f7fff, 0x7f7f8000, 0x7f7f8001, 0x7f7fffff, 0x7f800000,
		0x7f800001, 0x7fc00000, 0x3f808000, 0x3f818000, 0x3f800fff, 0x3f801000,
		0x3f803000,
	};
	size_t bad = 0, n = 0;

	for (uint64_t u = 0; u <= 0xffffffffull; u += 65521, n++)
		bad += !is_nearest(bits_f((uint32_t)u), conv(bits_f((uint32_t)u)), val, inf, big);
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
		for (int s = 0; s < 2; s++, n++) {
			float x = bits_f(edge[i] | (s ? 0x80000000u : 0));

			if (!is_nearest(x, conv(x), val, inf, big)) {
				fprintf(stderr, "%s: 0x%08x -> 0x%04x\n", what, edge[i], conv(x));
				bad++;
			}
		}
	/* every midpoint between two narrow values (and 1 ulp either side) */
	for (uint32_t h = 0; h < inf; h++, n += 3) {
		double a = val((uint16_t)h), b = h + 1 == inf ? big : val((uint16_t)(h + 1));
		float mid = (float)((a + b) / 2);	/* exact in float32 for both types */

		if ((double)mid != (a + b) / 2)
			continue;
		bad += !is_nearest(mid, conv(mid), val, inf, big);
		bad += !is_nearest(nextafterf(mid, 0), conv(nextafterf(mid, 0)), val, inf, big);
		bad += !is_nearest(nextafterf(mid, INFINITY), conv(nextafterf(mid, INFINITY)),
				   val, inf, big);
	}
	fprintf(stderr, "%s: %zu floats, %zu not the nearest-even rounding\n", what, n, bad);
	assert_int_equal(bad, 0);
}

static void test_bf16(void **state)
{
	(void)state;
	assert_int_equal(ct_st_bf16(1.0f), 0x3f80);
	assert_int_equal(ct_st_bf16(bits_f(0x3f808000)), 0x3f80);	/* tie, even below */
	assert_int_equal(ct_st_bf16(bits_f(0x3f818000)), 0x3f82);	/* tie, even above */
	assert_int_equal(ct_st_bf16(bits_f(0x7f7fffff)), 0x7f80);	/* FLT_MAX: inf */
	assert_int_equal(ct_st_bf16(-INFINITY), 0xff80);
	assert_true((ct_st_bf16(bits_f(0x7f800001)) & 0x7fff) > 0x7f80);	/* NaN stays */
	try_all(ct_st_bf16, bf16_val, 0x7f80, ldexp(1.0, 128), "bf16");
}

static void test_f16(void **state)
{
	(void)state;
	assert_int_equal(ct_st_f16(1.0f), 0x3c00);
	assert_int_equal(ct_st_f16(65504.0f), 0x7bff);
	assert_int_equal(ct_st_f16(65519.996f), 0x7bff);
	assert_int_equal(ct_st_f16(65520.0f), 0x7c00);	/* the tie goes to inf */
	assert_int_equal(ct_st_f16(ldexp(1.0, -24)), 0x0001);	/* smallest subnormal */
	assert_int_equal(ct_st_f16(ldexp(1.0, -25)), 0x0000);	/* its half: to even 0 */
	assert_int_equal(ct_st_f16((float)ldexp(3.0, -25)), 0x0002);	/* 1.5: to even 2 */
	assert_int_equal(ct_st_f16(-0.0f), 0x8000);
	try_all(ct_st_f16, f16_val, 0x7c00, 65536.0, "f16");
#if defined(__FLT16_MAX__) && !defined(_WIN32)
	{	/* the compiler's own conversion agrees bit for bit */
		size_t bad = 0;

		for (uint64_t u = 0; u <= 0xffffffffull; u += 4099) {
			float x = bits_f((uint32_t)u);
			_Float16 h = (_Float16)x;
			uint16_t hb;

			memcpy(&hb, &h, 2);
			if (!isnan(x) && hb != ct_st_f16(x))
				bad++;
		}
		assert_int_equal(bad, 0);
	}
#endif
}

/* config.json as the exports write it, and a float32 model.safetensors. */
static void write_dir(const char *dir, const float *w, size_t n)
{
	static const char cfg[] = "{\n  \"model_type\": \"llama\",\n  \"torch_dtype\": \"float32\"\n}\n";
	char p[4096];
	struct ct_st_out o[2] = {
		{ .name = "a.weight", .ndim = 2, .shape = { 2, (int64_t)(n / 2 - 1) }, .data = w },
		{ .name = "b", .ndim = 1, .shape = { 2 }, .data = w + n - 2 },
	};

	snprintf(p, sizeof(p), "%s/config.json", dir);
	assert_int_equal(ct_file_write_atomic(p, cfg, sizeof(cfg) - 1, 0644), 0);
	snprintf(p, sizeof(p), "%s/model.safetensors", dir);
	assert_int_equal(ct_st_write(p, o, 2), 0);
}

static void test_dir(void **state)
{
	char *dir = ct_test_mkdtemp(), p[4096];
	float w[42];
	enum ct_st_dtype d;
	struct ct_st_file f;
	uint16_t h;

	(void)state;
	for (int i = 0; i < 42; i++)
		w[i] = (float)sin(i * 0.7) * (float)ldexp(1.0, i - 30);	/* to 2^11 */
	w[5] = 60000.0f;	/* within f16's range, rounded */
	snprintf(p, sizeof(p), "%s/config.json", dir);
	for (int k = 0; k < 3; k++) {
		static const enum ct_st_dtype want[] = { CT_ST_F32, CT_ST_BF16, CT_ST_F16 };
		static const char *const torch[] = { "float32", "bfloat16", "float16" };
		unsigned char *text = NULL;
		size_t len = 0;

		write_dir(dir, w, 42);
		assert_int_equal(ct_hf_dtype_set(dir, want[k]), 0);
		assert_int_equal(ct_hf_dtype_of_config(p, &d), 0);
		assert_int_equal(d, want[k]);
		assert_int_equal(ct_file_read_all(p, 4096, &text, &len), 0);
		assert_non_null(strstr((char *)text, torch[k]));
		free(text);
		snprintf(p, sizeof(p), "%s/model.safetensors", dir);
		assert_int_equal(ct_st_open(p, &f), 0);
		assert_int_equal(f.nt, 2);
		assert_int_equal(f.t[0].dtype, want[k]);
		assert_int_equal(f.t[0].nelem, 40);
		assert_int_equal(f.data_len, k ? 84 : 168);	/* half the bytes */
		for (size_t i = 0; i < 40; i++) {
			const unsigned char *b = f.data + f.t[0].begin + (k ? 2 : 4) * i;

			h = (uint16_t)(b[0] | b[1] << 8);
			if (k == 1)
				assert_int_equal(h, ct_st_bf16(w[i]));
			else if (k == 2)
				assert_int_equal(h, ct_st_f16(w[i]));
			else
				assert_memory_equal(b, &w[i], 4);
		}
		ct_st_close(&f);
		snprintf(p, sizeof(p), "%s/config.json", dir);
	}
	/* a weight float16 would make inf: refused, the f32 file kept */
	w[5] = 1e30f;
	write_dir(dir, w, 42);
	assert_int_equal(ct_hf_dtype_set(dir, CT_ST_F16), CT_ERANGE);
	assert_non_null(strstr(ct_errmsg(CT_ERANGE), "tensor 'a.weight' holds 1e+30, past "
			       "float16's largest value (65504): use bf16 or f32"));
	assert_int_equal(ct_hf_dtype_set(dir, CT_ST_BF16), 0);	/* bf16 holds it */
	/* names and torch's names parse; others are refused by name */
	assert_int_equal(ct_hf_dtype_parse("bf16", &d), 0);
	assert_int_equal(d, CT_ST_BF16);
	assert_int_equal(ct_hf_dtype_parse("float16", &d), 0);
	assert_int_equal(d, CT_ST_F16);
	assert_int_equal(ct_hf_dtype_parse("fp8", &d), CT_EINVAL);
	assert_non_null(strstr(ct_errmsg(CT_EINVAL), "'fp8': want f32, bf16 or f16"));
	/* transformers' newer "dtype" key; an unknown dtype reads as float32 */
	assert_int_equal(ct_file_write_atomic(p, "{\"dtype\": \"bfloat16\"}", 21, 0644), 0);
	assert_int_equal(ct_hf_dtype_of_config(p, &d), 0);
	assert_int_equal(d, CT_ST_BF16);
	assert_int_equal(ct_file_write_atomic(p, "{\"torch_dtype\": \"int8\"}", 23, 0644), 0);
	assert_int_equal(ct_hf_dtype_of_config(p, &d), 0);
	assert_int_equal(d, CT_ST_F32);
	/* a config.json the export did not write is not edited */
	assert_int_equal(ct_hf_dtype_set(dir, CT_ST_BF16), CT_EFORMAT);
	ct_test_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bf16),
		cmocka_unit_test(test_f16),
		cmocka_unit_test(test_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
