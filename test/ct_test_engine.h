/*
 * ct_test_engine.h - the fixture the engine tests share (test_gpt2,
 * test_model, test_tokens, test_cmd_train): a tiny GPT-2 configuration and
 * one temporary directory per test group, made by ct_test_dir_setup() and
 * removed with everything in it by ct_test_dir_teardown(). Header-only
 * (static), so each test program has its own directory.
 */
#ifndef CT_TEST_ENGINE_H
#define CT_TEST_ENGINE_H

#include "ct_test.h"

/* A GPT-2 small enough for exact tests: initializer of a
 * struct ct_gpt2_config (vocabulary padded from 60 to 64). */
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

#endif
