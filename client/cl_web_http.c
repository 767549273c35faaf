/*
 * cl_web_http.c - see cl_web_http.h. The head is checked line by line in a
 * copy, so nothing a browser sends is trusted past its caps.
 */
#include "cl_web_http.h"
#include "ct_err.h"
#include "ct_hash.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The headers the page reads; a second one of these is refused. */
static const struct { const char *name; size_t off; } kept[] = {
	{ "host", offsetof(struct ct_web_req, host) },
	{ "origin", offsetof(struct ct_web_req, origin) },
	{ "cookie", offsetof(struct ct_web_req, cookie) },
	{ "content-type", offsetof(struct ct_web_req, content_type) },
	{ "x-ctune-csrf", offsetof(struct ct_web_req, csrf) },
	{ "sec-fetch-site", offsetof(struct ct_web_req, fetch_site) },
};

static int fail(struct ct_web_req *req, int status, int code, const char *why)
{
	req->status = status;
	return ct_error(code, "HTTP %d: %s", status, why);
}

static int is_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* "METHOD /target HTTP/1.x" */
static int parse_request_line(char *line, struct ct_web_req *req)
{
	char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL, *q;

	if (sp1 == NULL || sp2 == NULL || strchr(sp2 + 1, ' ') != NULL)
		return fail(req, 400, CT_EPROTO, "not a request line");
	*sp1 = *sp2 = '\0';
	req->method = line;
	req->path = sp1 + 1;
	if (strcmp(line, "GET") != 0 && strcmp(line, "HEAD") != 0 && strcmp(line, "POST") != 0)
		return fail(req, 405, CT_EPROTO, "method not allowed");
	if (strlen(req->path) > CT_WEB_MAX_TARGET)
		return fail(req, 414, CT_ETOOBIG, "target too long");
	if (req->path[0] != '/')
		return fail(req, 400, CT_EPROTO, "target not a path");
	for (const char *p = req->path; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return fail(req, 400, CT_EPROTO, "bad character in the target");
	if (strcmp(sp2 + 1, "HTTP/1.1") != 0 && strcmp(sp2 + 1, "HTTP/1.0") != 0)
		return strncmp(sp2 + 1, "HTTP/", 5) == 0
			? fail(req, 505, CT_EPROTO, "HTTP version not supported")
			: fail(req, 400, CT_EPROTO, "not HTTP");
	q = strchr(sp1 + 1, '?');
	req->query = "";
	if (q != NULL) {
		*q = '\0';
		req->query = q + 1;
	}
	return 0;
}

static int content_length(const char *v, struct ct_web_req *req)
{
	size_t n = strlen(v);

	if (n == 0 || n > 10 || strspn(v, "0123456789") != n)
		return fail(req, 400, CT_EPROTO, "bad Content-Length");
	if (strtoull(v, NULL, 10) > CT_WEB_MAX_BODY)
		return fail(req, 413, CT_ETOOBIG, "body too large");
	req->content_length = (size_t)strtoull(v, NULL, 10);
	return 0;
}

/* One "Name: value" line (NUL-terminated, without its CRLF). */
static int parse_header(char *line, struct ct_web_req *req, int *seen_length)
{
	char *colon = strchr(line, ':'), *v, *e;

	if (line[0] == ' ' || line[0] == '\t')
		return fail(req, 400, CT_EPROTO, "folded header line");
	if (colon == NULL || colon == line)
		return fail(req, 400, CT_EPROTO, "not a header line");
	for (char *p = line; p < colon; p++)
		if (!is_tchar((unsigned char)*p))
			return fail(req, 400, CT_EPROTO, "bad header name");
	*colon = '\0';
	for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
		;
	for (e = v; *e; e++)
		if (((unsigned char)*e < 0x20 && *e != '\t') || *e == 0x7f)
			return fail(req, 400, CT_EPROTO, "control character in a header");
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	if (strcasecmp(line, "transfer-encoding") == 0)
		return fail(req, 501, CT_EPROTO, "transfer encodings not supported");
	if (strcasecmp(line, "content-length") == 0) {
		if ((*seen_length)++)
			return fail(req, 400, CT_EPROTO, "two Content-Length headers");
		return content_length(v, req);
	}
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		const char **slot = (const char **)((char *)req + kept[i].off);

		if (strcasecmp(line, kept[i].name) != 0)
			continue;
		if (*slot != NULL)
			return fail(req, 400, CT_EPROTO, "a header twice");
		*slot = v;
	}
	return 0;
}

/* Length of the head (through its blank line) in buf[0..n), 0 if none. */
static size_t head_end(const char *buf, size_t n)
{
	for (size_t i = 3; i < n; i++)
		if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' && buf[i - 3] == '\r')
			return i + 1;
	return 0;
}

static int parse_lines(struct ct_web_req *req)
{
	char *line = req->head, *crlf = strstr(line, "\r\n");
	int nheaders = 0, seen_length = 0, rc;

	*crlf = '\0';
	rc = parse_request_line(line, req);
	for (line = crlf + 2; rc == 0 && *line != '\r'; line = crlf + 2) {
		crlf = strstr(line, "\r\n");
		*crlf = '\0';
		if (memchr(line, '\n', (size_t)(crlf - line)) != NULL || strchr(line, '\r') != NULL)
			return fail(req, 400, CT_EPROTO, "a bare CR or LF");
		if (++nheaders > CT_WEB_MAX_HEADERS)
			return fail(req, 431, CT_ETOOBIG, "too many headers");
		rc = parse_header(line, req, &seen_length);
	}
	if (rc < 0)
		return rc;
	if (req->host == NULL)
		return fail(req, 400, CT_EPROTO, "no Host header");
	if (strcmp(req->method, "POST") == 0 && !seen_length)
		return fail(req, 411, CT_EPROTO, "a POST without Content-Length");
	return 0;
}

int ct_web_parse(const char *buf, size_t n, struct ct_web_req *req)
{
	size_t len = head_end(buf, n < CT_WEB_MAX_HEAD ? n : CT_WEB_MAX_HEAD);
	const char *nl = memchr(buf, '\n', n);

	memset(req, 0, sizeof(*req));
	if (memchr(buf, '\0', len ? len : n) != NULL)
		return fail(req, 400, CT_EPROTO, "a NUL byte in the head");
	if (len == 0 && (nl ? (size_t)(nl - buf) : n) > CT_WEB_MAX_TARGET + 32)
		return fail(req, 414, CT_ETOOBIG, "request line too long");
	if (len == 0)
		return n >= CT_WEB_MAX_HEAD ? fail(req, 431, CT_ETOOBIG, "head too large")
					    : CT_EAGAIN;
	memcpy(req->head, buf, len);
	req->head[len] = '\0';
	req->head_len = len;
	return parse_lines(req);
}

/* %-decode s[0..n) into out (cap with the NUL). */
static int decode(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '%') {
			char hex[3] = { 0 };

			if (i + 2 < n)
				memcpy(hex, s + i + 1, 2);
			if (ct_hex_decode(hex, &c, 1) < 0)
				return ct_error(CT_EFORMAT, "a bad %%-escape in a form");
			i += 2;
		} else if (c == '+') {
			c = ' ';
		}
		if (c < 0x20 || c == 0x7f)
			return ct_error(CT_EFORMAT, "a control character in a form value");
		if (o + 1 >= cap)
			return ct_error(CT_ETOOBIG, "a form value over %zu bytes", cap - 1);
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

int ct_web_form_next(const char **p, const char *end, char *key, size_t kcap, char *val,
		     size_t vcap)
{
	const char *s = *p, *amp, *eq;
	int rc;

	while (s < end && *s == '&')
		s++;
	if (s >= end) {
		*p = end;
		return 0;
	}
	amp = memchr(s, '&', (size_t)(end - s));
	if (amp == NULL)
		amp = end;
	eq = memchr(s, '=', (size_t)(amp - s));
	*p = amp;
	rc = decode(s, (size_t)((eq ? eq : amp) - s), key, kcap);
	if (rc == 0)
		rc = eq ? decode(eq + 1, (size_t)(amp - eq - 1), val, vcap) : decode("", 0, val, vcap);
	return rc < 0 ? rc : 1;
}

int ct_web_param(const char *s, size_t n, const char *name, char *out, size_t cap)
{
	const char *p = s;
	char key[64];
	int rc;

	while ((rc = ct_web_form_next(&p, s + n, key, sizeof(key), out, cap)) == 1)
		if (strcmp(key, name) == 0)
			return 0;
	out[0] = '\0';
	return rc < 0 ? rc : CT_ENOTFOUND;
}

int ct_web_cookie(const char *header, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);

	for (const char *p = header; p != NULL && *p; ) {
		const char *semi = strchr(p, ';'), *e = semi ? semi : p + strlen(p);

		p += strspn(p, " \t");
		if ((size_t)(e - p) > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
			size_t vn = (size_t)(e - p) - nl - 1;

			while (vn > 0 && (p[nl + vn] == ' ' || p[nl + vn] == '\t'))
				vn--;
			if (vn + 1 > cap)
				return CT_ETOOBIG;
			memcpy(out, p + nl + 1, vn);
			out[vn] = '\0';
			return 0;
		}
		p = semi ? semi + 1 : NULL;
	}
	return CT_ENOTFOUND;
}

const char *ct_web_reason(int status)
{
	static const struct { int status; const char *reason; } r[] = {
		{ 200, "OK" }, { 204, "No Content" }, { 303, "See Other" },
		{ 400, "Bad Request" }, { 403, "Forbidden" }, { 404, "Not Found" },
		{ 405, "Method Not Allowed" }, { 408, "Request Timeout" },
		{ 411, "Length Required" }, { 413, "Content Too Large" },
		{ 414, "URI Too Long" }, { 415, "Unsupported Media Type" },
		{ 431, "Request Header Fields Too Large" }, { 500, "Internal Server Error" },
		{ 501, "Not Implemented" }, { 503, "Service Unavailable" },
		{ 505, "HTTP Version Not Supported" },
	};

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (r[i].status == status)
			return r[i].reason;
	return "Error";
}
