/*
 * Unit tests for the hash chain's wire form and interval (lib/ct_chain.h)
 * and the bisection of two chains (server/validate/bisect.h): the links'
 * steps, the interval's 1% and link caps, a malformed or false chain,
 * the plan's first differing link and its segment, and the segment
 * recomputed from the WU's start and from a state file: it gives the
 * honest link, and a state that is not the agreed one is refused.
 */
#include "ct_test.h"
#include "ct_test_engine.h"
#include "ct_chain.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_hash.h"
#include "validate/bisect.h"

#include <string.h>

#define STEPS 6
#define EVERY 2
#define NL 3	/* links after steps 2, 4, 6 */

static void test_links(void **state)
{
	(void)state;
	assert_int_equal(ct_chain_nlinks(6, 2), 3);
	assert_int_equal(ct_chain_nlinks(7, 2), 4);
	assert_int_equal(ct_chain_nlinks(5, 0), 0);
	assert_int_equal(ct_chain_link_step(0, 7, 2), 2);
	assert_int_equal(ct_chain_link_step(3, 7, 2), 7);	/* the last: the result */
	assert_true(ct_chain_due(4, 7, 2));
	assert_true(ct_chain_due(7, 7, 2));
	assert_false(ct_chain_due(5, 7, 2));
	assert_false(ct_chain_due(2, 7, 0));
}

static void test_every(void **state)
{
	(void)state;
	/* 124M LoRA r = 8 (1.18M trained floats, 63 GFLOP a step): every step */
	assert_int_equal(ct_chain_every(100, 1.18e6, 63e9), 1);
	/* 124M, all weights, 2 x 64 tokens (95 GFLOP a step): ~60 steps */
	assert_int_equal(ct_chain_every(1000, 124.4e6, 95.6e9), 63);
	/* never more than the steps, never more links than the cap */
	assert_int_equal(ct_chain_every(10, 124.4e6, 95.6e9), 10);
	assert_int_equal(ct_chain_every(1280, 1.0, 1e12), 10);
	assert_int_equal(ct_chain_every(0, 1.0, 1.0), 1);
}

static void test_check(void **state)
{
	char hex[64 * NL + 2];

	(void)state;
	memset(hex, 'a', 64 * NL);
	hex[64 * NL] = '\0';
	assert_int_equal(ct_chain_check(hex, STEPS, EVERY), 0);
	assert_int_equal(ct_chain_check(hex, STEPS + 2, EVERY), CT_EFORMAT);	/* 4 links */
	hex[5] = 'A';
	assert_int_equal(ct_chain_check(hex, STEPS, EVERY), CT_EFORMAT);
	hex[5] = 'a';
	hex[64 * NL] = '0';
	hex[64 * NL + 1] = '\0';
	assert_int_equal(ct_chain_check(hex, STEPS, EVERY), CT_EFORMAT);
}

/* Where two chains part, in steps: after the last link they share, by
 * the step of the first one they do not. */
static void test_parting(void **state)
{
	char a[64 * 4 + 1], b[64 * 4 + 1];
	int agreed = -1, parted = -1;

	(void)state;
	memset(a, 'a', 64 * 4);
	a[64 * 4] = '\0';
	memcpy(b, a, sizeof(a));
	/* 7 steps, a link every 2: after steps 2, 4, 6 and 7 */
	assert_int_equal(ct_chain_parting(a, b, 7, 2, &agreed, &parted), -1);
	assert_int_equal(agreed, 7);
	assert_int_equal(parted, 7);
	b[64 * 2 + 10] = 'b';	/* link 2 (after step 6) differs */
	assert_int_equal(ct_chain_parting(a, b, 7, 2, &agreed, &parted), 2);
	assert_int_equal(agreed, 4);
	assert_int_equal(parted, 6);
	b[64 * 0] = 'b';	/* link 0 too: apart from the WU's start */
	assert_int_equal(ct_chain_parting(a, b, 7, 2, &agreed, &parted), 0);
	assert_int_equal(agreed, 0);
	assert_int_equal(parted, 2);
	memcpy(b, a, sizeof(a));
	b[64 * 3 + 63] = 'b';	/* the last link only: steps 7..7 */
	assert_int_equal(ct_chain_parting(a, b, 7, 2, &agreed, &parted), 3);
	assert_int_equal(agreed, 6);
	assert_int_equal(parted, 7);
	/* a link every step: the one step where they part */
	assert_int_equal(ct_chain_parting(a, b, 4, 1, &agreed, &parted), 3);
	assert_int_equal(agreed, 3);
	assert_int_equal(parted, 4);
}

/* The honest chain of the tiny WU and the state after step `at` into path. */
static void honest_chain_from(const struct ct_gpt2 *m, const struct ct_tokens *tok,
			      const struct ct_wu_hparams *hp, const float *init, char *hex,
			      int at, const char *path)
{
	struct ct_wu *wu = NULL;
	unsigned char d[32];
	size_t len = 0;
	float loss;

	assert_int_equal(ct_wu_open(m, tok, hp, "cpu", &wu), 0);
	if (init != NULL)
		assert_int_equal(ct_wu_set_adapters(wu, init), 0);
	while (!ct_wu_done(wu)) {
		assert_int_equal(ct_wu_step(wu, &loss), 0);
		if (ct_wu_steps_done(wu) == at)
			assert_int_equal(ct_wu_save_state(wu, path), 0);
		if (ct_chain_due(ct_wu_steps_done(wu), hp->steps, EVERY)) {
			assert_int_equal(ct_wu_chain_link(wu, d), 0);
			ct_hex_encode(d, 32, hex + len);
			len += 64;
		}
	}
	ct_wu_close(wu);
	assert_int_equal(len, 64 * NL);
}

static void honest_chain(const struct ct_gpt2 *m, const struct ct_tokens *tok,
			 const struct ct_wu_hparams *hp, char *hex, int at, const char *path)
{
	honest_chain_from(m, tok, hp, NULL, hex, at, path);
}

static void side(struct ct_bisect_side *s, const char *chain)
{
	s->chain = chain;
	s->exact = 1;
	ct_chain_link(chain, NL - 1, s->sha);	/* a true chain ends in the hash */
}

static void test_plan_and_segment(void **state)
{
	struct ct_gpt2 model = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams hp, other;
	struct ct_bisect_side a, b;
	struct ct_bisect_plan p;
	char good[64 * NL + 1], bad[64 * NL + 1], wrong[64 * NL + 1];
	unsigned char got[32];
	const char *path = ct_test_path("at4.state"), *opath = ct_test_path("other.state");
	int ran;

	(void)state;
	ct_test_tiny_inputs(&model, &tok, 150, 23);
	ct_test_tiny_hparams(&hp, STEPS);
	honest_chain(&model, &tok, &hp, good, 4, path);
	other = hp;
	other.lr *= 2;
	honest_chain(&model, &tok, &other, wrong, 4, opath);

	/* a cheater with the honest links but another result: part at the last */
	memcpy(bad, good, sizeof(bad));
	memset(bad + 128, 'e', 64);
	side(&a, good);
	side(&b, bad);
	ct_bisect_plan(&a, &b, STEPS, EVERY, &p);
	assert_int_equal(p.verdict, CT_BISECT_SEGMENT);
	assert_int_equal(p.link, 2);
	assert_int_equal(p.step, 4);
	assert_int_equal(p.end, 6);
	{
		struct ct_bisect_inputs in = { &model, &tok, &hp, path, "cpu", NULL };

		assert_int_equal(ct_bisect_segment(&in, &p, got, &ran), 0);
		assert_int_equal(ran, 2);
		assert_memory_equal(got, p.want_a, 32);		/* the honest side */
		in.state_path = opath;				/* not the agreed state */
		assert_int_equal(ct_bisect_segment(&in, &p, got, &ran), CT_EMISMATCH);
		in.state_path = NULL;				/* none at step 4 */
		assert_int_equal(ct_bisect_segment(&in, &p, got, &ran), CT_EINVAL);
	}

	/* chains apart from the first link: recomputed from the WU's start */
	side(&b, wrong);
	ct_bisect_plan(&b, &a, STEPS, EVERY, &p);
	assert_int_equal(p.verdict, CT_BISECT_SEGMENT);
	assert_int_equal(p.link, 0);
	assert_int_equal(p.step, 0);
	{
		struct ct_bisect_inputs in = { &model, &tok, &hp, NULL, "cpu", NULL };

		assert_int_equal(ct_bisect_segment(&in, &p, got, &ran), 0);
		assert_int_equal(ran, 2);
		assert_memory_equal(got, p.want_b, 32);	/* a, passed second */
	}

	/* a chain that does not end in its own hash is false; a lossy side
	 * or a missing chain gives no plan */
	side(&b, bad);
	memset(b.sha, 0x11, 32);
	ct_bisect_plan(&a, &b, STEPS, EVERY, &p);
	assert_int_equal(p.verdict, CT_BISECT_FALSE_B);
	ct_bisect_plan(&b, &a, STEPS, EVERY, &p);
	assert_int_equal(p.verdict, CT_BISECT_FALSE_A);
	side(&b, bad);
	b.exact = 0;
	ct_bisect_plan(&a, &b, STEPS, EVERY, &p);
	assert_int_equal(p.verdict, CT_BISECT_NONE);
	side(&b, "");
	ct_bisect_plan(&a, &b, STEPS, EVERY, &p);
	assert_int_equal(p.verdict, CT_BISECT_NONE);
	ct_tokens_free(&tok);
	ct_gpt2_free(&model);
}

/* A LoRA WU whose round carries its initial adapters: the server's
 * segment from step 0 starts from them, as the client did. */
static void test_segment_from_adapters(void **state)
{
	struct ct_gpt2 model = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams hp;
	struct ct_bisect_side a, b;
	struct ct_bisect_plan p;
	char carried[64 * NL + 1], seeded[64 * NL + 1];
	unsigned char got[32];
	float *init;
	int ran;

	(void)state;
	ct_test_tiny_inputs(&model, &tok, 150, 23);
	ct_test_tiny_hparams(&hp, STEPS);
	hp.lora = (struct ct_lora_spec){ .rank = 4, .alpha = 8.0f, .targets = CT_LORA_ALL };
	hp.lora_seed = 77;
	init = calloc(ct_lora_nparams(&model.cfg, &hp.lora), sizeof(float));
	assert_non_null(init);
	assert_int_equal(ct_lora_init(&model.cfg, &hp.lora, 99, init), 0);
	honest_chain_from(&model, &tok, &hp, init, carried, 0, ct_test_path("unused.state"));
	honest_chain(&model, &tok, &hp, seeded, 0, ct_test_path("unused.state"));
	side(&a, carried);
	side(&b, seeded);
	ct_bisect_plan(&a, &b, STEPS, EVERY, &p);
	assert_int_equal(p.verdict, CT_BISECT_SEGMENT);
	assert_int_equal(p.step, 0);
	{
		struct ct_bisect_inputs in = { &model, &tok, &hp, NULL, "cpu", init };

		assert_int_equal(ct_bisect_segment(&in, &p, got, &ran), 0);
		assert_memory_equal(got, p.want_a, 32);		/* from the carried adapters */
		in.lora_init = NULL;
		assert_int_equal(ct_bisect_segment(&in, &p, got, &ran), 0);
		assert_memory_equal(got, p.want_b, 32);		/* from the seed's */
	}
	free(init);
	ct_tokens_free(&tok);
	ct_gpt2_free(&model);
}

CT_TEST_MAIN_GROUP(ct_test_dir_setup, ct_test_dir_teardown, test_links, test_every, test_check,
		   test_parting, test_plan_and_segment, test_segment_from_adapters)
