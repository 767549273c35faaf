/*
 * ct_test_ocl.h - what the OpenCL tests (test_ocl, test_ocl_kernels,
 * test_ocl_train, test_ocl_llama) share: skipping, automake's way, on a
 * machine without any OpenCL device; the inputs of small work units;
 * random inputs, device copies and the bit-for-bit comparison of the
 * kernel tests. Header-only (static inline).
 */
#ifndef CT_TEST_OCL_H
#define CT_TEST_OCL_H

#include "ct_test.h"
#include "ct_err.h"
#include "ct_ocl.h"
#include "ct_engine.h"
#include "ct_ocl_ops.h"

/* 1 if this machine has no OpenCL device (after saying so on stderr), so
 * main() returns 77 and the test counts as skipped; else 0. */
static inline int ct_test_ocl_none(void)
{
	struct ct_ocl_devinfo *devs = NULL;
	int ndev = 0;

	ct_ocl_enumerate(&devs, &ndev);
	free(devs);
	if (ndev == 0) {
		fprintf(stderr, "SKIP: no OpenCL device on this machine\n");
		return 1;
	}
	return 0;
}

/* The `before` of an OpenCL test's struct ct_test_plan: 77 (main's
 * "skipped") where ct_test_ocl_none(), else 0. */
static inline int ct_test_ocl_skip(void)
{
	return ct_test_ocl_none() ? 77 : 0;
}

/* main() of an OpenCL test: skipped where ct_test_ocl_skip() says so, else
 * the test functions named, in order, between fx_group_setup and
 * fx_group_teardown (CT_TEST_MAIN_GROUP). */
#define CT_TEST_MAIN_OCL(fx_group_setup, fx_group_teardown, ...) \
	CT_TEST_MAIN_WITH((&(const struct ct_test_plan){ .before = ct_test_ocl_skip, \
							 .group_setup = (fx_group_setup), \
							 .group_teardown = (fx_group_teardown) }), \
			  __VA_ARGS__)

/* Open the device the tests run on: $CT_TEST_DEVICE, else "opencl"
 * (*spec says which), and say on stderr which it is. 0, or -1 after
 * saying why on stderr. */
static inline int ct_test_ocl_open(const char **spec, struct ct_ocl **ocl)
{
	const char *env = getenv("CT_TEST_DEVICE");
	int rc;

	*spec = env != NULL ? env : "opencl";
	rc = ct_ocl_open(*spec, "", ocl);
	if (rc < 0) {
		fprintf(stderr, "cannot open the OpenCL device: %s\n", ct_errmsg(rc));
		return -1;
	}
	fprintf(stderr, "device: %s (%s)\n", (*ocl)->info.name, (*ocl)->info.platform);
	return 0;
}

/* The `before` of a test whose backends build their kernels afresh:
 * CTUNE_KERNEL_CACHE="" (no crowdtune kernel cache) unless it is set. 0. */
static inline int ct_test_no_kernel_cache(void)
{
	if (getenv("CTUNE_KERNEL_CACHE") == NULL)
		setenv("CTUNE_KERNEL_CACHE", "", 1);
	return 0;
}

/* The inputs of the small work units run on both backends: model (cfg,
 * random weights of seed 7), a 400-token mostly repetitive stream (so the
 * loss moves) and hp: 6 steps of B 3 x T 11, lr 1e-2, weight decay 0.01,
 * the other hyperparameters at their defaults. 0, or -1 (what was made is
 * the caller's to free). */
static inline int ct_test_ocl_wu_inputs(const struct ct_model_config *cfg, struct ct_gpt2 *model,
					struct ct_tokens *tokens, struct ct_wu_hparams *hp)
{
	ct_tok tok[400];
	uint64_t s = 12345;

	if (ct_gpt2_alloc(model, cfg) < 0 || ct_gpt2_init_random(cfg, 7, model->params) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(tok) / sizeof(tok[0]); i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		tok[i] = (ct_tok)(i % 7 == 3 ? (s >> 33) % cfg->V : (i * 5) % 17);
	}
	if (ct_tokens_from_array(tokens, tok, sizeof(tok) / sizeof(tok[0])) < 0)
		return -1;
	ct_wu_hparams_default(hp);
	hp->steps = 6;
	hp->B = 3;
	hp->T = 11;
	hp->lr = 1e-2f;
	hp->weight_decay = 0.01f;
	return 0;
}

/* xorshift64 state of ct_test_frand (one per test program). */
static uint64_t ct_test_rng = 0x9e3779b97f4a7c15ULL;

/* Uniform in [-1, 1), the same sequence on every machine. */
static inline float ct_test_frand(void)
{
	ct_test_rng ^= ct_test_rng << 13;
	ct_test_rng ^= ct_test_rng >> 7;
	ct_test_rng ^= ct_test_rng << 17;
	return (float)(ct_test_rng >> 40) / 8388608.0f - 1.0f;
}

/* n floats of ct_test_frand() * scale (malloc'd; the test frees them). */
static inline float *ct_test_rand_floats(size_t n, float scale)
{
	float *p = malloc((n ? n : 1) * sizeof(float));

	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = ct_test_frand() * scale;
	return p;
}

/* A device buffer of ops's device holding a copy of n host floats. */
static inline struct ct_dten ct_test_dev(struct ct_ocl_ops *ops, const float *h, size_t n)
{
	cl_mem m = NULL;

	assert_int_equal(ct_ocl_alloc(ops->ocl, (n ? n : 1) * sizeof(float),
				      CL_MEM_READ_WRITE, &m), 0);
	assert_int_equal(ct_ocl_write(ops, ct_dten_at(m, 0), h, n), 0);
	return ct_dten_at(m, 0);
}

/* The device tensor equals the host reference bit for bit (memcmp per
 * float, the first difference named); releases d and frees ref. */
static inline void ct_test_expect_same(struct ct_ocl_ops *ops, const char *what,
				       struct ct_dten d, float *ref, size_t n)
{
	float *got = malloc((n ? n : 1) * sizeof(float));
	size_t bad = 0, first = 0;

	assert_non_null(got);
	assert_int_equal(ct_ocl_read(ops, got, d, n), 0);
	for (size_t i = 0; i < n; i++)
		if (memcmp(&got[i], &ref[i], sizeof(float)) != 0 && bad++ == 0)
			first = i;
	if (bad)
		fail_msg("%s: %zu of %zu differ; first [%zu] device %.9g reference %.9g",
			 what, bad, n, first, (double)got[first], (double)ref[first]);
	clReleaseMemObject(d.mem);
	free(got);
	free(ref);
}

/* Step wu until it is done or stop_after (> 0) steps are done, writing
 * each step's loss to losses[step] when losses is not NULL. */
static inline void ct_test_wu_run(struct ct_wu *wu, float *losses, int stop_after)
{
	float loss;

	while (!ct_wu_done(wu)) {
		int i = ct_wu_steps_done(wu);

		assert_int_equal(ct_wu_step(wu, &loss), 0);
		if (losses != NULL)
			losses[i] = loss;
		if (stop_after > 0 && ct_wu_steps_done(wu) == stop_after)
			return;
	}
}

#endif
