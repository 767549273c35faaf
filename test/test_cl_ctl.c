/*
 * test_cl_ctl.c - the daemon's control socket: owner-only permissions, a
 * request/reply round trip, a second daemon refused while one listens, a
 * stale socket file replaced, and a clear error when no daemon runs.
 */
#include "ct_test.h"

#include "cl_ctl.h"
#include "ct_err.h"
#include "ct_os.h"

#include <pthread.h>
#include <sys/stat.h>

static int handler(const char *cmd, struct ct_buf *reply, void *arg)
{
	(*(int *)arg)++;
	return ct_buf_appendf(reply, "got '%s'\n", cmd);
}

struct server {
	int fd;
	int served;
	int calls;
};

static void *serve(void *arg)
{
	struct server *s = arg;

	while (s->served < 2) {
		if (ct_os_sock_wait(s->fd, 0, 5000) <= 0)
			break;
		if (ct_ctl_serve_one(s->fd, handler, &s->calls) == 0)
			s->served++;
	}
	return NULL;
}

static void test_round_trip(void **unused)
{
	char *dir = ct_test_mkdtemp(), path[4200];
	struct ct_buf reply = CT_BUF_INIT(1 << 16);
	struct server s = { .fd = -1 };
	struct stat st;
	pthread_t th;
	int fd2;

	(void)unused;
	snprintf(path, sizeof(path), "%s/ctune.sock", dir);
	assert_int_equal(ct_ctl_request(path, "status", 1, &reply), CT_ENOENT);
	assert_non_null(strstr(ct_errmsg(CT_ENOENT), "ctune run"));
	assert_int_equal(ct_ctl_listen(path, &s.fd), 0);
	assert_int_equal(stat(path, &st), 0);
#ifndef CT_TEST_WINDOWS
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
#else	/* the loopback port and the token (lib/ct_os.h) */
	assert_true(S_ISREG(st.st_mode));
	assert_true(st.st_size > 0);
#endif
	assert_int_equal(pthread_create(&th, NULL, serve, &s), 0);
	assert_int_equal(ct_ctl_request(path, "status", 5, &reply), 0);
	assert_string_equal(ct_buf_cstr(&reply), "got 'status'\n");
	/* a second daemon on the same state directory is refused */
	assert_int_equal(ct_ctl_listen(path, &fd2), CT_EBUSY);
	ct_buf_reset(&reply);
	assert_int_equal(ct_ctl_request(path, "suspend", 5, &reply), 0);
	assert_string_equal(ct_buf_cstr(&reply), "got 'suspend'\n");
	pthread_join(th, NULL);
	assert_int_equal(s.calls, 2);
	ct_os_sock_close(s.fd);
	/* the socket file is left behind by a dead daemon: nobody answers,
	 * the next daemon takes it over */
	assert_int_equal(ct_ctl_request(path, "status", 1, &reply), CT_ENET);
	assert_int_equal(ct_ctl_listen(path, &s.fd), 0);
	ct_os_sock_close(s.fd);
	ct_buf_free(&reply);
	ct_test_rmtree(dir);
	free(dir);
}

static void test_silent_client_times_out(void **unused)
{
	char *dir = ct_test_mkdtemp(), path[4200];
	int fd, calls = 0;
	struct ct_buf reply = CT_BUF_INIT(1 << 16);

	(void)unused;
	snprintf(path, sizeof(path), "%s/ctune.sock", dir);
	assert_int_equal(ct_ctl_listen(path, &fd), 0);
	/* nobody connected: serve_one does not block */
	assert_int_equal(ct_ctl_serve_one(fd, handler, &calls), CT_EAGAIN);
	/* the daemon does not answer: the client gives up after its timeout */
	assert_int_equal(ct_ctl_request(path, "status", 0.3, &reply), CT_ETIMEOUT);
	assert_int_equal(calls, 0);
	ct_os_sock_close(fd);
	ct_buf_free(&reply);
	ct_test_rmtree(dir);
	free(dir);
}

CT_TEST_MAIN(test_round_trip, test_silent_client_times_out)
