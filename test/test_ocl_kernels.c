/*
 * test_ocl_kernels.c - every OpenCL kernel against its C reference layer
 * (engine/ct_layers.c), bit for bit (memcmp), on random inputs with awkward
 * sizes (not multiples of any block or vector width), with gradient
 * buffers that already hold values (backward functions add into them).
 *
 * Runs on the first OpenCL device ("opencl"; CT_TEST_DEVICE overrides);
 * exits 77 (skip) when the machine has no OpenCL device at all.
 */
#include "ct_test_ocl.h"

#include <math.h>

#include "ct_err.h"
#include "ct_model.h"
#include "ct_ocl.h"
#include "ct_ocl_ops.h"

static struct ct_ocl *ocl;
static struct ct_ocl_ops ops;
static float *rand_floats(size_t n, float scale)
{
	return ct_test_rand_floats(n, scale);
}

/* A device buffer holding a copy of host data. */
static struct ct_dten dev(const float *h, size_t n)
{
	return ct_test_dev(&ops, h, n);
}

static cl_mem dev_tokens(const ct_tok *h, size_t n)
{
	cl_mem m = NULL;

	assert_int_equal(ct_ocl_alloc(ocl, n * sizeof(ct_tok), CL_MEM_READ_WRITE, &m), 0);
	assert_int_equal(clEnqueueWriteBuffer(ocl->queue, m, CL_TRUE, 0, n * sizeof(ct_tok), h, 0,
					      NULL, NULL), CL_SUCCESS);
	return m;
}

/* The device tensor equals the host reference, bit for bit; frees both. */
static void expect_same(const char *what, struct ct_dten d, float *ref, size_t n)
{
	ct_test_expect_same(&ops, what, d, ref, n);
}

static void drop(struct ct_dten d, float *h)
{
	clReleaseMemObject(d.mem);
	free(h);
}

/* ---- matmul ---------------------------------------------------------------- */

static void check_matmul(int BT, int C, int OC, int with_bias)
{
	float *inp = rand_floats((size_t)BT * C, 1.0f);
	float *w = rand_floats((size_t)OC * C, 0.5f);
	float *bias = rand_floats((size_t)OC, 1.0f);
	float *out = rand_floats((size_t)BT * OC, 1.0f);
	float *dout = rand_floats((size_t)BT * OC, 1.0f);
	float *dinp = rand_floats((size_t)BT * C, 1.0f);
	float *dw = rand_floats((size_t)OC * C, 1.0f);
	float *dbias = rand_floats((size_t)OC, 1.0f);
	struct ct_dten d_inp = dev(inp, (size_t)BT * C), d_w = dev(w, (size_t)OC * C);
	struct ct_dten d_bias = dev(bias, OC), d_out = dev(out, (size_t)BT * OC);
	struct ct_dten d_dout = dev(dout, (size_t)BT * OC), d_dinp = dev(dinp, (size_t)BT * C);
	struct ct_dten d_dw = dev(dw, (size_t)OC * C), d_dbias = dev(dbias, OC);

	ct_matmul_forward(out, inp, w, with_bias ? bias : NULL, BT, C, OC);
	assert_int_equal(ct_ocl_matmul_forward(&ops, d_out, d_inp, d_w, d_bias, with_bias,
					       BT, C, OC), 0);
	expect_same("matmul forward", d_out, out, (size_t)BT * OC);
	ct_matmul_backward(dinp, dw, with_bias ? dbias : NULL, dout, inp, w, BT, C, OC);
	assert_int_equal(ct_ocl_matmul_backward(&ops, d_dinp, d_dw, d_dbias, with_bias,
						d_dout, d_inp, d_w, BT, C, OC), 0);
	expect_same("matmul dinp", d_dinp, dinp, (size_t)BT * C);
	expect_same("matmul dweight", d_dw, dw, (size_t)OC * C);
	expect_same("matmul dbias", d_dbias, dbias, OC);
	drop(d_inp, inp);
	drop(d_w, w);
	drop(d_bias, bias);
	drop(d_dout, dout);
}

static void test_matmul(void **state)
{
	(void)state;
	check_matmul(1, 1, 1, 1);
	check_matmul(37, 45, 70, 1);	/* nothing a multiple of anything */
	check_matmul(19, 96, 33, 0);
	check_matmul(64, 64, 128, 1);	/* exact multiples */
	check_matmul(13, 200, 161, 1);	/* long k chains */
	check_matmul(300, 20, 30, 1);	/* weight gradient's A bigger than B */
}

/* The forward is computed as out or as out^T depending on the shape;
 * both forms give the reference's bits. */
static void test_matmul_forms(void **state)
{
	(void)state;
	setenv("CT_OCL_FWD", "t", 1);
	check_matmul(37, 45, 70, 1);
	check_matmul(1, 45, 70, 1);	/* one row: GPUs' sampling step */
	check_matmul(8, 64, 40, 0);
	setenv("CT_OCL_FWD", "n", 1);
	check_matmul(3, 45, 170, 1);
	check_matmul(33, 17, 300, 0);
	unsetenv("CT_OCL_FWD");
}

/* The few-rows forward (kernels/matvec.cl), forced for every shape: 16
 * outputs x 1 row or 8 outputs x 2 rows per work-item (odd BT: a last
 * partial pair); OC around and off those multiples, odd C. */
static void test_matmul_matvec(void **state)
{
	(void)state;
	setenv("CT_OCL_MATVEC", "1", 1);
	for (int bt = 1; bt <= 3; bt++) {
		check_matmul(bt, 45, 70, 1);	/* OC % 16 = 6, OC % 8 = 6 */
		check_matmul(bt, 45, 70, 0);
		check_matmul(bt, 33, 17, 1);
		check_matmul(bt, 7, 5, 0);	/* OC under one work-item's */
		check_matmul(bt, 64, 48, 1);	/* exact multiples */
		check_matmul(bt, 129, 161, 0);
	}
	check_matmul(5, 47, 31, 1);	/* three pairs of rows, the last partial */
	check_matmul(9, 16, 16, 0);
	check_matmul(1, 1, 1, 1);
	unsetenv("CT_OCL_MATVEC");
}

/* Long k ranges are run in pieces with parked accumulators; force small
 * pieces so that the tiny sizes here take that path. */
static void test_matmul_kpieces(void **state)
{
	(void)state;
	setenv("CT_OCL_KC", "64", 1);
	check_matmul(37, 45, 300, 1);	/* dinp: K = 300 in pieces of 64 */
	check_matmul(301, 129, 20, 0);	/* dweight: K = 301 */
	check_matmul(5, 700, 3, 1);	/* forward: K = 700 */
	unsetenv("CT_OCL_KC");
}

/* B's rows contiguous (dinp's w, dweight's inp) but packed all the same
 * (ops.pack_max, which the GPT-2 backend sets): the panels' bits are the
 * in-place reads', in whole and in k pieces. */
static void test_matmul_packed(void **state)
{
	(void)state;
	ops.pack_max = (size_t)-1;
	check_matmul(37, 45, 70, 1);
	check_matmul(64, 64, 128, 1);
	check_matmul(300, 20, 30, 0);
	setenv("CT_OCL_KC", "64", 1);
	check_matmul(37, 45, 300, 1);
	check_matmul(301, 129, 20, 0);
	unsetenv("CT_OCL_KC");
	ops.pack_max = 0;
}

/* check_matmul with pack_max letting 64-row k pieces of B (C columns:
 * dinp's w, dweight's inp) be packed, though no B of more rows is. */
static void check_pieces(int BT, int C, int OC, int with_bias)
{
	size_t pw = (size_t)ops.ocl->mm_vw * ops.ocl->mm_nv;

	ops.pack_max = ((size_t)C + pw - 1) / pw * pw * 64;
	check_matmul(BT, C, OC, with_bias);
	ops.pack_max = 0;
}

/* B with contiguous rows too big to pack whole but whose k pieces fit
 * (the vocabulary's input gradient): each piece's panels, packed before
 * it runs, give the bits of the in-place reads, last piece short or not. */
static void test_matmul_packed_pieces(void **state)
{
	(void)state;
	setenv("CT_OCL_KC", "64", 1);
	check_pieces(37, 45, 300, 1);
	check_pieces(300, 45, 320, 0);
	check_pieces(20, 70, 333, 1);
	check_pieces(301, 129, 20, 0);
	unsetenv("CT_OCL_KC");
}

/* The weight gradient with dout^T made row-major first (ops.tr_max,
 * which the GPT-2 backend sets), in row blocks of `rows` outputs: every
 * output's chain is the in-place read's, whatever the blocks, with
 * 16 x 16 transpose tiles whole or cut on either side. */
static void check_tr(int BT, int C, int OC, int rows)
{
	ops.tr_max = (size_t)rows * (size_t)BT;
	check_matmul(BT, C, OC, 1);
	ops.tr_max = 0;
}

static void test_matmul_dweight_tr(void **state)
{
	(void)state;
	check_tr(37, 45, 70, 1 << 20);	/* one block, tiles cut both ways */
	check_tr(64, 48, 96, 32);	/* whole tiles, three blocks */
	check_tr(37, 45, 70, 17);	/* blocks of 17 rows, the last of 2 */
	check_tr(300, 20, 30, 8);	/* long k (BT) chains */
	check_tr(5, 33, 200, 8);	/* BT under a tile */
	ops.pack_max = (size_t)-1;	/* with B packed, as the backend runs it */
	check_tr(37, 45, 70, 16);
	setenv("CT_OCL_KC", "64", 1);	/* and BT in k pieces */
	check_tr(301, 129, 20, 9);
	unsetenv("CT_OCL_KC");
	ops.pack_max = 0;
}

/* Reopen the device with the tiled matmul built for tiles `mmt`
 * (CT_OCL_MMT; NULL: the device's default). Returns 1 if the device can
 * run that kernel's work-groups (and sets ops.mm_tiled), else 0. */
static int reopen_tiled(const char *mmt)
{
	const char *dev_spec = getenv("CT_TEST_DEVICE");

	ct_ocl_ops_free(&ops);
	ct_ocl_close(ocl);
	if (mmt != NULL)
		setenv("CT_OCL_MMT", mmt, 1);
	else
		unsetenv("CT_OCL_MMT");
	assert_int_equal(ct_ocl_open(dev_spec ? dev_spec : "opencl", "", &ocl), 0);
	assert_int_equal(ct_ocl_ops_init(&ops, ocl), 0);
	unsetenv("CT_OCL_MMT");
	ops.mm_tiled = ops.wg_max[CT_K_MM_TILED] >=
		(size_t)(ocl->mmt_bn / ocl->mmt_rn) * (size_t)(ocl->mmt_bm / ocl->mmt_rm);
	return ops.mm_tiled;
}

/* Every form of product through the tiled kernel: normal and transposed
 * forward (A's k stride 1, B's n stride 1 or not), dinp, dweight (A's m
 * stride 1), K shorter than a slice, a partial last slice, several slices,
 * edges in m and n. */
static void check_tiled_forms(void)
{
	check_matmul(1, 1, 1, 1);
	check_matmul(37, 45, 70, 1);
	check_matmul(64, 64, 128, 0);	/* whole 64 x 64 tiles */
	check_matmul(13, 200, 161, 1);
	check_matmul(300, 20, 30, 1);
	check_matmul(130, 7, 65, 1);	/* forward K = 7 < a slice; dinp 65, dweight 130 */
	setenv("CT_OCL_FWD", "t", 1);
	check_matmul(37, 45, 70, 1);
	check_matmul(1, 45, 70, 1);	/* one row: GPUs' sampling step */
	check_matmul(5, 33, 300, 0);
	unsetenv("CT_OCL_FWD");
}

/* The local-memory tiled kernel (the GPU default) gives the same bits, in
 * every form and for every tile shape (the device default, the large tile
 * for big GPUs, small and odd ones); on a device whose groups cannot hold
 * a shape's work-items that shape is never used (skipped). */
static void test_matmul_tiled(void **state)
{
	static const char *const shapes[] = {
		NULL, "128,64,16,8,4", "32,32,8,4,4", "24,40,5,3,5", "16,16,16,1,1",
	};
	int ran = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		if (!reopen_tiled(shapes[i])) {
			fprintf(stderr, "tiles %s: work-groups too big for the device\n",
				shapes[i] ? shapes[i] : "(default)");
			continue;
		}
		ops.mm_tiles = 'b';
		check_tiled_forms();
		ran++;
	}
	if (reopen_tiled(NULL) && ops.wg_max[CT_K_MM_TILED_M] >= 256) {
		ops.mm_tiles = 'm';	/* the medium and small tiles of small products */
		check_tiled_forms();
		ops.mm_tiles = 's';
		check_tiled_forms();
		ops.mm_tiles = 0;
		check_tiled_forms();	/* picked by size */
	}
	reopen_tiled(NULL);
	ops.mm_tiled = 0;
	if (ran == 0)
		skip();
}

/* The register-blocked kernel gives the same bits for every block shape
 * (CT_OCL_MM): 8 x 2 (CPUs without AVX-512), 6 x 4 (AVX-512), 4 x 2 of
 * float4 (other devices) and odd ones, in every form, with k pieces and
 * rows and panels past the edges. */
static void test_matmul_blockings(void **state)
{
	static const char *const shapes[] = { "8,16,2", "6,16,4", "4,4,2", "5,8,3", "7,2,1" };
	const char *dev_spec = getenv("CT_TEST_DEVICE");

	(void)state;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		ct_ocl_ops_free(&ops);
		ct_ocl_close(ocl);
		setenv("CT_OCL_MM", shapes[i], 1);
		assert_int_equal(ct_ocl_open(dev_spec ? dev_spec : "opencl", "", &ocl), 0);
		assert_int_equal(ct_ocl_ops_init(&ops, ocl), 0);
		unsetenv("CT_OCL_MM");
		ops.mm_tiled = 0;
		check_matmul(37, 45, 70, 1);
		check_matmul(13, 200, 161, 1);
		check_matmul(300, 20, 30, 1);
		setenv("CT_OCL_FWD", "t", 1);
		check_matmul(29, 131, 67, 1);
		unsetenv("CT_OCL_FWD");
		setenv("CT_OCL_KC", "48", 1);
		check_matmul(37, 45, 300, 1);
		check_matmul(301, 129, 20, 0);
		unsetenv("CT_OCL_KC");
	}
	reopen_tiled(NULL);
	ops.mm_tiled = 0;
}

/* ---- encoder --------------------------------------------------------------- */

static void test_encoder(void **state)
{
	const int B = 3, T = 7, C = 21, Vp = 11, maxT = 9;
	ct_tok tok[3 * 7];
	float *wte = rand_floats((size_t)Vp * C, 1.0f), *wpe = rand_floats((size_t)maxT * C, 1.0f);
	float *out = rand_floats((size_t)B * T * C, 1.0f), *dout = rand_floats((size_t)B * T * C, 1.0f);
	float *dwte = rand_floats((size_t)Vp * C, 1.0f), *dwpe = rand_floats((size_t)maxT * C, 1.0f);
	struct ct_dten d_wte, d_wpe, d_out, d_dout, d_dwte, d_dwpe;
	cl_mem d_tok;

	(void)state;
	for (int i = 0; i < B * T; i++)
		tok[i] = (ct_tok)((i * 7) % 5);	/* repeated tokens */
	d_tok = dev_tokens(tok, (size_t)B * T);
	d_wte = dev(wte, (size_t)Vp * C); d_wpe = dev(wpe, (size_t)maxT * C);
	d_out = dev(out, (size_t)B * T * C); d_dout = dev(dout, (size_t)B * T * C);
	d_dwte = dev(dwte, (size_t)Vp * C); d_dwpe = dev(dwpe, (size_t)maxT * C);
	ct_encoder_forward(out, tok, wte, wpe, B, T, C);
	assert_int_equal(ct_ocl_encoder_forward(&ops, d_out, d_tok, d_wte, d_wpe, B, T, C), 0);
	expect_same("encoder forward", d_out, out, (size_t)B * T * C);
	ct_encoder_backward(dwte, dwpe, dout, tok, B, T, C);
	assert_int_equal(ct_ocl_encoder_backward(&ops, d_dwte, d_dwpe, d_dout, d_tok, B, T, C), 0);
	expect_same("encoder dwte", d_dwte, dwte, (size_t)Vp * C);
	expect_same("encoder dwpe", d_dwpe, dwpe, (size_t)maxT * C);
	drop(d_wte, wte);
	drop(d_wpe, wpe);
	drop(d_dout, dout);
	clReleaseMemObject(d_tok);
}

/* ---- layernorm ------------------------------------------------------------- */

static void check_layernorm(int BT, int C)
{
	const size_t n = (size_t)BT * C;
	float *inp = rand_floats(n, 3.0f), *w = rand_floats(C, 1.0f), *b = rand_floats(C, 1.0f);
	float *out = rand_floats(n, 1.0f), *mean = rand_floats(BT, 1.0f);
	float *rstd = rand_floats(BT, 1.0f), *dout = rand_floats(n, 1.0f);
	float *dinp = rand_floats(n, 1.0f), *dw = rand_floats(C, 1.0f), *db = rand_floats(C, 1.0f);
	struct ct_dten d_inp = dev(inp, n), d_w = dev(w, C), d_b = dev(b, C);
	struct ct_dten d_out = dev(out, n), d_mean = dev(mean, BT), d_rstd = dev(rstd, BT);
	struct ct_dten d_dout = dev(dout, n), d_dinp = dev(dinp, n);
	struct ct_dten d_dw = dev(dw, C), d_db = dev(db, C);

	ct_layernorm_forward(out, mean, rstd, inp, w, b, BT, C);
	assert_int_equal(ct_ocl_layernorm_forward(&ops, d_out, d_mean, d_rstd, d_inp, d_w,
						  d_b, BT, C), 0);
	/* backward runs on the reference's mean/rstd on both sides */
	ct_layernorm_backward(dinp, dw, db, dout, inp, w, mean, rstd, BT, C);
	assert_int_equal(ct_ocl_layernorm_backward(&ops, d_dinp, d_dw, d_db, d_dout, d_inp,
						   d_w, d_mean, d_rstd, BT, C), 0);
	expect_same("layernorm out", d_out, out, n);
	expect_same("layernorm mean", d_mean, mean, BT);
	expect_same("layernorm rstd", d_rstd, rstd, BT);
	expect_same("layernorm dinp", d_dinp, dinp, n);
	expect_same("layernorm dw", d_dw, dw, C);
	expect_same("layernorm db", d_db, db, C);
	drop(d_inp, inp);
	drop(d_w, w);
	drop(d_b, b);
	drop(d_dout, dout);
}

static void test_layernorm(void **state)
{
	(void)state;
	check_layernorm(29, 83);
}

/* ---- attention ------------------------------------------------------------- */

static void check_attention(int B, int T, int C, int NH)
{
	const size_t n = (size_t)B * T * C, na = (size_t)B * NH * T * T;
	float *qkv = rand_floats(3 * n, 2.0f), *out = rand_floats(n, 1.0f);
	float *att = rand_floats(na, 1.0f), *dout = rand_floats(n, 1.0f);
	float *dqkv = rand_floats(3 * n, 1.0f), *datt = rand_floats(na, 1.0f);
	struct ct_dten d_qkv = dev(qkv, 3 * n), d_out = dev(out, n), d_att = dev(att, na);
	struct ct_dten d_dout = dev(dout, n), d_dqkv = dev(dqkv, 3 * n), d_datt = dev(datt, na);

	ct_attention_forward(out, att, qkv, B, T, C, NH);
	assert_int_equal(ct_ocl_attention_forward(&ops, d_out, d_att, d_qkv, B, T, C, NH), 0);
	expect_same("attention out", d_out, out, n);
	ct_attention_backward(dqkv, datt, dout, qkv, att, B, T, C, NH);
	assert_int_equal(ct_ocl_attention_backward(&ops, d_dqkv, d_datt, d_dout, d_qkv, d_att,
						   B, T, C, NH), 0);
	expect_same("attention dqkv", d_dqkv, dqkv, 3 * n);
	/* datt is scratch; only its rows t2 <= t are defined, so compare att */
	expect_same("attention att", d_att, att, na);
	drop(d_qkv, qkv);
	drop(d_dout, dout);
	drop(d_datt, datt);
}

static void test_attention(void **state)
{
	(void)state;
	check_attention(2, 7, 12, 3);
	check_attention(1, 13, 20, 4);
	check_attention(3, 1, 6, 2);
	check_attention(2, 9, 48, 3);	/* hs = 16: the 8-channel kernels */
	check_attention(1, 5, 8, 1);
}

/* The recompute path (no T x T matrices): C twin == materialised reference,
 * and device == C, bit for bit; dqkv starts non-zero (backward adds). */
static void check_attention_recompute(int B, int T, int C, int NH)
{
	const size_t n = (size_t)B * T * C, na = (size_t)B * NH * T * T;
	const size_t ns = (size_t)B * NH * T * 2;
	float *qkv = rand_floats(3 * n, 3.0f), *dout = rand_floats(n, 1.0f);
	float *dqkv0 = rand_floats(3 * n, 1.0f), *att = rand_floats(na, 1.0f);
	float *datt = rand_floats(na, 1.0f), *out = rand_floats(n, 1.0f);
	float *dqkv = malloc(3 * n * sizeof(float)), *dqkv_c = malloc(3 * n * sizeof(float));
	float *out_c = rand_floats(n, 1.0f), *stat = rand_floats(ns, 1.0f);
	float *scr = rand_floats(ct_attention_scratch_floats(T, C, NH), 1.0f);
	struct ct_dten d_qkv = dev(qkv, 3 * n), d_out = dev(out_c, n), d_stat = dev(stat, ns);
	struct ct_dten d_dout = dev(dout, n), d_dqkv = dev(dqkv0, 3 * n);
	struct ct_dten d_dot = dev(stat, ns / 2);

	assert_non_null(dqkv);
	assert_non_null(dqkv_c);
	memcpy(dqkv, dqkv0, 3 * n * sizeof(float));
	memcpy(dqkv_c, dqkv0, 3 * n * sizeof(float));
	ct_attention_forward(out, att, qkv, B, T, C, NH);
	ct_attention_backward(dqkv, datt, dout, qkv, att, B, T, C, NH);
	ct_attention_forward_recompute(out_c, stat, scr, qkv, B, T, C, NH);
	ct_attention_backward_recompute(dqkv_c, scr, dout, qkv, stat, B, T, C, NH);
	assert_memory_equal(out_c, out, n * sizeof(float));
	assert_memory_equal(dqkv_c, dqkv, 3 * n * sizeof(float));
	assert_int_equal(ct_ocl_attention_forward_recompute(&ops, d_out, d_stat, d_qkv,
							    B, T, C, NH), 0);
	assert_int_equal(ct_ocl_attention_backward_recompute(&ops, d_dqkv, d_dot, d_dout, d_qkv,
							     d_stat, B, T, C, NH), 0);
	expect_same("attention (recompute) out", d_out, out, n);
	expect_same("attention (recompute) stat", d_stat, stat, ns);
	expect_same("attention (recompute) dqkv", d_dqkv, dqkv, 3 * n);
	clReleaseMemObject(d_dot.mem);
	drop(d_qkv, qkv);
	drop(d_dout, dout);
	free(out_c);
	free(dqkv_c);
	free(dqkv0);
	free(att);
	free(datt);
	free(scr);
}

static void test_attention_recompute(void **state)
{
	(void)state;
	check_attention_recompute(2, 7, 12, 3);
	check_attention_recompute(1, 13, 20, 4);
	check_attention_recompute(3, 1, 6, 2);
	check_attention_recompute(1, 10, 15, 5);	/* hs = 3 */
	check_attention_recompute(2, 11, 130, 1);	/* hs = 130: 64-channel pieces */
	check_attention_recompute(1, 70, 128, 2);	/* hs = 64, T past 64 */
	check_attention_recompute(2, 33, 32, 2);	/* one past a 32-key block */
	check_attention_recompute(1, 64, 64, 1);	/* whole blocks only */
}

/* The same through the GPU-shaped tiled kernels (attn_tiled.cl), forced
 * on: tiles of 32 rows, partial last tiles, several tiles, heads of 1..64
 * channels (a wider head falls back to the kernels above). */
static void test_attention_tiled(void **state)
{
	(void)state;
	ops.att_tiled = 1;
	for (int id = CT_K_ATG_FWD; id <= CT_K_ATG_DKV; id++)
		if (ops.wg_max[id] < 256 || ocl->info.local_mem < 48 * 1024)
			ops.att_tiled = 0;
	if (!ops.att_tiled)
		skip();
	check_attention_recompute(2, 7, 12, 3);
	check_attention_recompute(3, 1, 6, 2);
	check_attention_recompute(1, 10, 15, 5);	/* hs = 3 */
	check_attention_recompute(1, 70, 128, 2);	/* hs = 64, three tiles */
	check_attention_recompute(2, 33, 32, 2);	/* one past a tile */
	check_attention_recompute(1, 64, 64, 1);	/* whole tiles only */
	check_attention_recompute(1, 97, 100, 2);	/* hs = 50, four tiles */
	check_attention_recompute(1, 40, 130, 1);	/* hs = 130: not tiled */
	ops.att_tiled = 0;
}

/* ---- elementwise ----------------------------------------------------------- */

static void test_gelu_residual(void **state)
{
	const size_t n = 4099;
	float *inp = rand_floats(n, 6.0f), *out = rand_floats(n, 1.0f);
	float *dout = rand_floats(n, 1.0f), *dinp = rand_floats(n, 1.0f);
	float *a = rand_floats(n, 1.0f), *b = rand_floats(n, 1.0f), *r = rand_floats(n, 1.0f);
	float *da = rand_floats(n, 1.0f), *db = rand_floats(n, 1.0f);
	struct ct_dten d_inp, d_out, d_dout, d_dinp, d_a, d_b, d_r, d_da, d_db;

	(void)state;
	inp[0] = 0.0f; inp[1] = -0.0f; inp[2] = 30.0f; inp[3] = -30.0f; inp[4] = 1e-30f;
	d_inp = dev(inp, n); d_out = dev(out, n); d_dout = dev(dout, n); d_dinp = dev(dinp, n);
	d_a = dev(a, n); d_b = dev(b, n); d_r = dev(r, n); d_da = dev(da, n); d_db = dev(db, n);
	ct_gelu_forward(out, inp, n);
	assert_int_equal(ct_ocl_gelu_forward(&ops, d_out, d_inp, n), 0);
	expect_same("gelu forward", d_out, out, n);
	ct_gelu_backward(dinp, inp, dout, n);
	assert_int_equal(ct_ocl_gelu_backward(&ops, d_dinp, d_inp, d_dout, n), 0);
	expect_same("gelu backward", d_dinp, dinp, n);
	ct_residual_forward(r, a, b, n);
	assert_int_equal(ct_ocl_residual_forward(&ops, d_r, d_a, d_b, n), 0);
	expect_same("residual forward", d_r, r, n);
	ct_residual_backward(da, db, dout, n);
	assert_int_equal(ct_ocl_residual_backward(&ops, d_da, d_db, d_dout, n), 0);
	expect_same("residual da", d_da, da, n);
	expect_same("residual db", d_db, db, n);
	drop(d_inp, inp);
	drop(d_dout, dout);
	drop(d_a, a);
	drop(d_b, b);
}

/* ---- cross-entropy --------------------------------------------------------- */

/* Softmax, loss and dlogits of BT rows over V of Vp columns, the device's
 * bits against the reference's. */
static void check_crossentropy(int BT, int V, int Vp)
{
	const size_t n = (size_t)BT * Vp;
	ct_tok *tgt = malloc((size_t)BT * sizeof(ct_tok));
	float *logits = rand_floats(n, 8.0f), *probs = rand_floats(n, 1.0f);
	float *losses = rand_floats(BT, 1.0f), *dlogits = rand_floats(n, 1.0f);
	struct ct_dten d_logits, d_probs, d_losses, d_dlogits;
	cl_mem d_tgt;
	float *hl, ref_mean, got_mean;

	assert_non_null(tgt);
	for (int r = 0; r < BT; r++)
		tgt[r] = (ct_tok)((r * 13) % V);
	logits[5] = 80.0f;	/* one row with a dominant logit */
	logits[(size_t)(BT - 1) * Vp + V - 1] = 90.0f;	/* the max in the last column */
	d_tgt = dev_tokens(tgt, BT);
	d_logits = dev(logits, n); d_probs = dev(probs, n);
	d_losses = dev(losses, BT); d_dlogits = dev(dlogits, n);
	ct_crossentropy_forward(losses, probs, logits, tgt, BT, V, Vp);
	assert_int_equal(ct_ocl_crossentropy_forward(&ops, d_losses, d_probs, d_logits, d_tgt, 0,
						     BT, V, Vp), 0);
	hl = malloc(BT * sizeof(float));
	assert_non_null(hl);
	assert_int_equal(ct_ocl_read(&ops, hl, d_losses, BT), 0);
	ref_mean = ct_mean_loss(losses, BT);
	got_mean = ct_mean_loss(hl, BT);
	assert_memory_equal(&ref_mean, &got_mean, sizeof(float));
	free(hl);
	expect_same("crossentropy losses", d_losses, losses, BT);
	ct_crossentropy_backward(dlogits, probs, tgt, BT, V, Vp);
	assert_int_equal(ct_ocl_crossentropy_backward(&ops, d_dlogits, d_probs, d_tgt,
						      BT, V, Vp), 0);
	expect_same("crossentropy probs", d_probs, probs, n);
	expect_same("crossentropy dlogits", d_dlogits, dlogits, n);
	drop(d_logits, logits);
	clReleaseMemObject(d_tgt);
	free(tgt);
}

static void test_crossentropy(void **state)
{
	(void)state;
	check_crossentropy(23, 51, 64);
}

/* ---- clipping, AdamW --------------------------------------------------------- */

static void check_clip(size_t n, float clip)
{
	float *g = rand_floats(n, 1.0f);
	struct ct_dten d_g = dev(g, n);
	size_t nparts = (n + CT_CLIP_CHUNK - 1) / CT_CLIP_CHUNK;
	float norm, dnorm, *parts = calloc(nparts, sizeof(float));
	float *dparts = malloc(nparts * sizeof(float));

	/* each chunk's sum of squares, as doc/workunit.md says: an ulp of
	 * one part is often lost in the norm, so the parts are compared too */
	assert_non_null(parts);
	assert_non_null(dparts);
	for (size_t j = 0; j < n; j++)
		parts[j / CT_CLIP_CHUNK] = fmaf(g[j], g[j], parts[j / CT_CLIP_CHUNK]);
	norm = ct_grad_clip(g, n, clip);
	assert_int_equal(ct_ocl_grad_clip(&ops, d_g, n, clip), 0);
	assert_int_equal(ct_ocl_grad_norm_read(&ops, &dnorm), 0);
	assert_int_equal(ct_ocl_read(&ops, dparts, ct_dten_at(ops.clip_part, 0), nparts), 0);
	for (size_t k = 0; k < nparts; k++)
		if (memcmp(&parts[k], &dparts[k], sizeof(float)) != 0)
			fail_msg("gradient norm part %zu of %zu: device %.9g reference %.9g",
				 k, nparts, (double)dparts[k], (double)parts[k]);
	assert_memory_equal(&norm, &dnorm, sizeof(float));
	expect_same("clipped gradient", d_g, g, n);
	free(parts);
	free(dparts);
}

static void test_clip(void **state)
{
	(void)state;
	check_clip(2 * CT_CLIP_CHUNK + 123, 1.0f);	/* clipped, 3 chunks */
	check_clip(1000, 1e6f);				/* norm below clip */
	check_clip(CT_CLIP_CHUNK, 0.5f);
	check_clip(9 * CT_CLIP_CHUNK + 5, 3.0f);	/* a partial group of 16 chunks */
	check_clip(16 * CT_CLIP_CHUNK, 3.0f);		/* one full group */
	check_clip(33 * CT_CLIP_CHUNK + 5, 0.7f);	/* 2 full groups + rest */
}

/* The same reductions through the GPU-shaped kernels (reduce_tiled.cl),
 * forced on. Gradient norm: groups of 8 chunks, pieces of 512, partial
 * pieces, chunks and groups. Layernorm dw/db and matmul dbias: groups of
 * 32 columns, pieces of 64 rows, partial ones of each. */
static void test_reduce_tiled(void **state)
{
	ops.red_tiled = 1;
	for (int id = CT_K_GRADNORM_TILED; id <= CT_K_MM_DBIAS_TILED; id++)
		if (id != CT_K_MM_TILED_S && ops.wg_max[id] < 256)
			ops.red_tiled = 0;
	if (ops.wg_max[CT_K_CE_ROWS_TILED] < 256)
		ops.red_tiled = 0;
	if (!ops.red_tiled)
		skip();
	check_clip(100, 1e-3f);				/* less than a piece */
	test_clip(state);
	check_clip(17 * CT_CLIP_CHUNK + 700, 2.0f);	/* 3 groups, partial piece */
	check_layernorm(29, 83);
	check_layernorm(150, 70);
	check_layernorm(64, 32);			/* whole pieces only */
	check_matmul(37, 45, 70, 1);
	check_matmul(150, 20, 97, 1);
	/* softmax rows: groups of 32 rows, pieces of 128 columns; less than
	 * a piece, whole pieces, a partial last piece, partial last groups */
	check_crossentropy(23, 51, 64);
	check_crossentropy(64, 256, 256);
	check_crossentropy(45, 300, 320);
	check_crossentropy(70, 1000, 1024);
	ops.red_tiled = 0;
}

static void test_adamw(void **state)
{
	const size_t n = 5003;
	float *p = rand_floats(n, 1.0f), *g = rand_floats(n, 0.1f);
	float *m = rand_floats(n, 0.01f), *v = rand_floats(n, 0.001f);
	struct ct_adamw_args a = { .lr = 3e-4f, .beta1 = 0.9f, .beta2 = 0.999f,
				   .eps = 1e-8f, .weight_decay = 0.01f };
	struct ct_dten d_p, d_g, d_m, d_v;

	(void)state;
	for (size_t j = 0; j < n; j++)
		v[j] = fabsf(v[j]);
	d_p = dev(p, n); d_g = dev(g, n); d_m = dev(m, n); d_v = dev(v, n);
	for (int t = 1; t <= 3; t++) {
		ct_adamw_bias_corrections(a.beta1, a.beta2, t, &a.bc1, &a.bc2);
		ct_adamw_update(p, g, m, v, n, &a);
		assert_int_equal(ct_ocl_adamw(&ops, d_p, d_g, d_m, d_v, n, &a, 0.0f), 0);
	}
	expect_same("adamw params", d_p, p, n);
	expect_same("adamw m", d_m, m, n);
	expect_same("adamw v", d_v, v, n);
	drop(d_g, g);
}

/* Clipping folded into the AdamW pass = ct_grad_clip then ct_adamw_update,
 * for a gradient that is clipped and one that is not. */
static void check_adamw_clip(size_t n, float gscale, float clip)
{
	float *p = rand_floats(n, 1.0f), *g = rand_floats(n, gscale);
	float *m = rand_floats(n, 0.01f), *v = rand_floats(n, 0.001f);
	struct ct_adamw_args a = { .lr = 1e-3f, .beta1 = 0.8f, .beta2 = 0.99f,
				   .eps = 1e-6f, .weight_decay = 0.0f };
	struct ct_dten d_p, d_g, d_m, d_v;

	for (size_t j = 0; j < n; j++)
		v[j] = fabsf(v[j]);
	d_p = dev(p, n); d_g = dev(g, n); d_m = dev(m, n); d_v = dev(v, n);
	ct_adamw_bias_corrections(a.beta1, a.beta2, 2, &a.bc1, &a.bc2);
	ct_grad_clip(g, n, clip);
	ct_adamw_update(p, g, m, v, n, &a);
	assert_int_equal(ct_ocl_adamw(&ops, d_p, d_g, d_m, d_v, n, &a, clip), 0);
	expect_same("adamw+clip params", d_p, p, n);
	expect_same("adamw+clip grads", d_g, g, n);
	expect_same("adamw+clip m", d_m, m, n);
	expect_same("adamw+clip v", d_v, v, n);
}

static void test_adamw_clip(void **state)
{
	(void)state;
	check_adamw_clip(CT_CLIP_CHUNK + 77, 1.0f, 2.0f);	/* clipped */
	check_adamw_clip(3001, 1e-3f, 2.0f);			/* not clipped */
}

static int setup(void **state)
{
	const char *dev_spec;

	(void)state;
	/* no crowdtune kernel cache here (test_ocl covers it); PoCL's own
	 * cache (POCL_CACHE_DIR) keeps the build fast */
	if (ct_test_ocl_open(&dev_spec, &ocl) < 0)
		return -1;
	return ct_ocl_ops_init(&ops, ocl) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	ct_ocl_ops_free(&ops);
	ct_ocl_close(ocl);
	return 0;
}

CT_TEST_MAIN_OCL(setup, teardown, test_matmul, test_matmul_kpieces, test_matmul_packed,
		 test_matmul_packed_pieces, test_matmul_dweight_tr,
		 test_matmul_forms,
	test_matmul_matvec, test_matmul_blockings,
	test_matmul_tiled, test_encoder, test_layernorm, test_attention,
	test_attention_recompute, test_attention_tiled, test_gelu_residual,
	test_crossentropy, test_clip, test_reduce_tiled, test_adamw, test_adamw_clip)
