/*
 * test_sample_prefix.c - a backend's logits of row pos (ct_backend_ops'
 * logits, what ct_sample.h's generation calls once per token) computed
 * from rows 0..pos alone, as both backends now do for B = 1, are the very
 * bits of the whole window's forward pass (ct_model_forward of B=1, T):
 * the model is causal, so the rows after pos cannot change it. Checked on
 * the C reference and, when the machine has one, on the OpenCL device
 * (CT_TEST_DEVICE picks it), for every row, in any order, and after a
 * token changed, other weights were loaded or an evaluation ran (the
 * OpenCL backend keeps the rows it computed for the next call).
 */
#include "ct_test.h"
#include "ct_test_engine.h"
#include "ct_test_ocl.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_model.h"

#include <stdlib.h>
#include <string.h>

static const struct ct_model_config cfg = CT_TEST_TINY_CONFIG;

/* The logits of every row of the full window, (T, Vp). */
static float *full_logits(const struct ct_gpt2 *model, const ct_tok *in)
{
	struct ct_model m;
	float *lg = malloc((size_t)cfg.maxT * cfg.Vp * sizeof(float));

	assert_non_null(lg);
	assert_int_equal(ct_model_init(&m, &cfg, model->params, 1, cfg.maxT, 0), 0);
	ct_model_forward(&m, in, NULL);
	memcpy(lg, m.acts.logits, (size_t)cfg.maxT * cfg.Vp * sizeof(float));
	ct_model_free(&m);
	return lg;
}

static void check_device(const char *device)
{
	static const int order[] = { 15, 0, 7, 1, 15, 3, 14, 8, 2, 9, 4, 13, 5, 12, 6, 11, 10 };
	const struct ct_backend_ops *ops;
	struct ct_backend *be = NULL;
	struct ct_gpt2 model = { 0 };
	ct_tok in[16];
	uint32_t s = 5;
	float out[64], *want;

	assert_int_equal(ct_gpt2_alloc(&model, &cfg), 0);
	assert_int_equal(ct_gpt2_init_random(&cfg, 3, model.params), 0);
	for (int i = 0; i < cfg.maxT; i++)
		in[i] = (ct_tok)(ct_test_lcg(&s) % (uint32_t)cfg.V);
	want = full_logits(&model, in);
	assert_int_equal(ct_backend_find(device, &ops), 0);
	assert_int_equal(ops->open(device, &cfg, 1, cfg.maxT, 0, &be), 0);
	assert_int_equal(ops->load_state(be, model.params, NULL, NULL), 0);
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		int pos = order[k];

		memset(out, 0xff, sizeof(out));
		assert_int_equal(ops->logits(be, in, pos, out), 0);
		if (memcmp(out, want + (size_t)pos * cfg.Vp, (size_t)cfg.V * sizeof(float)) != 0)
			fail_msg("%s: logits of row %d differ from the full window's", device, pos);
	}
	/* a token changed in the middle: the rows from it on are stale */
	free(want);
	in[4] = (ct_tok)((in[4] + 1) % (ct_tok)cfg.V);
	want = full_logits(&model, in);
	assert_int_equal(ops->logits(be, in, 10, out), 0);
	assert_memory_equal(out, want + (size_t)10 * cfg.Vp, (size_t)cfg.V * sizeof(float));
	/* other weights: no row is kept */
	free(want);
	assert_int_equal(ct_gpt2_init_random(&cfg, 4, model.params), 0);
	want = full_logits(&model, in);
	assert_int_equal(ops->load_state(be, model.params, NULL, NULL), 0);
	assert_int_equal(ops->logits(be, in, 12, out), 0);
	assert_memory_equal(out, want + (size_t)12 * cfg.Vp, (size_t)cfg.V * sizeof(float));
	/* an evaluation in between overwrites the rows */
	assert_int_equal(ops->eval(be, in, in, out), 0);
	assert_int_equal(ops->logits(be, in, 13, out), 0);
	assert_memory_equal(out, want + (size_t)13 * cfg.Vp, (size_t)cfg.V * sizeof(float));
	assert_int_equal(ops->logits(be, in, cfg.maxT, out), CT_EINVAL);
	ops->close(be);
	free(want);
	ct_gpt2_free(&model);
}

static void test_cpu_prefix(void **state)
{
	(void)state;
	check_device("cpu");
}

static void test_opencl_prefix(void **state)
{
	const char *dev = getenv("CT_TEST_DEVICE") != NULL ? getenv("CT_TEST_DEVICE") : "opencl";

	(void)state;
	if (ct_test_ocl_none())
		skip();
	check_device(dev);
}

CT_TEST_MAIN_WITH((&(const struct ct_test_plan){ .before = ct_test_no_kernel_cache }),
		  test_cpu_prefix, test_opencl_prefix)
