/*
 * test_eval_handover.c - the server's evaluation that moves the weights to
 * the device (server/daemons/eval_handover.c, eval.h's ct_seval_loss_handover):
 * the loss is the very float ct_eval gives for the same batches, on the C
 * reference and (when the machine has one) on OpenCL, and the host copy
 * is used up (its pages given back: they read as zeros), so the caller
 * cannot mistake it for the weights afterwards.
 */
#include "ct_test.h"
#include "ct_test_engine.h"
#include "ct_test_ocl.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "daemons/eval.h"

#include <stdlib.h>
#include <string.h>

/* Big enough that the weights span several 4 MiB pieces. */
static const struct ct_model_config cfg = {
	.maxT = 16, .V = 60, .L = 2, .NH = 2, .C = 512, .Vp = 64,
};

static void check(const char *device)
{
	struct ct_gpt2 a = { 0 }, b = { 0 };
	struct ct_tokens tok = { 0 };
	ct_tok t[400];
	uint32_t s = 3;
	float want = 0, got = 0;
	int consumed = -1;
	size_t zero = 0;

	assert_int_equal(ct_gpt2_alloc(&a, &cfg), 0);
	assert_int_equal(ct_gpt2_alloc(&b, &cfg), 0);
	assert_true(a.lay.total * sizeof(float) > ((size_t)8 << 20));
	assert_int_equal(ct_gpt2_init_random(&cfg, 9, a.params), 0);
	memcpy(b.params, a.params, a.lay.total * sizeof(float));
	for (size_t i = 0; i < 400; i++)
		t[i] = (ct_tok)(ct_test_lcg(&s) % (uint32_t)cfg.V);
	tok.tok = t;
	tok.n = 400;
	assert_int_equal(ct_eval(&a, &tok, 2, 16, 5, device, &want), 0);
	assert_int_equal(ct_seval_run_handover(device, &b, &tok, 2, 16, 5, &got, &consumed), 0);
	assert_memory_equal(&got, &want, sizeof(float));
	assert_int_equal(consumed, 1);
	for (size_t i = 0; i < b.lay.total; i++)
		zero += b.params[i] == 0.0f;
	/* all but the pieces' unaligned edges were given back */
	assert_true(zero > b.lay.total - 64 * 1024);
	/* a batch the tokens cannot fill is refused before anything moves */
	assert_int_equal(ct_seval_run_handover(device, &a, &tok, 30, 16, 1, &got, &consumed),
			 CT_ERANGE);
	assert_int_equal(consumed, 0);
	ct_gpt2_free(&a);
	ct_gpt2_free(&b);
}

static void test_cpu(void **state)
{
	(void)state;
	check("cpu");
}

static void test_opencl(void **state)
{
	(void)state;
	if (ct_test_ocl_none())
		skip();
	check(getenv("CT_TEST_DEVICE") != NULL ? getenv("CT_TEST_DEVICE") : "opencl");
}

CT_TEST_MAIN_WITH((&(const struct ct_test_plan){ .before = ct_test_no_kernel_cache }),
		  test_cpu, test_opencl)
