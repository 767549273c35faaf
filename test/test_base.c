/*
 * test_base.c - compact frozen bases (engine/ct_base.h) on the C
 * reference: bfloat16 rounding and widening, the compact checkpoint file
 * (round trip, corruption, truncation), and the property the format
 * promises: a LoRA work unit on a bf16 base gives exactly the bytes
 * (adapters, losses) of the float32 work unit on the widened weights, for
 * GPT-2 and Llama, uninterrupted and resumed after every step.
 */
#include "ct_test.h"
#include "ct_test_engine.h"

#include "ct_base.h"
#include "ct_engine.h"
#include "ct_lora_model.h"
#include "ct_model.h"
#include "ct_file.h"
#include "ct_llama.h"

static const struct ct_model_config tiny = CT_TEST_TINY_CONFIG;

static struct ct_model_config tiny_llama(void)
{
	return (struct ct_model_config){ .maxT = 16, .V = 50, .Vp = 50, .L = 2, .NH = 4,
					.C = 32, .arch = CT_ARCH_LLAMA, .KVH = 2, .F = 48,
					.flags = CT_LLAMA_QKV_BIAS, .rope_theta = 10000.0,
					.rms_eps = 1e-5 };
}

static uint32_t bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float from_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static void test_bf16_rounding(void **state)
{
	(void)state;
	assert_int_equal(ct_f32_to_bf16(1.0f), 0x3f80);
	assert_int_equal(ct_f32_to_bf16(-2.0f), 0xc000);
	/* halfway cases go to the even neighbour */
	assert_int_equal(ct_f32_to_bf16(from_bits(0x3f808000)), 0x3f80);
	assert_int_equal(ct_f32_to_bf16(from_bits(0x3f818000)), 0x3f82);
	/* just above / below half */
	assert_int_equal(ct_f32_to_bf16(from_bits(0x3f808001)), 0x3f81);
	assert_int_equal(ct_f32_to_bf16(from_bits(0x3f807fff)), 0x3f80);
	/* a carry into the exponent */
	assert_int_equal(ct_f32_to_bf16(from_bits(0x3fffffff)), 0x4000);
	/* subnormals and signed zero keep their bits' meaning */
	assert_int_equal(ct_f32_to_bf16(-0.0f), 0x8000);
	assert_int_equal(ct_f32_to_bf16(from_bits(0x00010000)), 0x0001);
	/* widening is the upper half, exact, for every pattern */
	for (uint32_t h = 0; h < 0x10000; h++) {
		float f = ct_bf16_to_f32((uint16_t)h);

		assert_int_equal(bits(f), h << 16);
		if (isfinite(f))
			assert_int_equal(ct_f32_to_bf16(f), h);
	}
}

/* A random model of cfg (seed 1234). */
static void model_of(const struct ct_model_config *cfg, struct ct_gpt2 *m)
{
	assert_int_equal(ct_gpt2_alloc(m, cfg), 0);
	assert_int_equal(ct_gpt2_init_random(cfg, 1234, m->params), 0);
}

/* The float32 model of the widened fmt weights of m. */
static void widened_as(const struct ct_gpt2 *m, int fmt, struct ct_gpt2 *w)
{
	struct ct_gpt2 c = { 0 };

	assert_int_equal(ct_base_convert(&m->cfg, m->params, fmt, &c), 0);
	assert_null(c.params);
	assert_int_equal(ct_gpt2_alloc(w, &m->cfg), 0);
	ct_base_widen(&c.cfg, c.fmt, c.base, w->params);
	if (fmt == CT_BASE_BF16)
		assert_true(ct_base_exact(&w->cfg, w->params, CT_BASE_BF16));
	ct_gpt2_free(&c);
}

static void widened(const struct ct_gpt2 *m, struct ct_gpt2 *w)
{
	widened_as(m, CT_BASE_BF16, w);
}

static void test_layout_and_file(void **state)
{
	struct ct_gpt2 m = { 0 }, c = { 0 }, back = { 0 }, w = { 0 };
	struct ct_base_layout bl;
	const char *path = ct_test_path("tiny.ctb");
	unsigned char *img;
	size_t n;
	float *p;

	(void)state;
	model_of(&tiny, &m);
	assert_false(ct_base_exact(&tiny, m.params, CT_BASE_BF16));
	ct_base_layout(&tiny, CT_BASE_BF16, &bl);
	for (int t = 0; t < CT_GPT2_NTENSORS; t++)
		assert_int_equal(bl.off[t] % CT_BASE_ALIGN, 0);
	/* matrices take two bytes, the rest four */
	assert_int_equal(bl.off[CT_WPE] - bl.off[CT_WTE], 2 * m.lay.size[CT_WTE]);
	assert_int_equal(bl.off[CT_LN1B] - bl.off[CT_LN1W], 4 * m.lay.size[CT_LN1W]);
	assert_true(bl.bytes < m.lay.total * 4 * 6 / 10);
	assert_int_equal(ct_base_convert(&tiny, m.params, CT_BASE_BF16, &c), 0);
	assert_int_equal(c.base_bytes, bl.bytes);
	assert_int_equal(ct_base_save(path, &c), 0);
	assert_int_equal(ct_base_load(path, &back), 0);
	assert_int_equal(back.fmt, CT_BASE_BF16);
	assert_int_equal(back.base_bytes, c.base_bytes);
	assert_memory_equal(back.base, c.base, c.base_bytes);
	/* widened: layernorm weights as they were, matrices rounded */
	assert_int_equal(ct_base_params_f32(&back, &p), 0);
	assert_memory_equal(p + m.lay.offset[CT_LN1W], m.params + m.lay.offset[CT_LN1W],
			    4 * m.lay.size[CT_LN1W]);
	assert_true(bits(p[m.lay.offset[CT_QKVW]]) ==
		    (uint32_t)ct_f32_to_bf16(m.params[m.lay.offset[CT_QKVW]]) << 16);
	widened(&m, &w);
	assert_memory_equal(p, w.params, 4 * m.lay.total);
	free(p);
	ct_gpt2_free(&back);
	/* a float32 checkpoint still loads through ct_base_load */
	assert_int_equal(ct_gpt2_save(ct_test_path("f32.bin"), &tiny, m.params), 0);
	assert_int_equal(ct_base_load(ct_test_path("f32.bin"), &back), 0);
	assert_int_equal(back.fmt, CT_BASE_F32);
	ct_gpt2_free(&back);
	/* corrupt one weight byte: the digest catches it; truncation: size */
	assert_int_equal(ct_file_read_all(path, 1 << 24, &img, &n), 0);
	img[CT_BASE_FILE_HDR + 100] ^= 1;
	assert_int_equal(ct_base_load_mem(img, n, "x", &back), CT_ECORRUPT);
	img[CT_BASE_FILE_HDR + 100] ^= 1;
	assert_int_equal(ct_base_load_mem(img, n - 2, "x", &back), CT_EFORMAT);
	img[12] = 7;	/* unknown format */
	assert_int_equal(ct_base_load_mem(img, n, "x", &back), CT_EFORMAT);
	free(img);
	ct_gpt2_free(&c);
	ct_gpt2_free(&m);
	ct_gpt2_free(&w);
}

/* q8: blocks of 32, scale amax/127, values rintf(x/s); a tensor's last
 * block padded; widening is q * s. */
static void test_q8(void **state)
{
	struct ct_gpt2 m = { 0 }, c = { 0 };
	struct ct_base_layout bl;
	const unsigned char *b;
	float s, amax = 0.0f, *w;

	(void)state;
	model_of(&tiny, &m);
	ct_base_layout(&tiny, CT_BASE_Q8, &bl);
	for (int t = 0; t < CT_GPT2_NTENSORS; t++)
		assert_int_equal(bl.off[t] % CT_BASE_Q8_ALIGN, 0);
	assert_int_equal(ct_base_convert(&tiny, m.params, CT_BASE_Q8, &c), 0);
	b = c.base + bl.off[CT_QKVW];
	for (int i = 0; i < 32; i++)
		amax = fabsf(m.params[m.lay.offset[CT_QKVW] + i]) > amax
			? fabsf(m.params[m.lay.offset[CT_QKVW] + i]) : amax;
	memcpy(&s, b, 4);
	assert_true(s == amax / 127.0f);
	for (int i = 0; i < 32; i++) {
		float x = m.params[m.lay.offset[CT_QKVW] + i];

		assert_int_equal((signed char)b[4 + i], (int)rintf(x / s));
		assert_true(ct_q8_at(b, (size_t)i) == (float)(signed char)b[4 + i] * s);
	}
	assert_int_equal(ct_base_params_f32(&c, &w), 0);
	/* close to the weights, not equal; norms kept */
	for (size_t i = 0; i < m.lay.size[CT_FCW]; i++)
		assert_true(fabsf(w[m.lay.offset[CT_FCW] + i] - m.params[m.lay.offset[CT_FCW] + i]) <=
			    0.0005f);
	assert_memory_equal(w + m.lay.offset[CT_LN2W], m.params + m.lay.offset[CT_LN2W],
			    4 * m.lay.size[CT_LN2W]);
	assert_false(ct_base_exact(&tiny, m.params, CT_BASE_Q8));
	assert_int_equal(ct_base_save(ct_test_path("q8.ctb"), &c), 0);
	ct_gpt2_free(&c);
	assert_int_equal(ct_base_load(ct_test_path("q8.ctb"), &c), 0);
	assert_int_equal(c.fmt, CT_BASE_Q8);
	free(w);
	ct_gpt2_free(&c);
	ct_gpt2_free(&m);
}

/* nf4: blocks of 64, scale amax, each code the nearest table value of
 * x / s, two a byte (low nibble first); widening is value * s. */
static void test_nf4(void **state)
{
	struct ct_gpt2 m = { 0 }, c = { 0 };
	struct ct_base_layout bl;
	const unsigned char *b;
	const float *x;
	float s, amax = 0.0f;

	(void)state;
	model_of(&tiny, &m);
	ct_base_layout(&tiny, CT_BASE_NF4, &bl);
	assert_int_equal(ct_base_convert(&tiny, m.params, CT_BASE_NF4, &c), 0);
	b = c.base + bl.off[CT_FCW];
	x = m.params + m.lay.offset[CT_FCW];
	for (int i = 0; i < 64; i++)
		amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
	memcpy(&s, b, 4);
	assert_true(s == amax);
	assert_true(ct_nf4_code(0) == -1.0f && ct_nf4_code(7) == 0.0f && ct_nf4_code(15) == 1.0f);
	for (int i = 0; i < 64; i++) {
		int code = (i & 1) ? b[4 + i / 2] >> 4 : b[4 + i / 2] & 15;
		float y = x[i] / s, d = fabsf(y - ct_nf4_code(code));

		for (int j = 0; j < 16; j++)	/* nearest, the lower on a tie */
			assert_true(fabsf(y - ct_nf4_code(j)) > d ||
				    (fabsf(y - ct_nf4_code(j)) == d && j >= code));
		assert_true(ct_nf4_at(b, (size_t)i) == ct_nf4_code(code) * s);
	}
	/* the second block starts at byte 36 with its own scale */
	memcpy(&s, b + 36, 4);
	amax = 0.0f;
	for (int i = 64; i < 128; i++)
		amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
	assert_true(s == amax);
	ct_gpt2_free(&c);
	ct_gpt2_free(&m);
}

static void lora_hp(struct ct_wu_hparams *hp, int fmt)
{
	ct_test_tiny_hparams(hp, 5);
	hp->lr = 1e-2f;
	hp->grad_clip = 1.0f;
	hp->lora = (struct ct_lora_spec){ .rank = 4, .alpha = 8.0f, .targets = CT_LORA_ALL,
					  .base_fmt = fmt };
	hp->lora_seed = 5;
}

/* A compact WU == the float32 WU on the widened weights, bit for bit. */
static void check_equal(const struct ct_model_config *cfg, int fmt)
{
	struct ct_gpt2 m = { 0 }, w = { 0 }, c = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams h32, h16;
	ct_tok *t = malloc(300 * sizeof(ct_tok));
	float la[5], lb[5], lc[5], ld[5], *a, *b, *d, *e;
	size_t n;

	model_of(cfg, &m);
	widened_as(&m, fmt, &w);
	for (int i = 0; i < 300; i++)
		t[i] = (ct_tok)((i * 7 + i / 13) % cfg->V);
	assert_int_equal(ct_tokens_from_array(&tok, t, 300), 0);
	lora_hp(&h32, CT_BASE_F32);
	lora_hp(&h16, fmt);
	n = ct_lora_nparams(cfg, &h32.lora);
	a = malloc(n * 4);
	b = malloc(n * 4);
	d = malloc(n * 4);
	e = malloc(n * 4);
	assert_int_equal(ct_wu_run(&w, &tok, &h32, "cpu", a, la), 0);
	/* converted by the WU from the float32 model */
	assert_int_equal(ct_wu_run(&m, &tok, &h16, "cpu", b, lb), 0);
	assert_memory_equal(a, b, n * 4);
	assert_memory_equal(la, lb, sizeof(la));
	/* given compact */
	assert_int_equal(ct_base_convert(cfg, m.params, fmt, &c), 0);
	assert_int_equal(ct_wu_run(&c, &tok, &h16, "cpu", d, lc), 0);
	assert_memory_equal(a, d, n * 4);
	assert_memory_equal(la, lc, sizeof(la));
	/* the unrounded model trains differently: the test can fail */
	assert_int_equal(ct_wu_run(&m, &tok, &h32, "cpu", e, ld), 0);
	assert_memory_not_equal(a, e, n * 4);
	/* a compact base and full fine-tuning do not mix */
	h16.lora.rank = 0;
	assert_int_equal(ct_wu_run(&m, &tok, &h16, "cpu", e, ld), CT_EINVAL);
	/* resumed after every step: the uninterrupted bytes */
	h16.lora.rank = 4;
	ct_test_wu_resume_each(&c, &tok, &h16, ct_test_path("s"), ct_base_fmt_name(fmt),
			       ct_wu_read_adapters, n, a, la);
	/* a state saved on the float32 base is not the bf16 WU's */
	ct_test_wu_save_at(&w, &tok, &h32, 2, ct_test_path("s32"));
	{
		struct ct_wu *wu = NULL;

		assert_int_equal(ct_wu_resume(ct_test_path("s32"), &c, &tok, &h16, "cpu", &wu),
				 CT_EMISMATCH);
		assert_null(wu);
	}
	free(t);
	free(a);
	free(b);
	free(d);
	free(e);
	ct_tokens_free(&tok);
	ct_gpt2_free(&m);
	ct_gpt2_free(&w);
	ct_gpt2_free(&c);
}

static void test_wu_gpt2(void **state)
{
	(void)state;
	check_equal(&tiny, CT_BASE_BF16);
	check_equal(&tiny, CT_BASE_Q8);
	check_equal(&tiny, CT_BASE_NF4);
}

static void test_wu_llama(void **state)
{
	struct ct_model_config c = tiny_llama();

	(void)state;
	check_equal(&c, CT_BASE_BF16);
	check_equal(&c, CT_BASE_Q8);
	check_equal(&c, CT_BASE_NF4);
	c.flags = CT_LLAMA_TIED;
	check_equal(&c, CT_BASE_BF16);
	check_equal(&c, CT_BASE_Q8);
	check_equal(&c, CT_BASE_NF4);
}

/* The WU memory bound the scheduler uses (ct_wu_mem_bytes): the OpenCL
 * device memory of doc/workunit.md §13 "Memory" (ct_ocl_wu_bytes); a
 * full-weight WU adds the gradients and both moments of every weight, a
 * compact base lowers it in the order of its bytes a weight (nf4 < q8
 * < bf16; against f32 only where the weights outweigh the widening
 * scratch), and it grows with B. (test_ocl_base holds it to a WU's measured peak.) */
static void test_mem_bound(void **state)
{
	struct ct_model_config c = tiny_llama();
	struct ct_gpt2_layout lay;
	struct ct_wu_hparams hp;
	uint64_t need[CT_BASE_NFMT], full;

	(void)state;
	ct_gpt2_layout(&c, &lay);
	ct_wu_hparams_default(&hp);
	hp.B = 2;
	hp.T = 8;
	full = ct_wu_mem_bytes(&c, &hp);
	assert_int_equal(full, ct_ocl_wu_bytes(&c, &hp, NULL));
	hp.lora = (struct ct_lora_spec){ .rank = 4, .alpha = 4, .targets = CT_LORA_ALL };
	for (int f = 0; f < CT_BASE_NFMT; f++) {
		hp.lora.base_fmt = f;
		need[f] = ct_wu_mem_bytes(&c, &hp);
		assert_int_equal(need[f], ct_ocl_wu_bytes(&c, &hp, NULL));
	}
	assert_true(full >= need[CT_BASE_F32] + 12 * (uint64_t)lay.total -
				   4 * (uint64_t)ct_lora_state_floats(&c, &hp.lora, hp.B, hp.T, 1));
	assert_true(need[CT_BASE_NF4] < need[CT_BASE_Q8] && need[CT_BASE_Q8] < need[CT_BASE_BF16]);
	assert_true(need[CT_BASE_F32] < full);
	hp.B = 4;
	assert_true(ct_wu_mem_bytes(&c, &hp) > need[CT_BASE_NFMT - 1]);
}

/* The C reference's bound (ct_ref_wu_bytes) covers the OpenCL one at a
 * real shape (Llama-3.2-1B, B=4 T=512) for a full-weight WU and every
 * base format, and for an nf4 LoRA WU it is more than 3x: every layer's
 * activations (10264 against 2486 MiB). At toy shapes OpenCL's fixed
 * scratch can outweigh it, which the scheduler's larger-of-the-two for
 * a host that names no backend covers. */
static void test_ref_mem_bound(void **state)
{
	const struct ct_model_config big = {
		.maxT = 4096, .V = 128256, .Vp = 128256, .L = 16, .NH = 32, .C = 2048,
		.arch = CT_ARCH_LLAMA, .KVH = 8, .F = 8192, .flags = CT_LLAMA_TIED,
		.rope_theta = 500000.0, .rms_eps = 1e-5
	};
	struct ct_wu_hparams hp;

	(void)state;
	ct_wu_hparams_default(&hp);
	hp.B = 4;
	hp.T = 512;
	assert_int_equal(ct_wu_hparams_check(&hp, &big, 1u << 20), 0);
	assert_true(ct_ref_wu_bytes(&big, &hp) >= ct_wu_mem_bytes(&big, &hp));
	hp.lora = (struct ct_lora_spec){ .rank = 16, .alpha = 32, .targets = CT_LORA_ALL };
	for (int f = 0; f < CT_BASE_NFMT; f++) {
		hp.lora.base_fmt = f;
		assert_int_equal(ct_wu_hparams_check(&hp, &big, 1u << 20), 0);
		assert_true(ct_ref_wu_bytes(&big, &hp) >= ct_wu_mem_bytes(&big, &hp));
	}
	assert_true(ct_ref_wu_bytes(&big, &hp) > 3 * ct_wu_mem_bytes(&big, &hp));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bf16_rounding),
		cmocka_unit_test(test_layout_and_file),
		cmocka_unit_test(test_q8),
		cmocka_unit_test(test_nf4),
		cmocka_unit_test(test_wu_gpt2),
		cmocka_unit_test(test_wu_llama),
		cmocka_unit_test(test_mem_bound),
		cmocka_unit_test(test_ref_mem_bound),
	};

	return cmocka_run_group_tests(tests, ct_test_dir_setup, ct_test_dir_teardown);
}
