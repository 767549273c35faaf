/*
 * test_ocl_mask.c - work units on token files with a loss mask (version
 * 3, doc/workunit.md sections 1 and 5): a masked WU gives the same bytes
 * on the C reference and on OpenCL (GPT-2 full and LoRA, a Llama model;
 * the kernels' other shapes and lean mode too);
 * a mask of all ones gives the bits of the unmasked file, whether it
 * comes from a version 3 file or is forced through the masked path, and
 * those bits are the ones the code before masks produced (a recorded
 * hash); the masked loss is the mean over the trained positions
 * computed here by hand; the ids of untrained targets do not touch the
 * gradients; evaluation skips the batches without a trained target.
 *
 * The OpenCL half exits 77 (skip) on a machine without a device; the C
 * reference checks run everywhere (CT_TEST_DEVICE=cpu runs them alone).
 */
#include "ct_test_ocl.h"

#include "ct_engine.h"
#include "ct_err.h"
#include "ct_hash.h"
#include "ct_llama.h"

#include <math.h>

static const char *ocl_dev = "opencl";
static int have_ocl = 1;
static char *dir;
static const struct ct_model_config gcfg = {
	.maxT = 16, .V = 61, .L = 2, .NH = 2, .C = 24, .Vp = 64,
};

/* SHA-256 of the checkpoint of ct_test_ocl_wu_inputs' unmasked WU (6
 * steps of 3 x 11, grad_clip 1), as `ctune train` built before token
 * files had a mask wrote it (ctune train --steps 6 --batch 3 --seq 11
 * --lr 0.01 --weight-decay 0.01 --grad-clip 1 on the same files, at
 * 8047e19): masks left the old arithmetic alone. */
#define UNMASKED_SHA "fa9ce8c7542e9576da6ac835a1ab9b3b59436a5dea78cd5f65792c8b7e5dfc92"

struct fix {
	struct ct_model_config cfg;
	struct ct_gpt2 model;
	struct ct_tokens tokens;
	struct ct_wu_hparams hp;
	uint8_t train[400];
};

/* A chat-like mask: runs of 13 trained tokens after 26 that are not. */
static void chat_mask(uint8_t *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		m[i] = (i / 13) % 3 == 2;
}

static void gpt2_fix(struct fix *f)
{
	memset(f, 0, sizeof(*f));
	f->cfg = gcfg;
	assert_int_equal(ct_test_ocl_wu_inputs(&f->cfg, &f->model, &f->tokens, &f->hp), 0);
	f->hp.grad_clip = 1.0f;
	chat_mask(f->train, 400);
}

static void llama_fix(struct fix *f)
{
	memset(f, 0, sizeof(*f));
	f->cfg = (struct ct_model_config){ .maxT = 16, .V = 53, .Vp = 56, .L = 2, .NH = 6,
					  .C = 36, .arch = CT_ARCH_LLAMA, .KVH = 2, .F = 30,
					  .flags = CT_LLAMA_QKV_BIAS, .rope_theta = 500000.0,
					  .rms_eps = 1e-5 };
	assert_int_equal(ct_test_ocl_wu_inputs(&f->cfg, &f->model, &f->tokens, &f->hp), 0);
	f->hp.steps = 4;
	f->hp.grad_clip = 1.0f;
	chat_mask(f->train, 400);
}

static void fix_free(struct fix *f)
{
	ct_gpt2_free(&f->model);
	ct_tokens_free(&f->tokens);
}

/* Run f's WU on device, losses (hp.steps) out, the checkpoint (LoRA: the
 * state file) hashed into hex. */
static void run_wu(struct fix *f, const char *device, float *losses,
		   char hex[CT_SHA256_HEXLEN + 1])
{
	struct ct_wu *wu = NULL;
	char path[4200];
	int rc;

	snprintf(path, sizeof(path), "%s/wu.out", dir);
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

/* The masked WU of f on cpu and on opencl: same losses, same bytes, and
 * not those of the unmasked WU. */
static void masked_equal(struct fix *f)
{
	float lc[8], lo[8], lu[8];
	char hc[CT_SHA256_HEXLEN + 1], ho[CT_SHA256_HEXLEN + 1], hu[CT_SHA256_HEXLEN + 1];
	int n = f->hp.steps;

	run_wu(f, "cpu", lu, hu);
	assert_int_equal(ct_tokens_set_mask(&f->tokens, f->train), 0);
	assert_non_null(f->tokens.train);
	run_wu(f, "cpu", lc, hc);
	assert_string_not_equal(hc, hu);
	assert_memory_not_equal(lc, lu, (size_t)n * sizeof(float));
	if (!have_ocl)
		return;
	run_wu(f, ocl_dev, lo, ho);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "step %d masked loss cpu %.9g opencl %.9g (unmasked %.9g)\n",
			i + 1, (double)lc[i], (double)lo[i], (double)lu[i]);
	assert_memory_equal(lc, lo, (size_t)n * sizeof(float));
	assert_string_equal(hc, ho);
}

static void test_masked_gpt2(void **state)
{
	struct fix f;

	(void)state;
	gpt2_fix(&f);
	masked_equal(&f);
	fix_free(&f);
}

static void test_masked_lora(void **state)
{
	struct fix f;

	(void)state;
	gpt2_fix(&f);
	f.hp.lora = (struct ct_lora_spec){ .rank = 2, .alpha = 4.0f, .targets = CT_LORA_ALL };
	f.hp.lora_seed = 99;
	masked_equal(&f);
	fix_free(&f);
}

static void test_masked_llama(void **state)
{
	struct fix f;

	(void)state;
	llama_fix(&f);
	masked_equal(&f);
	fix_free(&f);
}

/* A masked Llama LoRA WU in lean mode with its frozen head held 5 rows
 * at a time: each piece's gradient still divides by the trained rows of
 * the whole batch, so the C reference's bytes. */
static void test_masked_llama_lora_pieces(void **state)
{
	struct fix f;

	(void)state;
	llama_fix(&f);
	f.hp.lora = (struct ct_lora_spec){ .rank = 2, .alpha = 4.0f, .targets = CT_LORA_ALL };
	f.hp.lora_seed = 3;
	setenv("CT_OCL_LEAN", "1", 1);
	setenv("CT_OCL_HEAD_ROWS", "5", 1);
	masked_equal(&f);
	unsetenv("CT_OCL_HEAD_ROWS");
	unsetenv("CT_OCL_LEAN");
	fix_free(&f);
}

/* The kernels' other shapes on the masked WU (an element or runs of 5
 * per work-item in the elementwise kernels and the masked dlogits, the
 * GPU-shaped reductions and work-groups, lean mode) and the masked
 * evaluation with the head 5 rows at a time: the C reference's bytes. */
static void test_masked_variants(void **state)
{
	static const char *const env[][2] = {
		{ "CT_OCL_EW", "1" }, { "CT_OCL_EW", "5" }, { "CT_OCL_RED_TILED", "1" },
		{ "CT_OCL_LOCAL", "gpu" }, { "CT_OCL_LEAN", "1" },
	};
	struct fix f;
	float lc[6], lo[6], ec, eo;
	char hc[CT_SHA256_HEXLEN + 1], ho[CT_SHA256_HEXLEN + 1];

	(void)state;
	if (!have_ocl)
		skip();
	gpt2_fix(&f);
	assert_int_equal(ct_tokens_set_mask(&f.tokens, f.train), 0);
	run_wu(&f, "cpu", lc, hc);
	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
		setenv(env[i][0], env[i][1], 1);
		run_wu(&f, ocl_dev, lo, ho);
		unsetenv(env[i][0]);
		fprintf(stderr, "%s=%s: %s\n", env[i][0], env[i][1], ho);
		assert_memory_equal(lc, lo, sizeof(lc));
		assert_string_equal(hc, ho);
	}
	assert_int_equal(ct_eval(&f.model, &f.tokens, 2, 13, 4, "cpu", &ec), 0);
	setenv("CT_OCL_HEAD_ROWS", "5", 1);
	assert_int_equal(ct_eval(&f.model, &f.tokens, 2, 13, 4, ocl_dev, &eo), 0);
	unsetenv("CT_OCL_HEAD_ROWS");
	assert_memory_equal(&ec, &eo, sizeof(float));
	fix_free(&f);
}

/* All ones: a version 3 file, and the same ones forced through the
 * masked path (scratch targets, the device count), give the unmasked
 * bits, which are those recorded before masks existed. */
static void test_all_ones(void **state)
{
	struct fix f;
	uint8_t ones[400];
	char p2[4200], p3[4200], h2[CT_SHA256_HEXLEN + 1], h[CT_SHA256_HEXLEN + 1];
	float l2[6], l[6];

	(void)state;
	gpt2_fix(&f);
	memset(ones, 1, sizeof(ones));
	snprintf(p2, sizeof(p2), "%s/v2.bin", dir);
	snprintf(p3, sizeof(p3), "%s/v3.bin", dir);
	assert_int_equal(ct_tokens_save_ids(p2, f.tokens.tok, f.tokens.n, 1), 0);
	assert_int_equal(ct_tokens_save_masked(p3, f.tokens.tok, ones, f.tokens.n), 0);
	run_wu(&f, "cpu", l2, h2);
	fprintf(stderr, "unmasked cpu %s\n", h2);
	assert_string_equal(h2, UNMASKED_SHA);
	for (int d = 0; d < 1 + have_ocl; d++) {
		const char *dev = d ? ocl_dev : "cpu";

		ct_tokens_free(&f.tokens);
		assert_int_equal(ct_tokens_load(p3, &f.tokens), 0);
		assert_int_equal(f.tokens.version, 3);
		run_wu(&f, dev, l, h);
		assert_string_equal(h, h2);
		assert_memory_equal(l, l2, sizeof(l));
		/* forced: the flags are there, all ones */
		f.tokens.train = ones;
		run_wu(&f, dev, l, h);
		f.tokens.train = NULL;
		assert_string_equal(h, h2);
		assert_memory_equal(l, l2, sizeof(l));
	}
	fix_free(&f);
}

/* The first step's loss of a masked WU against the per-position losses
 * of the unmasked forward pass: their float mean over the trained
 * positions in order (bit for bit) and their mean in double (close). */
static void test_loss_by_hand(void **state)
{
	struct fix f;
	struct ct_model m = { 0 };
	struct ct_wu *wu = NULL;
	const int BT = 33;
	float acc = 0.0f, loss;
	double dacc = 0.0;
	int ntr = 0;

	(void)state;
	gpt2_fix(&f);
	assert_int_equal(ct_model_init(&m, &f.cfg, f.model.params, 3, 11, 0), 0);
	(void)ct_model_forward(&m, f.tokens.tok, f.tokens.tok + 1);
	for (int r = 0; r < BT; r++) {
		if (!f.train[r + 1])
			continue;
		acc = acc + m.acts.losses[r];
		dacc += (double)m.acts.losses[r];
		ntr++;
	}
	assert_int_equal(ntr, 8);	/* tokens 26..33 are trained: rows 25..32 */
	ct_model_free(&m);
	assert_int_equal(ct_tokens_set_mask(&f.tokens, f.train), 0);
	for (int d = 0; d < 1 + have_ocl; d++) {
		assert_int_equal(ct_wu_open(&f.model, &f.tokens, &f.hp, d ? ocl_dev : "cpu", &wu), 0);
		assert_int_equal(ct_wu_step(wu, &loss), 0);
		ct_wu_close(wu);
		fprintf(stderr, "masked loss %.9g, by hand %.9g (double %.9g)\n", (double)loss,
			(double)(acc / (float)ntr), dacc / ntr);
		assert_true(loss == acc / (float)ntr);
		assert_true(fabs((double)loss - dacc / ntr) < 1e-5 * fabs(dacc / ntr));
	}
	fix_free(&f);
}

/* Backend level: the gradients depend on the trained targets only (the
 * ids behind CT_TOK_UNTRAINED are ignored), equal on both devices, and a
 * batch without a trained target has loss 0 and zero gradients. */
static void test_untrained_ignored(void **state)
{
	const struct ct_backend_ops *bops[2] = { &ct_cpu_backend_ops, &ct_ocl_backend_ops };
	struct ct_step_args a = { .t = 1, .grad_clip = 0.0f,
				  .opt = { .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f,
					   .eps = 1e-8f, .weight_decay = 0.0f } };
	struct fix f;
	ct_tok tg[3][33];
	float *g[2][3], loss[2][3];
	size_t n;

	(void)state;
	gpt2_fix(&f);
	n = f.model.lay.total;
	ct_adamw_bias_corrections(0.9f, 0.999f, 1, &a.opt.bc1, &a.opt.bc2);
	for (int r = 0; r < 33; r++) {
		int on = r % 4 == 1;

		tg[0][r] = f.tokens.tok[r + 1] | (on ? 0 : CT_TOK_UNTRAINED);
		tg[1][r] = on ? tg[0][r] : ((ct_tok)(r * 7) % 61) | CT_TOK_UNTRAINED;
		tg[2][r] = f.tokens.tok[r + 1] | CT_TOK_UNTRAINED;
	}
	for (int d = 0; d < 1 + have_ocl; d++) {
		for (int k = 0; k < 3; k++) {
			struct ct_backend *be = NULL;

			g[d][k] = malloc(n * sizeof(float));
			assert_non_null(g[d][k]);
			assert_int_equal(bops[d]->open(d ? ocl_dev : "cpu", &f.cfg, 3, 11, 1, &be), 0);
			assert_int_equal(bops[d]->load_state(be, f.model.params, NULL, NULL), 0);
			assert_int_equal(bops[d]->step(be, f.tokens.tok, tg[k], &a, &loss[d][k]), 0);
			assert_int_equal(bops[d]->read_grads(be, g[d][k]), 0);
			bops[d]->close(be);
		}
		assert_true(loss[d][0] == loss[d][1]);
		assert_memory_equal(g[d][0], g[d][1], n * sizeof(float));
		assert_true(loss[d][2] == 0.0f);
		for (size_t i = 0; i < n; i++)
			assert_true(g[d][2][i] == 0.0f);
	}
	if (have_ocl) {
		assert_memory_equal(loss[0], loss[1], sizeof(loss[0]));
		assert_memory_equal(g[0][0], g[1][0], n * sizeof(float));
	}
	for (int d = 0; d < 1 + have_ocl; d++)
		for (int k = 0; k < 3; k++)
			free(g[d][k]);
	fix_free(&f);
}

/* Evaluation: the same mean on both devices; a batch without a trained
 * target is left out of the mean; no trained target at all is an error. */
static void test_eval(void **state)
{
	struct fix f;
	struct ct_backend *be = NULL;
	ct_tok scratch[26];
	const ct_tok *tg;
	float e[2], one, both;
	uint8_t m[400] = { 0 };
	int ntr;

	(void)state;
	gpt2_fix(&f);
	assert_int_equal(ct_tokens_set_mask(&f.tokens, f.train), 0);
	for (int d = 0; d < 1 + have_ocl; d++)
		assert_int_equal(ct_eval(&f.model, &f.tokens, 2, 13, 5, d ? ocl_dev : "cpu",
					 &e[d]), 0);
	if (have_ocl)
		assert_memory_equal(&e[0], &e[1], sizeof(float));
	/* batch 0 (targets 1..26) untrained, batch 1 (targets 27..52) partly */
	for (int i = 30; i < 40; i++)
		m[i] = 1;
	assert_int_equal(ct_tokens_set_mask(&f.tokens, m), 0);
	assert_int_equal(ct_eval(&f.model, &f.tokens, 2, 13, 2, "cpu", &both), 0);
	/* the mean of one batch: batch 1's loss */
	assert_int_equal(ct_cpu_backend_ops.open("cpu", &f.cfg, 2, 13, 0, &be), 0);
	assert_int_equal(ct_cpu_backend_ops.load_state(be, f.model.params, NULL, NULL), 0);
	tg = ct_wu_targets(&f.tokens, 26, 26, scratch, &ntr);
	assert_int_equal(ntr, 10);
	assert_int_equal(ct_cpu_backend_ops.eval(be, f.tokens.tok + 26, tg, &one), 0);
	ct_cpu_backend_ops.close(be);
	assert_true(one == both);
	memset(m, 0, sizeof(m));
	assert_int_equal(ct_tokens_set_mask(&f.tokens, m), 0);
	assert_int_equal(ct_eval(&f.model, &f.tokens, 2, 13, 3, "cpu", &one), CT_EINVAL);
	fix_free(&f);
}

static int setup(void **state)
{
	(void)state;
	if (getenv("CT_TEST_DEVICE") != NULL)
		ocl_dev = getenv("CT_TEST_DEVICE");
	if (getenv("CTUNE_KERNEL_CACHE") == NULL)
		setenv("CTUNE_KERNEL_CACHE", "", 1);
	have_ocl = strcmp(ocl_dev, "cpu") != 0 && !ct_test_ocl_none();
	if (!have_ocl)
		fprintf(stderr, "no OpenCL device: the C reference checks only\n");
	dir = ct_test_mkdtemp();
	return dir == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	ct_test_rmtree(dir);
	free(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_ones),
		cmocka_unit_test(test_loss_by_hand),
		cmocka_unit_test(test_untrained_ignored),
		cmocka_unit_test(test_masked_gpt2),
		cmocka_unit_test(test_masked_variants),
		cmocka_unit_test(test_masked_lora),
		cmocka_unit_test(test_masked_llama),
		cmocka_unit_test(test_masked_llama_lora_pieces),
		cmocka_unit_test(test_eval),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
