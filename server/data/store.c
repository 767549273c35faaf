/*
 * store.c - the content-addressed file store (see store.h).
 *
 * A file is copied to a temporary name in its final directory while being
 * hashed, then link()ed to download/<aa>/<sha256>; if that name exists the
 * copy is dropped (same hash, same bytes). The `file` row is inserted
 * afterwards with INSERT ... ON DUPLICATE KEY UPDATE, so a crash between
 * the two leaves an unreferenced object, never a row without its file.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "db.h"
#include "server.h"

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return ct_error_errno("write");
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A temp file in download/ (same filesystem as the objects). */
static int tmp_open(struct ct_server *srv, char *tmp, size_t cap)
{
	int fd;

	snprintf(tmp, cap, "%s/.tmp-XXXXXX", srv->download_dir);
	fd = mkstemp(tmp);
	if (fd < 0)
		return ct_error_errno("temp file in %s", srv->download_dir);
	fchmod(fd, 0644);
	return fd;
}

/* Move the finished temp file to the object name of sha. */
static int place(struct ct_server *srv, const char *tmp, const char *sha)
{
	char path[PATH_MAX], dir[PATH_MAX];
	int rc;

	rc = ct_server_download_path(srv, sha, path, sizeof(path));
	if (rc < 0)
		return rc;
	snprintf(dir, sizeof(dir), "%s/%.2s", srv->download_dir, sha);
	rc = ct_mkdir_p(dir, 0755);
	if (rc < 0)
		return rc;
	if (link(tmp, path) < 0 && errno != EEXIST)
		return ct_error_errno("link %s", path);
	return ct_file_fsync_dir(path);
}

static int record(struct ct_db *db, const char *sha, int64_t size, const char *kind,
		  int64_t jobid, int keep)
{
	int rc = CT_DB_EXEC(db, "INSERT INTO `file` (sha256, size, kind, jobid, create_time, keep) "
			    "VALUES (?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE "
			    "keep=GREATEST(keep, VALUES(keep)), file_delete_state=0",
			    sha, size, kind, jobid, ct_db_now(db), keep);

	return rc < 0 ? rc : 0;
}

int ct_store_add_file(struct ct_server *srv, struct ct_db *db, const char *src_path,
		      const char *kind, int64_t jobid, int keep,
		      char sha_out[CT_SHA256_HEXLEN + 1], int64_t *size_out)
{
	char tmp[PATH_MAX], buf[1 << 16];
	unsigned char d[CT_SHA256_LEN];
	struct ct_sha256_ctx *h = NULL;
	int64_t size = 0;
	int in, out = -1, rc;

	sha_out[0] = 0;
	in = open(src_path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return ct_error_errno("%s", src_path);
	out = tmp_open(srv, tmp, sizeof(tmp));
	if (out < 0) {
		close(in);
		return out;
	}
	rc = ct_sha256_init(&h);
	for (;;) {
		ssize_t n;
		if (rc < 0)
			goto out;
		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = ct_error_errno("reading %s", src_path);
			goto out;
		}
		if (n == 0)
			break;
		size += n;
		rc = ct_sha256_update(h, buf, (size_t)n);
		if (rc == 0)
			rc = write_all(out, buf, (size_t)n);
	}
	if (fsync(out) < 0) {
		rc = ct_error_errno("fsync %s", tmp);
		goto out;
	}
	rc = ct_sha256_final(h, d);
	h = NULL;
	if (rc < 0)
		goto out;
	ct_hex_encode(d, sizeof(d), sha_out);
	rc = place(srv, tmp, sha_out);
	if (rc == 0)
		rc = record(db, sha_out, size, kind, jobid, keep);
	if (rc == 0 && size_out)
		*size_out = size;
out:
	ct_sha256_abort(h);
	close(in);
	close(out);
	unlink(tmp);
	if (rc < 0)
		sha_out[0] = 0;
	return rc;
}

int ct_store_add_parts(struct ct_server *srv, struct ct_db *db, const void *const *parts,
		       const size_t *sizes, int nparts, const char *kind, int64_t jobid,
		       int keep, char sha_out[CT_SHA256_HEXLEN + 1])
{
	struct ct_sha256_ctx *h = NULL;
	unsigned char d[CT_SHA256_LEN];
	char tmp[PATH_MAX];
	int64_t size = 0;
	int fd, rc;

	sha_out[0] = 0;
	fd = tmp_open(srv, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	rc = ct_sha256_init(&h);
	for (int i = 0; rc == 0 && i < nparts; i++) {
		rc = ct_sha256_update(h, parts[i], sizes[i]);
		if (rc == 0)
			rc = write_all(fd, parts[i], sizes[i]);
		size += (int64_t)sizes[i];
	}
	if (rc == 0 && fsync(fd) < 0)
		rc = ct_error_errno("fsync %s", tmp);
	close(fd);
	if (rc == 0) {
		rc = ct_sha256_final(h, d);
		h = NULL;
	}
	if (rc == 0) {
		ct_hex_encode(d, sizeof(d), sha_out);
		rc = place(srv, tmp, sha_out);
	}
	unlink(tmp);
	ct_sha256_abort(h);
	if (rc == 0)
		rc = record(db, sha_out, size, kind, jobid, keep);
	if (rc < 0)
		sha_out[0] = 0;
	return rc;
}

int ct_store_add_buf(struct ct_server *srv, struct ct_db *db, const void *data, size_t n,
		     const char *kind, int64_t jobid, int keep,
		     char sha_out[CT_SHA256_HEXLEN + 1])
{
	return ct_store_add_parts(srv, db, &data, &n, 1, kind, jobid, keep, sha_out);
}

int ct_store_has(const struct ct_server *srv, const char *sha256)
{
	char path[PATH_MAX];

	return ct_server_download_path(srv, sha256, path, sizeof(path)) == 0 &&
	       ct_file_exists(path);
}

int ct_store_size(struct ct_db *db, const char *sha, int64_t *size)
{
	return CT_DB_QUERY_INT(db, size, "SELECT size FROM `file` WHERE sha256=?", sha);
}

int ct_store_claim(struct ct_db *db, int64_t jobid, const char *model, const char *train,
		   const char *eval)
{
	int rc = CT_DB_EXEC(db, "UPDATE `file` SET jobid=? WHERE sha256 IN (?, ?, ?) AND jobid=0",
			    jobid, model, train, eval);

	return rc < 0 ? rc : 0;
}
