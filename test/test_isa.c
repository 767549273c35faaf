/*
 * test_isa.c - every kernel path of the C reference (engine/ct_isa.h:
 * x86-64, AVX2 + FMA, AVX-512) computes the same bits: each kernel on
 * fixed inputs with awkward shapes (vector and tile remainders, threads,
 * the grad-norm chunk boundary, subnormal inputs), then a few full
 * training steps of a tiny GPT-2 and a tiny Llama and a LoRA merge, on
 * every path this CPU runs, compared with the x86-64 path by memcmp.
 * Paths the CPU lacks are reported and skipped (never silently passed as
 * run); on a CPU with none but x86-64 the comparison has nothing to do.
 * Also the path names and ct_isa_set's refusals.
 */
#include "config.h"
#include "ct_test_engine.h"
#include "ct_isa.h"
#include "ct_model.h"
#include "ct_llama.h"
#include "ct_lora.h"

#include <math.h>

/* The outputs of one run of the battery, kernel by kernel. */
#define MAX_OUT 64
struct outs {
	int n;
	const char *name[MAX_OUT];
	float *p[MAX_OUT];
	size_t len[MAX_OUT];
};

static float *keep(struct outs *o, const char *name, const float *p, size_t n)
{
	float *c = malloc(n * sizeof(float));

	assert_non_null(c);
	assert_true(o->n < MAX_OUT);
	memcpy(c, p, n * sizeof(float));
	o->name[o->n] = name;
	o->p[o->n] = c;
	o->len[o->n] = n;
	o->n++;
	return c;
}

static void outs_free(struct outs *o)
{
	for (int i = 0; i < o->n; i++)
		free(o->p[i]);
	o->n = 0;
}

/* n floats from seed, uniform in [-scale, scale], every 97th one subnormal. */
static float *input(size_t n, uint32_t seed, float scale)
{
	float *p = malloc(n * sizeof(float));

	assert_non_null(p);
	ct_test_fill(p, n, seed, scale);
	for (size_t i = 5; i < n; i += 97)
		p[i] = (i & 1 ? -1.0f : 1.0f) * 1e-40f;
	return p;
}

static float *zeros(size_t n)
{
	float *p = calloc(n, sizeof(float));

	assert_non_null(p);
	return p;
}

/* out (M,N) = inp (M,K) x w (N,K)^T + bias, and its backward, twice: one
 * small and ragged, one large enough for the worker threads. */
static void run_matmul(struct outs *o, int M, int K, int N, uint32_t seed)
{
	float *inp = input((size_t)M * K, seed, 1.0f), *w = input((size_t)N * K, seed + 1, 0.5f);
	float *bias = input(N, seed + 2, 0.1f), *out = zeros((size_t)M * N);
	float *dout = input((size_t)M * N, seed + 3, 1.0f), *dinp = input((size_t)M * K, seed + 4, 0.01f);
	float *dw = input((size_t)N * K, seed + 5, 0.01f), *db = input(N, seed + 6, 0.01f);

	ct_matmul_forward(out, inp, w, bias, M, K, N);
	keep(o, "matmul_forward", out, (size_t)M * N);
	ct_matmul_forward(out, inp, w, NULL, M, K, N);
	keep(o, "matmul_forward (no bias)", out, (size_t)M * N);
	ct_matmul_backward(dinp, dw, db, dout, inp, w, M, K, N);
	keep(o, "matmul_backward dinp", dinp, (size_t)M * K);
	keep(o, "matmul_backward dw", dw, (size_t)N * K);
	keep(o, "matmul_backward dbias", db, N);
	free(inp), free(w), free(bias), free(out), free(dout), free(dinp), free(dw), free(db);
}

static void run_layernorm(struct outs *o, int BT, int C)
{
	float *x = input((size_t)BT * C, 11, 2.0f), *w = input(C, 12, 1.0f), *b = input(C, 13, 0.5f);
	float *y = zeros((size_t)BT * C), *mean = zeros(BT), *rstd = zeros(BT);
	float *dy = input((size_t)BT * C, 14, 1.0f), *dx = input((size_t)BT * C, 15, 0.01f);
	float *dw = zeros(C), *db = zeros(C);

	ct_layernorm_forward(y, mean, rstd, x, w, b, BT, C);
	keep(o, "layernorm_forward out", y, (size_t)BT * C);
	keep(o, "layernorm_forward mean", mean, BT);
	keep(o, "layernorm_forward rstd", rstd, BT);
	ct_layernorm_backward(dx, dw, db, dy, x, w, mean, rstd, BT, C);
	keep(o, "layernorm_backward dinp", dx, (size_t)BT * C);
	keep(o, "layernorm_backward dw", dw, C);
	keep(o, "layernorm_backward db", db, C);
	free(x), free(w), free(b), free(y), free(mean), free(rstd), free(dy), free(dx);
	free(dw), free(db);
}

/* GPT-2 attention, stored and recomputed, and Llama's grouped-query one. */
static void run_attention(struct outs *o)
{
	const int B = 2, T = 9, C = 24, NH = 3, KVH = 1, hs = 8, QS = (NH + 2 * KVH) * hs;
	size_t nq = (size_t)B * T * 3 * C, nc = (size_t)B * T * C, na = (size_t)B * NH * T * T;
	float *qkv = input(nq, 21, 1.0f), *out = zeros(nc), *att = zeros(na);
	float *dout = input(nc, 22, 1.0f), *dqkv = zeros(nq), *datt = zeros(na);
	float *stat = zeros((size_t)B * NH * T * 2), *row = zeros(T);
	float *scratch = zeros(ct_attention_scratch_floats(T, C, NH) + (size_t)T * QS);
	float *gq = input((size_t)B * T * QS, 23, 1.0f), *gd = zeros((size_t)B * T * QS);

	ct_attention_forward(out, att, qkv, B, T, C, NH);
	keep(o, "attention_forward out", out, nc);
	keep(o, "attention_forward att", att, na);
	ct_attention_backward(dqkv, datt, dout, qkv, att, B, T, C, NH);
	keep(o, "attention_backward dqkv", dqkv, nq);
	ct_attention_forward_recompute(out, stat, row, qkv, B, T, C, NH);
	keep(o, "attention_forward_recompute out", out, nc);
	keep(o, "attention_forward_recompute stat", stat, (size_t)B * NH * T * 2);
	memset(dqkv, 0, nq * sizeof(float));
	ct_attention_backward_recompute(dqkv, scratch, dout, qkv, stat, B, T, C, NH);
	keep(o, "attention_backward_recompute dqkv", dqkv, nq);
	ct_gqa_forward(out, stat, row, gq, B, T, NH, KVH, hs);
	keep(o, "gqa_forward out", out, nc);
	ct_gqa_backward(gd, scratch, dout, gq, stat, B, T, NH, KVH, hs);
	keep(o, "gqa_backward dqkv", gd, (size_t)B * T * QS);
	free(qkv), free(out), free(att), free(dout), free(dqkv), free(datt), free(stat);
	free(row), free(scratch), free(gq), free(gd);
}

static void run_elementwise(struct outs *o)
{
	const size_t n = 1001, ng = 70001;	/* ng: past one CT_CLIP_CHUNK */
	const int BT = 5, V = 61, Vp = 64;
	float *x = input(n, 31, 6.0f), *y = zeros(n), *dy = input(n, 32, 1.0f);
	float *dx = input(n, 33, 0.01f), *p = input(n, 34, 1.0f), *m = input(n, 35, 0.01f);
	float *v = input(n, 36, 0.01f), *g = input(ng, 37, 0.1f);
	float *logits = input((size_t)BT * Vp, 38, 8.0f), *probs = zeros((size_t)BT * Vp);
	float losses[5], norm;
	ct_tok tg[5] = { 0, 60, 7, 33, 12 };
	struct ct_adamw_args a = { .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
				   .weight_decay = 0.01f };

	for (size_t i = 0; i < n; i++)
		v[i] = fabsf(v[i]);	/* second moments are >= 0 */
	ct_gelu_forward(y, x, n);
	keep(o, "gelu_forward", y, n);
	ct_gelu_backward(dx, x, dy, n);
	keep(o, "gelu_backward", dx, n);
	ct_crossentropy_forward(losses, probs, logits, tg, BT, V, Vp);
	keep(o, "crossentropy_forward probs", probs, (size_t)BT * Vp);
	keep(o, "crossentropy_forward losses", losses, BT);
	ct_adamw_bias_corrections(a.beta1, a.beta2, 3, &a.bc1, &a.bc2);
	ct_adamw_update(p, dx, m, v, n, &a);
	keep(o, "adamw_update p", p, n);
	keep(o, "adamw_update m", m, n);
	keep(o, "adamw_update v", v, n);
	norm = ct_grad_norm(g, ng);
	keep(o, "grad_norm", &norm, 1);
	free(x), free(y), free(dy), free(dx), free(p), free(m), free(v), free(g);
	free(logits), free(probs);
}

/* Three training steps of a model of cfg from its seeded initialisation;
 * keeps the parameters and the losses. */
static void run_steps(struct outs *o, const char *name, const struct ct_model_config *cfg)
{
	struct ct_gpt2_layout lay;
	struct ct_model m;
	const int B = 2, T = 16;
	ct_tok in[32], tg[32];
	float loss[3], *p;
	uint32_t seed = 41;

	ct_gpt2_layout(cfg, &lay);
	p = malloc(lay.total * sizeof(float));
	assert_non_null(p);
	assert_int_equal(ct_gpt2_init_random(cfg, 9, p), 0);
	assert_int_equal(ct_model_init(&m, cfg, p, B, T, 1), 0);
	free(p);
	for (int i = 0; i < B * T; i++) {
		in[i] = (ct_tok)(ct_test_lcg(&seed) % cfg->V);
		tg[i] = (ct_tok)(ct_test_lcg(&seed) % cfg->V);
	}
	for (int s = 0; s < 3; s++)
		assert_int_equal(ct_model_step(&m, in, tg, s + 1, 1e-2f, 0.9f, 0.95f, 1e-8f,
					       0.01f, s == 2 ? 0.5f : 0.0f, &loss[s]), 0);
	keep(o, name, m.params, lay.total);
	keep(o, "step losses", loss, 3);
	ct_model_free(&m);
}

static void run_merge(struct outs *o, const struct ct_model_config *cfg)
{
	struct ct_lora_spec spec = { .rank = 3, .alpha = 6.0f, .targets = CT_LORA_ALL };
	struct ct_gpt2_layout lay;
	size_t na = ct_lora_nparams(cfg, &spec);
	float *ad[3], *p;

	ct_gpt2_layout(cfg, &lay);
	p = input(lay.total, 51, 0.2f);
	for (int k = 0; k < 3; k++)
		ad[k] = input(na, 52 + k, 0.3f);
	assert_int_equal(ct_lora_merge(cfg, &spec, p, (const float *const *)ad, 3), 0);
	keep(o, "lora_merge", p, lay.total);
	for (int k = 0; k < 3; k++)
		free(ad[k]);
	free(p);
}

static const struct ct_model_config gpt2_tiny = CT_TEST_TINY_CONFIG;
static const struct ct_model_config llama_tiny = {
	.arch = CT_ARCH_LLAMA, .maxT = 16, .V = 60, .Vp = 60, .L = 2, .NH = 4, .KVH = 2,
	.C = 32, .F = 48, .flags = CT_LLAMA_QKV_BIAS, .rope_theta = 10000.0, .rms_eps = 1e-5,
};

static void battery(struct outs *o)
{
	run_matmul(o, 5, 37, 131, 1);
	run_matmul(o, 67, 256, 259, 2);		/* > 4e6 multiply-adds: threads */
	run_layernorm(o, 5, 37);
	run_attention(o);
	run_elementwise(o);
	run_steps(o, "gpt2 steps", &gpt2_tiny);
	run_steps(o, "llama steps", &llama_tiny);
	run_merge(o, &gpt2_tiny);
}

/* The battery on every path this CPU runs, each against x86-64's bits. */
static void test_paths_same_bits(void **state)
{
	struct outs ref = { 0 }, got = { 0 };
	int ran = 0;

	(void)state;
	assert_int_equal(ct_isa_set(CT_ISA_BASE), 0);
	assert_int_equal(ct_isa(), CT_ISA_BASE);
	battery(&ref);
	for (int isa = CT_ISA_BASE + 1; isa < CT_ISA_N; isa++) {
		if (ct_isa_set(isa) != 0) {
			printf("path %s: this CPU does not run it, skipped\n", ct_isa_name(isa));
			continue;
		}
		assert_int_equal(ct_isa(), isa);
		battery(&got);
		assert_int_equal(got.n, ref.n);
		for (int i = 0; i < ref.n; i++) {
			size_t bad = 0, first = 0;

			assert_int_equal(got.len[i], ref.len[i]);
			for (size_t j = ref.len[i]; j-- > 0;)
				if (memcmp(&got.p[i][j], &ref.p[i][j], sizeof(float)) != 0) {
					bad++;
					first = j;
				}
			if (bad)
				printf("path %s: %s differs from x86-64 in %zu of %zu floats "
				       "(first [%zu]: %a vs %a)\n", ct_isa_name(isa), ref.name[i],
				       bad, ref.len[i], first, (double)got.p[i][first],
				       (double)ref.p[i][first]);
			assert_int_equal(bad, 0);
		}
		printf("path %s: %d outputs bit-identical to x86-64\n", ct_isa_name(isa), ref.n);
		outs_free(&got);
		ran++;
	}
	printf("%d path(s) besides x86-64 compared\n", ran);
	outs_free(&ref);
	assert_int_equal(ct_isa_set(ct_isa_best()), 0);
}

/* The outputs are the spec's, not merely equal: a spot check of a matmul
 * element against the spelled-out fmaf chain on the best path. */
static void test_best_path_matches_spec(void **state)
{
	const int M = 5, K = 37, N = 131;
	float *inp = input((size_t)M * K, 1, 1.0f), *w = input((size_t)N * K, 2, 0.5f);
	float *bias = input(N, 3, 0.1f), *out = zeros((size_t)M * N);

	(void)state;
	assert_int_equal(ct_isa_set(ct_isa_best()), 0);
	ct_matmul_forward(out, inp, w, bias, M, K, N);
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			float want = ct_test_fma_dot(bias[n], inp + (size_t)m * K, 1,
						     w + (size_t)n * K, 1, K);

			assert_memory_equal(&out[(size_t)m * N + n], &want, sizeof(float));
		}
	free(inp), free(w), free(bias), free(out);
}

static void test_names_and_refusals(void **state)
{
	(void)state;
	for (int i = 0; i < CT_ISA_N; i++)
		assert_int_equal(ct_isa_parse(ct_isa_name(i)), i);
	assert_string_equal(ct_isa_name(CT_ISA_BASE), "x86-64");
	assert_string_equal(ct_isa_name(CT_ISA_N), "?");
	assert_int_equal(ct_isa_parse("sse9"), -1);
	assert_int_equal(ct_isa_parse(""), -1);
	assert_true(ct_isa_supported(CT_ISA_BASE));
	assert_true(ct_isa_supported(ct_isa_best()));
	assert_false(ct_isa_supported(CT_ISA_N));
	/* AVX-512 implies the AVX2 path here */
	assert_true(!ct_isa_supported(CT_ISA_AVX512) || ct_isa_supported(CT_ISA_AVX2));
	assert_int_equal(ct_isa_set(-1), CT_EINVAL);
	assert_int_equal(ct_isa_set(CT_ISA_N), CT_EINVAL);
	assert_int_equal(ct_isa_set(CT_ISA_BASE), 0);
	for (int i = 0; i < CT_ISA_N; i++)
		if (!ct_isa_supported(i)) {
			assert_int_equal(ct_isa_set(i), CT_EUNSUPP);
			assert_int_equal(ct_isa(), CT_ISA_BASE);	/* unchanged */
		}
	printf("this CPU runs:");
	for (int i = 0; i < CT_ISA_N; i++)
		if (ct_isa_supported(i))
			printf(" %s", ct_isa_name(i));
	printf(" (best %s)\n", ct_isa_name(ct_isa_best()));
}

CT_TEST_MAIN(test_names_and_refusals, test_best_path_matches_spec, test_paths_same_bits)
