/*
 * test_ocl_lora.c - LoRA on the OpenCL backend is the C reference, bit for
 * bit: the adapter layer forward and backward (memcmp against
 * ct_lora_layer_forward/backward on awkward shapes), a weight gradient's
 * chains run in row blocks (memcmp against the C loop), whole LoRA work units
 * (losses, adapters and AdamW state on cpu and opencl), and a LoRA WU saved
 * on one device and resumed on the other.
 *
 * Exits 77 (skip) without an OpenCL device; CT_TEST_DEVICE picks one.
 */
#include "ct_test_ocl.h"

#include <math.h>


#include "ct_engine.h"
#include "ct_err.h"
#include "ct_hash.h"
#include "ct_lora_model.h"
#include "ct_ocl_lora.h"

static struct ct_ocl *ocl;
static struct ct_ocl_ops ops;
static cl_kernel kscale, kchain;
static const char *dev = "opencl";
static char *dir;

static const struct ct_model_config cfg = {
	.maxT = 16, .V = 61, .L = 2, .NH = 2, .C = 24, .Vp = 64,
};

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

static float *rnd(size_t n, uint32_t seed, float scale)
{
	float *p = malloc((n ? n : 1) * sizeof(float));

	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = ((float)(lcg(&seed) % 20001) / 10000.0f - 1.0f) * scale;
	return p;
}

static cl_mem up(const float *p, size_t n)
{
	cl_mem m;

	assert_int_equal(ct_ocl_alloc(ocl, (n ? n : 1) * sizeof(float), CL_MEM_READ_WRITE, &m), 0);
	assert_int_equal(ct_ocl_write(&ops, ct_dten_at(m, 0), p, n), 0);
	return m;
}

static void same(cl_mem m, const float *want, size_t n, const char *what)
{
	float *got = malloc((n ? n : 1) * sizeof(float));

	assert_int_equal(ct_ocl_read(&ops, got, ct_dten_at(m, 0), n), 0);
	if (memcmp(got, want, n * sizeof(float)) != 0)
		fail_msg("%s differs between C and OpenCL", what);
	free(got);
}

/* One shape: forward then backward on both sides, every output memcmp'd. */
static void check_layer(int BT, int C, int OC, int r, float s)
{
	const size_t nx = (size_t)BT * C, ny = (size_t)BT * OC, nh = (size_t)BT * r;
	float *x = rnd(nx, 1, 1.0f), *A = rnd((size_t)r * C, 2, 0.5f);
	float *Bm = rnd((size_t)OC * r, 3, 0.5f), *y = rnd(ny, 4, 1.0f);
	float *dy = rnd(ny, 5, 1.0f), *dx = rnd(nx, 6, 1.0f);
	float *dA = rnd((size_t)r * C, 7, 1.0f), *dB = rnd((size_t)OC * r, 8, 1.0f);
	float *hs = rnd(nh, 9, 1.0f), *u = rnd(ny, 10, 1.0f), *dh = rnd(nh, 11, 1.0f);
	cl_mem gx = up(x, nx), gA = up(A, (size_t)r * C), gB = up(Bm, (size_t)OC * r);
	cl_mem gy = up(y, ny), gdy = up(dy, ny), gdx = up(dx, nx);
	cl_mem gdA = up(dA, (size_t)r * C), gdB = up(dB, (size_t)OC * r);
	cl_mem ghs = up(hs, nh), gu = up(u, ny), gdh = up(dh, nh);

	ct_lora_layer_forward(y, hs, u, x, A, Bm, s, BT, C, OC, r);
	assert_int_equal(ct_ocl_lora_layer_forward(&ops, kscale, ct_dten_at(gy, 0),
						   ct_dten_at(ghs, 0), ct_dten_at(gu, 0),
						   ct_dten_at(gx, 0), ct_dten_at(gA, 0),
						   ct_dten_at(gB, 0), s, BT, C, OC, r), 0);
	same(gy, y, ny, "forward out");
	same(ghs, hs, nh, "forward hs");
	ct_lora_layer_backward(dx, dA, dB, dh, dy, x, hs, A, Bm, s, BT, C, OC, r);
	assert_int_equal(ct_ocl_lora_layer_backward(&ops, kscale, ct_dten_at(gdx, 0),
						    ct_dten_at(gdA, 0), ct_dten_at(gdB, 0),
						    ct_dten_at(gdh, 0), ct_dten_at(gdy, 0),
						    ct_dten_at(gx, 0), ct_dten_at(ghs, 0),
						    ct_dten_at(gA, 0), ct_dten_at(gB, 0), s,
						    BT, C, OC, r), 0);
	same(gdx, dx, nx, "backward dinp");
	same(gdA, dA, (size_t)r * C, "backward dA");
	same(gdB, dB, (size_t)OC * r, "backward dB");
	fprintf(stderr, "adapter layer BT %d C %d OC %d r %d: identical\n", BT, C, OC, r);
	clReleaseMemObject(gx); clReleaseMemObject(gA); clReleaseMemObject(gB);
	clReleaseMemObject(gy); clReleaseMemObject(gdy); clReleaseMemObject(gdx);
	clReleaseMemObject(gdA); clReleaseMemObject(gdB); clReleaseMemObject(ghs);
	clReleaseMemObject(gu); clReleaseMemObject(gdh);
	free(x); free(A); free(Bm); free(y); free(dy); free(dx); free(dA); free(dB);
	free(hs); free(u); free(dh);
}

static void test_layer(void **state)
{
	(void)state;
	check_layer(5, 7, 9, 1, 2.0f);
	check_layer(33, 24, 72, 4, 0.5f);
	check_layer(64, 96, 24, 8, 1.0f);
	check_layer(130, 64, 256, 16, 0.25f);
	check_layer(17, 3, 2, 32, 3.0f);
	check_layer(256, 768, 768, 8, 2.0f);	/* the 124M attproj shape */
}

/* The weight gradient's chains run over rows N in blocks of at most nb
 * (ct_lora_dw_chain through a park buffer) against the C loop of the
 * contract: acc from 0.0f, one fmaf per row ascending, dw = dw + acc. */
static void check_chain(int N, int nb, int IC, int OC)
{
	const size_t nw = (size_t)OC * IC;
	float *dout = rnd((size_t)N * OC, 21, 1.0f), *inp = rnd((size_t)N * IC, 22, 1.0f);
	float *dw = rnd(nw, 23, 1.0f);
	cl_mem gdout = up(dout, (size_t)N * OC), ginp = up(inp, (size_t)N * IC);
	cl_mem gdw = up(dw, nw), gpark = up(dw, nw);

	for (int r0 = 0; r0 < N; r0 += nb) {
		int n = N - r0 < nb ? N - r0 : nb;

		assert_int_equal(ct_ocl_lora_dw_chain(&ops, kchain, ct_dten_at(gdw, 0),
						      ct_dten_at(gpark, 0),
						      ct_dten_at(gdout, (size_t)r0 * OC),
						      ct_dten_at(ginp, (size_t)r0 * IC), n, IC, OC,
						      r0 == 0, r0 + n == N), 0);
	}
	for (int o = 0; o < OC; o++)
		for (int i = 0; i < IC; i++) {
			float acc = 0.0f;

			for (int t = 0; t < N; t++)
				acc = fmaf(dout[(size_t)t * OC + o], inp[(size_t)t * IC + i], acc);
			dw[(size_t)o * IC + i] = dw[(size_t)o * IC + i] + acc;
		}
	same(gdw, dw, nw, "blocked weight gradient");
	fprintf(stderr, "dw chain N %d blocks of %d IC %d OC %d: identical\n", N, nb, IC, OC);
	clReleaseMemObject(gdout); clReleaseMemObject(ginp);
	clReleaseMemObject(gdw); clReleaseMemObject(gpark);
	free(dout); free(inp); free(dw);
}

/* tiles of 8 x 8 outputs: edges in both directions, one block or many */
static void test_dw_chain(void **state)
{
	(void)state;
	check_chain(37, 10, 13, 19);	/* partial tiles both ways, short last block */
	check_chain(64, 64, 16, 24);	/* whole tiles, one block (first and last) */
	check_chain(50, 7, 3, 5);	/* narrower than one tile */
	check_chain(96, 32, 8, 1);	/* one output row: rows past OC recomputed */
	check_chain(130, 48, 72, 9);	/* the dA shape: r outputs over a wide input */
}

/* ---- whole work units ---------------------------------------------- */

struct wu_fix {
	struct ct_gpt2 model;
	struct ct_tokens tokens;
	struct ct_wu_hparams hp;
};

static void wu_fix(struct wu_fix *f, int rank, unsigned targets, float clip)
{
	memset(f, 0, sizeof(*f));
	assert_int_equal(ct_test_ocl_wu_inputs(&cfg, &f->model, &f->tokens, &f->hp), 0);
	f->hp.grad_clip = clip;
	f->hp.lora = (struct ct_lora_spec){ .rank = rank, .alpha = 2.0f * rank,
					    .targets = targets };
	f->hp.lora_seed = 99;
}

static void wu_fix_free(struct wu_fix *f)
{
	ct_gpt2_free(&f->model);
	ct_tokens_free(&f->tokens);
}

/* Run on device (from `resume` if set; stop after `stop` steps and save
 * `save` if stop > 0; else the adapters go to out and the final state to
 * `save`). */
static void run(struct wu_fix *f, const char *device, const char *resume, int stop,
		const char *save, float *losses, float *out)
{
	struct ct_wu *wu = NULL;
	float loss;
	int rc;

	rc = resume ? ct_wu_resume(resume, &f->model, &f->tokens, &f->hp, device, &wu)
		    : ct_wu_open(&f->model, &f->tokens, &f->hp, device, &wu);
	if (rc < 0)
		fail_msg("%s: %s", device, ct_errmsg(rc));
	while (!ct_wu_done(wu)) {
		int i = ct_wu_steps_done(wu);

		assert_int_equal(ct_wu_step(wu, &loss), 0);
		if (losses)
			losses[i] = loss;
		if (stop > 0 && ct_wu_steps_done(wu) == stop) {
			assert_int_equal(ct_wu_save_state(wu, save), 0);
			ct_wu_close(wu);
			return;
		}
	}
	assert_int_equal(ct_wu_read_adapters(wu, out), 0);
	/* the moments go into the state file, compared by the callers */
	assert_int_equal(ct_wu_save_state(wu, save), 0);
	ct_wu_close(wu);
}

static void wu_equal(int rank, unsigned targets, float clip)
{
	struct wu_fix f;
	size_t n;
	float lc[6], lo[6], *ac, *ao;
	char pc[4200], po[4200], hc[CT_SHA256_HEXLEN + 1], ho[CT_SHA256_HEXLEN + 1];

	wu_fix(&f, rank, targets, clip);
	n = ct_lora_nparams(&cfg, &f.hp.lora);
	ac = calloc(n, sizeof(float));
	ao = calloc(n, sizeof(float));
	snprintf(pc, sizeof(pc), "%s/cpu.state", dir);
	snprintf(po, sizeof(po), "%s/ocl.state", dir);
	run(&f, "cpu", NULL, 0, pc, lc, ac);
	run(&f, dev, NULL, 0, po, lo, ao);
	for (int i = 0; i < 6; i++)
		fprintf(stderr, "r %d targets 0x%x step %d loss cpu %.9g opencl %.9g\n", rank,
			targets, i + 1, (double)lc[i], (double)lo[i]);
	assert_memory_equal(lc, lo, sizeof(lc));
	assert_memory_equal(ac, ao, n * sizeof(float));
	/* the state files (adapters, m, v, header) are the same bytes */
	assert_int_equal(ct_sha256_file_hex(pc, hc), 0);
	assert_int_equal(ct_sha256_file_hex(po, ho), 0);
	assert_string_equal(hc, ho);
	assert_true(lc[5] < lc[0]);
	free(ac);
	free(ao);
	wu_fix_free(&f);
}

static void test_wu_equal(void **state)
{
	(void)state;
	wu_equal(4, CT_LORA_ALL, 1.0f);
	wu_equal(1, CT_LORA_QKV | CT_LORA_FCPROJ, 0.0f);
	wu_equal(8, CT_LORA_ATTPROJ | CT_LORA_FC, 0.05f);	/* clipping bites */
}

/* Save on one device after each step in turn, resume on the other: the same
 * adapters as an uninterrupted cpu run. */
static void test_resume_across(void **state)
{
	struct wu_fix f;
	size_t n;
	float l[6], *a, *b;
	char ps[4200], pe[4200];
	int k;

	(void)state;
	wu_fix(&f, 4, CT_LORA_ALL, 1.0f);
	n = ct_lora_nparams(&cfg, &f.hp.lora);
	a = calloc(n, sizeof(float));
	b = calloc(n, sizeof(float));
	snprintf(ps, sizeof(ps), "%s/mid.state", dir);
	snprintf(pe, sizeof(pe), "%s/end.state", dir);
	run(&f, "cpu", NULL, 0, pe, l, a);
	/* every switch point, in order (nothing depends on the time it runs) */
	for (k = 1; k < 6; k++) {
		fprintf(stderr, "cpu -> opencl after step %d, opencl -> cpu after step %d\n",
			k, 6 - k);
		memset(b, 0, n * sizeof(float));
		run(&f, "cpu", NULL, k, ps, NULL, NULL);
		run(&f, dev, ps, 0, pe, NULL, b);
		assert_memory_equal(a, b, n * sizeof(float));
		memset(b, 0, n * sizeof(float));
		run(&f, dev, NULL, 6 - k, ps, NULL, NULL);
		run(&f, "cpu", ps, 0, pe, NULL, b);
		assert_memory_equal(a, b, n * sizeof(float));
	}
	free(a);
	free(b);
	wu_fix_free(&f);
}

static int setup(void **state)
{
	(void)state;
	/* the backend must offer LoRA */
	if (ct_ocl_backend_ops.open_lora == NULL)
		return -1;
	if (ct_test_ocl_open(&dev, &ocl) < 0)
		return -1;
	if (ct_ocl_ops_init(&ops, ocl) < 0 || ct_ocl_lora_kernel(ocl, &kscale) < 0 ||
	    ct_ocl_kernel(ocl, "ct_lora_dw_chain", &kchain) < 0)
		return -1;
	dir = ct_test_mkdtemp();
	return dir ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	clReleaseKernel(kscale);
	if (kchain != NULL)
		clReleaseKernel(kchain);
	ct_ocl_ops_free(&ops);
	ct_ocl_close(ocl);
	ct_test_rmtree(dir);
	free(dir);
	return 0;
}

CT_TEST_MAIN_OCL(setup, teardown, test_layer, test_dw_chain, test_wu_equal, test_resume_across)
