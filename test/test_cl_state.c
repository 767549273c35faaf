/*
 * test_cl_state.c - the client state file: a full round trip keeps every
 * field, malformed and oversize files are refused with a clear error, a
 * missing file is an empty state, and a writer killed with SIGKILL at random
 * moments never leaves a file that fails to load.
 */
#include "ct_test.h"

#include "cl_state.h"
#include "ct_err.h"
#include "ct_file.h"

#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#ifndef CT_TEST_WINDOWS
#include <sys/wait.h>
#endif

static struct ct_state *sample_state(const char *path)
{
	struct ct_state *st = NULL;
	struct ct_project *p;
	struct ct_task *t;
	struct ct_task_file *f;

	/* a fresh state that will live at path */
	assert_int_equal(ct_state_load("/nonexistent/client_state.xml", &st), 0);
	assert_int_equal(ct_strset(&st->path, path), 0);
	assert_int_equal(ct_state_add_project(st, "http://a.example/proj/", "k1", &p), 0);
	p->hostid = 42;
	assert_int_equal(ct_strset(&p->host_auth, "auth<&>\"'"), 0);
	p->credit = 123.25;
	p->nfailures = 3;
	p->next_rpc = 1.7e9 + 0.1;
	assert_int_equal(ct_project_add_task(p, "wu_1_0_r0", &t), 0);
	t->state = CT_TASK_RUNNING;
	t->deadline = 1.8e9;
	t->step = 7;
	t->steps = 20;
	t->progress = 0.35;
	t->last_loss = 3.0000000000000004;
	assert_int_equal(ct_task_add_param(t, "lr", "0.0003"), 0);
	assert_int_equal(ct_task_add_param(t, "empty", ""), 0);
	assert_int_equal(ct_task_add_file(t, &f), 0);
	assert_int_equal(ct_strset(&f->name, "model"), 0);
	assert_int_equal(ct_strset(&f->url, "http://a.example/download/ab"), 0);
	memset(f->sha256, 'a', 64);
	f->sha256[64] = '\0';
	f->size = 5000000000ull;
	assert_int_equal(ct_state_add_project(st, "http://b.example", "k2", NULL), 0);
	st->totals.results_done = 5;
	return st;
}

static void test_round_trip(void **unused)
{
	char *dir = ct_test_mkdtemp(), path[4200];
	struct ct_state *a, *b = NULL;
	struct ct_project *p;
	struct ct_task *t;
	struct stat sb;

	(void)unused;
	snprintf(path, sizeof(path), "%s/client_state.xml", dir);
	a = sample_state(path);
	assert_int_equal(ct_state_save(a), 0);
	assert_int_equal(stat(path, &sb), 0);
#ifndef CT_TEST_WINDOWS	/* no permission bits there: the folder's ACL */
	assert_int_equal(sb.st_mode & 0777, 0600);
#endif
	assert_int_equal(ct_state_load(path, &b), 0);
	assert_string_equal(a->cpid, b->cpid);
	assert_int_equal(b->nprojects, 2);
	p = ct_state_find_project(b, "http://a.example/proj");
	assert_non_null(p);
	assert_string_equal(p->url, "http://a.example/proj");
	assert_string_equal(p->host_auth, "auth<&>\"'");
	assert_int_equal(p->hostid, 42);
	assert_true(p->credit == 123.25 && p->next_rpc == 1.7e9 + 0.1);
	assert_int_equal(p->nfailures, 3);
	t = ct_project_find_task(p, "wu_1_0_r0");
	assert_non_null(t);
	assert_int_equal(t->state, CT_TASK_RUNNING);
	assert_int_equal(t->step, 7);
	assert_true(t->last_loss == 3.0000000000000004);	/* bit-exact */
	assert_true(isnan(t->eval_loss));
	assert_string_equal(ct_task_param(t, "lr"), "0.0003");
	assert_string_equal(ct_task_param(t, "empty"), "");
	assert_int_equal(t->nfiles, 1);
	assert_int_equal(t->files[0].size, 5000000000ull);
	assert_int_equal(b->totals.results_done, 5);
	/* a second attach of the same URL is refused; detach removes it */
	assert_int_equal(ct_state_add_project(b, "http://b.example/", "x", NULL), CT_EEXISTS);
	assert_int_equal(ct_state_remove_project(b, "http://b.example"), 0);
	assert_int_equal(ct_state_remove_project(b, "http://b.example"), CT_ENOTFOUND);
	ct_state_free(a);
	ct_state_free(b);
	ct_test_rmtree(dir);
	free(dir);
}

static void test_missing_is_empty(void **unused)
{
	struct ct_state *st = NULL;

	(void)unused;
	assert_int_equal(ct_state_load("/nonexistent/dir/client_state.xml", &st), 0);
	assert_int_equal(st->nprojects, 0);
	assert_int_equal(strlen(st->cpid), 32);
	ct_state_free(st);
}

static void expect_bad(const char *doc, int code)
{
	struct ct_state *st = (struct ct_state *)1;

	assert_int_equal(ct_state_from_xml(doc, strlen(doc), "x.xml", &st), code);
	assert_null(st);
}

static void test_malformed(void **unused)
{
	(void)unused;
	expect_bad("<client_state><project>", CT_EXML);
	expect_bad("<other/>", CT_EFORMAT);
	expect_bad("<client_state><project><url>u</url><key>k</key>"
		   "<task><name>t</name><state>flying</state></task></project></client_state>",
		   CT_EFORMAT);
	expect_bad("<client_state><project><url>u</url><key>k</key><hostid>12x</hostid>"
		   "</project></client_state>", CT_EFORMAT);
	/* a task without a name cannot be identified */
	expect_bad("<client_state><project><url>u</url><key>k</key><task/></project>"
		   "</client_state>", CT_ENOTFOUND);
}

static void test_oversize(void **unused)
{
	char *dir = ct_test_mkdtemp(), path[4200];
	size_t n = (16u << 20) + 10;
	char *big = malloc(n);
	struct ct_state *st = NULL;

	(void)unused;
	snprintf(path, sizeof(path), "%s/client_state.xml", dir);
	memset(big, ' ', n);
	assert_int_equal(ct_file_write_atomic(path, big, n, 0600), 0);
	assert_int_equal(ct_state_load(path, &st), CT_ETOOBIG);
	assert_null(st);
	free(big);
	ct_test_rmtree(dir);
	free(dir);
}

/* A child saves ever-changing states as fast as it can; once it has saved
 * once, the parent kills it with SIGKILL at a random moment and checks that
 * the file loads and is one consistent version (two fields the child always
 * writes equal agree), every time. */
#ifndef CT_TEST_WINDOWS	/* fork: test/windows_e2e.sh kills the Wine client instead */
static void test_kill9_never_corrupts(void **unused)
{
	char *dir = ct_test_mkdtemp(), path[4200];

	(void)unused;
	snprintf(path, sizeof(path), "%s/client_state.xml", dir);
	for (int round = 0; round < 20; round++) {
		struct ct_state *st = NULL;
		int fds[2];
		char c;
		pid_t pid;

		assert_int_equal(pipe(fds), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct ct_state *s = sample_state(path);

			close(fds[0]);
			for (long i = 0;; i++) {
				s->totals.results_done = i;
				s->projects[0].tasks[0].step = i;
				if (ct_state_save(s) < 0)
					_exit(3);
				if (i == 0 && write(fds[1], "x", 1) != 1)
					_exit(4);
			}
		}
		close(fds[1]);
		assert_int_equal(read(fds[0], &c, 1), 1);	/* saved once */
		close(fds[0]);
		usleep((unsigned)(rand() % 20000));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		assert_int_equal(ct_state_load(path, &st), 0);
		assert_int_equal(st->nprojects, 2);
		assert_int_equal(st->projects[0].tasks[0].step, st->totals.results_done);
		ct_state_free(st);
	}
	ct_test_rmtree(dir);
	free(dir);
}

CT_TEST_MAIN(test_round_trip, test_missing_is_empty, test_malformed, test_oversize,
	test_kill9_never_corrupts)
#else
CT_TEST_MAIN(test_round_trip, test_missing_is_empty, test_malformed, test_oversize)
#endif
