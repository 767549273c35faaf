/*
 * test_ocl_train.c - whole work units on the C reference ("cpu") and on the
 * OpenCL backend give the same bytes: losses, gradients, weights, AdamW
 * state and the trained checkpoint file (SHA-256); a WU interrupted after
 * any step (each one is tried, in order: no test here depends on the time
 * it runs) and resumed on opencl (or moved from cpu to opencl) gives the
 * identical file; evaluation gives the identical mean loss.
 *
 * Tiny model with awkward sizes (C = 24, NH = 2, Vp = 64 > V = 61, B = 3,
 * T = 11) so it runs in about a second on PoCL. Exits 77 (skip) when the
 * machine has no OpenCL device; CT_TEST_DEVICE picks one ("opencl:N").
 */
#include "ct_test_ocl.h"

#include "ct_engine.h"
#include "ct_err.h"
#include "ct_hash.h"
#include "ct_ocl.h"

#include <math.h>

static const char *ocl_dev = "opencl";
static const struct ct_model_config cfg = {
	.maxT = 16, .V = 61, .L = 2, .NH = 2, .C = 24, .Vp = 64,
};

struct fixture {
	struct ct_gpt2 model;
	struct ct_tokens tokens;
	struct ct_wu_hparams hp;
	char *dir;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL || ct_test_ocl_wu_inputs(&cfg, &f->model, &f->tokens, &f->hp) < 0)
		return -1;
	f->hp.grad_clip = 1.0f;
	f->dir = ct_test_mkdtemp();
	if (f->dir == NULL)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	ct_gpt2_free(&f->model);
	ct_tokens_free(&f->tokens);
	ct_test_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

/* Run the whole WU on device (resuming from `resume` when not NULL, else
 * stopping after `stop_after` steps to save `state_out` when that is >0),
 * save the checkpoint to dir/name and return its SHA-256 hex. */
static void run_wu(struct fixture *f, const char *device, const char *resume,
		   int stop_after, const char *state_out, const char *name,
		   float *losses, char hex[CT_SHA256_HEXLEN + 1])
{
	struct ct_wu *wu = NULL;
	char path[4200];
	int rc;

	if (resume != NULL)
		rc = ct_wu_resume(resume, &f->model, &f->tokens, &f->hp, device, &wu);
	else
		rc = ct_wu_open(&f->model, &f->tokens, &f->hp, device, &wu);
	if (rc < 0)
		fail_msg("%s: %s", device, ct_errmsg(rc));
	ct_test_wu_run(wu, losses, stop_after);
	if (stop_after > 0 && ct_wu_steps_done(wu) == stop_after) {
		assert_int_equal(ct_wu_save_state(wu, state_out), 0);
		ct_wu_close(wu);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	assert_int_equal(ct_wu_save_model(wu, path), 0);
	ct_wu_close(wu);
	assert_int_equal(ct_sha256_file_hex(path, hex), 0);
}

static void test_cpu_equals_opencl(void **state)
{
	struct fixture *f = *state;
	float lc[6], lo[6];
	char hc[CT_SHA256_HEXLEN + 1], ho[CT_SHA256_HEXLEN + 1];

	run_wu(f, "cpu", NULL, 0, NULL, "cpu.bin", lc, hc);
	run_wu(f, ocl_dev, NULL, 0, NULL, "ocl.bin", lo, ho);
	for (int i = 0; i < 6; i++)
		fprintf(stderr, "step %d loss cpu %.9g opencl %.9g\n", i + 1,
			(double)lc[i], (double)lo[i]);
	assert_memory_equal(lc, lo, sizeof(lc));
	assert_string_equal(hc, ho);
	/* and training did something */
	assert_true(lc[5] < lc[0]);
}

/* Lean mode (ln1, qkv, ln2 recomputed in backward; the default for big
 * batches only) gives the same bytes; so do attention.cl's kernels with a
 * row per work-item (GPUs' choice) and with blocks of 3 (T = 11: the last
 * block ends past T). */
static void test_lean_equal(void **state)
{
	setenv("CT_OCL_LEAN", "1", 1);
	test_cpu_equals_opencl(state);
	unsetenv("CT_OCL_LEAN");
	setenv("CT_OCL_ATT_R", "1", 1);
	test_cpu_equals_opencl(state);
	setenv("CT_OCL_ATT_R", "3", 1);
	test_cpu_equals_opencl(state);
	unsetenv("CT_OCL_ATT_R");
}

/* The GPU-shaped kernels (tiled matmul, tiled attention, tiled gradient
 * norm), forced on this device, give the same bytes; the matmul with its
 * big tiles (the device's, and an odd shape) and with its small ones. (Each is skipped by the backend when the device
 * cannot run its work-groups; test_ocl_kernels says which.) */
static void test_gpu_kernels_equal(void **state)
{
	setenv("CT_OCL_MM_TILED", "b", 1);	/* big tiles only */
	setenv("CT_OCL_ATT_TILED", "1", 1);
	setenv("CT_OCL_RED_TILED", "1", 1);
	setenv("CT_OCL_LOCAL", "gpu", 1);	/* work-groups of a warp or more */
	setenv("CT_OCL_EW", "1", 1);		/* an element per work-item */
	test_cpu_equals_opencl(state);
	setenv("CT_OCL_EW", "5", 1);		/* and runs that end part-way */
	setenv("CT_OCL_MMT", "24,40,5,3,5", 1);
	test_cpu_equals_opencl(state);
	unsetenv("CT_OCL_MMT");
	setenv("CT_OCL_MM_TILED", "s", 1);	/* small tiles only */
	test_cpu_equals_opencl(state);
	unsetenv("CT_OCL_MM_TILED");
	unsetenv("CT_OCL_ATT_TILED");
	unsetenv("CT_OCL_RED_TILED");
	unsetenv("CT_OCL_LOCAL");
	unsetenv("CT_OCL_EW");
}

static void test_no_clip_equal(void **state)
{
	struct fixture *f = *state;
	char hc[CT_SHA256_HEXLEN + 1], ho[CT_SHA256_HEXLEN + 1];
	float saved = f->hp.grad_clip;

	f->hp.grad_clip = 0.0f;
	f->hp.steps = 3;
	run_wu(f, "cpu", NULL, 0, NULL, "cpu2.bin", NULL, hc);
	run_wu(f, ocl_dev, NULL, 0, NULL, "ocl2.bin", NULL, ho);
	f->hp.grad_clip = saved;
	f->hp.steps = 6;
	assert_string_equal(hc, ho);
}

/* One step through the backend interface: gradients, weights and AdamW
 * moments all identical (a finer diagnosis than the file hash). */
static void test_backend_state_equal(void **state)
{
	struct fixture *f = *state;
	const struct ct_backend_ops *ops[2] = { &ct_cpu_backend_ops, &ct_ocl_backend_ops };
	const char *devs[2] = { "cpu", ocl_dev };
	size_t n = f->model.lay.total;
	float *buf[2][4], loss[2];
	struct ct_step_args a = { .t = 1, .grad_clip = 0.5f,
				  .opt = { .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f,
					   .eps = 1e-8f, .weight_decay = 0.1f } };
	const int B = 2, T = 9;

	ct_adamw_bias_corrections(0.9f, 0.999f, 1, &a.opt.bc1, &a.opt.bc2);
	for (int d = 0; d < 2; d++) {
		struct ct_backend *be = NULL;

		for (int k = 0; k < 4; k++) {
			buf[d][k] = malloc(n * sizeof(float));
			assert_non_null(buf[d][k]);
		}
		assert_int_equal(ops[d]->open(devs[d], &cfg, B, T, 1, &be), 0);
		assert_int_equal(ops[d]->load_state(be, f->model.params, NULL, NULL), 0);
		assert_int_equal(ops[d]->step(be, f->tokens.tok, f->tokens.tok + 1, &a, &loss[d]), 0);
		assert_int_equal(ops[d]->read_grads(be, buf[d][0]), 0);
		assert_int_equal(ops[d]->read_state(be, buf[d][1], buf[d][2], buf[d][3]), 0);
		ops[d]->close(be);
	}
	assert_memory_equal(&loss[0], &loss[1], sizeof(float));
	for (int k = 0; k < 4; k++) {
		assert_memory_equal(buf[0][k], buf[1][k], n * sizeof(float));
		free(buf[0][k]);
		free(buf[1][k]);
	}
}

/* Interrupted after step k, for every k in 1..steps-1, the WU resumes to
 * the bytes of the uninterrupted run. */
static void test_resume_every_step(void **state)
{
	struct fixture *f = *state;
	char full[CT_SHA256_HEXLEN + 1], res[CT_SHA256_HEXLEN + 1], st[4200];

	snprintf(st, sizeof(st), "%s/wu.state", f->dir);
	run_wu(f, ocl_dev, NULL, 0, NULL, "full.bin", NULL, full);
	for (int k = 1; k < f->hp.steps; k++) {
		fprintf(stderr, "resuming after step %d of %d\n", k, f->hp.steps);
		run_wu(f, ocl_dev, NULL, k, st, NULL, NULL, NULL);
		memset(res, 0, sizeof(res));
		run_wu(f, ocl_dev, st, 0, NULL, "resumed.bin", NULL, res);
		assert_string_equal(full, res);
		/* a state saved by the C reference continues on OpenCL */
		run_wu(f, "cpu", NULL, k, st, NULL, NULL, NULL);
		memset(res, 0, sizeof(res));
		run_wu(f, ocl_dev, st, 0, NULL, "moved.bin", NULL, res);
		assert_string_equal(full, res);
	}
}

static void test_eval_equal(void **state)
{
	struct fixture *f = *state;
	float mc, mo;

	assert_int_equal(ct_eval(&f->model, &f->tokens, 2, 13, 3, "cpu", &mc), 0);
	assert_int_equal(ct_eval(&f->model, &f->tokens, 2, 13, 3, ocl_dev, &mo), 0);
	assert_memory_equal(&mc, &mo, sizeof(float));
	/* the head 5 rows at a time (26 rows: chunks of 5 and a last one of 1) */
	setenv("CT_OCL_HEAD_ROWS", "5", 1);
	mo = NAN;
	assert_int_equal(ct_eval(&f->model, &f->tokens, 2, 13, 3, ocl_dev, &mo), 0);
	unsetenv("CT_OCL_HEAD_ROWS");
	assert_memory_equal(&mc, &mo, sizeof(float));
}

static void test_bad_device(void **state)
{
	struct fixture *f = *state;
	struct ct_wu *wu = NULL;

	assert_int_equal(ct_wu_open(&f->model, &f->tokens, &f->hp, "opencl:63", &wu),
			 CT_ENOTFOUND);
	assert_null(wu);
	assert_non_null(strstr(ct_errmsg(CT_ENOTFOUND), "63"));
}

/* A model too big for the device fails cleanly at open, naming the size;
 * an evaluation-only backend refuses to train or hand out AdamW state. */
static void test_device_limits(void **state)
{
	struct ct_model_config huge = {
		.maxT = 64, .V = 50257, .L = 1, .NH = 16, .C = 16384, .Vp = 65536,
	};
	struct fixture *f = *state;
	struct ct_backend *be = NULL;
	struct ct_step_args a = { .t = 1 };
	struct ct_gpt2_layout lay;
	struct ct_ocl *ocl = NULL;
	float loss, *m;

	/* enough layers that weights, gradients and moments pass the device's
	 * memory, within the format's cap (a device of 128 GiB or more holds
	 * the largest model the format allows: nothing to refuse there) */
	assert_int_equal(ct_ocl_open(ocl_dev, "", &ocl), 0);
	for (;;) {
		ct_gpt2_layout(&huge, &lay);
		if (lay.total * 16 > ocl->info.global_mem || lay.total > CT_GPT2_MAX_PARAMS)
			break;
		huge.L++;
	}
	ct_ocl_close(ocl);
	if (lay.total <= CT_GPT2_MAX_PARAMS) {
		assert_int_equal(ct_ocl_backend_ops.open(ocl_dev, &huge, 1, 8, 1, &be),
				 CT_EDEVNOMEM);
		assert_null(be);
		assert_non_null(strstr(ct_errmsg(CT_EDEVNOMEM), "bytes"));
	} else {
		printf("the device holds the largest model the format allows: "
		       "nothing too big to refuse\n");
	}
	assert_int_equal(ct_ocl_backend_ops.open(ocl_dev, &cfg, 2, 5, 0, &be), 0);
	assert_int_equal(ct_ocl_backend_ops.load_state(be, f->model.params, NULL, NULL), 0);
	assert_int_equal(ct_ocl_backend_ops.eval(be, f->tokens.tok, f->tokens.tok + 1, &loss), 0);
	assert_true(loss > 0.0f);
	assert_int_equal(ct_ocl_backend_ops.step(be, f->tokens.tok, f->tokens.tok + 1, &a, &loss),
			 CT_ESTATE);
	m = malloc(f->model.lay.total * sizeof(float));
	assert_non_null(m);
	assert_int_equal(ct_ocl_backend_ops.read_state(be, NULL, m, NULL), CT_ESTATE);
	assert_int_equal(ct_ocl_backend_ops.read_state(be, m, NULL, NULL), 0);
	assert_memory_equal(m, f->model.params, f->model.lay.total * sizeof(float));
	free(m);
	ct_ocl_backend_ops.close(be);
}

/* CT_TEST_DEVICE names the OpenCL device to test. */
static int before(void)
{
	if (getenv("CT_TEST_DEVICE") != NULL)
		ocl_dev = getenv("CT_TEST_DEVICE");
	/* no crowdtune kernel cache in tests (PoCL's own cache is shared) */
	if (getenv("CTUNE_KERNEL_CACHE") == NULL)
		setenv("CTUNE_KERNEL_CACHE", "", 1);
	return ct_test_ocl_skip();
}

static const struct ct_test_plan plan = {
	.before = before,
	.group_setup = setup,
	.group_teardown = teardown,
};

CT_TEST_MAIN_WITH(&plan, test_cpu_equals_opencl, test_lean_equal,
	test_gpu_kernels_equal, test_no_clip_equal, test_backend_state_equal,
	test_resume_every_step, test_eval_equal, test_bad_device, test_device_limits)
