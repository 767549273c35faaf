/*
 * ct_file.c - atomic writes, capped reads, mmap, mkdir -p (see ct_file.h).
 *
 * The temp file of an atomic write is ".<name>.tmp.XXXXXX" next to the
 * target, so the final rename() never crosses a filesystem. Errors are
 * recorded with ct_error_errno() so the code follows errno (EACCES ->
 * CT_EPERM, ENOSPC -> CT_ENOSPC) and the detail names the path.
 */
#include "ct_file.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_os.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define READ_CHUNK (64u * 1024)

/* Directory part of path as a malloc'd string ("." when there is none). */
static char *dir_of(const char *path)
{
	const char *slash = ct_os_last_sep(path);

	if (slash == NULL)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

int ct_file_fsync_dir(const char *path)
{
	char *dir = dir_of(path);
	int rc;

	if (dir == NULL)
		return CT_ENOMEM;
	rc = ct_os_fsync_dir(dir);
	free(dir);
	return rc;
}

static void afile_clear(struct ct_afile *af)
{
	af->fd = -1;
	af->tmp_path = NULL;
	af->path = NULL;
	af->mode = 0;
}

int ct_afile_open(struct ct_afile *af, const char *path, int mode)
{
	const char *base = ct_os_last_sep(path);
	char *dir = NULL;
	struct stat st;
	size_t len;
	int rc = 0;

	afile_clear(af);
	base = base ? base + 1 : path;
	if (*base == '\0')
		return ct_error(CT_EINVAL, "%s: not a file name", path);
	/* the rename would replace what is there: never a device, a FIFO or
	 * a socket (`--out /dev/null` run as root once replaced the device) */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return ct_error(CT_EINVAL, "%s exists and is not a regular file: not replaced",
				path);
	dir = dir_of(path);
	af->path = strdup(path);
	len = strlen(dir) + strlen(base) + 16;
	af->tmp_path = malloc(len);
	if (dir == NULL || af->path == NULL || af->tmp_path == NULL) {
		rc = CT_ENOMEM;
		goto out;
	}
	snprintf(af->tmp_path, len, "%s/.%s.tmp.XXXXXX", dir, base);
	af->fd = ct_os_mkstemp(af->tmp_path);
	if (af->fd < 0) {
		rc = ct_error_errno("%s: cannot create a file in directory %s", path, dir);
		goto out;
	}
	af->mode = mode;
	if (fchmod(af->fd, (mode_t)mode) < 0)
		rc = ct_error_errno("%s: chmod failed", af->tmp_path);
out:
	free(dir);
	if (rc < 0)
		ct_afile_abort(af);
	return rc;
}

int ct_fd_write_all(int fd, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int ct_afile_write(struct ct_afile *af, const void *p, size_t n)
{
	if (af->fd < 0)
		return ct_error(CT_ESTATE, "atomic file is not open");
	if (ct_fd_write_all(af->fd, p, n) < 0)
		return ct_error_errno("%s: write failed", af->path);
	return 0;
}

int ct_afile_commit(struct ct_afile *af)
{
	int rc = 0;

	if (af->fd < 0)
		return ct_error(CT_ESTATE, "atomic file is not open");
	if (ct_os_fsync(af->fd) < 0) {
		rc = ct_error_errno("%s: fsync failed", af->path);
		goto out;
	}
	/* close() can report a delayed write error (NFS, quota). */
	if (close(af->fd) < 0) {
		af->fd = -1;
		rc = ct_error_errno("%s: close failed", af->path);
		goto out;
	}
	af->fd = -1;
	if (ct_os_replace(af->tmp_path, af->path) < 0) {
		rc = ct_error_errno("%s: rename from %s failed", af->path, af->tmp_path);
		goto out;
	}
	free(af->tmp_path);
	af->tmp_path = NULL;
	rc = ct_file_fsync_dir(af->path);
out:
	ct_afile_abort(af);
	return rc;
}

void ct_afile_abort(struct ct_afile *af)
{
	int saved = errno;

	if (af->fd >= 0)
		close(af->fd);
	if (af->tmp_path != NULL)
		unlink(af->tmp_path);
	free(af->tmp_path);
	free(af->path);
	afile_clear(af);
	errno = saved;
}

int ct_file_write_atomic(const char *path, const void *data, size_t n, int mode)
{
	struct ct_afile af;
	int rc;

	rc = ct_afile_open(&af, path, mode);
	if (rc < 0)
		return rc;
	rc = ct_afile_write(&af, data, n);
	if (rc < 0) {
		ct_afile_abort(&af);
		return rc;
	}
	return ct_afile_commit(&af);
}

ssize_t ct_file_read_some(int fd, const char *path, void *buf, size_t n)
{
	for (;;) {
		ssize_t r = read(fd, buf, n);

		if (r >= 0)
			return r;
		if (errno != EINTR)
			return ct_error_errno("%s: read failed", path);
	}
}

/* Read fd to EOF into b (whose max is the cap). */
static int read_fd_all(int fd, const char *path, struct ct_buf *b)
{
	for (;;) {
		ssize_t r;
		int rc = ct_buf_reserve(b, READ_CHUNK);

		/* Near the cap, still read one byte more than fits to tell
		 * "exactly max" from "over max". */
		if (rc == CT_ETOOBIG)
			rc = ct_buf_reserve(b, b->max - b->len);
		if (rc < 0)
			return rc;
		if (b->cap == b->len) {
			unsigned char extra;

			r = ct_file_read_some(fd, path, &extra, 1);
			if (r < 0)
				return (int)r;
			if (r > 0)
				return ct_error(CT_ETOOBIG, "%s: larger than %zu bytes", path, b->max);
			return 0;
		}
		r = ct_file_read_some(fd, path, b->data + b->len, b->cap - b->len);
		if (r < 0)
			return (int)r;
		if (r == 0)
			return 0;
		b->len += (size_t)r;
	}
}

/* path opened for reading, *st its status: the descriptor, or CT_E*. */
static int open_stat(const char *path, struct stat *st)
{
	int fd = ct_os_open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return ct_error_errno("%s: cannot open", path);
	if (fstat(fd, st) < 0) {
		int rc = ct_error_errno("%s: stat failed", path);

		close(fd);
		return rc;
	}
	return fd;
}

int ct_file_read_all(const char *path, size_t max, unsigned char **data, size_t *len)
{
	struct ct_buf b;
	struct stat st;
	int fd, rc;

	*data = NULL;
	*len = 0;
	ct_buf_init(&b, max);
	fd = open_stat(path, &st);
	if (fd < 0)
		return fd;
	if (S_ISDIR(st.st_mode)) {
		rc = ct_error(CT_EINVAL, "%s: is a directory", path);
		goto out;
	}
	if (max > 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > max) {
		rc = ct_error(CT_ETOOBIG, "%s: %lld bytes, over the limit of %zu", path,
			      (long long)st.st_size, max);
		goto out;
	}
	rc = read_fd_all(fd, path, &b);
	if (rc < 0)
		goto out;
	/* An empty file still gives a valid (empty) string. */
	rc = ct_buf_append(&b, "", 0);
	if (rc < 0)
		goto out;
	*data = ct_buf_steal(&b, len);
out:
	close(fd);
	ct_buf_free(&b);
	return rc;
}

int ct_file_map(const char *path, struct ct_mmap *m)
{
	struct stat st;
	int fd, rc = 0;
	void *p;

	m->addr = NULL;
	m->len = 0;
	fd = open_stat(path, &st);
	if (fd < 0)
		return fd;
	if (!S_ISREG(st.st_mode)) {
		rc = ct_error(CT_EINVAL, "%s: not a regular file", path);
		goto out;
	}
	if (st.st_size == 0)
		goto out;
	if ((uint64_t)st.st_size > SIZE_MAX) {
		rc = ct_error(CT_ETOOBIG, "%s: too large to map", path);
		goto out;
	}
	if (ct_os_map(fd, (size_t)st.st_size, &p) < 0) {
		rc = ct_error_errno("%s: mmap failed", path);
		goto out;
	}
	m->addr = p;
	m->len = (size_t)st.st_size;
out:
	close(fd);
	return rc;
}

void ct_file_unmap(struct ct_mmap *m)
{
	if (m->addr != NULL && m->len > 0)
		ct_os_unmap(m->addr, m->len);
	m->addr = NULL;
	m->len = 0;
}

/* mkdir one component; an existing directory is fine. */
static int mkdir_one(const char *p, int mode)
{
	struct stat st;

	if (ct_os_mkdir(p, mode) == 0)
		return 0;
	if (errno != EEXIST)
		return ct_error_errno("%s: cannot create directory", p);
	if (stat(p, &st) < 0)
		return ct_error_errno("%s: stat failed", p);
	if (!S_ISDIR(st.st_mode))
		return ct_error(CT_EEXISTS, "%s: exists and is not a directory", p);
	return 0;
}

int ct_mkdir_p(const char *path, int mode)
{
	char *p;
	int rc = 0;

	if (path == NULL || *path == '\0')
		return ct_error(CT_EINVAL, "mkdir: empty path");
	p = strdup(path);
	if (p == NULL)
		return CT_ENOMEM;
	for (char *s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		rc = mkdir_one(p, mode);
		*s = '/';
		if (rc < 0)
			goto out;
	}
	rc = mkdir_one(p, mode);
out:
	free(p);
	return rc;
}

int ct_file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int ct_file_size(const char *path, uint64_t *out)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return ct_error_errno("%s: stat failed", path);
	*out = (uint64_t)st.st_size;
	return 0;
}

int ct_path_join(char *out, size_t cap, const char *a, const char *b)
{
	size_t la = strlen(a);
	int n;

	if (cap == 0)
		return ct_error(CT_ETOOBIG, "path buffer of 0 bytes");
	if (b[0] == '/' || la == 0)
		n = snprintf(out, cap, "%s", b);
	else if (a[la - 1] == '/')
		n = snprintf(out, cap, "%s%s", a, b);
	else
		n = snprintf(out, cap, "%s/%s", a, b);
	if (n < 0 || (size_t)n >= cap) {
		out[0] = '\0';
		return ct_error(CT_ETOOBIG, "path %s/%s longer than %zu bytes", a, b, cap - 1);
	}
	return 0;
}
