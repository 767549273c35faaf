/*
 * hostile_proxy.c - a hostile project server for test/client_hostile.sh:
 * an HTTP proxy between a real `ctune run` and a real `ctune-server` that
 * rewrites the server's real replies, as a compromised project could.
 *
 *   hostile_proxy DIR UPSTREAM_URL
 *
 * It listens on a free port of 127.0.0.1 (written to DIR/port), forwards
 * every request to UPSTREAM_URL with its method, path, body and headers,
 * and before each request reads the rules in DIR/rules (missing or empty:
 * pass everything through), one a line:
 *   set SCOPE TAG VALUE   in a /rpc/scheduler reply, the text of every
 *                         <TAG> directly inside every <SCOPE> element
 *                         becomes VALUE (the rest of the line, as is)
 *   attr SCOPE ATTR VALUE ... the attribute ATTR of every <SCOPE>
 *   pad N                 N bytes more after every /download/ reply than
 *                         the server sent (and announced)
 * Each rewrite is counted in DIR/rewrites (one line per reply changed), so
 * the test knows the client got the hostile reply.
 */
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "http_fixture.h"

#include <curl/curl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MAX_BODY (256u << 20)
#define MAX_RULES 16

struct rule {
	char op[8], scope[64], name[64], value[4096];
	long pad;
};

struct proxy {
	const char *dir, *upstream;
	pthread_mutex_t lock;
};

/* DIR/rules into r[]; the count. */
static int load_rules(const struct proxy *p, struct rule *r)
{
	char path[4200], line[4400];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/rules", p->dir);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	while (n < MAX_RULES && fgets(line, sizeof(line), f) != NULL) {
		struct rule *x = &r[n];
		int used = 0;

		line[strcspn(line, "\n")] = '\0';
		memset(x, 0, sizeof(*x));
		if (sscanf(line, "pad %ld", &x->pad) == 1) {
			snprintf(x->op, sizeof(x->op), "pad");
			n++;
		} else if (sscanf(line, "%7s %63s %63s %n", x->op, x->scope, x->name, &used) == 3 &&
			   used > 0) {
			snprintf(x->value, sizeof(x->value), "%s", line + used);
			n++;
		}
	}
	fclose(f);
	return n;
}

/* The end of the element <scope ...> starting at s (just past its close
 * tag), or NULL. */
static const char *elem_end(const char *s, const char *scope)
{
	char close[80];
	const char *e;

	snprintf(close, sizeof(close), "</%s>", scope);
	e = strstr(s, close);
	return e ? e + strlen(close) : NULL;
}

/* Rewrite one element's text s[0..n) by rule x into out. */
static int rewrite_inside(const char *s, size_t n, const struct rule *x, struct ct_buf *out)
{
	char open[80], close[80], attr[80];
	size_t i = 0;
	int rc = 0;

	snprintf(open, sizeof(open), "<%s>", x->name);
	snprintf(close, sizeof(close), "</%s>", x->name);
	snprintf(attr, sizeof(attr), " %s=\"", x->name);
	if (strcmp(x->op, "attr") == 0) {
		const char *a = memmem(s, n, attr, strlen(attr)), *q = NULL;
		size_t off = a != NULL ? (size_t)(a - s) + strlen(attr) : 0;

		if (a != NULL)
			q = memchr(s + off, '"', n - off);
		if (q == NULL)
			return ct_buf_append(out, s, n);
		rc = ct_buf_append(out, s, off);
		if (rc == 0) rc = ct_buf_appends(out, x->value);
		if (rc == 0) rc = ct_buf_append(out, q, n - (size_t)(q - s));
		return rc;
	}
	while (rc == 0 && i < n) {
		const char *o = memmem(s + i, n - i, open, strlen(open)), *c;

		c = o ? memmem(o, n - (size_t)(o - s), close, strlen(close)) : NULL;
		if (o == NULL || c == NULL)
			return ct_buf_append(out, s + i, n - i);
		rc = ct_buf_append(out, s + i, (size_t)(o - (s + i)) + strlen(open));
		if (rc == 0) rc = ct_buf_appends(out, x->value);
		i = (size_t)(c - s);
	}
	return rc;
}

/* Apply rule x to every <scope> element of the document in in. */
static int rewrite(const struct ct_buf *in, const struct rule *x, struct ct_buf *out)
{
	const char *s = ct_buf_cstr(in), *end = s + in->len;
	char open[80];
	int rc = 0;

	snprintf(open, sizeof(open), "<%s", x->scope);
	while (rc == 0 && s < end) {
		const char *o = strstr(s, open), *e;

		while (o != NULL && o[strlen(open)] != '>' && o[strlen(open)] != ' ')
			o = strstr(o + 1, open);
		e = o ? elem_end(o, x->scope) : NULL;
		if (e == NULL)
			return ct_buf_append(out, s, (size_t)(end - s));
		rc = ct_buf_append(out, s, (size_t)(o - s));
		if (rc == 0) rc = rewrite_inside(o, (size_t)(e - o), x, out);
		s = e;
	}
	return rc;
}

struct fwd {
	struct ct_buf body;
	char ctype[128], crange[128];
};

static size_t on_body(char *p, size_t size, size_t nm, void *arg)
{
	struct fwd *f = arg;

	return ct_buf_append(&f->body, p, size * nm) == 0 ? size * nm : 0;
}

static size_t on_header(char *p, size_t size, size_t nm, void *arg)
{
	struct fwd *f = arg;
	size_t n = size * nm;

	if (n > 14 && strncasecmp(p, "Content-Type:", 13) == 0)
		snprintf(f->ctype, sizeof(f->ctype), "%.*s", (int)strcspn(p + 14, "\r\n"), p + 14);
	if (n > 15 && strncasecmp(p, "Content-Range:", 14) == 0)
		snprintf(f->crange, sizeof(f->crange), "%.*s", (int)strcspn(p + 15, "\r\n"),
			 p + 15);
	return n;
}

static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	static const char *const skip[] = { "Host", "Content-Length", "Connection",
					    "Accept-Encoding", "Transfer-Encoding", "Expect" };
	struct curl_slist **h = cls;
	char line[8192];

	(void)kind;
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strcasecmp(key, skip[i]) == 0)
			return MHD_YES;
	snprintf(line, sizeof(line), "%s: %s", key, value);
	*h = curl_slist_append(*h, line);
	return MHD_YES;
}

/* The request, sent on to the upstream server; *status its status. */
static int forward(const struct proxy *p, struct MHD_Connection *c, const char *url,
		   const char *method, const struct ct_buf *body, struct fwd *f, long *status)
{
	struct curl_slist *h = curl_slist_append(NULL, "Expect:");
	char target[8192];
	CURLcode cc;
	CURL *cu = curl_easy_init();

	snprintf(target, sizeof(target), "%s%s", p->upstream, url);
	MHD_get_connection_values(c, MHD_HEADER_KIND, add_header, &h);
	curl_easy_setopt(cu, CURLOPT_URL, target);
	curl_easy_setopt(cu, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(cu, CURLOPT_ACCEPT_ENCODING, "");	/* decoded: rewritable */
	curl_easy_setopt(cu, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(cu, CURLOPT_WRITEDATA, f);
	curl_easy_setopt(cu, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(cu, CURLOPT_HEADERDATA, f);
	curl_easy_setopt(cu, CURLOPT_TIMEOUT, 120L);
	if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(cu, CURLOPT_POSTFIELDS, body->data ? (void *)body->data : "");
		curl_easy_setopt(cu, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
	}
	cc = curl_easy_perform(cu);
	curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, status);
	curl_easy_cleanup(cu);
	curl_slist_free_all(h);
	if (cc != CURLE_OK)
		fprintf(stderr, "hostile_proxy: %s %s: %s\n", method, target,
			curl_easy_strerror(cc));
	return cc == CURLE_OK ? 0 : CT_ENET;
}

/* Apply the rules to the reply in f; 1 when something changed. */
static int apply_rules(struct proxy *p, const char *url, struct fwd *f)
{
	struct rule r[MAX_RULES];
	int n = load_rules(p, r), changed = 0;

	for (int i = 0; i < n; i++) {
		struct ct_buf out = CT_BUF_INIT(MAX_BODY);

		if (strcmp(r[i].op, "pad") == 0 && strncmp(url, "/download/", 10) == 0) {
			for (long k = 0; k < r[i].pad; k++)
				ct_buf_append(&f->body, "x", 1);
			changed = 1;
		} else if (strcmp(r[i].op, "pad") != 0 && strcmp(url, "/rpc/scheduler") == 0 &&
			   rewrite(&f->body, &r[i], &out) == 0) {
			changed |= out.len != f->body.len ||
				   memcmp(out.data, f->body.data, out.len) != 0;
			ct_buf_free(&f->body);
			f->body = out;
			continue;
		}
		ct_buf_free(&out);
	}
	return changed;
}

static void count_rewrite(struct proxy *p, const char *url)
{
	char path[4200];
	FILE *f;

	pthread_mutex_lock(&p->lock);
	snprintf(path, sizeof(path), "%s/rewrites", p->dir);
	f = fopen(path, "a");
	if (f != NULL) {
		fprintf(f, "%s\n", url);
		fclose(f);
	}
	pthread_mutex_unlock(&p->lock);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *data,
			       size_t *size, void **con_cls)
{
	struct proxy *p = cls;
	struct ct_fx_conn *cn;
	struct fwd f = { .body = CT_BUF_INIT(MAX_BODY) };
	struct MHD_Response *resp;
	enum MHD_Result ret;
	long status = 502;

	(void)version;
	if (ct_fx_collect(con_cls, data, size, MAX_BODY, &cn))
		return MHD_YES;
	if (forward(p, c, url, method, &cn->body, &f, &status) == 0 && apply_rules(p, url, &f))
		count_rewrite(p, url);
	resp = MHD_create_response_from_buffer(f.body.len, f.body.data ? (void *)f.body.data : "",
					       MHD_RESPMEM_MUST_COPY);
	if (f.ctype[0])
		MHD_add_response_header(resp, "Content-Type", f.ctype);
	if (f.crange[0])
		MHD_add_response_header(resp, "Content-Range", f.crange);
	ret = MHD_queue_response(c, (unsigned)status, resp);
	MHD_destroy_response(resp);
	ct_buf_free(&f.body);
	return ret;
}

int main(int argc, char **argv)
{
	struct proxy p = { 0 };
	struct MHD_Daemon *d;

	if (argc != 3) {
		fprintf(stderr, "usage: hostile_proxy DIR UPSTREAM_URL\n");
		return 2;
	}
	p.dir = argv[1];
	p.upstream = argv[2];
	pthread_mutex_init(&p.lock, NULL);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	d = ct_fx_start(p.dir, 0, handler, &p);
	if (d == NULL) {
		fprintf(stderr, "hostile_proxy: cannot listen\n");
		return 1;
	}
	ct_fx_wait_signal();
	MHD_stop_daemon(d);
	curl_global_cleanup();
	return 0;
}
