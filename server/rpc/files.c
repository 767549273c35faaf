/*
 * files.c - POST /upload/<result> (streamed to disk, token-checked, never
 * overwriting an accepted file) and GET /download/<sha256> (content-
 * addressed, immutable, with Range and ETag). See doc/protocol.md.
 *
 * An upload goes to a temporary file in PROJECT/upload, hashed while it
 * arrives, fsynced, then link()ed to its final name. It counts only with an
 * X-Upload-MAC over its SHA-256 under the secret of the host the token was
 * issued to (token.h): a sniffer who read the token cannot upload, and a
 * refused upload changes nothing. The same host may replace its own upload
 * while the result is still in progress (not yet reported, so never
 * validated): the new file is rename()d over the old one, atomically.
 *
 * POST /upload/<result>.state takes the training state a dispute asked
 * of that host (validate/dispute.h): same token, MAC and streaming, the
 * open request checked instead of the result, and the request marked
 * uploaded instead of the result.
 */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_xml.h"
#include "data/db.h"
#include "data/dl.h"
#include "data/dl_chain.h"
#include "data/dl_result.h"
#include "http.h"
#include "data/result_state.h"
#include "data/server.h"
#include "data/wu_state.h"
#include "token.h"

struct upload {
	int fd;
	char tmp[PATH_MAX];
	char final[PATH_MAX];
	struct ct_sha256_ctx *h;
	uint64_t n, max;
	int64_t resultid, hostid;	/* a state upload: resultid is its WU's id */
	int is_state;
};

static int upload_error(struct ct_http_resp *resp, int status, int code, const char *msg,
			struct ct_http_req *req)
{
	ct_log_info("upload %s from %s: refused: %s", req->subpath, req->remote_ip, msg);
	return ct_http_xml_error(resp, status, "upload_reply", code, msg, -1);
}

static int status_for(int code)
{
	switch (code) {
	case CT_EAUTH: case CT_EEXPIRED: return 401;
	case CT_EDENIED: return 403;
	case CT_ENOTFOUND: return 404;
	case CT_EDUP: case CT_ESTATE: return 409;
	case CT_ETOOBIG: return 413;
	case CT_EHASH: case CT_EINVAL: return 400;
	default: return 500;
	}
}

/* Look the result up and check it may take an upload from hostid: sent
 * to that host, still in progress, and of a round not yet averaged (an
 * upload for a closed round could never be used: CT_EEXPIRED, HTTP 410). */
static int upload_check_result(struct ct_http_req *req, int64_t hostid, int64_t *resultid)
{
	struct ct_db *db = ct_http_db(req);
	struct ct_upload_target t;
	int rc;

	if (db == NULL)
		return ct_error(CT_EAGAIN, "database unavailable");
	rc = ct_result_upload_target(db, req->subpath, &t);
	if (rc < 0 && rc != CT_ENOTFOUND) {
		ct_http_db_reset(req);
		return rc;
	}
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "no such result");
	if (rc < 0)
		return rc;
	if (t.hostid != hostid)
		return ct_error(CT_EDENIED, "result was not sent to this host");
	if (t.round_status != CT_ROUND_OPEN)
		return ct_error(CT_EEXPIRED, "stale: round %lld of job %lld is already "
				"closed (averaged or stopped); this result is no longer needed",
				(long long)t.round_idx, (long long)t.jobid);
	if (t.server_state != CT_RS_IN_PROGRESS)
		return ct_error(CT_ESTATE, "result is not in progress");
	*resultid = t.id;
	return 0;
}

/* A state upload (/upload/<result>.state, validate/bisect.h): the host
 * was asked for it and the request is still open. *wuid: its WU. */
static int state_is_state(const char *name)
{
	size_t n = strlen(name), k = strlen(CT_STATE_SUFFIX);

	return n > k && strcmp(name + n - k, CT_STATE_SUFFIX) == 0;
}

static int state_check_request(struct ct_http_req *req, int64_t hostid, int64_t *wuid)
{
	struct ct_db *db = ct_http_db(req);
	struct ct_dl_state_req q;
	char name[96];
	size_t n = strlen(req->subpath) - strlen(CT_STATE_SUFFIX);
	int rc;

	if (db == NULL)
		return ct_error(CT_EAGAIN, "database unavailable");
	if (n >= sizeof(name))
		return ct_error(CT_ENOTFOUND, "no such result");
	memcpy(name, req->subpath, n);
	name[n] = '\0';
	rc = ct_dl_state_req_by_name(db, name, hostid, &q);
	if (rc < 0)
		ct_http_db_reset(req);
	if (rc == 0)
		return ct_error(CT_ESTATE, "no state of %s is asked of this host", name);
	*wuid = q.workunitid;
	return rc < 0 ? rc : 0;
}

/* Either kind of upload: a result's or a state's (u->state). */
static int upload_check(struct ct_http_req *req, int64_t hostid, int is_state, int64_t *id)
{
	return is_state ? state_check_request(req, hostid, id)
			: upload_check_result(req, hostid, id);
}

static int upload_begin(struct ct_http_req *req, struct ct_http_resp *resp)
{
	struct ct_server *srv = req->srv;
	const char *token = ct_http_header(req, "X-Upload-Token");
	struct upload *u;
	int64_t hostid = 0, max = 0, rid = 0;
	int rc;

	if (!ct_result_name_valid(req->subpath))
		return upload_error(resp, 404, CT_ENOTFOUND, "bad result name", req);
	if (token == NULL)
		return upload_error(resp, 401, CT_EAUTH, "no X-Upload-Token header", req);
	rc = ct_token_check(srv->secret, sizeof(srv->secret), req->subpath, token,
			    ct_server_now(srv), &hostid, &max);
	if (rc == 0) {
		rc = upload_check(req, hostid, state_is_state(req->subpath), &rid);
		if (rc == CT_EEXPIRED)	/* a stale result, not a stale token */
			return upload_error(resp, 410, rc, ct_errmsg(rc), req);
	}
	if (rc < 0)
		return upload_error(resp, status_for(rc), rc, ct_errmsg(rc), req);
	if (req->content_length != UINT64_MAX && req->content_length > (uint64_t)max)
		return upload_error(resp, 413, CT_ETOOBIG, "upload over the size limit", req);
	u = calloc(1, sizeof(*u));
	if (u == NULL)
		return CT_ENOMEM;
	u->fd = -1;
	u->max = (uint64_t)max;
	u->resultid = rid;
	u->hostid = hostid;
	u->is_state = state_is_state(req->subpath);
	req->state = u;
	rc = ct_server_upload_path(srv, req->subpath, u->final, sizeof(u->final));
	if (rc < 0)
		return rc;
	snprintf(u->tmp, sizeof(u->tmp), "%s/.tmp-%s-XXXXXX", srv->upload_dir, req->subpath);
	u->fd = mkstemp(u->tmp);
	if (u->fd < 0) {
		u->tmp[0] = 0;
		return ct_error_errno("upload temp file in %s", srv->upload_dir);
	}
	return ct_sha256_init(&u->h);
}

static int upload_chunk(struct ct_http_req *req, struct ct_http_resp *resp,
			const void *data, size_t n)
{
	struct upload *u = req->state;
	const char *p = data;

	if (u->n + n > u->max)
		return upload_error(resp, 413, CT_ETOOBIG, "upload over the size limit", req);
	u->n += n;
	if (ct_sha256_update(u->h, data, n) < 0)
		return CT_ECRYPTO;
	while (n > 0) {
		ssize_t w = write(u->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return ct_error_errno("writing %s", u->tmp);
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Put the temp file in place; a different file of the same host for a
 * result still in progress (checked again now) is replaced atomically. */
static int upload_place(struct ct_http_req *req, struct upload *u, const char *sha)
{
	char old[CT_SHA256_HEXLEN + 1];
	int64_t rid = 0;
	int rc;

	if (fsync(u->fd) < 0)
		return ct_error_errno("fsync %s", u->tmp);
	if (link(u->tmp, u->final) == 0)
		return ct_file_fsync_dir(u->final);
	if (errno != EEXIST)
		return ct_error_errno("link %s", u->final);
	rc = ct_sha256_file_hex(u->final, old);
	if (rc < 0 || strcmp(old, sha) == 0)
		return rc;
	rc = upload_check(req, u->hostid, u->is_state, &rid);
	if (rc < 0)
		return rc == CT_EEXPIRED ? CT_ESTATE : rc;
	if (rename(u->tmp, u->final) < 0)
		return ct_error_errno("rename %s", u->final);
	u->tmp[0] = 0;
	ct_log_info("upload %s: host %" PRId64 " replaced its own upload", req->subpath, u->hostid);
	return ct_file_fsync_dir(u->final);
}

static int upload_reply(struct ct_http_resp *resp, const char *sha, uint64_t n)
{
	struct ct_buf *b = &resp->body;
	int rc;

	resp->content_type = "application/xml";
	rc = ct_xml_open(b, "upload_reply");
	if (rc == 0)
		rc = ct_xml_elem_str(b, "status", "ok");
	if (rc == 0)
		rc = ct_xml_elem_str(b, "sha256", sha);
	if (rc == 0)
		rc = ct_xml_elem_int64(b, "size", (int64_t)n);
	if (rc == 0)
		rc = ct_xml_close(b, "upload_reply");
	return rc;
}

static void upload_free(struct ct_http_req *req)
{
	struct upload *u = req->state;

	if (u == NULL)
		return;
	if (u->fd >= 0)
		close(u->fd);
	if (u->tmp[0])
		unlink(u->tmp);
	ct_sha256_abort(u->h);
	free(u);
	req->state = NULL;
}

static int upload_end(struct ct_http_req *req, struct ct_http_resp *resp)
{
	struct upload *u = req->state;
	const char *want = ct_http_header(req, "X-Content-SHA256");
	unsigned char d[CT_SHA256_LEN];
	char sha[CT_SHA256_HEXLEN + 1];
	struct ct_db *db;
	int rc;

	rc = ct_sha256_final(u->h, d);
	u->h = NULL;
	if (rc < 0)
		goto out;
	ct_hex_encode(d, sizeof(d), sha);
	if (want && strcmp(want, sha) != 0) {
		rc = upload_error(resp, 400, CT_EHASH, "upload does not match X-Content-SHA256", req);
		goto out;
	}
	rc = ct_token_check_mac(req->srv->secret, sizeof(req->srv->secret), u->hostid,
				req->subpath, sha, ct_http_header(req, "X-Upload-MAC"));
	if (rc == 0)
		rc = upload_place(req, u, sha);
	if (rc == CT_EAUTH || rc == CT_ESTATE || rc == CT_EDENIED) {
		rc = upload_error(resp, status_for(rc), rc, ct_errmsg(rc), req);
		goto out;
	}
	if (rc < 0)
		goto out;
	db = ct_http_db(req);
	if (db == NULL)
		rc = CT_EAGAIN;
	else if (u->is_state)	/* the validator takes it from here */
		rc = ct_dl_state_req_uploaded(db, u->resultid, u->hostid, sha, (int64_t)u->n);
	else
		rc = ct_result_set_upload(db, u->resultid, u->hostid, sha, (int64_t)u->n,
					  ct_db_now(db));
	if (rc < 0) {
		if (rc == CT_EDB)
			ct_http_db_reset(req);
		goto out;
	}
	if (rc == 0) {
		rc = upload_error(resp, 409, CT_ESTATE, "result is no longer in progress", req);
		goto out;
	}
	if (u->is_state)
		ct_log_info("upload %s: the state asked for WU %" PRId64 ", %" PRIu64 " bytes",
			    req->subpath, u->resultid, u->n);
	ct_log_debug("upload %s: %" PRIu64 " bytes, sha256 %s", req->subpath, u->n, sha);
	rc = upload_reply(resp, sha, u->n);
out:
	upload_free(req);
	return rc;
}

/* ---- download ---------------------------------------------------------- */

/* Parse one "bytes=a-b" / "a-" / "-n" range of a file of size n. Returns 1
 * (range set), 0 (ignore: serve everything) or -1 (unsatisfiable). */
static int parse_range(const char *h, uint64_t n, uint64_t *off, uint64_t *len)
{
	unsigned long long a = 0, b = 0;
	char *end;

	if (h == NULL || strncmp(h, "bytes=", 6) != 0 || strchr(h, ','))
		return 0;
	h += 6;
	if (*h == '-') {
		b = strtoull(h + 1, &end, 10);
		if (*end || end == h + 1)
			return 0;
		if (b == 0 || n == 0)
			return -1;
		if (b > n)
			b = n;
		*off = n - b;
		*len = b;
		return 1;
	}
	a = strtoull(h, &end, 10);
	if (end == h || *end != '-')
		return 0;
	h = end + 1;
	if (*h == 0) {
		b = n ? n - 1 : 0;
	} else {
		b = strtoull(h, &end, 10);
		if (*end)
			return 0;
		if (b >= n)
			b = n - 1;
	}
	if (a >= n || b < a)
		return -1;
	*off = a;
	*len = b - a + 1;
	return 1;
}

static int download(struct ct_http_req *req, struct ct_http_resp *resp)
{
	const char *sha = req->subpath, *inm;
	char path[PATH_MAX];
	struct stat sb;
	uint64_t off = 0, len;
	int fd, r;

	if (ct_server_download_path(req->srv, sha, path, sizeof(path)) < 0 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		resp->status = 404;
		resp->content_type = "text/plain";
		return ct_buf_appends(&resp->body, "404 no such file\n");
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return ct_error(CT_EIO, "%s: not a regular file", path);
	}
	len = (uint64_t)sb.st_size;
	ct_http_resp_header(resp, "ETag", "\"%s\"", sha);
	ct_http_resp_header(resp, "Cache-Control", "public, max-age=31536000, immutable");
	ct_http_resp_header(resp, "Accept-Ranges", "bytes");
	resp->content_type = "application/octet-stream";
	inm = ct_http_header(req, "If-None-Match");
	if (inm && strstr(inm, sha)) {
		close(fd);
		resp->status = 304;
		return 0;
	}
	r = parse_range(ct_http_header(req, "Range"), len, &off, &len);
	if (r < 0) {
		close(fd);
		resp->status = 416;
		return ct_http_resp_header(resp, "Content-Range", "bytes */%lld",
					   (long long)sb.st_size);
	}
	if (r > 0) {
		resp->status = 206;
		ct_http_resp_header(resp, "Content-Range", "bytes %" PRIu64 "-%" PRIu64 "/%lld",
				    off, off + len - 1, (long long)sb.st_size);
	}
	resp->fd = fd;
	resp->fd_off = off;
	resp->fd_len = len;
	return 0;
}

const struct ct_http_route ct_files_routes[] = {
	{ .method = "POST", .path = "/upload/*", .flags = CT_HTTP_STREAM,
	  .begin = upload_begin, .chunk = upload_chunk, .end = upload_end,
	  .abort = upload_free },
	{ .method = "GET", .path = "/download/*", .handler = download },
	{ .path = NULL },
};
