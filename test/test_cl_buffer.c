/*
 * test_cl_buffer.c - the work buffer's arithmetic (how many tasks to ask
 * for from the queued tokens and the measured speed) and the input cache's
 * bound (least recently used first, never a file in use).
 */
#include "ct_test.h"

#include "cl_buffer.h"
#include "cl_cache.h"
#include "cl_prefs.h"
#include "cl_state.h"
#include "ct_err.h"

#include <fcntl.h>
#include <sys/stat.h>

static void add_task(struct ct_project *p, const char *name, enum ct_task_state st,
		     const char *steps, long done)
{
	struct ct_task *t;

	assert_int_equal(ct_project_add_task(p, name, &t), 0);
	t->state = st;
	t->step = done;
	assert_int_equal(ct_task_add_param(t, "steps", steps), 0);
	assert_int_equal(ct_task_add_param(t, "batch", "4"), 0);
	assert_int_equal(ct_task_add_param(t, "seq", "16"), 0);
}

static void test_queued_and_want(void **unused)
{
	struct ct_state *st = NULL;
	struct ct_project *p;
	struct ct_prefs pr;
	double tokens;
	int n;

	(void)unused;
	ct_prefs_default(&pr);
	assert_int_equal(ct_state_load("/nonexistent/ctune-state.xml", &st), 0);
	assert_int_equal(ct_state_add_project(st, "http://x", "k", &p), 0);
	add_task(p, "a", CT_TASK_RUNNING, "100", 40);	/* 60 steps x 64 tokens left */
	add_task(p, "b", CT_TASK_READY, "100", 0);	/* 6400 */
	add_task(p, "c", CT_TASK_UPLOADING, "100", 100);	/* not queued */
	add_task(p, "d", CT_TASK_DONE, "100", 100);
	ct_buffer_queued(p, &n, &tokens);
	assert_int_equal(n, 2);
	assert_true(tokens == 60 * 64 + 6400);

	/* speed unknown: the task-count floor, at least one when empty */
	assert_int_equal(ct_buffer_want(&pr, 0, 0, 0, 0), 1);
	assert_int_equal(ct_buffer_want(&pr, 1, 6400, 0, 0), 0);
	pr.work_buffer = 3;
	assert_int_equal(ct_buffer_want(&pr, 1, 6400, 0, 0), 2);
	pr.work_buffer = 1;
	/* 1 ms per token: a WU of 6400 tokens is 6.4 s; 4 s queued < min 10 s
	 * -> enough for max 30 s: ceil(26 / 6.4) = 5 */
	assert_int_equal(ct_buffer_want(&pr, 1, 4000, 1e-3, 6400), 5);
	/* 12 s queued >= min: nothing */
	assert_int_equal(ct_buffer_want(&pr, 2, 12000, 1e-3, 6400), 0);
	/* never more than 16 in all */
	pr.work_buf_max = 1e6;
	assert_int_equal(ct_buffer_want(&pr, 3, 0, 1e-3, 6400), 13);
	ct_state_free(st);
}

static int needed_b(void *ctx, const char *sha)
{
	(void)ctx;
	return sha[0] == 'b';
}

static void make_file(const char *dir, char c, size_t size, time_t mtime)
{
	char path[4200], name[65];
	struct timespec ts[2] = { { mtime, 0 }, { mtime, 0 } };
	FILE *f;

	memset(name, c, 64);
	name[64] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < size; i++)
		fputc('x', f);
	fclose(f);
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static int exists(const char *dir, char c)
{
	char path[4200], name[65];

	memset(name, c, 64);
	name[64] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void test_cache_trim(void **unused)
{
	char *dir = ct_test_mkdtemp(), path[4200];
	uint64_t kept = 0;
	char name[65];

	(void)unused;
	make_file(dir, 'a', 1000, 1000);	/* oldest */
	make_file(dir, 'b', 1000, 1100);	/* old but in use */
	make_file(dir, 'c', 1000, 1200);
	make_file(dir, 'd', 1000, 1300);	/* newest */
	make_file(dir, 'e', 10, 900);
	memset(name, 'f', 64);
	name[64] = '\0';
	snprintf(path, sizeof(path), "%s/%s.part", dir, name);	/* a resumable download */
	fclose(fopen(path, "w"));
	assert_int_equal(ct_cache_trim(dir, 5000, needed_b, NULL, &kept), 0);
	assert_true(kept == 4010);		/* under the bound: nothing goes */
	assert_int_equal(ct_cache_trim(dir, 2000, needed_b, NULL, &kept), 0);
	assert_false(exists(dir, 'a'));		/* oldest went */
	assert_true(exists(dir, 'b'));		/* in use: kept although old */
	assert_false(exists(dir, 'c'));
	assert_true(exists(dir, 'd'));
	assert_false(exists(dir, 'e'));		/* 'e' was 10 bytes, oldest */
	assert_true(kept == 2000);
	ct_cache_touch(dir, "0000");		/* missing: no-op */
	assert_int_equal(ct_cache_trim(dir, 0, needed_b, NULL, &kept), 0);
	assert_true(exists(dir, 'b'));
	assert_true(kept == 1000);
	assert_int_equal(access(path, F_OK), 0);	/* .part files are not the cache's */
	ct_test_rmtree(dir);
	free(dir);
	assert_int_equal(ct_cache_trim("/nonexistent/cache", 0, NULL, NULL, NULL), CT_ENOENT);
}

CT_TEST_MAIN(test_queued_and_want, test_cache_trim)
