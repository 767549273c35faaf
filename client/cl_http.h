/*
 * cl_http.h - the client's HTTP calls on libcurl: scheduler/account RPC
 * posts, resumable verified downloads into the content-addressed cache, and
 * result uploads.
 *
 * Every reply body goes into a capped ct_buf (an oversize reply fails with
 * CT_ETOOBIG instead of eating memory); downloads are capped at the size
 * the scheduler announced. Connection failures are CT_ENET, timeouts
 * CT_ETIMEOUT, HTTP statuses >= 400 CT_EHTTP (with the status in the detail
 * and in *status), so the caller can decide to back off.
 */
#ifndef CT_CL_HTTP_H
#define CT_CL_HTTP_H

#include <stdint.h>

#include "ct_buf.h"
#include "ct_hash.h"

/* curl_global_init once (thread-safe via pthread_once). */
void ct_http_init(void);

/* Per-call options. */
struct ct_http_opts {
	double timeout_s;		/* whole transfer; 0: 300 s */
	double connect_timeout_s;	/* 0: 20 s */
	const char *user_agent;		/* NULL: "ctune/VERSION" */
	const char *const *headers;	/* NULL-terminated extra headers, or NULL */
	const volatile int *cancel;	/* transfer aborts (CT_ECANCELED) once *cancel != 0 */
	const char *ca_file;		/* CA bundle for TLS; NULL: $CURL_CA_BUNDLE, else
					 * the system's. TLS failures are CT_ENET with
					 * "TLS:" in the detail. */
};

/* POST n bytes of body with Content-Type ctype (gzip-compressed with
 * Content-Encoding: gzip when `gzip` is set; replies in gzip are inflated
 * by curl within reply->max). reply gets the body, *status the HTTP
 * status. Returns 0 for a 2xx status, else CT_EHTTP / CT_ENET / CT_ETIMEOUT
 * / CT_ETOOBIG (reply over its cap) / CT_ECANCELED. reply holds the body also for errors. */
int ct_http_post(const char *url, const char *ctype, const void *body, size_t n,
		 int gzip, const struct ct_http_opts *o, struct ct_buf *reply, long *status);

/* GET url into reply (capped at reply->max), status as ct_http_post;
 * returns like it. */
int ct_http_get(const char *url, const struct ct_http_opts *o, struct ct_buf *reply,
		long *status);

/* Make sure cache_dir/<sha256> holds the file with that hash and size,
 * downloading it from url when missing. A partial download is kept as
 * <sha256>.part and resumed with a Range request; a server that ignores the
 * range restarts it. The file is verified (size, then SHA-256) before it
 * is renamed into place; a mismatch deletes the partial file and returns
 * CT_EHASH. Returns 0 (file ready), or CT_ENET / CT_EHTTP / CT_ETIMEOUT /
 * CT_ETOOBIG (server sent more than size) / CT_EHASH / CT_ENOSPC / CT_EIO. */
int ct_http_fetch_cached(const char *url, const char *cache_dir,
			 const char sha256[CT_SHA256_HEXLEN + 1], uint64_t size,
			 const struct ct_http_opts *o);

/* POST the file at path to url (streamed, Content-Type
 * application/octet-stream); reply and status as ct_http_post. */
int ct_http_upload(const char *url, const char *path, const struct ct_http_opts *o,
		   struct ct_buf *reply, long *status);

#endif
