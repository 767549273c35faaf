/*
 * cl_web.c - see cl_web.h: the listener thread, one thread per connection
 * (at most CT_WEB_MAX_CONN), the checks every request passes, and the
 * routes. The page's HTML and its JSON are cl_web_page.c and cl_web_json.c;
 * the request parser is cl_web_http.c.
 */
#include "cl_web.h"
#include "cl_attach.h"
#include "cl_state.h"
#include "cl_status.h"
#include "cl_web_http.h"
#include "ct_clock.h"
#include "ct_conf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_os.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_REPLY (1u << 20)
#define CSRF_HEX 64

struct ct_web {
	struct ct_web_conf c;
	int fd, port;
	char token[CT_WEB_TOKEN_HEX + 1];
	char csrf[CSRF_HEX + 1];	/* HMAC(token, "csrf"), the page's POST proof */
	char cookie[32];		/* "ctune_PORT": one per daemon on a machine */
	char url[128];
	char cpid[33];			/* the daemon's, for the attach check */
	char host_ip[32], host_name[32], origin_ip[48], origin_name[48];
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	int nconn;			/* connection threads alive (under lock) */
	volatile int stop;
};

/* What a route answers. */
struct reply {
	int status;
	const char *type;		/* Content-Type */
	char extra[256];		/* more header lines, each ending in CRLF */
	struct ct_buf body;
};

int ct_web_token(const char *path, char *token)
{
	unsigned char *data = NULL, raw[CT_WEB_TOKEN_HEX / 2];
	size_t n = 0;
	int rc = ct_file_read_all(path, 256, &data, &n);

	if (rc == 0 && n >= CT_WEB_TOKEN_HEX &&
	    strspn((char *)data, "0123456789abcdef") == CT_WEB_TOKEN_HEX) {
		memcpy(token, data, CT_WEB_TOKEN_HEX);
		token[CT_WEB_TOKEN_HEX] = '\0';
		free(data);
		return 0;
	}
	free(data);
	rc = ct_random_bytes(raw, sizeof(raw));
	if (rc < 0)
		return rc;
	ct_hex_encode(raw, sizeof(raw), token);
	token[CT_WEB_TOKEN_HEX] = '\n';
	rc = ct_file_write_atomic(path, token, CT_WEB_TOKEN_HEX + 1, 0600);
	token[CT_WEB_TOKEN_HEX] = '\0';
	return rc;
}

/* ---- checks ---- */

static int token_ok(const struct ct_web *w, const char *t)
{
	return t != NULL && strlen(t) == CT_WEB_TOKEN_HEX &&
	       ct_memeq_ct(t, w->token, CT_WEB_TOKEN_HEX);
}

/* The Host a browser sends for the printed address, or for "localhost". */
static int host_ok(const struct ct_web *w, const char *h)
{
	return h != NULL && (strcmp(h, w->host_ip) == 0 || strcasecmp(h, w->host_name) == 0);
}

static int origin_ok(const struct ct_web *w, const char *o)
{
	return o == NULL || strcmp(o, w->origin_ip) == 0 || strcasecmp(o, w->origin_name) == 0;
}

/* The credential of a request: its cookie, or on "/" its ?token=. */
static int authorized(const struct ct_web *w, const struct ct_web_req *rq, int *from_query)
{
	char t[CT_WEB_TOKEN_HEX + 2];

	*from_query = 0;
	if (strcmp(rq->path, "/") == 0 && ct_web_param(rq->query, strlen(rq->query), "token",
						       t, sizeof(t)) == 0) {
		*from_query = 1;
		return token_ok(w, t);
	}
	return rq->cookie != NULL && ct_web_cookie(rq->cookie, w->cookie, t, sizeof(t)) == 0 &&
	       token_ok(w, t);
}

/* A POST comes from the page itself: its CSRF value, a form body, and a
 * browser's word that it is same-origin when the browser gives one. */
static const char *post_refused(const struct ct_web *w, const struct ct_web_req *rq)
{
	if (rq->origin == NULL)
		return "a POST without Origin";
	if (rq->csrf == NULL || strlen(rq->csrf) != CSRF_HEX ||
	    !ct_memeq_ct(rq->csrf, w->csrf, CSRF_HEX))
		return "a POST without the page's CSRF value";
	if (rq->fetch_site != NULL && strcmp(rq->fetch_site, "same-origin") != 0)
		return "a POST from another site";
	if (rq->content_type == NULL ||
	    strncmp(rq->content_type, "application/x-www-form-urlencoded", 33) != 0)
		return "a POST that is not a form";
	return NULL;
}

/* ---- routes ---- */

static int text_reply(struct reply *r, int status, const char *msg)
{
	r->status = status;
	r->type = "text/plain; charset=utf-8";
	ct_buf_reset(&r->body);
	return ct_buf_appendf(&r->body, "%s\n", msg);
}

/* A JSON {"ok":true} or {"error":"..."} body. */
static int json_reply(struct reply *r, int status, const char *err)
{
	int rc;

	r->status = status;
	r->type = "application/json";
	ct_buf_reset(&r->body);
	if (err == NULL)
		return ct_buf_appends(&r->body, "{\"ok\":true}\n");
	rc = ct_buf_appends(&r->body, "{\"error\":");
	if (rc == 0) rc = ct_web_json_str(&r->body, err);
	if (rc == 0) rc = ct_buf_appends(&r->body, "}\n");
	return rc;
}

/* Ask the daemon; "error ..." replies become rc CT_EDENIED with the text. */
static int ask(const struct ct_web *w, const char *cmd, struct ct_buf *out)
{
	w->c.ctl(cmd, out, w->c.ctl_arg);
	if (strncmp(ct_buf_cstr(out), "error ", 6) == 0) {
		char *nl = strchr((char *)out->data, '\n');

		if (nl != NULL)
			*nl = '\0';
		return ct_error(CT_EDENIED, "%s", ct_buf_cstr(out) + 6);
	}
	return 0;
}

static int route_page(struct ct_web *w, const struct ct_web_req *rq, const char *body,
		      struct reply *r)
{
	unsigned char raw[16];
	char nonce[33];
	int rc;

	(void)rq;
	(void)body;
	rc = ct_random_bytes(raw, sizeof(raw));
	if (rc < 0)
		return rc;
	ct_hex_encode(raw, sizeof(raw), nonce);
	r->status = 200;
	r->type = "text/html; charset=utf-8";
	snprintf(r->extra, sizeof(r->extra), "Content-Security-Policy: default-src 'none'; "
		 "script-src 'nonce-%s'; style-src 'nonce-%s'; connect-src 'self'; "
		 "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'\r\n",
		 nonce, nonce);
	return ct_web_page(nonce, w->csrf, &r->body);
}

static int route_state(struct ct_web *w, const struct ct_web_req *rq, const char *body,
		       struct reply *r)
{
	struct ct_buf xml = CT_BUF_INIT(MAX_REPLY), pt = CT_BUF_INIT(1 << 16);
	struct ct_status *s = calloc(1, sizeof(*s));
	struct ct_conf *prefs = NULL;
	int rc = s == NULL ? CT_ENOMEM : 0;

	(void)rq;
	(void)body;
	if (rc == 0) rc = ask(w, "status", &xml);
	if (rc == 0) rc = ct_status_parse(xml.data, xml.len, s);
	if (rc == 0) rc = ask(w, "prefs get", &pt);
	if (rc == 0) rc = ct_conf_parse(ct_buf_cstr(&pt), pt.len, "prefs in force", &prefs);
	if (rc == 0) {
		r->status = 200;
		r->type = "application/json";
		rc = ct_web_state_json(s, prefs, w->c.cli_prefs, &r->body);
	}
	ct_conf_free(prefs);
	ct_buf_free(&xml);
	ct_buf_free(&pt);
	free(s);
	return rc;
}

static int simple_cmd(struct ct_web *w, const char *cmd, struct reply *r)
{
	struct ct_buf out = CT_BUF_INIT(1 << 12);
	int rc = ask(w, cmd, &out);

	ct_buf_free(&out);
	if (rc < 0)
		return json_reply(r, 409, ct_errmsg(rc));
	ct_log_info("control page: %s", cmd);
	return json_reply(r, 200, NULL);
}

static int route_suspend(struct ct_web *w, const struct ct_web_req *rq, const char *body,
			 struct reply *r)
{
	(void)rq;
	(void)body;
	return simple_cmd(w, "suspend", r);
}

static int route_resume(struct ct_web *w, const struct ct_web_req *rq, const char *body,
			struct reply *r)
{
	(void)rq;
	(void)body;
	return simple_cmd(w, "resume", r);
}

/* The preferences the page's form sets (the rest stay prefs.conf's). */
static const char *const page_keys[] = {
	"always", "idle_minutes", "run_hours", "max_cpu_percent", "suspend_cpu_percent",
	"run_on_battery", "gpu_only", "work_buf_min", "work_buf_max", "disk_max_gb",
	"cache_max_mb",
};

static int page_key(const char *k)
{
	for (size_t i = 0; i < sizeof(page_keys) / sizeof(page_keys[0]); i++)
		if (strcmp(k, page_keys[i]) == 0)
			return 1;
	return 0;
}

/* "prefs set k=v k=v" from the form body; CT_EINVAL for a key the page
 * does not set or an empty form. */
static int prefs_command(const char *body, size_t n, struct ct_buf *cmd)
{
	const char *p = body;
	char k[64], v[80];
	int rc, pairs = 0;

	rc = ct_buf_appends(cmd, "prefs set");
	while (rc == 0 && (rc = ct_web_form_next(&p, body + n, k, sizeof(k), v, sizeof(v))) == 1) {
		if (!page_key(k))
			return ct_error(CT_EINVAL, "the page does not set '%s'", k);
		if (strchr(v, ' ') != NULL || strchr(v, '=') != NULL || v[0] == '\0')
			return ct_error(CT_EINVAL, "%s: '%s' is not a value", k, v);
		rc = ct_buf_appendf(cmd, " %s=%s", k, v);
		pairs++;
	}
	if (rc == 0 && pairs == 0)
		rc = ct_error(CT_EINVAL, "no preference given");
	return rc;
}

/* When rc is 0, run the daemon's command in cmd (logged: it holds no
 * secret); answer {"ok":true}, or 400 with the error. Frees cmd. */
static int answer_cmd(struct ct_web *w, int rc, struct ct_buf *cmd, struct reply *r)
{
	struct ct_buf out = CT_BUF_INIT(1 << 12);

	if (rc == 0)
		rc = ask(w, ct_buf_cstr(cmd), &out);
	if (rc == 0)
		ct_log_info("control page: %s", ct_buf_cstr(cmd));
	rc = json_reply(r, rc < 0 ? 400 : 200, rc < 0 ? ct_errmsg(rc) : NULL);
	ct_buf_free(cmd);
	ct_buf_free(&out);
	return rc;
}

static int route_prefs(struct ct_web *w, const struct ct_web_req *rq, const char *body,
		       struct reply *r)
{
	struct ct_buf cmd = CT_BUF_INIT(CT_WEB_MAX_BODY + 64);
	int rc = prefs_command(body, rq->content_length, &cmd);

	return answer_cmd(w, rc, &cmd, r);
}

/* ---- projects ---- */

/* Form field `name` of the body into out (cap bytes); "" when absent. */
static int form_field(const struct ct_web_req *rq, const char *body, const char *name,
		      char *out, size_t cap)
{
	int rc = ct_web_param(body, rq->content_length, name, out, cap);

	if (rc < 0)
		out[0] = '\0';
	if (rc == CT_ENOTFOUND)
		return 0;
	if (rc < 0)
		return ct_error(CT_EINVAL, "%s: over %zu bytes or not text", name, cap - 1);
	return 0;
}

/* A state in memory with the daemon's cpid, for the key's check: the
 * server then finds the host record the daemon will use. */
static int scratch_state(const struct ct_web *w, struct ct_state **st)
{
	char doc[160];
	int n = snprintf(doc, sizeof(doc), "<client_state><version>1</version><cpid>%s</cpid>"
			 "</client_state>", w->cpid);

	return ct_state_from_xml(doc, (size_t)n, "", st);
}

/* The key of the form: its `key`, or the account of its `email` and
 * `password` looked up on the project (as `ctune attach --email
 * --password`), into key (cap bytes). */
static int form_key(const struct ct_web_req *rq, const char *body, const char *url,
		    const char *ca, char *key, size_t cap)
{
	char email[256], password[256], *got = NULL, *uname = NULL;
	int rc = form_field(rq, body, "key", key, cap);

	if (rc == 0) rc = form_field(rq, body, "email", email, sizeof(email));
	if (rc == 0) rc = form_field(rq, body, "password", password, sizeof(password));
	if (rc == 0 && key[0] == '\0' && (email[0] == '\0' || password[0] == '\0'))
		rc = ct_error(CT_EINVAL, "give the account key, or the e-mail address and "
			      "password of the account");
	if (rc == 0 && key[0] == '\0')
		rc = ct_attach_account(url, NULL, email, password, ca, &got, &uname);
	if (rc == 0 && got != NULL && (size_t)snprintf(key, cap, "%s", got) >= cap)
		rc = ct_error(CT_EPROTO, "%s sent an account key over %zu bytes", url, cap - 1);
	free(got);
	free(uname);
	return rc;
}

/* The form's `ca_file`: an absolute path on this computer (the page is
 * the volunteer's own, behind its token and CSRF checks; a relative one
 * would be the daemon's working directory's), checked as `ctune attach
 * --ca-file` checks it (cl_attach.h), into *ca (malloc'd; NULL when the
 * field is empty: the system's CAs). */
static int form_ca(const struct ct_web_req *rq, const char *body, char **ca)
{
	char path[1024];
	int rc = form_field(rq, body, "ca_file", path, sizeof(path));

	*ca = NULL;
	if (rc == 0 && path[0] != '\0' && !ct_os_path_absolute(path))
		rc = ct_error(CT_EUSAGE, "CA file %s: give its absolute path", path);
	if (rc == 0 && path[0] != '\0')
		rc = ct_attach_check_ca(path, ca);
	return rc;
}

/* POST /api/attach: url, key or email and password, and ca_file. The
 * key is checked by one scheduler RPC (cl_attach.h) on this connection's
 * thread, without the daemon's lock, then the daemon attaches as `ctune
 * attach` makes it (the CA file kept with the project) and starts asking
 * for work. */
static int route_attach(struct ct_web *w, const struct ct_web_req *rq, const char *body,
			struct reply *r)
{
	struct ct_buf cmd = CT_BUF_INIT(4096), out = CT_BUF_INIT(4096);
	struct ct_state *st = NULL;
	char url[1024], key[256], *uname = NULL, *ca = NULL;
	int rc = form_field(rq, body, "url", url, sizeof(url));

	if (rc == 0) {
		ct_url_normalise(url);
		rc = ct_attach_check_url(url);
	}
	if (rc == 0) rc = form_ca(rq, body, &ca);
	if (rc == 0) rc = form_key(rq, body, url, ca, key, sizeof(key));
	if (rc == 0) rc = ct_attach_check_key(key);
	if (rc == 0) rc = scratch_state(w, &st);
	if (rc == 0) rc = ct_attach_verify(st, url, key, ca, &uname);
	if (rc == 0) rc = ct_buf_appendf(&cmd, "attach %s %s%s%s", url, key, ca ? " " : "",
					 ca ? ca : "");
	if (rc == 0) rc = ask(w, ct_buf_cstr(&cmd), &out);
	if (rc == 0)
		ct_log_info("control page: attached to %s (user %s%s%s)", url,
			    uname ? uname : "?", ca ? ", CA file " : "", ca ? ca : "");
	rc = json_reply(r, rc < 0 ? 400 : 200, rc < 0 ? ct_errmsg(rc) : NULL);
	ct_state_free(st);
	free(uname);
	free(ca);
	ct_buf_free(&cmd);
	ct_buf_free(&out);
	return rc;
}

/* POST /api/{detach,project_suspend,project_resume}: url=, as the daemon's
 * command `verb URL`. */
static int project_cmd(struct ct_web *w, const struct ct_web_req *rq, const char *body,
		       const char *verb, struct reply *r)
{
	struct ct_buf cmd = CT_BUF_INIT(2048);
	char url[1024];
	int rc = form_field(rq, body, "url", url, sizeof(url));

	if (rc == 0 && url[0] == '\0')
		rc = ct_error(CT_EINVAL, "no project URL given");
	if (rc == 0) rc = ct_attach_check_url(url);
	if (rc == 0) rc = ct_buf_appendf(&cmd, "%s %s", verb, url);
	return answer_cmd(w, rc, &cmd, r);
}

static int route_detach(struct ct_web *w, const struct ct_web_req *rq, const char *body,
			struct reply *r)
{
	return project_cmd(w, rq, body, "detach", r);
}

static int route_project_suspend(struct ct_web *w, const struct ct_web_req *rq,
				 const char *body, struct reply *r)
{
	return project_cmd(w, rq, body, "project suspend", r);
}

static int route_project_resume(struct ct_web *w, const struct ct_web_req *rq,
				const char *body, struct reply *r)
{
	return project_cmd(w, rq, body, "project resume", r);
}

/* Browsers ask for one; there is none, and a 404 would be noise. */
static int route_icon(struct ct_web *w, const struct ct_web_req *rq, const char *body,
		      struct reply *r)
{
	(void)w;
	(void)rq;
	(void)body;
	r->status = 204;
	r->type = "image/x-icon";
	return 0;
}

typedef int (*route_fn)(struct ct_web *w, const struct ct_web_req *rq, const char *body,
			struct reply *r);

static const struct route {
	const char *path;
	int post;			/* 1: POST; 0: GET and HEAD */
	route_fn fn;
} routes[] = {
	{ .path = "/", .fn = route_page },
	{ .path = "/api/state", .fn = route_state },
	{ .path = "/api/suspend", .post = 1, .fn = route_suspend },
	{ .path = "/api/resume", .post = 1, .fn = route_resume },
	{ .path = "/api/prefs", .post = 1, .fn = route_prefs },
	{ .path = "/api/attach", .post = 1, .fn = route_attach },
	{ .path = "/api/detach", .post = 1, .fn = route_detach },
	{ .path = "/api/project_suspend", .post = 1, .fn = route_project_suspend },
	{ .path = "/api/project_resume", .post = 1, .fn = route_project_resume },
	{ .path = "/favicon.ico", .fn = route_icon },
};

/* Check a parsed request and answer it into r. */
static int dispatch(struct ct_web *w, const struct ct_web_req *rq, const char *body,
		    struct reply *r)
{
	int post = strcmp(rq->method, "POST") == 0, from_query;
	const char *why;

	if (!host_ok(w, rq->host))
		return text_reply(r, 403, "This page answers only to 127.0.0.1 and localhost.");
	if (!origin_ok(w, rq->origin))
		return text_reply(r, 403, "Requests from other sites are refused.");
	if (!authorized(w, rq, &from_query))
		return text_reply(r, 403, "Open the address that 'ctune web' prints "
				  "(it carries the token).");
	if (from_query) {
		r->status = 303;
		snprintf(r->extra, sizeof(r->extra), "Location: /\r\nSet-Cookie: %s=%s; Path=/; "
			 "HttpOnly; SameSite=Strict; Max-Age=31536000\r\n", w->cookie, w->token);
		return text_reply(r, 303, "See /");
	}
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (strcmp(rq->path, routes[i].path) != 0)
			continue;
		if (post != routes[i].post) {
			snprintf(r->extra, sizeof(r->extra), "Allow: %s\r\n",
				 routes[i].post ? "POST" : "GET, HEAD");
			return text_reply(r, 405, "Method not allowed.");
		}
		why = post ? post_refused(w, rq) : NULL;
		if (why != NULL)
			return text_reply(r, 403, why);
		return routes[i].fn(w, rq, body, r);
	}
	return text_reply(r, 404, "Not found.");
}

/* ---- connections ---- */

static int write_all(int fd, const void *data, size_t n)
{
	const char *p = data;

	while (n > 0) {
		ssize_t k = ct_os_sock_write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN && ct_os_sock_wait(fd, 1, 2000) > 0)
			continue;
		if (k <= 0)
			return ct_error_errno("control page reply");
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int send_reply(int fd, const struct reply *r, int head_only)
{
	char head[1024];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\nCache-Control: no-store\r\n"
			 "X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n"
			 "X-Frame-Options: DENY\r\nCross-Origin-Resource-Policy: same-origin\r\n"
			 "%s%s\r\n", r->status, ct_web_reason(r->status), r->type, r->body.len,
			 strstr(r->extra, "Content-Security-Policy") ? ""
				 : "Content-Security-Policy: default-src 'none'\r\n", r->extra);
	int rc = n > 0 && (size_t)n < sizeof(head) ? write_all(fd, head, (size_t)n)
						   : ct_error(CT_EINTERNAL, "reply head");

	if (rc == 0 && !head_only && r->body.len > 0)
		rc = write_all(fd, r->body.data, r->body.len);
	return rc;
}

/* Read the head and the body into buf within the deadline; 0, or the
 * status to answer with in rq->status. */
static int read_request(int fd, char *buf, size_t cap, struct ct_web_req *rq)
{
	double end = ct_clock_mono(&ct_clock_system) + CT_WEB_DEADLINE_S;
	size_t n = 0;
	int rc = CT_EAGAIN;

	for (;;) {
		double left = end - ct_clock_mono(&ct_clock_system);
		ssize_t k;

		if (rc == 0 && n >= rq->head_len + rq->content_length)
			return 0;
		if (left <= 0 || ct_os_sock_wait(fd, 0, (int)(left * 1000) + 1) <= 0) {
			rq->status = 408;
			return ct_error(CT_ETIMEOUT, "control page: request not sent in time");
		}
		k = ct_os_sock_read(fd, buf + n, cap - 1 - n);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return ct_error(CT_ENET, "control page: connection closed");
		n += (size_t)k;
		buf[n] = '\0';
		if (rc == CT_EAGAIN) {
			rc = ct_web_parse(buf, n, rq);
			if (rc < 0 && rc != CT_EAGAIN)
				return rc;
		}
		if (rc == CT_EAGAIN && n >= cap - 1)
			return ct_web_parse(buf, n, rq);
	}
}

/* Read and drop what the peer still sends (at most 64 KiB, while it comes
 * within 100 ms): closing a socket with unread bytes resets the connection
 * and the peer may lose the reply to its refused request. */
static void drain(int fd)
{
	char junk[4096];
	size_t total = 0;

	while (total < (64u << 10) && ct_os_sock_wait(fd, 0, 100) > 0) {
		ssize_t k = ct_os_sock_read(fd, junk, sizeof(junk));

		if (k <= 0)
			break;
		total += (size_t)k;
	}
}

static void serve(struct ct_web *w, int fd)
{
	size_t cap = CT_WEB_MAX_HEAD + CT_WEB_MAX_BODY + 1;
	struct ct_web_req *rq = calloc(1, sizeof(*rq));
	struct reply r = { .status = 500, .body = CT_BUF_INIT(MAX_REPLY) };
	char *buf = malloc(cap);
	int rc;

	if (rq == NULL || buf == NULL)
		goto out;
	rc = read_request(fd, buf, cap, rq);
	if (rc == 0) {
		buf[rq->head_len + rq->content_length] = '\0';
		rc = dispatch(w, rq, buf + rq->head_len, &r);
		if (rc < 0) {
			ct_log_warn("control page %s: %s", rq->path, ct_errmsg(rc));
			r.extra[0] = '\0';
			text_reply(&r, 500, "The daemon could not answer; see its log.");
		}
	} else if (rq->status != 0) {
		text_reply(&r, rq->status, ct_web_reason(rq->status));
	} else {
		goto out;		/* the peer went away */
	}
	(void)send_reply(fd, &r, rc == 0 && strcmp(rq->method, "HEAD") == 0);
	if (rc < 0)
		drain(fd);
out:
	ct_buf_free(&r.body);
	free(rq);
	free(buf);
}

struct conn {
	struct ct_web *w;
	int fd;
};

static void *conn_thread(void *arg)
{
	struct conn *c = arg;
	struct ct_web *w = c->w;

	serve(w, c->fd);
	ct_os_sock_close(c->fd);
	free(c);
	pthread_mutex_lock(&w->lock);
	w->nconn--;
	pthread_cond_broadcast(&w->idle);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Serve fd on a thread of its own, or answer 503 when CT_WEB_MAX_CONN are
 * busy (without reading: that reply cannot wait on a slow peer). */
static void hand_off(struct ct_web *w, int fd)
{
	static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
				   "Connection: close\r\nRetry-After: 1\r\n\r\n";
	struct conn *c = NULL;
	pthread_t th;
	int ok = 0;

	pthread_mutex_lock(&w->lock);
	if (w->nconn < CT_WEB_MAX_CONN && (c = malloc(sizeof(*c))) != NULL) {
		c->w = w;
		c->fd = fd;
		ok = pthread_create(&th, NULL, conn_thread, c) == 0;
		if (ok) {
			pthread_detach(th);
			w->nconn++;
		}
	}
	pthread_mutex_unlock(&w->lock);
	if (!ok) {
		free(c);
		(void)ct_os_sock_write(fd, busy, sizeof(busy) - 1);
		drain(fd);
		ct_os_sock_close(fd);
	}
}

static void *listen_thread(void *arg)
{
	struct ct_web *w = arg;

	while (!w->stop) {
		int fd;

		if (ct_os_sock_wait(w->fd, 0, 200) <= 0)
			continue;
		if (ct_os_loopback_accept(w->fd, &fd) == 0)
			hand_off(w, fd);
	}
	return NULL;
}

static void make_names(struct ct_web *w)
{
	unsigned char mac[CT_SHA256_LEN];

	ct_hmac_sha256(w->token, CT_WEB_TOKEN_HEX, "csrf", 4, mac);
	ct_hex_encode(mac, sizeof(mac), w->csrf);
	snprintf(w->cookie, sizeof(w->cookie), "ctune_%d", w->port);
	snprintf(w->host_ip, sizeof(w->host_ip), "127.0.0.1:%d", w->port);
	snprintf(w->host_name, sizeof(w->host_name), "localhost:%d", w->port);
	snprintf(w->origin_ip, sizeof(w->origin_ip), "http://127.0.0.1:%d", w->port);
	snprintf(w->origin_name, sizeof(w->origin_name), "http://localhost:%d", w->port);
	snprintf(w->url, sizeof(w->url), "http://127.0.0.1:%d/?token=%s", w->port, w->token);
}

int ct_web_start(const struct ct_web_conf *c, struct ct_web **out)
{
	struct ct_web *w = calloc(1, sizeof(*w));
	int rc;

	*out = NULL;
	if (w == NULL)
		return CT_ENOMEM;
	w->c = *c;
	w->fd = -1;
	snprintf(w->cpid, sizeof(w->cpid), "%s", c->cpid ? c->cpid : "");
	pthread_mutex_init(&w->lock, NULL);
	ct_os_cond_init(&w->idle);
	rc = ct_web_token(c->token_path, w->token);
	if (rc == 0) rc = ct_os_loopback_listen(c->port, &w->fd, &w->port);
	if (rc == 0) {
		make_names(w);
		if (pthread_create(&w->thread, NULL, listen_thread, w) != 0)
			rc = ct_error(CT_EINTERNAL, "cannot start the control page's thread");
	}
	if (rc < 0) {
		if (w->fd >= 0)
			ct_os_sock_close(w->fd);
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->idle);
		free(w);
		return rc;
	}
	*out = w;
	return 0;
}

const char *ct_web_url(const struct ct_web *w)
{
	return w->url;
}

void ct_web_stop(struct ct_web *w)
{
	struct timespec ts;

	if (w == NULL)
		return;
	w->stop = 1;
	pthread_join(w->thread, NULL);
	ct_os_sock_close(w->fd);
	pthread_mutex_lock(&w->lock);
	while (w->nconn > 0) {
		ct_os_cond_deadline(CT_WEB_DEADLINE_S + 1, &ts);
		if (pthread_cond_timedwait(&w->idle, &w->lock, &ts) != 0 && w->nconn > 0) {
			/* a thread stuck past its deadline: leak w rather than free it
			 * under that thread */
			pthread_mutex_unlock(&w->lock);
			ct_log_warn("control page: %d connection(s) did not end", w->nconn);
			return;
		}
	}
	pthread_mutex_unlock(&w->lock);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->idle);
	free(w);
}
