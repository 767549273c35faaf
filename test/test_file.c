/*
 * Unit tests for lib/ct_file: atomic writes replace content and leave no
 * temp files, a write that fails midway (file size limit) keeps the old
 * file, an unwritable directory gives CT_EPERM naming it, capped reads,
 * mmap, mkdir -p, paths outside ASCII and path joining. In the Windows
 * build (CT_TEST_WINDOWS, run under Wine) the cases that need POSIX are
 * left out: permission bits, RLIMIT_FSIZE, fork and setuid, /proc.
 */
#include "ct_test.h"
#include "ct_err.h"
#include "ct_file.h"

#include <dirent.h>
#include <sys/stat.h>
#ifndef CT_TEST_WINDOWS
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#endif

struct fixture {
	char *dir;
	char path[4096];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	f->dir = ct_test_mkdtemp();
	if (f->dir == NULL)
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/data.bin", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	ct_test_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

/* Number of directory entries other than . and .. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static void assert_file_is(const char *path, const char *text)
{
	unsigned char *data = NULL;
	size_t len = 0;

	assert_int_equal(ct_file_read_all(path, 0, &data, &len), 0);
	assert_int_equal(len, strlen(text));
	assert_memory_equal(data, text, len);
	free(data);
}

/* The permission bits of path are mode (no such bits on Windows). */
static void assert_mode(const char *path, int mode)
{
#ifndef CT_TEST_WINDOWS
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, mode);
#else
	(void)path;
	(void)mode;
#endif
}

static void test_atomic_write_replaces(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(ct_file_write_atomic(f->path, "first", 5, 0600), 0);
	assert_file_is(f->path, "first");
	assert_mode(f->path, 0600);
	assert_int_equal(ct_file_write_atomic(f->path, "second version", 14, 0644), 0);
	assert_file_is(f->path, "second version");
	assert_mode(f->path, 0644);
	assert_int_equal(ct_file_write_atomic(f->path, "", 0, 0644), 0);
	assert_file_is(f->path, "");
	assert_int_equal(count_entries(f->dir), 1);
}

static void test_afile_stream_commit_abort(void **state)
{
	struct fixture *f = *state;
	struct ct_afile af;

	assert_int_equal(ct_file_write_atomic(f->path, "old", 3, 0644), 0);
	assert_int_equal(ct_afile_open(&af, f->path, 0644), 0);
	assert_int_equal(ct_afile_write(&af, "new ", 4), 0);
	/* Not visible until commit. */
	assert_file_is(f->path, "old");
	assert_int_equal(count_entries(f->dir), 2);
	ct_afile_abort(&af);
	assert_file_is(f->path, "old");
	assert_int_equal(count_entries(f->dir), 1);
	ct_afile_abort(&af);	/* twice is harmless */

	assert_int_equal(ct_afile_open(&af, f->path, 0644), 0);
	assert_int_equal(ct_afile_write(&af, "new ", 4), 0);
	assert_int_equal(ct_afile_write(&af, "content", 7), 0);
	assert_int_equal(ct_afile_commit(&af), 0);
	ct_afile_abort(&af);	/* after commit: no-op, file stays */
	assert_file_is(f->path, "new content");
	assert_int_equal(count_entries(f->dir), 1);
	assert_int_equal(ct_afile_write(&af, "x", 1), CT_ESTATE);
}

#ifndef CT_TEST_WINDOWS
/* A write that fails halfway (here: over RLIMIT_FSIZE, as a full disk
 * would) leaves the old file and no temp file. */
static void test_failed_write_keeps_old(void **state)
{
	struct fixture *f = *state;
	struct rlimit old_lim, lim;
	size_t big = 256 * 1024;
	char *data = malloc(big);
	int rc;

	assert_non_null(data);
	memset(data, 'z', big);
	assert_int_equal(ct_file_write_atomic(f->path, "precious", 8, 0644), 0);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old_lim), 0);
	lim = old_lim;
	lim.rlim_cur = 4096;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	rc = ct_file_write_atomic(f->path, data, big, 0644);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old_lim), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(rc, CT_ETOOBIG);	/* EFBIG */
	assert_non_null(strstr(ct_errmsg(rc), f->path));
	assert_file_is(f->path, "precious");
	assert_int_equal(count_entries(f->dir), 1);
	free(data);
}

/* Try writing into the read-only directory ro; 0 if it failed as it must. */
static int check_unwritable(const char *ro, const char *file)
{
	char path[4200];
	struct ct_afile af;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", ro, file);
	rc = ct_file_write_atomic(path, "new", 3, 0644);
	if (rc != CT_EPERM || strstr(ct_errmsg(rc), ro) == NULL) {
		fprintf(stderr, "write_atomic: got %d '%s'\n", rc, ct_errmsg(rc));
		return 1;
	}
	rc = ct_afile_open(&af, path, 0644);
	if (rc != CT_EPERM || af.fd != -1 || af.tmp_path != NULL) {
		fprintf(stderr, "afile_open: got %d '%s'\n", rc, ct_errmsg(rc));
		return 1;
	}
	ct_afile_abort(&af);
	return 0;
}

static void test_unwritable_dir(void **state)
{
	struct fixture *f = *state;
	char ro[4096], old[4200];
	int status = 1;
	pid_t pid;

	snprintf(ro, sizeof(ro), "%s/ro", f->dir);
	snprintf(old, sizeof(old), "%s/keep", ro);
	assert_int_equal(ct_mkdir_p(ro, 0755), 0);
	assert_int_equal(ct_file_write_atomic(old, "old", 3, 0644), 0);
	assert_int_equal(chmod(ro, 0555), 0);
	assert_int_equal(chmod(f->dir, 0755), 0);
	if (geteuid() != 0) {
		status = check_unwritable(ro, "keep");
	} else {
		/* root ignores permissions: check as "nobody" in a child. */
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			if (setgid(65534) != 0 || setuid(65534) != 0)
				_exit(2);
			_exit(check_unwritable(ro, "keep"));
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		status = WEXITSTATUS(status);
	}
	assert_int_equal(status, 0);
	assert_file_is(old, "old");
	assert_int_equal(count_entries(ro), 1);
	chmod(ro, 0755);
}
#endif

static void test_missing_dir(void **state)
{
	struct fixture *f = *state;
	char path[4200];
	int rc;

	snprintf(path, sizeof(path), "%s/nope/file", f->dir);
	rc = ct_file_write_atomic(path, "x", 1, 0644);
	assert_int_equal(rc, CT_ENOENT);
	assert_non_null(strstr(ct_errmsg(rc), "nope"));
	assert_int_equal(ct_file_write_atomic(f->dir, "x", 1, 0644) < 0, 1);
}

#ifndef CT_TEST_WINDOWS
/* An atomic write never replaces what is not a regular file (a FIFO here;
 * a device like /dev/null is the case that matters). */
static void test_not_regular_kept(void **state)
{
	struct fixture *f = *state;
	struct stat st;
	int rc;

	assert_int_equal(mkfifo(f->path, 0600), 0);
	rc = ct_file_write_atomic(f->path, "x", 1, 0644);
	assert_int_equal(rc, CT_EINVAL);
	assert_non_null(strstr(ct_errmsg(rc), "not a regular file"));
	assert_int_equal(stat(f->path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(count_entries(f->dir), 1);	/* no temporary left */
}
#endif

static void test_read_all_cap(void **state)
{
	struct fixture *f = *state;
	unsigned char *data = (unsigned char *)"junk";
	size_t len = 99;
	int rc;

	assert_int_equal(ct_file_write_atomic(f->path, "0123456789", 10, 0644), 0);
	assert_int_equal(ct_file_read_all(f->path, 10, &data, &len), 0);
	assert_int_equal(len, 10);
	assert_string_equal((char *)data, "0123456789");	/* NUL-terminated */
	free(data);
	rc = ct_file_read_all(f->path, 9, &data, &len);
	assert_int_equal(rc, CT_ETOOBIG);
	assert_null(data);
	assert_int_equal(len, 0);
	assert_non_null(strstr(ct_errmsg(rc), f->path));
#ifndef CT_TEST_WINDOWS
	/* A file whose size stat cannot tell is capped while reading. */
	assert_int_equal(ct_file_read_all("/proc/self/status", 16, &data, &len), CT_ETOOBIG);
	assert_null(data);
	assert_int_equal(ct_file_read_all("/proc/self/status", 0, &data, &len), 0);
	assert_true(len > 16);
	free(data);
#endif
	assert_int_equal(ct_file_read_all("/nonexistent/x", 0, &data, &len), CT_ENOENT);
	assert_int_equal(ct_file_read_all(f->dir, 0, &data, &len), CT_EINVAL);
}

static void test_mmap(void **state)
{
	struct fixture *f = *state;
	struct ct_mmap m;
	char empty[4200];

	assert_int_equal(ct_file_write_atomic(f->path, "mapped bytes", 12, 0644), 0);
	assert_int_equal(ct_file_map(f->path, &m), 0);
	assert_int_equal(m.len, 12);
	assert_memory_equal(m.addr, "mapped bytes", 12);
	ct_file_unmap(&m);
	assert_null(m.addr);
	assert_int_equal(m.len, 0);
	ct_file_unmap(&m);

	snprintf(empty, sizeof(empty), "%s/empty", f->dir);
	assert_int_equal(ct_file_write_atomic(empty, "", 0, 0644), 0);
	assert_int_equal(ct_file_map(empty, &m), 0);
	assert_null(m.addr);
	assert_int_equal(m.len, 0);
	ct_file_unmap(&m);
	assert_int_equal(ct_file_map("/nonexistent/x", &m), CT_ENOENT);
	assert_int_equal(ct_file_map(f->dir, &m), CT_EINVAL);
}

static void test_mkdir_exists_size(void **state)
{
	struct fixture *f = *state;
	char deep[4200], blocked[4200];
	uint64_t size = 0;
	struct stat st;

	snprintf(deep, sizeof(deep), "%s/a/b/c/", f->dir);
	assert_int_equal(ct_mkdir_p(deep, 0700), 0);
	assert_int_equal(stat(deep, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(ct_mkdir_p(deep, 0700), 0);	/* exists: fine */
	assert_int_equal(ct_file_write_atomic(f->path, "12345", 5, 0644), 0);
	snprintf(blocked, sizeof(blocked), "%s/sub", f->path);
	assert_int_equal(ct_mkdir_p(f->path, 0700), CT_EEXISTS);
	assert_true(ct_mkdir_p(blocked, 0700) < 0);
	assert_int_equal(ct_mkdir_p("", 0700), CT_EINVAL);

	assert_int_equal(ct_file_exists(f->path), 1);
	assert_int_equal(ct_file_exists(deep), 1);
	assert_int_equal(ct_file_exists(blocked), 0);
	assert_int_equal(ct_file_size(f->path, &size), 0);
	assert_int_equal(size, 5);
	assert_int_equal(ct_file_size(blocked, &size), CT_ENOENT);
}

/* Names outside ASCII (UTF-8 in, the wide-character API on Windows):
 * a folder made, a file written atomically, read, mapped and sized. */
static void test_non_ascii_names(void **state)
{
	struct fixture *f = *state;
	char dir[4200], path[4300];
	struct ct_mmap m;
	uint64_t size = 0;

	snprintf(dir, sizeof(dir), "%s/Zo\xc3\xab \xe3\x83\x87\xe3\x83\xbc\xe3\x82\xbf", f->dir);
	snprintf(path, sizeof(path), "%s/\xce\xb1\xce\xb2\xce\xb3.bin", dir);
	assert_int_equal(ct_mkdir_p(dir, 0700), 0);
	assert_int_equal(ct_file_exists(dir), 1);
	assert_int_equal(ct_file_write_atomic(path, "bytes", 5, 0644), 0);
	assert_int_equal(ct_file_write_atomic(path, "replaced", 8, 0644), 0);
	assert_file_is(path, "replaced");
	assert_int_equal(ct_file_size(path, &size), 0);
	assert_int_equal(size, 8);
	assert_int_equal(ct_file_map(path, &m), 0);
	assert_int_equal(m.len, 8);
	assert_memory_equal(m.addr, "replaced", 8);
	ct_file_unmap(&m);
	assert_int_equal(count_entries(dir), 1);
}

static void test_path_join(void **state)
{
	char out[16];

	(void)state;
	assert_int_equal(ct_path_join(out, sizeof(out), "a/b", "c"), 0);
	assert_string_equal(out, "a/b/c");
	assert_int_equal(ct_path_join(out, sizeof(out), "a/b/", "c"), 0);
	assert_string_equal(out, "a/b/c");
	assert_int_equal(ct_path_join(out, sizeof(out), "a", "/abs"), 0);
	assert_string_equal(out, "/abs");
	assert_int_equal(ct_path_join(out, sizeof(out), "", "rel"), 0);
	assert_string_equal(out, "rel");
	/* 15 chars + NUL fit in 16; 16 do not. */
	assert_int_equal(ct_path_join(out, sizeof(out), "0123456", "89abcde"), 0);
	assert_string_equal(out, "0123456/89abcde");
	assert_int_equal(ct_path_join(out, sizeof(out), "0123456", "89abcdef"), CT_ETOOBIG);
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_atomic_write_replaces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_afile_stream_commit_abort, setup, teardown),
#ifndef CT_TEST_WINDOWS
		cmocka_unit_test_setup_teardown(test_failed_write_keeps_old, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unwritable_dir, setup, teardown),
#endif
		cmocka_unit_test_setup_teardown(test_missing_dir, setup, teardown),
#ifndef CT_TEST_WINDOWS
		cmocka_unit_test_setup_teardown(test_not_regular_kept, setup, teardown),
#endif
		cmocka_unit_test_setup_teardown(test_read_all_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mmap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_exists_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_non_ascii_names, setup, teardown),
		cmocka_unit_test(test_path_join),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
