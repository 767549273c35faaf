/*
 * Unit tests for the WU hash chain's links (ct_wu_state_digest,
 * doc/workunit.md §14): two runs of one WU agree at every link, a run
 * resumed from a state file agrees with the uninterrupted one, a WU with
 * another learning rate parts at its first link; the same for a LoRA WU;
 * and on OpenCL, when there is a device, the links equal the C
 * reference's.
 */
#include "ct_test.h"
#include "ct_test_engine.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_hash.h"

#define STEPS 6

/* digests d[k] after steps 1..STEPS of the WU on device; 0, or -1 when the
 * device cannot be opened (no OpenCL). */
static int links(const struct ct_gpt2 *m, const struct ct_tokens *tok,
		 const struct ct_wu_hparams *hp, const char *device, unsigned char d[STEPS][32])
{
	struct ct_wu *wu = NULL;
	float loss;

	if (ct_wu_open(m, tok, hp, device, &wu) < 0)
		return -1;
	for (int k = 0; k < STEPS; k++) {
		assert_int_equal(ct_wu_step(wu, &loss), 0);
		assert_int_equal(ct_wu_state_digest(wu, d[k]), 0);
	}
	ct_wu_close(wu);
	return 0;
}

static void check_wu(const struct ct_wu_hparams *hp, const char *name)
{
	struct ct_gpt2 model = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams other = *hp;
	unsigned char a[STEPS][32], b[STEPS][32], d[32];
	struct ct_wu *wu = NULL;
	float loss;
	const char *path = ct_test_path(name);

	ct_test_tiny_inputs(&model, &tok, 150, 23);
	assert_int_equal(links(&model, &tok, hp, "cpu", a), 0);
	assert_int_equal(links(&model, &tok, hp, "cpu", b), 0);
	assert_memory_equal(a, b, sizeof(a));
	for (int k = 1; k < STEPS; k++)	/* every step moves the state */
		assert_memory_not_equal(a[k - 1], a[k], 32);
	/* resumed after step 3: the same links from there on */
	ct_test_wu_save_at(&model, &tok, hp, 3, path);
	assert_int_equal(ct_wu_resume(path, &model, &tok, hp, "cpu", &wu), 0);
	assert_int_equal(ct_wu_state_digest(wu, d), 0);
	assert_memory_equal(d, a[2], 32);
	assert_int_equal(ct_wu_step(wu, &loss), 0);
	assert_int_equal(ct_wu_state_digest(wu, d), 0);
	assert_memory_equal(d, a[3], 32);
	ct_wu_close(wu);
	/* another WU parts at the first link */
	other.lr = hp->lr * 2;
	assert_int_equal(links(&model, &tok, &other, "cpu", b), 0);
	assert_memory_not_equal(a[0], b[0], 32);
	/* OpenCL, where there is a device: the same links */
	if (links(&model, &tok, hp, "opencl", b) == 0) {
		assert_memory_equal(a, b, sizeof(a));
		print_message("%s: OpenCL gives the same links\n", name);
	}
	ct_tokens_free(&tok);
	ct_gpt2_free(&model);
}

static void test_full(void **state)
{
	struct ct_wu_hparams hp;

	(void)state;
	ct_test_tiny_hparams(&hp, STEPS + 1);
	check_wu(&hp, "full.state");
}

static void test_lora(void **state)
{
	struct ct_wu_hparams hp;

	(void)state;
	ct_test_tiny_hparams(&hp, STEPS + 1);
	hp.lr = 1e-2f;
	hp.lora = (struct ct_lora_spec){ .rank = 4, .alpha = 8.0f, .targets = CT_LORA_ALL };
	hp.lora_seed = 77;
	check_wu(&hp, "lora.state");
}

CT_TEST_MAIN_GROUP(ct_test_dir_setup, ct_test_dir_teardown, test_full, test_lora)
