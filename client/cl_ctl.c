/*
 * cl_ctl.c - see cl_ctl.h.
 */
#include "cl_ctl.h"
#include "ct_err.h"
#include "ct_os.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Connect to the daemon's socket; "no daemon" gets a hint for the user. */
static int connect_to(const char *path, int *out)
{
	int rc = ct_os_local_connect(path, out);

	if (rc == CT_ENOENT || rc == CT_ENET)
		return ct_error(rc, "no daemon on %s (is 'ctune run' running?)", path);
	return rc;
}

int ct_ctl_listen(const char *path, int *out)
{
	int probe;

	*out = -1;
	if (connect_to(path, &probe) == 0) {
		ct_os_sock_close(probe);
		return ct_error(CT_EBUSY, "a daemon already listens on %s", path);
	}
	return ct_os_local_listen(path, out);
}

/* Read up to the first '\n' (at most CT_CTL_MAX_LINE bytes) within 2 s. */
static int read_line(int fd, char *line, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		ssize_t r;

		if (ct_os_sock_wait(fd, 0, 2000) <= 0)
			return ct_error(CT_ETIMEOUT, "control client sent no request");
		r = ct_os_sock_read(fd, line + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		line[n] = '\0';
		if (memchr(line, '\n', n) != NULL)
			break;
	}
	line[n] = '\0';
	if (strchr(line, '\n') == NULL)
		return ct_error(CT_EPROTO, "control request not a line");
	line[strcspn(line, "\r\n")] = '\0';
	return 0;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = ct_os_sock_write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			if (errno == EAGAIN && ct_os_sock_wait(fd, 1, 2000) > 0)
				continue;
			return ct_error_errno("control reply");
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int ct_ctl_serve_one(int listen_fd, int (*handler)(const char *cmd, struct ct_buf *reply,
						   void *arg), void *arg)
{
	struct ct_buf reply = CT_BUF_INIT(CT_CTL_MAX_REPLY);
	char line[CT_CTL_MAX_LINE + 1];
	int fd, rc;

	rc = ct_os_local_accept(listen_fd, &fd);
	if (rc < 0)
		return rc;
	rc = read_line(fd, line, sizeof(line));
	if (rc < 0) goto out;
	handler(line, &reply, arg);
	rc = write_all(fd, reply.data ? reply.data : (const unsigned char *)"", reply.len);
out:
	ct_os_sock_close(fd);
	ct_buf_free(&reply);
	return rc;
}

int ct_ctl_request(const char *path, const char *cmd, double timeout_s, struct ct_buf *reply)
{
	struct timespec t0, t;
	unsigned char chunk[4096];
	int fd, rc;

	rc = connect_to(path, &fd);
	if (rc < 0)
		return rc;
	rc = write_all(fd, (const unsigned char *)cmd, strlen(cmd));
	if (rc == 0) rc = write_all(fd, (const unsigned char *)"\n", 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (rc == 0) {
		double left;
		ssize_t r;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = timeout_s - (t.tv_sec - t0.tv_sec) - (t.tv_nsec - t0.tv_nsec) / 1e9;
		if (left <= 0 || ct_os_sock_wait(fd, 0, (int)(left * 1000) + 1) <= 0) {
			rc = ct_error(CT_ETIMEOUT, "daemon did not answer '%s'", cmd);
			break;
		}
		r = ct_os_sock_read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = ct_error_errno("read %s", path);
			break;
		}
		if (r == 0)
			break;
		rc = ct_buf_append(reply, chunk, (size_t)r);
	}
	ct_os_sock_close(fd);
	return rc;
}
