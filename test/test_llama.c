/*
 * test_llama.c - the Llama model type (ct_llama.h) and its file formats:
 * the JSON reader (ct_jv.h) on valid and hostile input, safetensors
 * writing and reading (F16/BF16 widening exact, bad headers refused), the
 * Llama checkpoint (round trip, exact size, reserved bytes, bad configs),
 * the RoPE tables against libm, training bit-identical across thread
 * counts (separate processes, since the thread count is read once) and
 * across a save/resume, LoRA sizes, FLOPs, and the OpenCL refusal. The
 * arithmetic itself is checked against PyTorch by test/llama_torch.sh.
 */
#include "ct_test_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_jv.h"
#include "ct_le.h"
#include "ct_llama.h"
#include "ct_llama_hf.h"
#include "ct_lora.h"
#include "ct_safetensors.h"

#include <math.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct ct_jv_limits LIM = { .max_bytes = 4096, .max_values = 64,
					 .max_depth = 4 };

/* L=2 C=32 NH=4 KVH=2 F=48 V=50, untied, q/k/v biases. */
static struct ct_model_config tiny_llama(void)
{
	return (struct ct_model_config){ .maxT = 16, .V = 50, .Vp = 50, .L = 2, .NH = 4,
					.C = 32, .arch = CT_ARCH_LLAMA, .KVH = 2, .F = 48,
					.flags = CT_LLAMA_QKV_BIAS, .rope_theta = 10000.0,
					.rms_eps = 1e-5 };
}

static int parse(const char *s, struct ct_jv **v)
{
	return ct_jv_parse(s, strlen(s), &LIM, "t.json", v);
}

static void test_json(void **state)
{
	static const char *const bad[] = {
		"", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "\"\\ud800\"", "\"\\udc00x\"",
		"\"\\u0000\"", "\"a\x01\"", "tru", "{\"a\" 1}", "[[[[[1]]]]]", "1 2", "\"\\q\"",
		"[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,"
		"29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,"
		"55,56,57,58,59,60,61,62,63,64]",
	};
	struct ct_jv *v = NULL;
	int64_t x;

	(void)state;
	assert_int_equal(parse(" {\"a\": [1, -2.5e-1, true, null], \"s\": \"x\\u00e9\\ud83d"
			       "\\ude00\\n\", \"a\": 7} ", &v), 0);
	assert_int_equal(ct_jv_get(v, "a")->type, CT_JV_NUM);	/* the last one wins */
	assert_int_equal(ct_jv_int(ct_jv_get(v, "a"), 0, 10, "a", &x), 0);
	assert_int_equal(x, 7);
	assert_string_equal(ct_jv_get(v, "s")->str, "x\xc3\xa9\xf0\x9f\x98\x80\n");
	assert_true(v->items[0].items[1].num == -0.25);
	assert_int_equal(ct_jv_int(&v->items[0].items[1], -10000, 0, "n", &x), CT_EFORMAT);
	assert_null(ct_jv_get(v, "missing"));
	ct_jv_free(v);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = NULL;
		assert_true(parse(bad[i], &v) < 0);
		assert_null(v);
	}
}

/* A safetensors image by hand: header text then data bytes. */
static void write_st(const char *path, const char *json, const void *data, size_t n)
{
	size_t hl = strlen(json);
	unsigned char *buf = malloc(8 + hl + n);

	ct_le_put64(buf, hl);
	memcpy(buf + 8, json, hl);
	memcpy(buf + 8 + hl, data, n);
	assert_int_equal(ct_file_write_atomic(path, buf, 8 + hl + n, 0644), 0);
	free(buf);
}

static void test_safetensors(void **state)
{
	float a[6] = { 1, -2, 3.5f, 1e-30f, -0.0f, 7 }, out[6];
	struct ct_st_out o = { .name = "w", .ndim = 2, .shape = { 2, 3 }, .data = a };
	struct ct_st_file f;

	(void)state;
	assert_int_equal(ct_st_write(ct_test_path("a.safetensors"), &o, 1), 0);
	assert_int_equal(ct_st_open(ct_test_path("a.safetensors"), &f), 0);
	assert_int_equal(f.nt, 1);
	assert_int_equal(((uintptr_t)f.data - (uintptr_t)f.map.addr) % 8, 0);
	assert_int_equal(ct_st_read_f32(&f, ct_st_find(&f, "w"), out, 6), 0);
	assert_memory_equal(out, a, sizeof(a));
	assert_int_equal(ct_st_read_f32(&f, ct_st_find(&f, "w"), out, 5), CT_EFORMAT);
	ct_st_close(&f);

	write_st(ct_test_path("h.safetensors"), "{\"h\":{\"dtype\":\"F16\",\"shape\":[4],"
		 "\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"BF16\",\"shape\":[2],"
		 "\"data_offsets\":[8,12]},\"i\":{\"dtype\":\"I64\",\"shape\":[],"
		 "\"data_offsets\":[12,20]}}", /* F16 1, 2^-24, -inf, -2; BF16 1, 3.140625; 8 bytes of I64 */
		 "\0<\1\0\0\xfc\0\xc0\x80?I@01234567", 20);
	assert_int_equal(ct_st_open(ct_test_path("h.safetensors"), &f), 0);
	assert_int_equal(ct_st_read_f32(&f, ct_st_find(&f, "h"), out, 4), 0);
	assert_true(out[0] == 1.0f && out[1] == ldexpf(1.0f, -24) && isinf(out[2]) &&
		    out[2] < 0 && out[3] == -2.0f);
	assert_int_equal(ct_st_read_f32(&f, ct_st_find(&f, "b"), out, 2), 0);
	assert_true(out[0] == 1.0f && out[1] == 3.140625f);
	assert_int_equal(ct_st_read_f32(&f, ct_st_find(&f, "i"), out, 1), CT_EUNSUPP);
	assert_non_null(strstr(ct_errmsg(CT_EUNSUPP), "I64"));
	ct_st_close(&f);

	/* offsets past the data, a size that does not match, an unknown dtype */
	write_st(ct_test_path("b1"), "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],"
		 "\"data_offsets\":[0,16]}}", "01234567", 8);
	write_st(ct_test_path("b2"), "{\"w\":{\"dtype\":\"F32\",\"shape\":[3],"
		 "\"data_offsets\":[0,8]}}", "01234567", 8);
	write_st(ct_test_path("b3"), "{\"w\":{\"dtype\":\"Q4\",\"shape\":[2],"
		 "\"data_offsets\":[0,8]}}", "01234567", 8);
	write_st(ct_test_path("b4"), "{\"w\":{\"dtype\":\"F32\",\"shape\":[-2],"
		 "\"data_offsets\":[0,8]}}", "01234567", 8);
	assert_int_equal(ct_st_open(ct_test_path("b1"), &f), CT_EFORMAT);
	assert_int_equal(ct_st_open(ct_test_path("b2"), &f), CT_EFORMAT);
	assert_int_equal(ct_st_open(ct_test_path("b3"), &f), CT_EFORMAT);
	assert_int_equal(ct_st_open(ct_test_path("b4"), &f), CT_EFORMAT);
	assert_int_equal(ct_file_write_atomic(ct_test_path("b5"), "\xff\xff\xff\xff\0\0\0\0{}",
					      10, 0644), 0);
	assert_int_equal(ct_st_open(ct_test_path("b5"), &f), CT_EFORMAT);
}

static void test_checkpoint(void **state)
{
	struct ct_model_config c = tiny_llama(), bad;
	struct ct_gpt2 m = { 0 }, back = { 0 };
	unsigned char *img, *img2;
	size_t n, n2;

	(void)state;
	assert_int_equal(ct_gpt2_alloc(&m, &c), 0);
	assert_int_equal(ct_gpt2_init_random(&c, 7, m.params), 0);
	assert_int_equal(m.lay.size[CT_LN1B] + m.lay.size[CT_FCB] + m.lay.size[CT_LNFB], 0);
	assert_int_equal(m.lay.size[CT_QKVW], 2 * (4 + 4) * 8 * 32);
	assert_int_equal(ct_gpt2_save(ct_test_path("m.ct"), &c, m.params), 0);
	assert_int_equal(ct_gpt2_load(ct_test_path("m.ct"), &back), 0);
	assert_true(back.cfg.arch == CT_ARCH_LLAMA && back.cfg.KVH == 2 && back.cfg.F == 48 &&
		    back.cfg.flags == c.flags && back.cfg.rope_theta == c.rope_theta &&
		    back.cfg.rms_eps == c.rms_eps && back.cfg.rope_factor == 0.0);
	assert_memory_equal(back.params, m.params, m.lay.total * sizeof(float));
	assert_int_equal(ct_gpt2_save(ct_test_path("m2.ct"), &back.cfg, back.params), 0);
	ct_gpt2_free(&back);
	assert_int_equal(ct_file_read_all(ct_test_path("m2.ct"), 0, &img2, &n2), 0);
	assert_int_equal(ct_file_read_all(ct_test_path("m.ct"), 0, &img, &n), 0);
	assert_int_equal(n, CT_GPT2_HEADER_BYTES + m.lay.total * sizeof(float));
	assert_int_equal(n2, n);
	assert_memory_equal(img2, img, n);	/* load + save gives the same bytes */
	free(img2);
	assert_int_equal(ct_gpt2_load_mem(img, n - 4, "short", &back), CT_EFORMAT);
	img[500] = 1;		/* reserved header byte */
	assert_int_equal(ct_gpt2_load_mem(img, n, "reserved", &back), CT_EFORMAT);
	img[500] = 0;
	img[4] = 9;		/* version */
	assert_int_equal(ct_gpt2_load_mem(img, n, "version", &back), CT_EFORMAT);
	free(img);
	ct_gpt2_free(&m);
	bad = c;
	bad.KVH = 3;
	assert_int_equal(ct_gpt2_config_check(&bad), CT_EFORMAT);
	bad = c;
	bad.NH = 32;		/* hs 1: odd */
	bad.KVH = 32;
	assert_int_equal(ct_gpt2_config_check(&bad), CT_EFORMAT);
	bad = c;
	bad.rope_factor = 8.0;	/* scaling without its other fields */
	assert_int_equal(ct_gpt2_config_check(&bad), CT_EFORMAT);
	bad = c;
	bad.arch = 7;
	assert_int_equal(ct_gpt2_config_check(&bad), CT_EFORMAT);
}

static void test_rope_table(void **state)
{
	struct ct_model_config c = tiny_llama();
	const int T = 4096, h2 = 4;
	float *tab = malloc((size_t)T * 8 * sizeof(float));
	double f[4], worst = 0;

	(void)state;
	c.C = 64;		/* hs 8: 4 frequencies */
	c.NH = 8;
	c.KVH = 8;
	c.maxT = T;
	ct_llama_inv_freq(&c, f);
	for (int i = 0; i < h2; i++)
		assert_true(fabs(f[i] - pow(10000.0, -(2.0 * i) / 8.0)) <= 1e-15 * f[i]);
	assert_int_equal(ct_llama_rope_table(&c, T, tab), 0);
	for (int t = 0; t < T; t += 7)
		for (int i = 0; i < h2; i++) {
			double a = (double)t * pow(10000.0, -(2.0 * i) / 8.0);
			double ec = fabs(tab[(t * h2 + i) * 2] - cos(a));
			double es = fabs(tab[(t * h2 + i) * 2 + 1] - sin(a));

			worst = fmax(worst, fmax(ec, es));
		}
	assert_true(worst <= 6e-8);	/* float rounding of the double value */
	free(tab);
}

/* Train the tiny Llama 3 steps with CTUNE_THREADS=threads in a child
 * process and write the weights to path. */
static void train_child(const char *threads, const char *path)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct ct_model_config c = tiny_llama();
		struct ct_gpt2 m = { 0 };
		struct ct_tokens tok = { 0 };
		struct ct_wu_hparams hp;
		ct_tok t[200];
		int rc;

		setenv("CTUNE_THREADS", threads, 1);
		for (int i = 0; i < 200; i++)
			t[i] = (ct_tok)(i * 7 % 50);
		rc = ct_gpt2_alloc(&m, &c);
		if (rc == 0)
			rc = ct_gpt2_init_random(&c, 3, m.params);
		if (rc == 0)
			rc = ct_tokens_from_array(&tok, t, 200);
		ct_test_tiny_hparams(&hp, 3);
		if (rc == 0)
			rc = ct_wu_run(&m, &tok, &hp, "cpu", m.params, NULL);
		if (rc == 0)
			rc = ct_gpt2_save(path, &c, m.params);
		_exit(rc == 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_threads_identical(void **state)
{
	unsigned char *a, *b;
	size_t na, nb;

	(void)state;
	train_child("1", ct_test_path("t1.ct"));
	train_child("3", ct_test_path("t3.ct"));
	assert_int_equal(ct_file_read_all(ct_test_path("t1.ct"), 0, &a, &na), 0);
	assert_int_equal(ct_file_read_all(ct_test_path("t3.ct"), 0, &b, &nb), 0);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, na);
	free(a);
	free(b);
}

/* Save after 2 of 4 steps, resume: same weights as running straight. */
static void test_resume_identical(void **state)
{
	struct ct_model_config c = tiny_llama();
	struct ct_gpt2 m = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams hp;
	struct ct_wu *wu = NULL;
	ct_tok t[200];
	float *straight, *resumed, loss;

	(void)state;
	c.flags = CT_LLAMA_TIED;
	for (int i = 0; i < 200; i++)
		t[i] = (ct_tok)(i * 11 % 50);
	assert_int_equal(ct_gpt2_alloc(&m, &c), 0);
	assert_int_equal(ct_gpt2_init_random(&c, 5, m.params), 0);
	assert_int_equal(ct_tokens_from_array(&tok, t, 200), 0);
	ct_test_tiny_hparams(&hp, 4);
	straight = malloc(m.lay.total * sizeof(float));
	resumed = malloc(m.lay.total * sizeof(float));
	assert_int_equal(ct_wu_run(&m, &tok, &hp, "cpu", straight, NULL), 0);
	ct_test_wu_save_at(&m, &tok, &hp, 2, ct_test_path("wu.state"));
	assert_int_equal(ct_wu_resume(ct_test_path("wu.state"), &m, &tok, &hp, "cpu", &wu), 0);
	while (!ct_wu_done(wu))
		assert_int_equal(ct_wu_step(wu, &loss), 0);
	assert_int_equal(ct_wu_read_params(wu, resumed), 0);
	assert_memory_equal(straight, resumed, m.lay.total * sizeof(float));
	assert_memory_not_equal(straight, m.params, m.lay.total * sizeof(float));
	ct_wu_close(wu);
	free(straight);
	free(resumed);
	ct_tokens_free(&tok);
	ct_gpt2_free(&m);
}

/* The adapter floats of every LoRA slot of cfg, added up. */
static size_t lora_slots_sum(const struct ct_model_config *cfg, const struct ct_lora_spec *spec)
{
	size_t sum = 0;

	for (int i = 0; i < ct_lora_nslots(cfg, spec); i++) {
		struct ct_lora_slot s;

		ct_lora_slot(cfg, spec, i, &s);
		sum += (size_t)spec->rank * ((size_t)s.in + s.out);
	}
	return sum;
}

static void test_sizes_and_refusal(void **state)
{
	struct ct_model_config smol = { .maxT = 2048, .V = 49152, .Vp = 49152, .L = 30,
				       .NH = 9, .C = 576, .arch = CT_ARCH_LLAMA, .KVH = 3,
				       .F = 1536, .flags = CT_LLAMA_TIED, .rope_theta = 1e5,
				       .rms_eps = 1e-5 };
	struct ct_lora_spec spec = { .rank = 8, .alpha = 8, .targets = CT_LORA_ALL };
	struct ct_backend_ops fake = { .name = "other" };
	struct ct_gpt2_layout lay;

	(void)state;
	assert_int_equal(ct_gpt2_config_check(&smol), 0);
	ct_gpt2_layout(&smol, &lay);
	assert_int_equal(lay.total, 134515008);	/* SmolLM2-135M's parameter count */
	assert_true(fabs(ct_gpt2_flops_per_token(&smol, 64) -
			 3.0 * (2.0 * (30.0 * (960.0 * 576 + 576.0 * 576 + 3.0 * 1536 * 576) +
				       49152.0 * 576) + 2.0 * 30 * 576 * 65)) < 1.0);
	assert_int_equal(lora_slots_sum(&smol, &spec), ct_lora_nparams(&smol, &spec));
	assert_int_equal(ct_backend_supports(&ct_cpu_backend_ops, &smol), 0);
	assert_int_equal(ct_backend_supports(&fake, &smol), CT_EUNSUPP);
	assert_non_null(strstr(ct_errmsg(CT_EUNSUPP), "C reference and OpenCL only"));
}

/* Qwen3: head_dim apart from C/NH and q/k norms need the version 2
 * header, which round-trips to the byte; plain models still write
 * version 1; Qwen3-0.6B's sizes, FLOPs and LoRA slots. */
static void test_qwen3(void **state)
{
	struct ct_model_config c = tiny_llama(), bad;
	struct ct_model_config q06 = { .maxT = 4096, .V = 151936, .Vp = 151936, .L = 28,
				      .NH = 16, .C = 1024, .arch = CT_ARCH_LLAMA, .KVH = 8,
				      .F = 3072, .flags = CT_LLAMA_TIED | CT_LLAMA_QK_NORM,
				      .hd = 128, .rope_theta = 1e6, .rms_eps = 1e-6 };
	struct ct_lora_spec spec = { .rank = 8, .alpha = 8, .targets = CT_LORA_ALL };
	struct ct_gpt2 m = { 0 }, back = { 0 };
	struct ct_gpt2_layout lay;
	struct ct_lora_slot sl;
	unsigned char *img, *img2;
	size_t n, n2;

	(void)state;
	c.flags = CT_LLAMA_QK_NORM;
	c.hd = 12;		/* C/NH = 8 */
	assert_int_equal(ct_gpt2_alloc(&m, &c), 0);
	assert_int_equal(m.lay.size[CT_LN1B], 2 * 2 * 12);
	assert_int_equal(m.lay.size[CT_QKVW], 2 * (4 + 4) * 12 * 32);
	assert_int_equal(m.lay.size[CT_ATTPROJW], 2 * 32 * 48);
	assert_int_equal(ct_gpt2_init_random(&c, 3, m.params), 0);
	assert_true(m.params[m.lay.offset[CT_LN1B]] == 1.0f);	/* norm weights start at 1 */
	assert_int_equal(ct_gpt2_save(ct_test_path("q.ct"), &c, m.params), 0);
	assert_int_equal(ct_file_read_all(ct_test_path("q.ct"), 0, &img, &n), 0);
	assert_int_equal(ct_le_get32(img + 4), CT_LLAMA_VERSION_HD);
	assert_int_equal(ct_le_get32(img + 88), 12);
	assert_int_equal(ct_gpt2_load_mem(img, n, "q.ct", &back), 0);
	assert_memory_equal(&back.cfg, &c, sizeof(c));
	assert_int_equal(ct_gpt2_save(ct_test_path("q2.ct"), &back.cfg, back.params), 0);
	ct_gpt2_free(&back);
	assert_int_equal(ct_file_read_all(ct_test_path("q2.ct"), 0, &img2, &n2), 0);
	assert_int_equal(n2, n);
	assert_memory_equal(img2, img, n);
	free(img2);
	img[92] = 1;		/* reserved after head_dim */
	assert_int_equal(ct_gpt2_load_mem(img, n, "reserved", &back), CT_EFORMAT);
	img[92] = 0;
	ct_le_put32(img + 4, CT_LLAMA_VERSION);	/* q/k norms in a version 1 file */
	assert_int_equal(ct_gpt2_load_mem(img, n, "v1", &back), CT_EFORMAT);
	free(img);
	ct_gpt2_free(&m);
	c = tiny_llama();	/* nothing new: still version 1 */
	assert_int_equal(ct_gpt2_alloc(&m, &c), 0);
	assert_int_equal(ct_gpt2_save(ct_test_path("p.ct"), &c, m.params), 0);
	assert_int_equal(ct_file_read_all(ct_test_path("p.ct"), 0, &img, &n), 0);
	assert_int_equal(ct_le_get32(img + 4), CT_LLAMA_VERSION);
	free(img);
	ct_gpt2_free(&m);
	bad = c;
	bad.hd = 8;		/* C/NH must be written 0 */
	assert_int_equal(ct_gpt2_config_check(&bad), CT_EFORMAT);
	bad.hd = 7;		/* odd */
	assert_int_equal(ct_gpt2_config_check(&bad), CT_EFORMAT);
	bad.hd = CT_LLAMA_MAX_HD + 2;
	assert_int_equal(ct_gpt2_config_check(&bad), CT_EFORMAT);
	assert_int_equal(ct_gpt2_config_check(&q06), 0);
	ct_gpt2_layout(&q06, &lay);
	assert_int_equal(lay.total, 596049920);	/* Qwen3-0.6B's parameter count */
	assert_true(fabs(ct_gpt2_flops_per_token(&q06, 64) -
			 3.0 * (2.0 * (28.0 * (4096.0 * 1024 + 2048.0 * 1024 + 3.0 * 3072 * 1024) +
				       151936.0 * 1024) + 2.0 * 28 * 2048 * 65)) < 1.0);
	ct_lora_slot(&q06, &spec, 1, &sl);	/* layer 0's o_proj: A = 2048 -> C */
	assert_true(sl.target == CT_LORA_ATTPROJ && sl.in == 2048 && sl.out == 1024);
	assert_int_equal(lora_slots_sum(&q06, &spec), ct_lora_nparams(&q06, &spec));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_safetensors),
		cmocka_unit_test(test_checkpoint),
		cmocka_unit_test(test_rope_table),
		cmocka_unit_test(test_threads_identical),
		cmocka_unit_test(test_resume_identical),
		cmocka_unit_test(test_sizes_and_refusal),
		cmocka_unit_test(test_qwen3),
	};

	return cmocka_run_group_tests(tests, ct_test_dir_setup, ct_test_dir_teardown);
}
