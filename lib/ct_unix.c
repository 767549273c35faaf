/*
 * ct_unix.c - see ct_unix.h.
 */
#include "ct_unix.h"
#include "ct_err.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int fill_addr(const char *path, struct sockaddr_un *sa)
{
	size_t n = strlen(path);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (n >= sizeof(sa->sun_path))
		return ct_error(CT_ETOOBIG, "%s: path too long for a Unix socket", path);
	memcpy(sa->sun_path, path, n + 1);
	return 0;
}

int ct_unix_connect(const char *path, int *out)
{
	struct sockaddr_un sa;
	int fd, rc, e;

	*out = -1;
	rc = fill_addr(path, &sa);
	if (rc < 0)
		return rc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ct_error_errno("socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		*out = fd;
		return 0;
	}
	e = errno;
	close(fd);
	if (e == ENOENT)
		return ct_error(CT_ENOENT, "%s: no such socket", path);
	if (e == ECONNREFUSED)
		return ct_error(CT_ENET, "%s: nobody listens", path);
	errno = e;
	return ct_error_errno("connect %s", path);
}

int ct_unix_listen(const char *path, int type_flags, int *out)
{
	struct sockaddr_un sa;
	mode_t old;
	int fd, rc;

	*out = -1;
	rc = fill_addr(path, &sa);
	if (rc < 0)
		return rc;
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | type_flags, 0);
	if (fd < 0)
		return ct_error_errno("socket");
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0 || chmod(path, 0600) < 0 || listen(fd, 8) < 0) {
		rc = ct_error_errno("bind %s", path);
		close(fd);
		return rc;
	}
	*out = fd;
	return 0;
}
