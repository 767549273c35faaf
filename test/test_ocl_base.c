/*
 * test_ocl_base.c - LoRA on a compact (bf16, q8) frozen base on the OpenCL
 * backend is the C reference, bit for bit: the widening kernel against
 * ct_bf16_to_f32 over every bit pattern, the bf16, q8 and nf4 matmuls of every
 * kernel path (register-blocked in both forms, matvec, local-memory
 * tiles, in pieces) against ct_matmul_forward_w / ct_matmul_backward_w, whole bf16
 * and q8 LoRA work units (GPT-2, Llama with grouped-query attention, tied Llama
 * with Qwen3's q/k norms) on cpu and opencl (losses, adapters, state
 * files), a Llama base in per-layer pieces read back as it went in, and
 * a bf16 WU saved on one device and resumed on the other; and the
 * scheduler's memory bound against the peak a WU's backend really holds.
 *
 * Exits 77 (skip) without an OpenCL device; CT_TEST_DEVICE picks one.
 */
#include "ct_test_ocl.h"

#include "ct_base.h"
#include "ct_hash.h"
#include "ct_llama.h"
#include "ct_model.h"
#include "ct_ocl_weights.h"

static struct ct_ocl *ocl;
static struct ct_ocl_ops ops;
static const char *dev = "opencl";
static char *dir;

static const struct ct_model_config gpt2 = {
	.maxT = 16, .V = 61, .L = 2, .NH = 2, .C = 24, .Vp = 64,
};

static struct ct_model_config llama(int tied_qknorm)
{
	struct ct_model_config c = { .maxT = 16, .V = 50, .Vp = 50, .L = 2, .NH = 4, .C = 32,
				    .arch = CT_ARCH_LLAMA, .KVH = 2, .F = 48,
				    .flags = CT_LLAMA_QKV_BIAS, .rope_theta = 10000.0,
				    .rms_eps = 1e-5 };

	if (tied_qknorm) {
		c.flags = CT_LLAMA_TIED | CT_LLAMA_QK_NORM;
		c.hd = 12;
	}
	return c;
}

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

static cl_mem up_bytes(const void *p, size_t n)
{
	cl_mem m;

	assert_int_equal(ct_ocl_alloc(ocl, n ? n : 4, CL_MEM_READ_WRITE, &m), 0);
	assert_int_equal(ct_ocl_check(clEnqueueWriteBuffer(ocl->queue, m, CL_TRUE, 0, n, p,
							   0, NULL, NULL), "write"), 0);
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

/* Every bf16 pattern through the widening used by the matmuls. */
static void test_widen(void **state)
{
	uint16_t *h = malloc(0x10000 * 2);
	float *want = malloc(0x10000 * 4), *x = calloc(0x10000, 4);
	struct ct_wmat w;
	cl_mem gh, gx, gy;
	float *y;

	(void)state;
	for (uint32_t i = 0; i < 0x10000; i++) {
		h[i] = (uint16_t)i;
		want[i] = ct_bf16_to_f32((uint16_t)i);
	}
	/* y (1, 65536) = x . W^T with W (65536, 1) and x = 1: y[o] = fma(1, w, 0) */
	x[0] = 1.0f;
	gh = up_bytes(h, 0x10000 * 2);
	gx = up_bytes(x, 4);
	assert_int_equal(ct_ocl_alloc(ocl, 0x10000 * 4, CL_MEM_READ_WRITE, &gy), 0);
	y = malloc(0x10000 * 4);
	w = (struct ct_wmat){ .h = h };
	ct_matmul_forward_w(y, x, w, NULL, 1, 1, 0x10000);
	assert_int_equal(ct_ocl_matmul_forward(&ops, ct_dten_at(gy, 0), ct_dten_at(gx, 0),
					       (struct ct_dten){ gh, 0, CT_BASE_BF16 },
					       (struct ct_dten){ NULL, 0, 0 }, 0, 1, 1, 0x10000), 0);
	same(gy, y, 0x10000, "widened patterns");
	clReleaseMemObject(gh);
	clReleaseMemObject(gx);
	clReleaseMemObject(gy);
	free(h);
	free(want);
	free(x);
	free(y);
}

/* A weight (OC, C) of format fmt at element offset `off` of its buffer
 * (for q8/nf4, of the block grid): bf16 from random floats, q8/nf4 as
 * random blocks (a random scale, any codes). *bytes gets its size, *w
 * the C reference's view of it. Free the result with free(). */
static void *weight_image(int fmt, size_t nw, size_t off, size_t *bytes, struct ct_wmat *w)
{
	float *wf = rnd(nw, 1, 0.5f);
	uint32_t seed = 7;
	size_t be, nb;
	unsigned char *img;

	memset(w, 0, sizeof(*w));
	if (fmt == CT_BASE_BF16) {
		uint16_t *wh = calloc(nw + off, 2);

		for (size_t i = 0; i < nw; i++)
			wh[off + i] = ct_f32_to_bf16(wf[i]);
		*bytes = (nw + off) * 2;
		w->h = wh + off;
		free(wf);
		return wh;
	}
	be = ct_base_block_elems(fmt);
	nb = (nw + off + be - 1) / be;
	*bytes = nb * 36;
	img = malloc(*bytes);
	for (size_t k = 0; k < nb; k++) {
		float sc = wf[k % nw] / 64.0f;

		memcpy(img + k * 36, &sc, 4);
		for (int j = 4; j < 36; j++)
			img[k * 36 + j] = (unsigned char)lcg(&seed);
	}
	*w = (struct ct_wmat){ .q8 = img, .qe = off, .qfmt = fmt };
	free(wf);
	return img;
}

/* A compact weight of format fmt at element offset `off` of its buffer:
 * forward with bias and dinp, cpu vs opencl, under the kernel-path
 * setting env (NAME=VALUE or NULL). */
static void check_mm(int fmt, int BT, int C, int OC, size_t off, const char *env)
{
	const size_t nw = (size_t)OC * C;
	float *x = rnd((size_t)BT * C, 2, 1.0f);
	float *bias = rnd((size_t)OC, 3, 0.1f), *dy = rnd((size_t)BT * OC, 4, 1.0f);
	float *y = malloc((size_t)BT * OC * 4), *dx = rnd((size_t)BT * C, 5, 1.0f);
	struct ct_wmat wm;
	size_t bytes;
	void *img = weight_image(fmt, nw, off, &bytes, &wm);
	cl_mem gw, gx, gb, gy, gdy, gdx;
	struct ct_dten dw;
	char name[64] = "";

	gw = up_bytes(img, bytes);
	gx = up_bytes(x, (size_t)BT * C * 4);
	gb = up_bytes(bias, (size_t)OC * 4);
	gdy = up_bytes(dy, (size_t)BT * OC * 4);
	gdx = up_bytes(dx, (size_t)BT * C * 4);
	assert_int_equal(ct_ocl_alloc(ocl, (size_t)BT * OC * 4, CL_MEM_READ_WRITE, &gy), 0);
	if (env != NULL) {
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(env, "="), env);
		setenv(name, env + strlen(name) + 1, 1);
	}
	dw = (struct ct_dten){ gw, off, fmt };
	ct_matmul_forward_w(y, x, wm, bias, BT, C, OC);
	assert_int_equal(ct_ocl_matmul_forward(&ops, ct_dten_at(gy, 0), ct_dten_at(gx, 0), dw,
					       ct_dten_at(gb, 0), 1, BT, C, OC), 0);
	same(gy, y, (size_t)BT * OC, "compact matmul forward");
	ct_matmul_backward_w(dx, NULL, NULL, dy, x, wm, BT, C, OC);
	assert_int_equal(ct_ocl_matmul_dinp(&ops, ct_dten_at(gdx, 0), ct_dten_at(gdy, 0), dw,
					    BT, C, OC), 0);
	same(gdx, dx, (size_t)BT * C, "compact matmul dinp");
	if (env != NULL)
		unsetenv(name);
	fprintf(stderr, "%s matmul BT %d C %d OC %d off %zu %s: identical\n",
		ct_base_fmt_name(fmt), BT, C, OC, off, env ? env : "");
	clReleaseMemObject(gw); clReleaseMemObject(gx); clReleaseMemObject(gb);
	clReleaseMemObject(gy); clReleaseMemObject(gdy); clReleaseMemObject(gdx);
	free(x); free(bias); free(dy); free(y); free(dx); free(img);
}

/* Every kernel path of every compact format: the forward computed both
 * ways, matvec, k pieces (some starting off a whole vector of k), the
 * weight read in place (q8/nf4 a vector of a row at a time where the rows
 * and the offset are whole vectors, C and off multiples of 16; element
 * by element otherwise) or widened in pieces of whole outputs, the tiled
 * kernels on a widened copy. */
static void test_matmul(void **state)
{
	(void)state;
	for (int f = CT_BASE_BF16; f < CT_BASE_NFMT; f++) {
		check_mm(f, 5, 7, 9, 3, NULL);
		check_mm(f, 64, 96, 200, 0, "CT_OCL_FWD=n");
		check_mm(f, 64, 96, 200, 1, "CT_OCL_FWD=t");
		check_mm(f, 64, 96, 200, 0, "CT_OCL_FWD=t");
		check_mm(f, 40, 128, 200, 64, "CT_OCL_FWD=t");
		check_mm(f, 2, 64, 130, 5, NULL);		/* matvec on CPU devices */
		check_mm(f, 33, 70, 41, 2, "CT_OCL_KC=16");	/* k pieces */
		check_mm(f, 33, 96, 100, 0, "CT_OCL_KC=24");
		check_mm(f, 40, 64, 96, 0, "CT_OCL_MATVEC=1");
		/* widened in pieces of whole outputs: rows of out, columns of dinp */
		check_mm(f, 33, 70, 41, 2, "CT_OCL_WIDE_MAX=300");
		check_mm(f, 64, 96, 200, 0, "CT_OCL_WIDE_MAX=1000");
		check_mm(f, 2, 64, 130, 5, "CT_OCL_WIDE_MAX=100");
		check_mm(f, 33, 24, 72, 0, "CT_OCL_WIDE_MAX=256");	/* the WUs' shapes */
		check_mm(f, 33, 24, 64, 0, "CT_OCL_WIDE_MAX=256");
		check_mm(f, 33, 96, 24, 0, "CT_OCL_WIDE_MAX=256");
		/* the tiled kernels read a widened copy (the others the weight itself) */
		check_mm(f, 33, 70, 41, 2, "CT_OCL_MM_TILED=s");
		check_mm(f, 64, 96, 200, 1, "CT_OCL_MM_TILED=1");
	}
}

/* ---- whole work units ---------------------------------------------- */

struct wu_fix {
	struct ct_model_config cfg;
	struct ct_gpt2 model;
	struct ct_tokens tokens;
	struct ct_wu_hparams hp;
};

static void wu_fix(struct wu_fix *f, const struct ct_model_config *cfg, int fmt)
{
	memset(f, 0, sizeof(*f));
	f->cfg = *cfg;
	assert_int_equal(ct_test_ocl_wu_inputs(&f->cfg, &f->model, &f->tokens, &f->hp), 0);
	f->hp.grad_clip = 1.0f;
	f->hp.lora = (struct ct_lora_spec){ .rank = 4, .alpha = 8.0f, .targets = CT_LORA_ALL,
					    .base_fmt = fmt };
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
	assert_int_equal(ct_wu_save_state(wu, save), 0);
	ct_wu_close(wu);
}

static void wu_equal(const struct ct_model_config *cfg, int fmt, const char *what)
{
	struct wu_fix f;
	size_t n;
	float lc[6], lo[6], *ac, *ao, *a32;
	char pc[4200], po[4200], hc[CT_SHA256_HEXLEN + 1], ho[CT_SHA256_HEXLEN + 1];

	wu_fix(&f, cfg, fmt);
	n = ct_lora_nparams(cfg, &f.hp.lora);
	ac = calloc(n, sizeof(float));
	ao = calloc(n, sizeof(float));
	a32 = calloc(n, sizeof(float));
	snprintf(pc, sizeof(pc), "%s/cpu.state", dir);
	snprintf(po, sizeof(po), "%s/ocl.state", dir);
	run(&f, "cpu", NULL, 0, pc, lc, ac);
	run(&f, dev, NULL, 0, po, lo, ao);
	for (int i = 0; i < 6; i++)
		fprintf(stderr, "%s %s step %d loss cpu %.9g opencl %.9g\n", what,
			ct_base_fmt_name(fmt), i + 1, (double)lc[i], (double)lo[i]);
	assert_memory_equal(lc, lo, sizeof(lc));
	assert_memory_equal(ac, ao, n * sizeof(float));
	assert_int_equal(ct_sha256_file_hex(pc, hc), 0);
	assert_int_equal(ct_sha256_file_hex(po, ho), 0);
	assert_string_equal(hc, ho);
	assert_true(lc[5] < lc[0]);
	/* and the float32 base trains to other adapters (the rounding shows) */
	f.hp.lora.base_fmt = CT_BASE_F32;
	run(&f, dev, NULL, 0, po, NULL, a32);
	assert_memory_not_equal(ao, a32, n * sizeof(float));
	free(ac);
	free(ao);
	free(a32);
	wu_fix_free(&f);
}

static void test_wu_equal(void **state)
{
	struct ct_model_config l1 = llama(0), l2 = llama(1);

	(void)state;
	for (int fmt = CT_BASE_BF16; fmt < CT_BASE_NFMT; fmt++) {
		wu_equal(&gpt2, fmt, "gpt2");
		wu_equal(&l1, fmt, "llama gqa");
		wu_equal(&l2, fmt, "llama tied qk-norm");
		/* every weight widened in pieces */
		setenv("CT_OCL_WIDE_MAX", "256", 1);
		wu_equal(&gpt2, fmt, "gpt2 pieces");
		wu_equal(&l2, fmt, "llama tied qk-norm pieces");
		/* and Llama's lean mode (each layer's forward again in backward) */
		setenv("CT_OCL_LEAN", "1", 1);
		wu_equal(&l2, fmt, "llama tied qk-norm pieces lean");
		unsetenv("CT_OCL_WIDE_MAX");
		wu_equal(&l1, fmt, "llama gqa lean");
		/* with the MLP in blocks of 7 rows */
		setenv("CT_OCL_LEAN_ROWS", "7", 1);
		wu_equal(&l1, fmt, "llama gqa lean rows");
		wu_equal(&l2, fmt, "llama tied qk-norm lean rows");
		unsetenv("CT_OCL_LEAN_ROWS");
		unsetenv("CT_OCL_LEAN");
	}
}

/* Save on one device after each step in turn, resume on the other: the
 * adapters of an uninterrupted cpu run. */
static void resume_across(const struct ct_model_config *cfg, int fmt)
{
	struct wu_fix f;
	size_t n;
	float l[6], *a, *b;
	char ps[4200], pe[4200];

	wu_fix(&f, cfg, fmt);
	n = ct_lora_nparams(cfg, &f.hp.lora);
	a = calloc(n, sizeof(float));
	b = calloc(n, sizeof(float));
	snprintf(ps, sizeof(ps), "%s/mid.state", dir);
	snprintf(pe, sizeof(pe), "%s/end.state", dir);
	run(&f, "cpu", NULL, 0, pe, l, a);
	for (int k = 1; k < 6; k++) {
		fprintf(stderr, "%s: cpu -> opencl after step %d, opencl -> cpu after step %d\n",
			ct_base_fmt_name(fmt), k, 6 - k);
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

static void test_resume_across(void **state)
{
	struct ct_model_config l2 = llama(1);

	(void)state;
	for (int fmt = CT_BASE_BF16; fmt < CT_BASE_NFMT; fmt++) {
		resume_across(&gpt2, fmt);
		resume_across(&l2, fmt);
	}
}

/* A Llama base in per-layer pieces (ct_ocl_weights.h): every piece a
 * layer's slice or a whole non-layer tensor, and the stored bytes (the
 * float32 array, or the image with its zero gaps) back as they went in,
 * whole and through a range that crosses pieces. */
static void pieces(const struct ct_model_config *c, int fmt)
{
	struct ct_dweights w;
	struct ct_gpt2 m;
	float *p;
	struct ct_gpt2_layout lay;
	unsigned char *src, *got;
	size_t n;
	uint64_t largest, total;

	memset(&m, 0, sizeof(m));
	ct_gpt2_layout(c, &lay);
	p = rnd(lay.total, 5, 0.5f);
	if (fmt != CT_BASE_F32)
		assert_int_equal(ct_base_convert(c, p, fmt, &m), 0);
	src = fmt != CT_BASE_F32 ? m.base : (unsigned char *)p;
	n = fmt != CT_BASE_F32 ? m.base_bytes : lay.total * sizeof(float);
	ct_dweights_plan(&w, c, fmt, 1);
	total = ct_dweights_bytes(&w, &largest);
	assert_true(total <= n && largest < n / 2);
	assert_int_equal(ct_dweights_alloc(&w, ocl, 1), 0);
	assert_true(ct_dweights_at(&w, CT_FCW, (size_t)2 * c->F * c->C).mem ==
		    w.mem[CT_FCW * c->L + 1]);
	assert_int_equal(ct_dweights_at(&w, CT_FCW, (size_t)2 * c->F * c->C + 7).off, 7);
	got = calloc(n, 1);
	assert_int_equal(ct_dweights_io(&w, ocl, 0, src, n, 1), 0);
	assert_int_equal(ct_dweights_io(&w, ocl, 0, got, n, 0), 0);
	assert_memory_equal(got, src, n);
	memset(got, 0xff, n);
	assert_int_equal(ct_dweights_io(&w, ocl, n / 3, got, n / 2, 0), 0);
	assert_memory_equal(got, src + n / 3, n / 2);
	assert_int_equal(ct_dweights_io(&w, ocl, n / 2, got, n / 2 + 1, 0), CT_EINVAL);
	free(got);
	ct_dweights_free(&w);
	free(p);
	ct_gpt2_free(&m);
}

static void test_pieces(void **state)
{
	struct ct_model_config l1 = llama(0), l2 = llama(1);

	(void)state;
	for (int fmt = CT_BASE_F32; fmt < CT_BASE_NFMT; fmt++) {
		pieces(&l1, fmt);
		pieces(&l2, fmt);
	}
}

/* The scheduler's bound (ct_wu_mem_bytes) against what a WU's OpenCL
 * backend really holds: a Llama LoRA WU on each base format, opened and
 * one step run, peaks at or under the bound and above 1/1.5 of it (a
 * bound far above the peak keeps WUs off devices that could hold them);
 * and so in a lean pass with the MLP in row blocks. */
static void test_wu_bound(void **state)
{
	struct ct_model_config c = { .maxT = 64, .V = 2048, .Vp = 2048, .L = 2, .NH = 4,
				    .C = 256, .arch = CT_ARCH_LLAMA, .KVH = 2, .F = 768,
				    .rope_theta = 10000.0, .rms_eps = 1e-5 };
	ct_tok tok[4 * 64 + 1];
	struct ct_gpt2 model;
	struct ct_tokens tokens;

	(void)state;
	assert_int_equal(ct_gpt2_alloc(&model, &c), 0);
	assert_int_equal(ct_gpt2_init_random(&c, 7, model.params), 0);
	for (size_t i = 0; i < sizeof(tok) / sizeof(tok[0]); i++)
		tok[i] = (ct_tok)((i * 7919) % (size_t)c.V);
	assert_int_equal(ct_tokens_from_array(&tokens, tok, sizeof(tok) / sizeof(tok[0])), 0);
	for (int run = 0; run < 2 * CT_BASE_NFMT; run++) {
		const int fmt = run % CT_BASE_NFMT, lean = run >= CT_BASE_NFMT;
		struct ct_wu_hparams hp;
		struct ct_wu *wu = NULL;
		size_t live, peak = 0, largest = 0;
		uint64_t need;
		float loss;

		if (lean) {	/* a lean pass, its MLP in blocks of 32 rows */
			setenv("CT_OCL_LEAN", "1", 1);
			setenv("CT_OCL_LEAN_ROWS", "32", 1);
		}

		ct_wu_hparams_default(&hp);
		hp.steps = 1;
		hp.B = 4;
		hp.T = 64;
		hp.lora = (struct ct_lora_spec){ .rank = 8, .alpha = 8.0f,
						 .targets = CT_LORA_ALL, .base_fmt = fmt };
		need = ct_wu_mem_bytes(&c, &hp);
		live = ct_ocl_alloc_mark();
		assert_int_equal(ct_wu_open(&model, &tokens, &hp, dev, &wu), 0);
		assert_int_equal(ct_wu_step(wu, &loss), 0);
		ct_wu_close(wu);
		ct_ocl_alloc_stats(&peak, &largest);
		peak -= live;
		unsetenv("CT_OCL_LEAN_ROWS");
		unsetenv("CT_OCL_LEAN");
		fprintf(stderr, "%s%s: OpenCL peak %zu bytes, bound %llu (%.2fx)\n",
			ct_base_fmt_name(fmt), lean ? " lean" : "", peak, (unsigned long long)need,
			(double)need / (double)peak);
		assert_true(need >= peak);
		assert_true((double)need <= 1.5 * (double)peak);
	}
	ct_tokens_free(&tokens);
	ct_gpt2_free(&model);
}

static int setup(void **state)
{
	(void)state;
	if (ct_test_ocl_open(&dev, &ocl) < 0)
		return -1;
	if (ct_ocl_ops_init(&ops, ocl) < 0)
		return -1;
	dir = ct_test_mkdtemp();
	return dir ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	ct_ocl_ops_free(&ops);
	ct_ocl_close(ocl);
	ct_test_rmtree(dir);
	free(dir);
	return 0;
}

CT_TEST_MAIN_OCL(setup, teardown, test_widen, test_matmul, test_pieces, test_wu_equal,
		 test_resume_across, test_wu_bound)
