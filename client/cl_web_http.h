/*
 * cl_web_http.h - the bounded HTTP/1.1 request parser of the local control
 * page (cl_web.h). Pure functions over bytes, so the tests feed them
 * hostile input without a socket.
 *
 * Only what a browser sends to one page is accepted: GET, HEAD and POST,
 * an origin-form target, HTTP/1.0 or 1.1, a body only with Content-Length
 * (no chunked encoding). Every size is capped: the head (request line and
 * headers) at CT_WEB_MAX_HEAD bytes, the target at CT_WEB_MAX_TARGET, the
 * header count at CT_WEB_MAX_HEADERS, a body at CT_WEB_MAX_BODY. A request
 * over a cap or malformed gets the status to answer it with (400, 405,
 * 411, 413, 414, 431, 501, 505) and the connection is closed.
 */
#ifndef CT_CL_WEB_HTTP_H
#define CT_CL_WEB_HTTP_H

#include <stddef.h>

#define CT_WEB_MAX_HEAD 8192
#define CT_WEB_MAX_TARGET 1024
#define CT_WEB_MAX_HEADERS 48
#define CT_WEB_MAX_BODY 4096

/* A parsed request head. The strings point into head, a NUL-terminated
 * copy; headers the page does not use are counted and skipped. */
struct ct_web_req {
	char head[CT_WEB_MAX_HEAD + 1];
	const char *method;		/* "GET", "HEAD", "POST" */
	const char *path;		/* "/api/state" (no query) */
	const char *query;		/* after '?', "" if none */
	const char *host, *origin, *cookie, *content_type, *csrf, *fetch_site;
	size_t content_length;		/* 0 without a body */
	size_t head_len;		/* bytes of the head, blank line included */
	int status;			/* on failure: the HTTP status to answer */
};

/* Parse the request head at buf[0..n). Returns 0 with req filled (the body,
 * content_length bytes, starts at buf + head_len), CT_EAGAIN when the head
 * is not complete yet and may still fit, or CT_EPROTO / CT_ETOOBIG with
 * req->status set (and the reason in ct_errmsg). */
int ct_web_parse(const char *buf, size_t n, struct ct_web_req *req);

/* The value of `name` in a query string or a form body (s[0..n),
 * application/x-www-form-urlencoded), %-decoded ('+' is a space), into
 * out (cap bytes with the NUL). Returns 0, CT_ENOTFOUND, CT_ETOOBIG (value
 * longer than cap - 1) or CT_EFORMAT (a bad %-escape, a decoded NUL or
 * control character). */
int ct_web_param(const char *s, size_t n, const char *name, char *out, size_t cap);

/* The next "key=value" pair of a form body at *p (before end), both
 * decoded as ct_web_param does, *p moved past it. Returns 1 with a pair,
 * 0 at the end, or CT_ETOOBIG / CT_EFORMAT. */
int ct_web_form_next(const char **p, const char *end, char *key, size_t kcap, char *val,
		     size_t vcap);

/* The value of cookie `name` in a Cookie header (NULL: none) into out (cap
 * bytes with the NUL). 0, CT_ENOTFOUND or CT_ETOOBIG. */
int ct_web_cookie(const char *header, const char *name, char *out, size_t cap);

/* The reason phrase of an HTTP status ("Not Found"); "Error" if unknown. */
const char *ct_web_reason(int status);

#endif
