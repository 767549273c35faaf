/*
 * ct_test_engine.h - the fixture the engine tests share (test_gpt2,
 * test_model, test_tokens, test_cmd_train, test_lora): a tiny GPT-2
 * configuration and one temporary directory per test group, made by
 * ct_test_dir_setup() and removed with everything in it by
 * ct_test_dir_teardown(); deterministic fills, the tiny model's inputs and
 * hyperparameters, and a WU's interrupted and resumed run. Header-only
 * (static), so each test program has its own directory.
 */
#ifndef CT_TEST_ENGINE_H
#define CT_TEST_ENGINE_H

#include <math.h>

#include "ct_test.h"
#include "ct_engine.h"
#include "ct_err.h"

/* A GPT-2 small enough for exact tests: initializer of a
 * struct ct_model_config (vocabulary padded from 60 to 64). */
#define CT_TEST_TINY_CONFIG { .maxT = 16, .V = 60, .L = 2, .NH = 2, .C = 32, \
	.Vp = 64 }

/* The group's temporary directory, between setup and teardown. */
static char *ct_test_dir;

/* cmocka group setup: make ct_test_dir. Returns 0, or -1 if it failed. */
static inline int ct_test_dir_setup(void **state)
{
	(void)state;
	ct_test_dir = ct_test_mkdtemp();
	return ct_test_dir ? 0 : -1;
}

/* cmocka group teardown: rm -rf ct_test_dir and forget it. */
static inline int ct_test_dir_teardown(void **state)
{
	(void)state;
	ct_test_rmtree(ct_test_dir);
	free(ct_test_dir);
	ct_test_dir = NULL;
	return 0;
}

/* "<ct_test_dir>/<name>" in one of 64 static buffers used in turn, so a
 * call can take several paths at once (not thread-safe). */
static inline const char *ct_test_path(const char *name)
{
	static char bufs[64][4200];
	static int k;
	char *b = bufs[k++ % 64];

	snprintf(b, sizeof(bufs[0]), "%s/%s", ct_test_dir, name);
	return b;
}

/* The next number (24 bits) of a linear congruential generator at *s. */
static inline uint32_t ct_test_lcg(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

/* p[0..n) = uniform in [-scale, scale], from seed. */
static inline void ct_test_fill(float *p, size_t n, uint32_t seed, float scale)
{
	for (size_t i = 0; i < n; i++)
		p[i] = ((float)(ct_test_lcg(&seed) % 20001) / 10000.0f - 1.0f) * scale;
}

/* acc + the sum over k < n of a[k * sa] * b[k * sb], one fmaf per k in k
 * order: the spec's order for a layer's dot products. */
static inline float ct_test_fma_dot(float acc, const float *a, int sa, const float *b, int sb,
				    int n)
{
	for (int k = 0; k < n; k++)
		acc = fmaf(a[(size_t)k * sa], b[(size_t)k * sb], acc);
	return acc;
}

/* A tiny model (seed 1234) into *model and n tokens repeating with
 * `period` into *tok; the caller frees both. */
static inline void ct_test_tiny_inputs(struct ct_gpt2 *model, struct ct_tokens *tok, int n,
				       int period)
{
	const struct ct_model_config tiny = CT_TEST_TINY_CONFIG;
	ct_tok *t = malloc(n * sizeof(ct_tok));

	assert_int_equal(ct_gpt2_alloc(model, &tiny), 0);
	assert_int_equal(ct_gpt2_init_random(&tiny, 1234, model->params), 0);
	for (int i = 0; i < n; i++)
		t[i] = (ct_tok)((i % period) * 7 % tiny.V);
	assert_int_equal(ct_tokens_from_array(tok, t, n), 0);
	free(t);
}

/* The tiny model's WU hyperparameters: `steps` steps of 2 x 16, lr 3e-3. */
static inline void ct_test_tiny_hparams(struct ct_wu_hparams *hp, int steps)
{
	ct_wu_hparams_default(hp);
	hp->steps = steps;
	hp->B = 2;
	hp->T = 16;
	hp->lr = 3e-3f;
	hp->weight_decay = 0.01f;
}

/* Run k steps of the WU, save its state to path, keep going one more step
 * and "crash" (close it): the saved state is what a resume sees. */
static inline void ct_test_wu_save_at(const struct ct_gpt2 *model, const struct ct_tokens *tok,
				      const struct ct_wu_hparams *hp, int k, const char *path)
{
	struct ct_wu *wu = NULL;
	float loss;

	assert_int_equal(ct_wu_open(model, tok, hp, "cpu", &wu), 0);
	for (int i = 0; i < k; i++)
		assert_int_equal(ct_wu_step(wu, &loss), 0);
	assert_int_equal(ct_wu_save_state(wu, path), 0);
	assert_int_equal(ct_wu_step(wu, &loss), 0);
	ct_wu_close(wu);
}

/* Step a resumed WU to its end: each step's loss equals la[step] of the
 * uninterrupted run, bit for bit. */
static inline void ct_test_wu_replay(struct ct_wu *wu, const float *la)
{
	float loss;

	while (!ct_wu_done(wu)) {
		int i = ct_wu_steps_done(wu);

		assert_int_equal(ct_wu_step(wu, &loss), 0);
		assert_true(loss == la[i]);
	}
}

/* Run the WU of hp twice on the C reference: both give the same n floats
 * (into a) and the same losses (la, hp->steps floats), bit for bit. */
static inline void ct_test_wu_twice(const struct ct_gpt2 *model, const struct ct_tokens *tok,
				    const struct ct_wu_hparams *hp, size_t n, float *a, float *la)
{
	float *b = malloc(n * sizeof(float)), *lb = malloc((size_t)hp->steps * sizeof(float));

	assert_non_null(b);
	assert_non_null(lb);
	assert_int_equal(ct_wu_run(model, tok, hp, "cpu", a, la), 0);
	assert_int_equal(ct_wu_run(model, tok, hp, "cpu", b, lb), 0);
	assert_memory_equal(a, b, n * sizeof(float));
	assert_memory_equal(la, lb, (size_t)hp->steps * sizeof(float));
	free(b);
	free(lb);
}

/* Resume the WU of hp from a state saved after every step k in order
 * (path is the state file; nothing depends on the time it runs): each
 * resumed run reports k steps done and la[k-1] as its last loss, replays
 * the losses la, refuses a step past its end, and read() then gives the n
 * floats a of the uninterrupted run. what names the WU in the progress. */
static inline void ct_test_wu_resume_each(const struct ct_gpt2 *model,
					  const struct ct_tokens *tok,
					  const struct ct_wu_hparams *hp, const char *path,
					  const char *what, int (*read)(struct ct_wu *, float *),
					  size_t n, const float *a, const float *la)
{
	float *c = malloc(n * sizeof(float)), loss;
	struct ct_wu *wu = NULL;

	assert_non_null(c);
	for (int k = 1; k < hp->steps; k++) {
		printf("resuming %s after step %d of %d\n", what, k, hp->steps);
		ct_test_wu_save_at(model, tok, hp, k, path);
		assert_int_equal(ct_wu_resume(path, model, tok, hp, "cpu", &wu), 0);
		assert_int_equal(ct_wu_steps_done(wu), k);
		assert_true(ct_wu_last_loss(wu) == la[k - 1]);
		ct_test_wu_replay(wu, la);
		assert_int_equal(ct_wu_step(wu, &loss), CT_ESTATE);
		memset(c, 0, n * sizeof(float));
		assert_int_equal(read(wu, c), 0);
		assert_memory_equal(a, c, n * sizeof(float));
		ct_wu_close(wu);
		wu = NULL;
	}
	free(c);
}

#endif
