/*
 * fuzz_webhttp.c - the request parser of the client's control page
 * (client/cl_web_http.c): the input is what a browser, or anything else on
 * the machine, sends to 127.0.0.1:PORT. The parser must take it, wait for
 * more, or refuse it with a status; what it takes stays inside its caps,
 * and the query, the form body and the Cookie header decode or are
 * refused without reading past their ends.
 */
#include "config.h"
#include "fuzz.h"
#include "cl_web_http.h"
#include "ct_err.h"

#include <stdlib.h>
#include <string.h>

static struct ct_web_req rq;

static void decode_all(const char *s, size_t n)
{
	const char *p = s;
	char k[64], v[80];
	int rc, pairs = 0;

	while ((rc = ct_web_form_next(&p, s + n, k, sizeof(k), v, sizeof(v))) == 1) {
		CT_FUZZ_CHECK(strlen(k) < sizeof(k) && strlen(v) < sizeof(v));
		CT_FUZZ_CHECK(p <= s + n && ++pairs <= (int)n + 1);
	}
	CT_FUZZ_CHECK(rc == 0 || rc == CT_ETOOBIG || rc == CT_EFORMAT);
	rc = ct_web_param(s, n, "token", v, sizeof(v));
	CT_FUZZ_CHECK(rc == 0 || rc == CT_ENOTFOUND || rc == CT_ETOOBIG || rc == CT_EFORMAT);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), v[80];
	int rc;

	CT_FUZZ_CHECK(buf != NULL);
	memcpy(buf, data, size);
	buf[size] = '\0';
	rc = ct_web_parse(buf, size, &rq);
	CT_FUZZ_CHECK(rc == 0 || rc == CT_EAGAIN || rc == CT_EPROTO || rc == CT_ETOOBIG);
	if (rc == CT_EPROTO || rc == CT_ETOOBIG)
		CT_FUZZ_CHECK(rq.status >= 400 && rq.status <= 505 &&
			      strcmp(ct_web_reason(rq.status), "Error") != 0);
	if (rc == CT_EAGAIN)
		CT_FUZZ_CHECK(size < CT_WEB_MAX_HEAD);
	if (rc == 0) {
		CT_FUZZ_CHECK(rq.head_len <= size && rq.head_len <= CT_WEB_MAX_HEAD);
		CT_FUZZ_CHECK(rq.content_length <= CT_WEB_MAX_BODY);
		CT_FUZZ_CHECK(strcmp(rq.method, "GET") == 0 || strcmp(rq.method, "HEAD") == 0 ||
			      strcmp(rq.method, "POST") == 0);
		CT_FUZZ_CHECK(rq.path[0] == '/' && strlen(rq.path) <= CT_WEB_MAX_TARGET);
		CT_FUZZ_CHECK(rq.host != NULL);
		decode_all(rq.query, strlen(rq.query));
		decode_all(buf + rq.head_len, size - rq.head_len);
		rc = ct_web_cookie(rq.cookie, "ctune_1", v, sizeof(v));
		CT_FUZZ_CHECK(rc == 0 || rc == CT_ENOTFOUND || rc == CT_ETOOBIG);
	}
	free(buf);
	return 0;
}
