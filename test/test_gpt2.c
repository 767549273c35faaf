/*
 * test_gpt2.c - llm.c GPT-2 checkpoints: config checks, layout, seeded
 * init, write/read round trip, the byte layout llm.c reads, and rejection
 * of malformed files (truncated, bad magic/version, size mismatch, bad
 * config) with no partial output.
 */
#include "ct_test_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"

#include <math.h>
#include <sys/stat.h>

static const struct ct_model_config tiny = CT_TEST_TINY_CONFIG;

static void path_in(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", ct_test_dir, name);
}

static void test_layout(void **state)
{
	struct ct_gpt2_layout lay;
	size_t C = 32, L = 2;

	(void)state;
	assert_int_equal(ct_gpt2_config_check(&tiny), 0);
	ct_gpt2_layout(&tiny, &lay);
	assert_int_equal(lay.offset[CT_WTE], 0);
	assert_int_equal(lay.size[CT_WTE], 64 * C);
	assert_int_equal(lay.offset[CT_WPE], 64 * C);
	assert_int_equal(lay.size[CT_QKVW], L * 3 * C * C);
	assert_int_equal(lay.size[CT_FCPROJW], L * 4 * C * C);
	assert_int_equal(lay.offset[CT_LNFB] + lay.size[CT_LNFB], lay.total);
	assert_int_equal(lay.total, 64 * C + 16 * C + L * (12 * C * C + 13 * C) + 2 * C);
	assert_string_equal(ct_gpt2_tensor_name(CT_ATTPROJW), "attprojw");
	assert_string_equal(ct_gpt2_tensor_name(99), "?");
}

static void test_config_check(void **state)
{
	struct ct_model_config c;

	(void)state;
	c = tiny; c.NH = 3;		/* 32 % 3 != 0 */
	assert_int_equal(ct_gpt2_config_check(&c), CT_EFORMAT);
	c = tiny; c.Vp = 59;		/* Vp < V */
	assert_int_equal(ct_gpt2_config_check(&c), CT_EFORMAT);
	c = tiny; c.L = 0;
	assert_int_equal(ct_gpt2_config_check(&c), CT_EFORMAT);
	assert_non_null(strstr(ct_errmsg(CT_EFORMAT), "num_layers"));
	c = tiny; c.V = 70000;		/* tokens are uint16 */
	assert_int_equal(ct_gpt2_config_check(&c), CT_EFORMAT);
	c = tiny; c.C = 65536; c.L = 1024; c.NH = 1;	/* too many params */
	assert_int_equal(ct_gpt2_config_check(&c), CT_EFORMAT);
}

static void test_init(void **state)
{
	struct ct_gpt2 a = { 0 }, b = { 0 };
	const struct ct_gpt2_layout *lay;
	double s = 0, ss = 0;
	size_t n;

	(void)state;
	assert_int_equal(ct_gpt2_alloc(&a, &tiny), 0);
	assert_int_equal(ct_gpt2_alloc(&b, &tiny), 0);
	assert_int_equal(ct_gpt2_init_random(&tiny, 42, a.params), 0);
	assert_int_equal(ct_gpt2_init_random(&tiny, 42, b.params), 0);
	assert_memory_equal(a.params, b.params, a.lay.total * sizeof(float));
	assert_int_equal(ct_gpt2_init_random(&tiny, 43, b.params), 0);
	assert_memory_not_equal(a.params, b.params, a.lay.total * sizeof(float));
	lay = &a.lay;
	/* layernorm weights 1, biases 0 */
	assert_true(a.params[lay->offset[CT_LN1W]] == 1.0f);
	assert_true(a.params[lay->offset[CT_LNFW] + 31] == 1.0f);
	assert_true(a.params[lay->offset[CT_LNFB]] == 0.0f);
	assert_true(a.params[lay->offset[CT_QKVB] + 5] == 0.0f);
	/* wte ~ N(0, 0.02) */
	n = lay->size[CT_WTE];
	for (size_t i = 0; i < n; i++) {
		s += a.params[i];
		ss += (double)a.params[i] * a.params[i];
	}
	assert_true(fabs(s / n) < 0.002);
	assert_true(fabs(sqrt(ss / n) - 0.02) < 0.002);
	/* residual projections scaled by 1/sqrt(2L) = 0.5 */
	ss = 0;
	n = lay->size[CT_FCPROJW];
	for (size_t i = 0; i < n; i++) {
		double x = a.params[lay->offset[CT_FCPROJW] + i];

		ss += x * x;
	}
	assert_true(fabs(sqrt(ss / n) - 0.01) < 0.001);
	/* platform independence: a fixed fingerprint of seed 42's stream */
	assert_true(a.params[0] == -0.0145243816f);
	assert_true(a.params[1] == -0.00422393857f);
	assert_true(a.params[2] == 0.00443245145f);
	ct_gpt2_free(&a);
	ct_gpt2_free(&b);
}

static void test_roundtrip_and_bytes(void **state)
{
	struct ct_gpt2 a = { 0 }, b = { 0 };
	struct ct_model_config c;
	char path[4200];
	unsigned char *data;
	size_t len;
	int32_t hdr[8];
	float f;

	(void)state;
	path_in(path, sizeof(path), "m.bin");
	assert_int_equal(ct_gpt2_alloc(&a, &tiny), 0);
	assert_int_equal(ct_gpt2_init_random(&tiny, 7, a.params), 0);
	assert_int_equal(ct_gpt2_save(path, &tiny, a.params), 0);
	assert_int_equal(ct_gpt2_load(path, &b), 0);
	assert_memory_equal(&a.cfg, &b.cfg, sizeof(a.cfg));
	assert_memory_equal(a.params, b.params, a.lay.total * sizeof(float));
	assert_int_equal(ct_gpt2_read_config(path, &c), 0);
	assert_int_equal(c.C, 32);
	/* the byte layout llm.c reads */
	assert_int_equal(ct_file_read_all(path, 0, &data, &len), 0);
	assert_int_equal(len, 1024 + 4 * a.lay.total);
	memcpy(hdr, data, sizeof(hdr));
	assert_int_equal(hdr[0], 20240326);
	assert_int_equal(hdr[1], 3);
	assert_int_equal(hdr[2], 16);	/* maxT */
	assert_int_equal(hdr[3], 60);	/* V */
	assert_int_equal(hdr[4], 2);	/* L */
	assert_int_equal(hdr[5], 2);	/* NH */
	assert_int_equal(hdr[6], 32);	/* C */
	assert_int_equal(hdr[7], 64);	/* Vp */
	for (int i = 8; i < 256; i++) {
		int32_t z;

		memcpy(&z, data + 4 * i, 4);
		assert_int_equal(z, 0);
	}
	memcpy(&f, data + 1024, 4);			/* wte first */
	assert_true(f == a.params[0]);
	memcpy(&f, data + len - 4, 4);			/* lnfb last */
	assert_true(f == a.params[a.lay.offset[CT_LNFB] + 31]);
	memcpy(&f, data + len - 4 - 4 * 32, 4);		/* lnfw before it */
	assert_true(f == 1.0f);
	free(data);
	ct_gpt2_free(&a);
	ct_gpt2_free(&b);
}

/* Write bytes as a file and try to load it; returns the load's code. */
static int load_bytes(const void *p, size_t n, const char *expect_in_msg)
{
	char path[4200];
	struct ct_gpt2 m = { 0 };
	int rc;

	path_in(path, sizeof(path), "bad.bin");
	assert_int_equal(ct_file_write_atomic(path, p, n, 0644), 0);
	rc = ct_gpt2_load(path, &m);
	if (rc < 0)
		assert_null(m.params);
	ct_gpt2_free(&m);
	if (rc < 0 && expect_in_msg)
		assert_non_null(strstr(ct_errmsg(rc), expect_in_msg));
	return rc;
}

static void test_malformed(void **state)
{
	struct ct_gpt2 a = { 0 };
	size_t n;
	unsigned char *img;
	int32_t *h;

	(void)state;
	assert_int_equal(ct_gpt2_alloc(&a, &tiny), 0);
	n = 1024 + 4 * a.lay.total;
	img = calloc(1, n + 8);
	assert_non_null(img);
	h = (int32_t *)img;
	ct_gpt2_header(&tiny, h);
	assert_int_equal(load_bytes(img, n, NULL), 0);
	assert_int_equal(load_bytes(img, n - 4, "truncated"), CT_EFORMAT);
	assert_int_equal(load_bytes(img, n + 4, "truncated"), CT_EFORMAT);
	assert_int_equal(load_bytes(img, 100, "too short"), CT_EFORMAT);
	assert_int_equal(load_bytes(img, 0, "too short"), CT_EFORMAT);
	h[0] = 20240327;
	assert_int_equal(load_bytes(img, n, "bad magic"), CT_EFORMAT);
	h[0] = 20240326;
	h[1] = 5;	/* bf16 llm.c checkpoints */
	assert_int_equal(load_bytes(img, n, "version 5"), CT_EFORMAT);
	h[1] = 3;
	h[5] = 3;	/* C % NH */
	assert_int_equal(load_bytes(img, n, "divisible"), CT_EFORMAT);
	h[5] = 2;
	h[7] = 10;	/* Vp < V */
	assert_int_equal(load_bytes(img, n, "padded_vocab"), CT_EFORMAT);
	h[7] = 64;
	h[4] = -1;
	assert_int_equal(load_bytes(img, n, "num_layers"), CT_EFORMAT);
	free(img);
	ct_gpt2_free(&a);
	{
		struct ct_gpt2 m = { 0 };
		char path[4200];

		path_in(path, sizeof(path), "missing.bin");
		assert_int_equal(ct_gpt2_load(path, &m), CT_ENOENT);
	}
}

static void test_save_fails_cleanly(void **state)
{
	struct ct_gpt2 a = { 0 };
	char path[4200];

	(void)state;
	assert_int_equal(ct_gpt2_alloc(&a, &tiny), 0);
	path_in(path, sizeof(path), "nodir/m.bin");
	assert_true(ct_gpt2_save(path, &tiny, a.params) < 0);
	assert_false(ct_file_exists(path));
	ct_gpt2_free(&a);
}

static void test_finite_and_flops(void **state)
{
	struct ct_gpt2 a = { 0 };
	struct ct_model_config g2 = { .maxT = 1024, .V = 50257, .L = 12, .NH = 12, .C = 768, .Vp = 50304 };
	double f;

	(void)state;
	assert_int_equal(ct_gpt2_alloc(&a, &tiny), 0);
	assert_int_equal(ct_gpt2_check_finite(a.params, a.lay.total, &a.lay), 0);
	a.params[a.lay.offset[CT_FCW] + 3] = NAN;
	assert_int_equal(ct_gpt2_check_finite(a.params, a.lay.total, &a.lay), CT_ENONFINITE);
	assert_non_null(strstr(ct_errmsg(CT_ENONFINITE), "fcw"));
	ct_gpt2_free(&a);
	/* GPT-2 124M: ~6 * 124M flops per token plus attention */
	f = ct_gpt2_flops_per_token(&g2, 1024);
	assert_true(f > 6.0 * 124e6 && f < 6.0 * 124e6 * 1.25);
}

CT_TEST_MAIN_GROUP(ct_test_dir_setup, ct_test_dir_teardown, test_layout,
	test_config_check, test_init, test_roundtrip_and_bytes, test_malformed,
	test_save_fails_cleanly, test_finite_and_flops)
