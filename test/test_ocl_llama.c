/*
 * test_ocl_llama.c - the Llama model type on the OpenCL backend is the C
 * reference, bit for bit: every Llama kernel (embedding, RMSNorm, RoPE,
 * SwiGLU, grouped-query attention) against its ct_llama.h function
 * (memcmp) on awkward sizes with gradient buffers that already hold values;
 * then whole work units on cpu and opencl (GQA, tied and untied output,
 * q/k/v biases; full fine-tuning and LoRA) give the same losses, gradients,
 * weights, AdamW state and checkpoint bytes.
 *
 * Runs on the first OpenCL device ("opencl"; CT_TEST_DEVICE overrides);
 * exits 77 (skip) when the machine has no OpenCL device at all.
 */
#include "ct_test_ocl.h"

#include "ct_engine.h"
#include "ct_err.h"
#include "ct_hash.h"
#include "ct_llama.h"
#include "ct_ocl.h"
#include "ct_ocl_llama.h"
#include "ct_ocl_ops.h"

static const char *ocl_dev = "opencl";
static struct ct_ocl *ocl;
static struct ct_ocl_ops ops;
static struct ct_ocl_llk lk;
static char *dir;
static float *rand_floats(size_t n, float scale)
{
	return ct_test_rand_floats(n, scale);
}

static struct ct_dten dev(const float *h, size_t n)
{
	return ct_test_dev(&ops, h, n);
}

static void expect_same(const char *what, struct ct_dten d, float *ref, size_t n)
{
	ct_test_expect_same(&ops, what, d, ref, n);
}

static void drop(struct ct_dten d, float *h)
{
	clReleaseMemObject(d.mem);
	free(h);
}

/* ---- layers ----------------------------------------------------------------- */

static void test_embed(void **state)
{
	const int BT = 31, C = 27, V = 19;
	ct_tok tok[31];
	float *wte = rand_floats((size_t)V * C, 1.0f), *out = rand_floats((size_t)BT * C, 1.0f);
	float *dout = rand_floats((size_t)BT * C, 1.0f), *dwte = rand_floats((size_t)V * C, 1.0f);
	struct ct_dten d_wte = dev(wte, (size_t)V * C), d_out = dev(out, (size_t)BT * C);
	struct ct_dten d_dout = dev(dout, (size_t)BT * C), d_dwte = dev(dwte, (size_t)V * C);
	cl_mem d_tok = NULL;

	(void)state;
	for (int i = 0; i < BT; i++)	/* repeated tokens: the additions' order matters */
		tok[i] = (ct_tok)((i * 7) % 5 + (i % 3) * 6);
	assert_int_equal(ct_ocl_alloc(ocl, sizeof(tok), CL_MEM_READ_WRITE, &d_tok), 0);
	assert_int_equal(clEnqueueWriteBuffer(ocl->queue, d_tok, CL_TRUE, 0, sizeof(tok), tok,
					      0, NULL, NULL), CL_SUCCESS);
	for (int r = 0; r < BT; r++) {
		memcpy(out + (size_t)r * C, wte + (size_t)tok[r] * C, (size_t)C * sizeof(float));
		for (int i = 0; i < C; i++)
			dwte[(size_t)tok[r] * C + i] += dout[(size_t)r * C + i];
	}
	assert_int_equal(ct_ocl_embed_forward(&lk, d_out, d_tok, d_wte, BT, C), 0);
	assert_int_equal(ct_ocl_embed_backward(&lk, d_dwte, d_dout, d_tok, BT, C), 0);
	expect_same("embedding forward", d_out, out, (size_t)BT * C);
	expect_same("embedding backward", d_dwte, dwte, (size_t)V * C);
	drop(d_wte, wte);
	drop(d_dout, dout);
	clReleaseMemObject(d_tok);
}

static void check_rmsnorm(int BT, int C, int with_dw)
{
	const size_t n = (size_t)BT * C;
	float *inp = rand_floats(n, 2.0f), *w = rand_floats(C, 1.5f), *out = rand_floats(n, 1.0f);
	float *rstd = rand_floats(BT, 1.0f), *dout = rand_floats(n, 1.0f);
	float *dinp = rand_floats(n, 1.0f), *dw = rand_floats(C, 1.0f);
	struct ct_dten d_inp = dev(inp, n), d_w = dev(w, C), d_out = dev(out, n);
	struct ct_dten d_rstd = dev(rstd, BT), d_dout = dev(dout, n), d_dinp = dev(dinp, n);
	struct ct_dten d_dw = dev(dw, C), none = { NULL, 0, 0 };

	ct_rmsnorm_forward(out, rstd, inp, w, BT, C, 1e-5f);
	assert_int_equal(ct_ocl_rmsnorm_forward(&lk, d_out, d_rstd, d_inp, d_w, BT, C, 1e-5f), 0);
	ct_rmsnorm_backward(dinp, with_dw ? dw : NULL, dout, inp, w, rstd, BT, C);
	assert_int_equal(ct_ocl_rmsnorm_backward(&lk, d_dinp, with_dw ? d_dw : none, d_dout,
						 d_inp, d_w, d_rstd, BT, C), 0);
	expect_same("rmsnorm forward", d_out, out, n);
	expect_same("rmsnorm rstd", d_rstd, rstd, BT);
	expect_same("rmsnorm dinp", d_dinp, dinp, n);
	expect_same("rmsnorm dw", d_dw, dw, C);
	drop(d_inp, inp);
	drop(d_w, w);
	drop(d_dout, dout);
}

static void test_rmsnorm(void **state)
{
	(void)state;
	check_rmsnorm(37, 53, 1);
	check_rmsnorm(5, 1, 1);
	check_rmsnorm(19, 66, 0);	/* frozen weight: dinp only */
}

/* A Llama config with these heads (hs = 2*h2) for the RoPE table. */
static struct ct_model_config heads_cfg(int NH, int KVH, int hs)
{
	return (struct ct_model_config){ .maxT = 64, .V = 50, .Vp = 50, .L = 1, .NH = NH,
					.C = NH * hs, .arch = CT_ARCH_LLAMA, .KVH = KVH, .F = 8,
					.rope_theta = 10000.0, .rms_eps = 1e-5,
					.rope_factor = 8.0, .rope_low = 1.0, .rope_high = 4.0,
					.rope_orig_maxT = 8 };
}

static void check_rope(int B, int T, int NH, int KVH, int hs)
{
	struct ct_model_config c = heads_cfg(NH, KVH, hs);
	const size_t n = (size_t)B * T * (NH + 2 * KVH) * hs;
	float *tab = malloc((size_t)T * hs * sizeof(float));
	float *x = rand_floats(n, 1.0f), *g = rand_floats(n, 1.0f);
	struct ct_dten d_tab, d_x = dev(x, n), d_g = dev(g, n);

	assert_non_null(tab);
	assert_int_equal(ct_llama_rope_table(&c, T, tab), 0);
	d_tab = dev(tab, (size_t)T * hs);
	ct_rope_forward(x, tab, B * T, T, NH, KVH, hs);
	ct_rope_backward(g, tab, B * T, T, NH, KVH, hs);
	assert_int_equal(ct_ocl_rope(&lk, d_x, d_tab, B * T, T, NH, KVH, hs, 1), 0);
	assert_int_equal(ct_ocl_rope(&lk, d_g, d_tab, B * T, T, NH, KVH, hs, -1), 0);
	expect_same("rope forward", d_x, x, n);
	expect_same("rope backward", d_g, g, n);
	drop(d_tab, tab);
}

static void test_rope(void **state)
{
	(void)state;
	check_rope(2, 13, 6, 2, 10);
	check_rope(3, 7, 3, 3, 18);
	check_rope(1, 33, 4, 1, 2);
}

static void test_swiglu(void **state)
{
	const int BT = 29, F = 45;
	const size_t n = (size_t)BT * F;
	float *fch = rand_floats(2 * n, 6.0f), *out = rand_floats(n, 1.0f);
	float *dout = rand_floats(n, 1.0f), *dfch = rand_floats(2 * n, 1.0f);
	struct ct_dten d_fch, d_out = dev(out, n), d_dout = dev(dout, n), d_dfch;

	(void)state;
	fch[0] = 100.0f;	/* ct_expf's edges: overflow and underflow of e^-g */
	fch[1] = -100.0f;
	fch[2] = -0.0f;
	d_fch = dev(fch, 2 * n);
	d_dfch = dev(dfch, 2 * n);
	ct_swiglu_forward(out, fch, BT, F);
	ct_swiglu_backward(dfch, fch, dout, BT, F);
	assert_int_equal(ct_ocl_swiglu_forward(&lk, d_out, d_fch, BT, F), 0);
	assert_int_equal(ct_ocl_swiglu_backward(&lk, d_dfch, d_fch, d_dout, BT, F), 0);
	expect_same("swiglu forward", d_out, out, n);
	expect_same("swiglu backward", d_dfch, dfch, 2 * n);
	drop(d_fch, fch);
	drop(d_dout, dout);
}

/* ct_qknorm_forward / ct_qknorm_backward (Qwen3) on rows of NH + 2 KVH
 * heads of hd. */
static void check_qknorm(int BT, int NH, int KVH, int hd, int with_dw)
{
	const size_t n = (size_t)BT * (NH + 2 * KVH) * hd, nr = (size_t)BT * (NH + KVH);
	float *raw = rand_floats(n, 2.0f), *w = rand_floats(2 * (size_t)hd, 1.5f);
	float *qkv = rand_floats(n, 1.0f), *rstd = rand_floats(nr, 1.0f);
	float *dqkv = rand_floats(n, 1.0f), *dw = rand_floats(2 * (size_t)hd, 1.0f);
	struct ct_dten d_raw = dev(raw, n), d_w = dev(w, 2 * (size_t)hd), d_qkv = dev(qkv, n);
	struct ct_dten d_rstd = dev(rstd, nr), d_dqkv = dev(dqkv, n);
	struct ct_dten d_dw = dev(dw, 2 * (size_t)hd), none = { NULL, 0, 0 };

	ct_qknorm_forward(qkv, rstd, raw, w, BT, NH, KVH, hd, 1e-6f);
	assert_int_equal(ct_ocl_qknorm_forward(&lk, d_qkv, d_rstd, d_raw, d_w, BT, NH, KVH, hd,
					       1e-6f), 0);
	ct_qknorm_backward(dqkv, with_dw ? dw : NULL, raw, w, rstd, BT, NH, KVH, hd);
	assert_int_equal(ct_ocl_qknorm_backward(&lk, d_dqkv, with_dw ? d_dw : none, d_raw, d_w,
						d_rstd, BT, NH, KVH, hd), 0);
	expect_same("qknorm forward", d_qkv, qkv, n);
	expect_same("qknorm rstd", d_rstd, rstd, nr);
	expect_same("qknorm backward", d_dqkv, dqkv, n);
	expect_same("qknorm dw", d_dw, dw, 2 * (size_t)hd);
	drop(d_raw, raw);
	drop(d_w, w);
}

static void test_qknorm(void **state)
{
	(void)state;
	check_qknorm(23, 4, 2, 16, 1);
	check_qknorm(7, 3, 1, 130, 1);	/* wider than 128 */
	check_qknorm(9, 2, 2, 6, 0);	/* frozen weights */
}

/* ct_gqa_forward / ct_gqa_backward on rows of (NH + 2 KVH) heads. */
static void check_gqa(int B, int T, int NH, int KVH, int hs)
{
	const size_t BT = (size_t)B * T, C = (size_t)NH * hs, QKV = (size_t)(NH + 2 * KVH) * hs;
	float *qkv = rand_floats(BT * QKV, 1.5f), *out = rand_floats(BT * C, 1.0f);
	float *stat = rand_floats((size_t)B * NH * T * 2, 1.0f), *dout = rand_floats(BT * C, 1.0f);
	float *dqkv = rand_floats(BT * QKV, 1.0f);
	float *row = malloc((size_t)T * sizeof(float));
	float *scr = malloc(ct_attention_scratch_floats(T, (int)C, NH) * sizeof(float));
	struct ct_dten d_qkv = dev(qkv, BT * QKV), d_out = dev(out, BT * C);
	struct ct_dten d_stat = dev(stat, (size_t)B * NH * T * 2), d_dout = dev(dout, BT * C);
	struct ct_dten d_dqkv = dev(dqkv, BT * QKV), d_x3, d_dx3, d_dot;
	float *junk = rand_floats(BT * 3 * C, 1.0f);

	assert_non_null(row);
	assert_non_null(scr);
	d_x3 = dev(junk, BT * 3 * C);
	d_dx3 = dev(junk, BT * 3 * C);
	d_dot = dev(junk, (size_t)B * NH * T);
	ct_gqa_forward(out, stat, row, qkv, B, T, NH, KVH, hs);
	ct_gqa_backward(dqkv, scr, dout, qkv, stat, B, T, NH, KVH, hs);
	assert_int_equal(ct_ocl_gqa_forward(&lk, d_out, d_stat, d_qkv, d_x3, B, T, NH, KVH, hs),
			 0);
	assert_int_equal(ct_ocl_gqa_backward(&lk, d_dqkv, d_dot, d_dout, d_qkv, d_stat, d_x3,
					     d_dx3, B, T, NH, KVH, hs), 0);
	expect_same("gqa forward", d_out, out, BT * C);
	expect_same("gqa stat", d_stat, stat, (size_t)B * NH * T * 2);
	expect_same("gqa backward", d_dqkv, dqkv, BT * QKV);
	drop(d_qkv, qkv);
	drop(d_dout, dout);
	drop(d_x3, junk);
	clReleaseMemObject(d_dx3.mem);
	clReleaseMemObject(d_dot.mem);
	free(row);
	free(scr);
}

static void test_gqa(void **state)
{
	(void)state;
	check_gqa(2, 37, 6, 2, 10);	/* groups of 3, rows past 32 keys */
	check_gqa(1, 9, 4, 1, 14);	/* multi-query */
	check_gqa(2, 5, 3, 3, 8);	/* KVH == NH: GPT-2's rows */
	check_gqa(1, 11, 2, 1, 66);	/* heads wider than the kernels' 64 channels */
	check_gqa(1, 9, 4, 2, 128);	/* Qwen3's head_dim */
}

/* ---- whole work units ------------------------------------------------------- */

/* L=2 C=36 NH=6 hs=6, V=53 < Vp=56, F=30; kvh and flags vary. With
 * Qwen3's q/k norms the heads are hd = 8 wide (q 48 > C = 36). */
static struct ct_model_config model_cfg(int KVH, int flags)
{
	return (struct ct_model_config){ .maxT = 16, .V = 53, .Vp = 56, .L = 2, .NH = 6,
					.C = 36, .arch = CT_ARCH_LLAMA, .KVH = KVH, .F = 30,
					.flags = flags, .rope_theta = 500000.0, .rms_eps = 1e-5,
					.hd = (flags & CT_LLAMA_QK_NORM) ? 8 : 0 };
}

struct wu_fix {
	struct ct_model_config cfg;
	struct ct_gpt2 model;
	struct ct_tokens tokens;
	struct ct_wu_hparams hp;
};

static void wu_fix(struct wu_fix *f, int KVH, int flags)
{
	ct_tok tok[400];
	uint64_t s = 777;

	memset(f, 0, sizeof(*f));
	f->cfg = model_cfg(KVH, flags);
	assert_int_equal(ct_gpt2_alloc(&f->model, &f->cfg), 0);
	assert_int_equal(ct_gpt2_init_random(&f->cfg, 11, f->model.params), 0);
	for (size_t i = 0; i < 400; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		tok[i] = (ct_tok)(i % 5 == 2 ? (s >> 33) % f->cfg.V : (i * 3) % 19);
	}
	assert_int_equal(ct_tokens_from_array(&f->tokens, tok, 400), 0);
	ct_wu_hparams_default(&f->hp);
	f->hp.steps = 4;
	f->hp.B = 3;
	f->hp.T = 11;
	f->hp.lr = 1e-2f;
	f->hp.weight_decay = 0.01f;
	f->hp.grad_clip = 1.0f;
}

static void wu_fix_free(struct wu_fix *f)
{
	ct_gpt2_free(&f->model);
	ct_tokens_free(&f->tokens);
}

/* Run the WU on device; losses (hp.steps) out; the checkpoint (full) or
 * the state file (LoRA: adapters and moments) hashed into hex. */
static void run_wu(struct wu_fix *f, const char *device, float *losses,
		   char hex[CT_SHA256_HEXLEN + 1])
{
	struct ct_wu *wu = NULL;
	char path[4200];
	int rc;

	snprintf(path, sizeof(path), "%s/%s.out", dir, device);
	rc = ct_wu_open(&f->model, &f->tokens, &f->hp, device, &wu);
	if (rc < 0)
		fail_msg("%s: %s", device, ct_errmsg(rc));
	ct_test_wu_run(wu, losses, 0);
	if (f->hp.lora.rank > 0)
		assert_int_equal(ct_wu_save_state(wu, path), 0);
	else
		assert_int_equal(ct_wu_save_model(wu, path), 0);
	ct_wu_close(wu);
	assert_int_equal(ct_sha256_file_hex(path, hex), 0);
}

static void wu_equal(int KVH, int flags, int lora_rank)
{
	struct wu_fix f;
	float lc[4], lo[4];
	char hc[CT_SHA256_HEXLEN + 1], ho[CT_SHA256_HEXLEN + 1];

	wu_fix(&f, KVH, flags);
	if (lora_rank > 0) {
		f.hp.lora = (struct ct_lora_spec){ .rank = lora_rank, .alpha = 2.0f * lora_rank,
						   .targets = CT_LORA_ALL };
		f.hp.lora_seed = 5;
	}
	run_wu(&f, "cpu", lc, hc);
	run_wu(&f, ocl_dev, lo, ho);
	for (int i = 0; i < 4; i++)
		fprintf(stderr, "KVH %d flags %d lora %d step %d loss cpu %.9g opencl %.9g\n",
			KVH, flags, lora_rank, i + 1, (double)lc[i], (double)lo[i]);
	assert_memory_equal(lc, lo, sizeof(lc));
	assert_string_equal(hc, ho);
	assert_true(lc[3] < lc[0]);	/* and training did something */
	wu_fix_free(&f);
}

static void test_wu_gqa_untied_bias(void **state)
{
	(void)state;
	wu_equal(2, CT_LLAMA_QKV_BIAS, 0);
}

static void test_wu_mqa_tied(void **state)
{
	(void)state;
	wu_equal(1, CT_LLAMA_TIED, 0);
}

static void test_wu_mha_tied_bias(void **state)
{
	(void)state;
	wu_equal(6, CT_LLAMA_TIED | CT_LLAMA_QKV_BIAS, 0);
}

static void test_wu_lora(void **state)
{
	(void)state;
	wu_equal(3, CT_LLAMA_QKV_BIAS, 4);
	wu_equal(2, CT_LLAMA_TIED, 2);
}

static void test_wu_qwen3(void **state)
{
	(void)state;
	wu_equal(2, CT_LLAMA_QK_NORM | CT_LLAMA_TIED, 0);
	wu_equal(6, CT_LLAMA_QK_NORM, 0);
	wu_equal(3, CT_LLAMA_QK_NORM | CT_LLAMA_TIED, 3);
}

static void test_backend_state_equal(void **state);

/* Lean mode (every layer's forward again in backward; by default only
 * where it saves over 1 GiB) gives the C reference's bytes: full
 * fine-tuning, LoRA (with the head in pieces of rows too), Qwen3's q/k
 * norms, and the one-step state. */
static void test_wu_lean(void **state)
{
	setenv("CT_OCL_LEAN", "1", 1);
	wu_equal(2, CT_LLAMA_QKV_BIAS, 0);
	setenv("CT_OCL_HEAD_ROWS", "5", 1);	/* the head 5 rows at a time */
	wu_equal(2, CT_LLAMA_TIED, 2);
	unsetenv("CT_OCL_HEAD_ROWS");
	wu_equal(3, CT_LLAMA_QK_NORM | CT_LLAMA_TIED, 3);
	test_backend_state_equal(state);
	unsetenv("CT_OCL_LEAN");
}

/* A lean frozen pass (LoRA) with its MLP 5 rows at a time (33 rows: six
 * blocks and one of 3) and its attention one batch row at a time gives
 * the C reference's bytes: grouped, shared and per-head kv, q/k norms,
 * the head in pieces too; and the blocks hold less than the whole. */
static void test_wu_lean_rows(void **state)
{
	const struct ct_model_config c = model_cfg(2, CT_LLAMA_TIED);
	const int fl = CT_OCL_LL_GRADS | CT_OCL_LL_LEAN | CT_OCL_LL_FROZEN;
	uint64_t whole, blocked;

	(void)state;
	setenv("CT_OCL_LEAN", "1", 1);
	whole = ct_ocl_llama_bytes(&c, 3, 11, fl, NULL);
	assert_int_equal(ct_ocl_llama_mlp_rows(&c, 3, 11, fl), 33);
	setenv("CT_OCL_LEAN_ROWS", "5", 1);
	assert_int_equal(ct_ocl_llama_mlp_rows(&c, 3, 11, fl), 5);
	/* full fine-tuning's weight gradients need every row at once */
	assert_int_equal(ct_ocl_llama_mlp_rows(&c, 3, 11, CT_OCL_LL_GRADS | CT_OCL_LL_LEAN), 33);
	blocked = ct_ocl_llama_bytes(&c, 3, 11, fl, NULL);
	/* gate/up, SwiGLU and their gradients lie in the logits piece with
	 * the attention's scratch, so the blocks save what they held above
	 * the larger of the two */
	assert_true(blocked < whole);
	wu_equal(2, CT_LLAMA_TIED, 2);
	wu_equal(6, CT_LLAMA_QKV_BIAS, 3);
	setenv("CT_OCL_HEAD_ROWS", "5", 1);
	wu_equal(3, CT_LLAMA_QK_NORM | CT_LLAMA_TIED, 3);
	unsetenv("CT_OCL_HEAD_ROWS");
	setenv("CT_OCL_LEAN_ROWS", "1", 1);	/* one row a block */
	wu_equal(1, 0, 2);
	unsetenv("CT_OCL_LEAN_ROWS");
	unsetenv("CT_OCL_LEAN");
}

/* The device buffers of a Llama pass are what ct_ocl_llama_bytes counts,
 * lean mode holds one layer's activations instead of L (here L = 2: less
 * by one layer's), and the default turns lean on at the 1 GiB mark. */
static void test_lean_bytes(void **state)
{
	struct ct_model_config c = model_cfg(2, CT_LLAMA_QK_NORM);
	struct ct_model_config big = c;
	uint64_t got[2], want[2], largest;

	(void)state;
	for (int lean = 0; lean < 2; lean++) {
		struct ct_ocl_llama *ll = NULL;
		uint64_t t0 = ct_ocl_alloc_total();
		size_t big = 0;
		int fl = CT_OCL_LL_GRADS | (lean ? CT_OCL_LL_LEAN : 0);

		ct_ocl_alloc_mark();
		assert_int_equal(ct_ocl_llama_open(&ops, &c, 3, 11, fl, &ll), 0);
		got[lean] = ct_ocl_alloc_total() - t0;
		ct_ocl_alloc_stats(NULL, &big);
		want[lean] = ct_ocl_llama_bytes(&c, 3, 11, fl, &largest);
		ct_ocl_llama_close(ll);
		assert_true(big == largest);
		/* q/k/v of both layers; lean: the logits piece, which holds the
		 * MLP's 6 x 30 floats a row of 33 */
		if (lean)
			assert_true(largest >= 4 * 6 * 30 * 33);
		else
			assert_true(largest == 4 * 2 * 33 * 80);
	}
	assert_true(got[0] == want[0] && got[1] == want[1]);
	assert_true(want[1] < want[0]);
	assert_false(ct_ocl_llama_lean(&c, 3, 11));
	/* a frozen head holds 2^23 floats of logits: all 33 rows here */
	assert_int_equal(ct_ocl_llama_head_rows(&c, 3, 11, 1), 33);
	big.Vp = 1 << 20;
	assert_int_equal(ct_ocl_llama_head_rows(&big, 3, 11, 1), 8);
	assert_int_equal(ct_ocl_llama_head_rows(&big, 3, 11, 0), 33);
	big.Vp = c.Vp;
	big.L = 30000;	/* 29999 layers at 3 x 11 save 1.6 GiB, at 1 x 11 0.5 */
	assert_false(ct_ocl_llama_lean(&big, 1, 11));
	assert_true(ct_ocl_llama_lean(&big, 3, 11));
}

/* The peak of the device buffers of a WU's backend, opened and two
 * steps run, stays under ct_ocl_wu_bytes, and so does its largest
 * buffer; full, LoRA, and LoRA in a lean pass with its MLP in blocks
 * of 5 rows. */
static void test_wu_bytes(void **state)
{
	struct ct_step_args a = { .t = 1, .grad_clip = 1.0f,
				  .opt = { .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f,
					   .eps = 1e-8f } };
	struct wu_fix f;

	(void)state;
	wu_fix(&f, 2, CT_LLAMA_QK_NORM);
	ct_adamw_bias_corrections(0.9f, 0.999f, 1, &a.opt.bc1, &a.opt.bc2);
	for (int v = 0; v < 3; v++) {
		const int lora = v > 0;
		struct ct_lora_spec sp = { .rank = 4, .alpha = 4.0f, .targets = CT_LORA_ALL };
		const struct ct_backend_ops *o = &ct_ocl_backend_ops;
		struct ct_backend *be = NULL;
		size_t live = ct_ocl_alloc_mark(), peak = 0, largest = 0;
		uint64_t need, big;
		float loss, *ad = NULL;

		if (v == 2) {
			setenv("CT_OCL_LEAN", "1", 1);
			setenv("CT_OCL_LEAN_ROWS", "5", 1);
		}
		f.hp.lora = lora ? sp : (struct ct_lora_spec){ 0 };
		need = ct_ocl_wu_bytes(&f.cfg, &f.hp, &big);
		if (lora) {
			ad = calloc(ct_lora_nparams(&f.cfg, &sp), sizeof(float));
			assert_int_equal(o->open_lora(ocl_dev, &f.cfg, f.hp.B, f.hp.T, &sp, &be), 0);
			assert_int_equal(o->lora_load(be, ad, NULL, NULL), 0);
		} else {
			assert_int_equal(o->open(ocl_dev, &f.cfg, f.hp.B, f.hp.T, 1, &be), 0);
		}
		assert_int_equal(o->load_state(be, f.model.params, NULL, NULL), 0);
		for (int s = 0; s < 2; s++)
			assert_int_equal(o->step(be, f.tokens.tok, f.tokens.tok + 1, &a, &loss), 0);
		o->close(be);
		ct_ocl_alloc_stats(&peak, &largest);
		unsetenv("CT_OCL_LEAN_ROWS");
		unsetenv("CT_OCL_LEAN");
		fprintf(stderr, "variant %d: peak %zu bytes, bound %llu; largest %zu, bound %llu\n",
			v, peak - live, (unsigned long long)need, largest,
			(unsigned long long)big);
		assert_true(peak - live <= need && peak - live > need / 4);
		assert_true(largest <= big);
		free(ad);
	}
	wu_fix_free(&f);
}

/* One step through the backend interface: gradients, weights and AdamW
 * moments all identical; evaluation and logits too. */
static void test_backend_state_equal(void **state)
{
	const struct ct_backend_ops *bops[2] = { &ct_cpu_backend_ops, &ct_ocl_backend_ops };
	const char *devs[2] = { "cpu", ocl_dev };
	struct ct_step_args a = { .t = 1, .grad_clip = 0.5f,
				  .opt = { .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f,
					   .eps = 1e-8f, .weight_decay = 0.1f } };
	struct wu_fix f;
	float *buf[2][5], loss[2], ev[2];
	size_t n;
	const int B = 2, T = 9;

	(void)state;
	wu_fix(&f, 2, CT_LLAMA_QKV_BIAS);
	n = f.model.lay.total;
	ct_adamw_bias_corrections(0.9f, 0.999f, 1, &a.opt.bc1, &a.opt.bc2);
	for (int d = 0; d < 2; d++) {
		struct ct_backend *be = NULL;

		for (int k = 0; k < 5; k++) {
			buf[d][k] = malloc(n * sizeof(float));
			assert_non_null(buf[d][k]);
		}
		assert_int_equal(bops[d]->open(devs[d], &f.cfg, B, T, 1, &be), 0);
		assert_int_equal(bops[d]->load_state(be, f.model.params, NULL, NULL), 0);
		assert_int_equal(bops[d]->step(be, f.tokens.tok, f.tokens.tok + 1, &a, &loss[d]), 0);
		assert_int_equal(bops[d]->read_grads(be, buf[d][0]), 0);
		assert_int_equal(bops[d]->read_state(be, buf[d][1], buf[d][2], buf[d][3]), 0);
		bops[d]->close(be);
		be = NULL;
		assert_int_equal(bops[d]->open(devs[d], &f.cfg, B, T, 0, &be), 0);
		assert_int_equal(bops[d]->load_state(be, f.model.params, NULL, NULL), 0);
		assert_int_equal(bops[d]->eval(be, f.tokens.tok, f.tokens.tok + 1, &ev[d]), 0);
		assert_int_equal(bops[d]->logits(be, f.tokens.tok, 5, buf[d][4]), 0);
		bops[d]->close(be);
	}
	assert_memory_equal(&loss[0], &loss[1], sizeof(float));
	assert_memory_equal(&ev[0], &ev[1], sizeof(float));
	assert_memory_equal(buf[0][4], buf[1][4], (size_t)f.cfg.V * sizeof(float));
	for (int k = 0; k < 5; k++) {
		if (k < 4)
			assert_memory_equal(buf[0][k], buf[1][k], n * sizeof(float));
		free(buf[0][k]);
		free(buf[1][k]);
	}
	wu_fix_free(&f);
}

static int setup(void **state)
{
	(void)state;
	if (ct_test_ocl_open(&ocl_dev, &ocl) < 0)
		return -1;
	dir = ct_test_mkdtemp();
	if (dir == NULL || ct_ocl_ops_init(&ops, ocl) < 0)
		return -1;
	return ct_ocl_llk_init(&lk, &ops) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	ct_ocl_llk_free(&lk);
	ct_ocl_ops_free(&ops);
	ct_ocl_close(ocl);
	ct_test_rmtree(dir);
	free(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embed),
		cmocka_unit_test(test_rmsnorm),
		cmocka_unit_test(test_rope),
		cmocka_unit_test(test_swiglu),
		cmocka_unit_test(test_gqa),
		cmocka_unit_test(test_qknorm),
		cmocka_unit_test(test_backend_state_equal),
		cmocka_unit_test(test_wu_gqa_untied_bias),
		cmocka_unit_test(test_wu_mqa_tied),
		cmocka_unit_test(test_wu_mha_tied_bias),
		cmocka_unit_test(test_wu_lora),
		cmocka_unit_test(test_wu_qwen3),
		cmocka_unit_test(test_wu_lean),
		cmocka_unit_test(test_wu_lean_rows),
		cmocka_unit_test(test_lean_bytes),
		cmocka_unit_test(test_wu_bytes),
	};

	/* no crowdtune kernel cache in tests (PoCL's own cache is shared) */
	if (getenv("CTUNE_KERNEL_CACHE") == NULL)
		setenv("CTUNE_KERNEL_CACHE", "", 1);
	if (ct_test_ocl_none())
		return 77;
	return cmocka_run_group_tests(tests, setup, teardown);
}
