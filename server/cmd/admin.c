/*
 * admin.c - the admin socket (see admin.h).
 */
#include "admin.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "commands.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_log.h"
#include "ct_unix.h"
#include "data/db.h"
#include "daemons/instance.h"
#include "data/server.h"

#define MAX_REQ (64u << 10)
#define MAX_OUT (16u << 20)
#define MAX_ARGS 128

/* The listening side, in struct ct_server.admin while `run` serves. */
struct ct_admin {
	int fd;
	pthread_t tid;
};

/* This instance's socket under dir (instance.h: admin.sock for the
 * default instance, admin-NAME.sock for another). */
static int sock_path(const char *dir, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (ct_instance_file(dir, "admin", ".sock", sa->sun_path, sizeof(sa->sun_path)) < 0)
		return ct_error(CT_ETOOBIG, "%s: path too long for a Unix socket", dir);
	return 0;
}

static int read_full(int fd, void *p, size_t n)
{
	char *c = p;

	while (n > 0) {
		ssize_t r = read(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return ct_error(CT_EIO, "admin socket: short read");
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

static int write_full(int fd, const void *p, size_t n)
{
	return ct_fd_write_all(fd, p, n) < 0 ? ct_error(CT_EIO, "admin socket: short write")
					     : 0;
}

/* ---- server side ------------------------------------------------------- */

static int run_request(struct ct_server *srv, struct ct_db *db, char *req, size_t n,
		       char **out, size_t *outlen, char *err, size_t errcap)
{
	char *argv[MAX_ARGS + 1], *p = req, *end = req + n;
	const struct ct_cmd_def *cmd;
	struct ct_cmd_ctx ctx = { .srv = srv, .db = db };
	int argc = 0, nw, rc;

	ctx.cwd = p;
	p += strlen(p) + 1;
	while (p < end && argc < MAX_ARGS) {
		argv[argc++] = p;
		p += strlen(p) + 1;
	}
	argv[argc] = NULL;
	err[0] = 0;
	cmd = ct_cmd_lookup(ct_project_cmds, argc, argv, &nw);
	ctx.out = open_memstream(out, outlen);
	if (ctx.out == NULL)
		return CT_ENOMEM;
	if (cmd == NULL) {
		rc = ct_error(CT_EUSAGE, "unknown command");
	} else {
		ct_error_clear();
		rc = cmd->fn(&ctx, argc - (nw - 1), argv + (nw - 1));
	}
	if (rc < 0)
		snprintf(err, errcap, "%s", ct_errmsg(rc));
	fclose(ctx.out);
	return rc;
}

static int peer_ok(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && cr.uid == geteuid();
}

static void serve_one(struct ct_server *srv, struct ct_db **db, int fd)
{
	uint32_t n;
	char *req = NULL, *out = NULL, err[1024];
	size_t outlen = 0;
	int32_t rc;

	if (!peer_ok(fd) || read_full(fd, &n, 4) < 0 || n == 0 || n > MAX_REQ)
		return;
	req = malloc((size_t)n + 1);
	if (req == NULL || read_full(fd, req, n) < 0)
		goto out;
	req[n] = 0;
	if (*db == NULL && ct_db_open(db, srv->clock) < 0) {
		rc = CT_EDB;
		snprintf(err, sizeof(err), "%s", ct_errmsg(CT_EDB));
	} else {
		rc = run_request(srv, *db, req, n, &out, &outlen, err, sizeof(err));
		if (rc == CT_EDB) {
			ct_db_close(*db);
			*db = NULL;
		}
	}
	if (outlen > MAX_OUT)
		outlen = MAX_OUT;
	uint32_t on = (uint32_t)outlen, en = (uint32_t)strlen(err);
	if (write_full(fd, &rc, 4) == 0 && write_full(fd, &on, 4) == 0 &&
	    write_full(fd, out ? out : "", on) == 0 && write_full(fd, &en, 4) == 0)
		write_full(fd, err, en);
out:
	free(req);
	free(out);
}

static void *admin_main(void *arg)
{
	struct ct_server *srv = arg;
	struct ct_db *db = NULL;

	while (!ct_server_stopping(srv)) {
		struct pollfd p = { .fd = srv->admin->fd, .events = POLLIN };
		if (poll(&p, 1, 200) <= 0)
			continue;
		int c = accept4(srv->admin->fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		struct timeval tv = { 30, 0 };
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		serve_one(srv, &db, c);
		close(c);
	}
	ct_db_close(db);
	return NULL;
}

int ct_admin_start(struct ct_server *srv)
{
	struct sockaddr_un sa;
	struct ct_admin *a;
	int rc;

	if (srv->admin != NULL)
		return ct_error(CT_ESTATE, "the admin socket is already open");
	rc = sock_path(srv->dir, &sa);
	if (rc < 0)
		return rc;
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return CT_ENOMEM;
	unlink(sa.sun_path);	/* stale from a killed server (we hold the lock) */
	a->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (a->fd < 0) {
		rc = ct_error_errno("admin socket");
		goto fail;
	}
	mode_t old = umask(077);
	rc = bind(a->fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0 || listen(a->fd, 8) < 0) {
		rc = ct_error_errno("admin socket %s", sa.sun_path);
		goto fail;
	}
	chmod(sa.sun_path, 0600);
	srv->admin = a;
	if (pthread_create(&a->tid, NULL, admin_main, srv) != 0) {
		srv->admin = NULL;
		rc = ct_error(CT_EINTERNAL, "cannot start the admin thread");
		goto fail;
	}
	return 0;
fail:
	if (a->fd >= 0)
		close(a->fd);
	free(a);
	return rc;
}

void ct_admin_stop(struct ct_server *srv)
{
	struct ct_admin *a = srv->admin;
	struct sockaddr_un sa;

	if (a == NULL)
		return;
	atomic_store(&srv->stop, 1);
	pthread_join(a->tid, NULL);
	close(a->fd);
	free(a);
	srv->admin = NULL;
	if (sock_path(srv->dir, &sa) == 0)
		unlink(sa.sun_path);
}

/* ---- client side ------------------------------------------------------- */

static int send_request(int fd, int argc, char **argv)
{
	char cwd[PATH_MAX], *buf;
	size_t n, off = 0;
	uint32_t len;
	int rc;

	if (getcwd(cwd, sizeof(cwd)) == NULL)
		strcpy(cwd, "/");
	n = strlen(cwd) + 1;
	for (int i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	if (n > MAX_REQ)
		return ct_error(CT_ETOOBIG, "command line too long");
	buf = malloc(n);
	if (buf == NULL)
		return CT_ENOMEM;
	memcpy(buf, cwd, strlen(cwd) + 1);
	off = strlen(cwd) + 1;
	for (int i = 0; i < argc; i++) {
		memcpy(buf + off, argv[i], strlen(argv[i]) + 1);
		off += strlen(argv[i]) + 1;
	}
	len = (uint32_t)n;
	rc = write_full(fd, &len, 4);
	if (rc == 0)
		rc = write_full(fd, buf, n);
	free(buf);
	return rc;
}

static int read_blob(int fd, FILE *to, uint32_t cap)
{
	uint32_t n;
	char buf[8192];
	int rc;

	rc = read_full(fd, &n, 4);
	if (rc < 0)
		return rc;
	if (n > cap)
		return ct_error(CT_EPROTO, "admin reply too long");
	while (n > 0) {
		size_t k = n < sizeof(buf) ? n : sizeof(buf);
		rc = read_full(fd, buf, k);
		if (rc < 0)
			return rc;
		fwrite(buf, 1, k, to);
		n -= (uint32_t)k;
	}
	return 0;
}

/* No default instance listens: any other instance's admin-NAME.sock. */
static int connect_other(const char *dir, int *fd)
{
	char pat[PATH_MAX];
	glob_t g;
	int rc = CT_ENOENT;

	if (snprintf(pat, sizeof(pat), "%s/admin-*.sock", dir) >= (int)sizeof(pat))
		return CT_ENOENT;
	if (glob(pat, 0, NULL, &g) != 0)
		return CT_ENOENT;
	for (size_t i = 0; i < g.gl_pathc && rc < 0; i++)
		if (strlen(g.gl_pathv[i]) < sizeof(((struct sockaddr_un *)0)->sun_path))
			rc = ct_unix_connect(g.gl_pathv[i], fd);
	globfree(&g);
	return rc == CT_ENOENT || rc == CT_ENET || rc == 0 ? rc : CT_ENET;
}

int ct_admin_call(const char *dir, int argc, char **argv, int *cmd_rc)
{
	struct sockaddr_un sa;
	int32_t rc32;
	int fd, rc;

	rc = sock_path(dir, &sa);
	if (rc == 0)
		rc = ct_unix_connect(sa.sun_path, &fd);
	if (rc == CT_ENOENT || rc == CT_ENET)
		rc = connect_other(dir, &fd);
	if (rc == CT_ENOENT || rc == CT_ENET)
		return 0;	/* no server: run locally */
	if (rc < 0)
		return rc;
	rc = send_request(fd, argc, argv);
	if (rc == 0)
		rc = read_full(fd, &rc32, 4);
	if (rc == 0)
		rc = read_blob(fd, stdout, MAX_OUT);
	fflush(stdout);
	if (rc == 0) {
		FILE *e = tmpfile();
		rc = read_blob(fd, e ? e : stderr, 4096);
		if (e) {
			char line[4200];
			size_t k;
			rewind(e);
			k = fread(line, 1, sizeof(line) - 1, e);
			line[k] = 0;
			if (k > 0)
				ct_error(rc32 < 0 ? rc32 : CT_EINTERNAL, "%s", line);
			fclose(e);
		}
	}
	close(fd);
	if (rc < 0)
		return rc;
	*cmd_rc = rc32;
	return 1;
}
