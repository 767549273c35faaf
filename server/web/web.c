/*
 * web.c - the core of the web module (see web.h): requests and responses,
 * form and cookie parsing, the route table, sign-in and CSRF plumbing, the
 * page layout, error pages, embedded static files and the short content
 * cache. Pages themselves live in web_pages.c, web_account.c, web_api.c
 * and web_stats.c.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ct_err.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "data/db.h"
#include "data/server.h"
#include "tmpl.h"
#include "web_int.h"
#include "page_cache.h"


/* ---- requests and responses ---------------------------------------------- */

void ct_web_req_init(struct ct_web_req *req, struct ct_server *srv,
		     struct ct_db *db, const char *method, const char *path)
{
	memset(req, 0, sizeof(*req));
	req->srv = srv;
	req->db = db;
	req->method = method;
	req->path = path;
}

void ct_web_req_free(struct ct_web_req *req)
{
	for (size_t i = 0; i < req->nargs; i++) {
		free(req->args[i].name);
		free(req->args[i].value);
	}
	req->nargs = 0;
}

void ct_web_resp_init(struct ct_web_resp *resp)
{
	memset(resp, 0, sizeof(*resp));
	resp->status = 200;
	resp->content_type = "text/html; charset=utf-8";
	ct_buf_init(&resp->body, CT_WEB_MAX_BODY);
	snprintf(resp->cache_control, sizeof(resp->cache_control), "no-store");
}

void ct_web_resp_free(struct ct_web_resp *resp)
{
	ct_buf_free(&resp->body);
}

int ct_web_req_add_arg(struct ct_web_req *req, const char *name,
		       const char *value)
{
	struct ct_web_arg *a;

	if (req->nargs >= CT_WEB_MAX_ARGS)
		return ct_error(CT_ETOOBIG, "web: more than %d arguments",
				CT_WEB_MAX_ARGS);
	if (strlen(value) > CT_WEB_MAX_ARG_LEN || strlen(name) > 64)
		return ct_error(CT_ETOOBIG, "web: argument too long");
	a = &req->args[req->nargs];
	a->name = strdup(name);
	a->value = strdup(value);
	if (a->name == NULL || a->value == NULL) {
		free(a->name);
		free(a->value);
		return ct_error(CT_ENOMEM, "web: argument");
	}
	req->nargs++;
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

/* Decode n bytes of one urlencoded component into out (NUL-terminated);
 * out must hold n + 1 bytes. NUL bytes and bad escapes are CT_EFORMAT. */
static int url_decode(const char *s, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			int hi, lo;

			if (i + 2 >= n)
				return ct_error(CT_EFORMAT, "web: bad %%-escape");
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0)
				return ct_error(CT_EFORMAT, "web: bad %%-escape");
			c = hi * 16 + lo;
			i += 2;
		}
		if (c == 0)
			return ct_error(CT_EFORMAT, "web: NUL in a form value");
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

int ct_web_req_parse_form(struct ct_web_req *req, const char *s, size_t n)
{
	size_t i = 0;
	int rc = 0;

	if (n > CT_WEB_MAX_FORM)
		return ct_error(CT_ETOOBIG, "web: form of %zu bytes", n);
	while (i < n && rc == 0) {
		const char *amp = memchr(s + i, '&', n - i);
		size_t end = amp ? (size_t)(amp - s) : n;
		const char *eq = memchr(s + i, '=', end - i);
		size_t nend = eq ? (size_t)(eq - s) : end;
		char *name = malloc(nend - i + 1);
		char *value = malloc(end - nend + 1);

		if (name == NULL || value == NULL)
			rc = ct_error(CT_ENOMEM, "web: form");
		if (rc == 0)
			rc = url_decode(s + i, nend - i, name);
		if (rc == 0)
			rc = eq ? url_decode(eq + 1, end - nend - 1, value)
				: url_decode("", 0, value);
		if (rc == 0 && name[0] != '\0')
			rc = ct_web_req_add_arg(req, name, value);
		free(name);
		free(value);
		i = end + 1;
	}
	return rc;
}

const char *ct_web_arg(const struct ct_web_req *req, const char *name)
{
	for (size_t i = 0; i < req->nargs; i++)
		if (strcmp(req->args[i].name, name) == 0)
			return req->args[i].value;
	return NULL;
}

int64_t ct_web_path_id(const char *path, const char *prefix)
{
	size_t pl = strlen(prefix);
	int64_t v = 0;
	const char *p;

	if (strncmp(path, prefix, pl) != 0)
		return 0;
	p = path + pl;
	if (*p == '\0' || strlen(p) > 15)
		return 0;
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		v = v * 10 + (*p - '0');
	}
	return v;
}

enum ct_web_sort ct_web_arg_sort(const struct ct_web_req *req)
{
	const char *s = ct_web_arg(req, "sort");

	return s != NULL && strcmp(s, "total") == 0 ? CT_WEB_SORT_TOTAL
						   : CT_WEB_SORT_RAC;
}

int64_t ct_web_arg_page(const struct ct_web_req *req)
{
	const char *s = ct_web_arg(req, "page");
	char *end;
	long long v;

	if (s == NULL)
		return 1;
	v = strtoll(s, &end, 10);
	if (*end != '\0' || v < 1 || v > CT_WEB_MAX_PAGE)
		return 1;
	return v;
}

/* ---- secrets, cookies, CSRF ---------------------------------------------- */

void ct_web_key(const struct ct_server *srv, const char *purpose,
		unsigned char out[32])
{
	ct_hmac_sha256(srv->secret, sizeof(srv->secret), purpose,
		       strlen(purpose), out);
}

/* The 64-hex value of cookie `name` in the Cookie header, or 0. */
static int cookie_hex(const char *header, const char *name, char out[65])
{
	size_t nl = strlen(name);
	const char *p = header;

	out[0] = '\0';
	while (p != NULL && *p != '\0') {
		while (*p == ' ' || *p == ';')
			p++;
		if (strncmp(p, name, nl) == 0 && p[nl] == '=') {
			const char *v = p + nl + 1;
			size_t len = strcspn(v, "; ");
			unsigned char tmp[32];

			if (len != 64)
				return 0;
			memcpy(out, v, 64);
			out[64] = '\0';
			if (ct_hex_decode(out, tmp, 32) < 0) {
				out[0] = '\0';
				return 0;
			}
			return 1;
		}
		p = strchr(p, ';');
	}
	return 0;
}

void ct_web_csrf_token(const struct ct_web_req *req, char out[65])
{
	unsigned char key[32], mac[32];

	ct_web_key(req->srv, "ctune web csrf v1", key);
	ct_hmac_sha256(key, sizeof(key), req->csrf_seed,
		       strlen(req->csrf_seed), mac);
	ct_hex_encode(mac, sizeof(mac), out);
}

int ct_web_csrf_ok(const struct ct_web_req *req)
{
	const char *got = ct_web_arg(req, "csrf");
	char want[65];

	if (got == NULL || strlen(got) != 64 || req->csrf_seed[0] == '\0' ||
	    req->new_csrf_seed)
		return 0;
	ct_web_csrf_token(req, want);
	return ct_memeq_ct(got, want, 64);
}

int ct_web_csrf_field(const struct ct_web_req *req, struct ct_buf *b)
{
	char tok[65];

	ct_web_csrf_token(req, tok);
	return ct_tmpl_printf(b, "<input type=\"hidden\" name=\"csrf\" "
			      "value=\"%s\">", tok);
}

/* Sign-in and CSRF seed from the cookies; may add a ct_csrf cookie. */
static int web_identify(struct ct_web_req *req, struct ct_web_resp *resp)
{
	char anon[65];
	unsigned char rnd[32];
	int rc;

	if (req->cookie != NULL && cookie_hex(req->cookie, "ct_session",
					      req->session)) {
		rc = ct_web_auth_session(req);
		if (rc < 0)
			return rc;
	}
	if (req->userid > 0) {
		snprintf(req->csrf_seed, sizeof(req->csrf_seed), "%s", req->session);
		return 0;
	}
	req->session[0] = '\0';
	if (req->cookie != NULL && cookie_hex(req->cookie, "ct_csrf", anon)) {
		snprintf(req->csrf_seed, sizeof(req->csrf_seed), "%s", anon);
		return 0;
	}
	rc = ct_random_bytes(rnd, sizeof(rnd));
	if (rc < 0)
		return rc;
	ct_hex_encode(rnd, sizeof(rnd), req->csrf_seed);
	req->new_csrf_seed = 1;
	snprintf(resp->cookies[resp->ncookies++], sizeof(resp->cookies[0]),
		 "ct_csrf=%s; Path=/; HttpOnly; SameSite=Strict%s",
		 req->csrf_seed, req->https ? "; Secure" : "");
	return 0;
}

/* ---- layout and errors --------------------------------------------------- */

void ct_web_project_url(const struct ct_server *srv, char *out, size_t cap)
{
	const char *listen = srv->conf ? ct_conf_get(srv->conf, "listen") : NULL;

	if (srv->base_url != NULL && srv->base_url[0] != '\0')
		snprintf(out, cap, "%s", srv->base_url);
	else
		snprintf(out, cap, "http://%s", listen && *listen ? listen : "127.0.0.1:8080");
}

const char *ct_web_project_name(const struct ct_server *srv)
{
	const char *n = srv->conf ? ct_conf_get(srv->conf, "project_name") : NULL;

	return n != NULL && *n != '\0' ? n : "crowdtune";
}

static const char *asset(const char *name, size_t *len)
{
	for (const struct ct_web_asset *a = ct_web_assets; a->name; a++)
		if (strcmp(a->name, name) == 0) {
			if (len != NULL)
				*len = a->len;
			return a->data;
		}
	return NULL;
}

static int account_box(const struct ct_web_req *req, struct ct_buf *b)
{
	if (req->userid <= 0)
		return ct_buf_appends(b, "<a href=\"/account/login\">Sign in</a> · "
				      "<a href=\"/account/create\">Join</a>");
	return ct_tmpl_printf(b, "<a href=\"/account\">%s</a>", req->user_name);
}

int ct_web_render(struct ct_web_req *req, struct ct_web_resp *resp,
		  const char *title, const struct ct_buf *content,
		  const char *api)
{
	struct ct_buf acct = CT_BUF_INIT(4096);
	const char *layout = asset("layout.html", NULL);
	int rc;

	if (layout == NULL)
		return ct_error(CT_EINTERNAL, "web: layout.html not embedded");
	rc = account_box(req, &acct);
	if (rc == 0) {
		const struct ct_tmpl_var vars[] = {
			{ "title", title },
			{ "project", ct_web_project_name(req->srv) },
			{ "version", PACKAGE_VERSION },
			{ "api", api ? api : "/api/v1/status" },
			{ "account", ct_buf_cstr(&acct) },
			{ "content", ct_buf_cstr(content) },
		};
		ct_buf_reset(&resp->body);
		rc = ct_tmpl_render(&resp->body, layout, vars,
				    sizeof(vars) / sizeof(vars[0]));
	}
	resp->content_type = "text/html; charset=utf-8";
	ct_buf_free(&acct);
	return rc;
}

int ct_web_error_page(struct ct_web_req *req, struct ct_web_resp *resp,
		      int status, const char *message)
{
	struct ct_buf c = CT_BUF_INIT(8192);
	const char *title = status == 404 ? "Not found" :
			    status == 403 || status == 405 ? "Not allowed" :
			    status == 400 ? "Bad request" : "Server error";
	int rc;

	rc = ct_tmpl_printf(&c, "<p class=\"notice error\">%s</p>"
			    "<p><a href=\"/\">Home</a></p>", message);
	if (rc == 0)
		rc = ct_web_render(req, resp, title, &c, NULL);
	resp->status = status;
	resp->location[0] = '\0';
	ct_buf_free(&c);
	return rc;
}

void ct_web_redirect(struct ct_web_resp *resp, const char *location)
{
	resp->status = 303;
	snprintf(resp->location, sizeof(resp->location), "%s", location);
	ct_buf_reset(&resp->body);
	resp->content_type = "text/plain; charset=utf-8";
}

/* ---- static files --------------------------------------------------------- */

static int web_static(struct ct_web_req *req, struct ct_web_resp *resp)
{
	const char *name = req->path + strlen("/static/");
	size_t len = 0;
	const char *data = asset(name, &len);
	const char *dot = strrchr(name, '.');

	if (data == NULL || strcmp(name, "layout.html") == 0)
		return ct_error(CT_ENOTFOUND, "no static file %s", name);
	if (dot != NULL && strcmp(dot, ".css") == 0)
		resp->content_type = "text/css; charset=utf-8";
	else if (dot != NULL && strcmp(dot, ".svg") == 0)
		resp->content_type = "image/svg+xml";
	else
		resp->content_type = "application/octet-stream";
	snprintf(resp->cache_control, sizeof(resp->cache_control),
		 "public, max-age=3600");
	return ct_buf_append(&resp->body, data, len);
}

/* ---- routing ------------------------------------------------------------- */

struct web_route {
	const char *method;	/* "GET" also serves HEAD; "ANY": GET and POST */
	const char *path;
	int prefix;		/* path is a prefix ("/user/" + id) */
	int (*match)(const char *path);	/* and, when set, this says yes */
	ct_web_handler fn;
};

static const struct web_route routes[] = {
	{ .method = "GET", .path = "/", .fn = ct_web_page_home },
	{ .method = "GET", .path = "/users", .fn = ct_web_page_users },
	{ .method = "GET", .path = "/teams", .fn = ct_web_page_teams },
	{ .method = "GET", .path = "/hosts", .fn = ct_web_page_hosts },
	{ .method = "GET", .path = "/user/", .prefix = 1, .fn = ct_web_page_user },
	{ .method = "GET", .path = "/team/", .prefix = 1, .fn = ct_web_page_team },
	{ .method = "GET", .path = "/host/", .prefix = 1, .fn = ct_web_page_host },
	{ .method = "GET", .path = "/jobs", .fn = ct_web_page_jobs },
	{ .method = "GET", .path = "/job/", .prefix = 1, .match = ct_web_receipt_match,
	  .fn = ct_web_page_receipt },
	{ .method = "GET", .path = "/job/", .prefix = 1, .fn = ct_web_page_job },
	{ .method = "GET", .path = "/status", .fn = ct_web_page_status },
	{ .method = "GET", .path = "/tasks", .fn = ct_web_page_tasks },
	{ .method = "GET", .path = "/about", .fn = ct_web_page_about },
	{ .method = "GET", .path = "/news", .fn = ct_web_page_news },
	{ .method = "GET", .path = "/news.atom", .fn = ct_web_news_atom },
	{ .method = "GET", .path = "/client/", .prefix = 1, .fn = ct_web_client_file },
	{ .method = "GET", .path = "/account", .fn = ct_web_page_account },
	{ .method = "ANY", .path = "/account/create", .fn = ct_web_page_create },
	{ .method = "ANY", .path = "/account/prefs", .fn = ct_web_page_prefs },
	{ .method = "ANY", .path = "/account/settings", .fn = ct_web_page_settings },
	{ .method = "ANY", .path = "/account/forgot", .fn = ct_web_page_forgot },
	{ .method = "ANY", .path = "/account/reset", .fn = ct_web_page_reset },
	{ .method = "ANY", .path = "/account/login", .fn = ct_web_page_login },
	{ .method = "POST", .path = "/account/logout", .fn = ct_web_page_logout },
	{ .method = "ANY", .path = "/teams/create", .fn = ct_web_page_team_create },
	{ .method = "POST", .path = "/teams/join", .fn = ct_web_page_team_join },
	{ .method = "POST", .path = "/teams/leave", .fn = ct_web_page_team_leave },
	{ .method = "GET", .path = "/api/v1/", .prefix = 1, .fn = ct_web_api },
	{ .method = "GET", .path = "/static/", .prefix = 1, .fn = web_static },
	{ .method = "GET", .path = "/stats/", .prefix = 1, .fn = ct_web_stats_file },
	{ .method = "GET", .path = "/metrics", .fn = ct_web_metrics },
	{ .path = NULL },
};

static const struct web_route *find_route(const char *path)
{
	for (const struct web_route *r = routes; r->path; r++)
		if ((r->prefix ? strncmp(path, r->path, strlen(r->path)) == 0
			       : strcmp(path, r->path) == 0) && (r->match == NULL || r->match(path)))
			return r;
	return NULL;
}

int ct_web_owns_path(const char *path)
{
	return path != NULL && find_route(path) != NULL;
}

static int method_ok(const struct web_route *r, const char *m)
{
	int get = strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0;
	int post = strcmp(m, "POST") == 0;

	if (strcmp(r->method, "ANY") == 0)
		return get || post;
	if (strcmp(r->method, "GET") == 0)
		return get;
	return post;
}

static int status_of(int rc)
{
	switch (rc) {
	case CT_ENOTFOUND: return 404;
	case CT_EINVAL: case CT_EFORMAT: case CT_ETOOBIG: return 400;
	case CT_EDENIED: case CT_EAUTH: case CT_EPERM: return 403;
	default: return 500;
	}
}

int ct_web_handle(struct ct_web_req *req, struct ct_web_resp *resp)
{
	const struct web_route *r = find_route(req->path);
	int rc;

	if (req->srv->conf != NULL) {
		const char *v = ct_conf_get(req->srv->conf, "web.cache_ttl");

		ct_page_cache_set_ttl(req->srv->pages, v != NULL ? atoi(v) : 5);
	}
	rc = web_identify(req, resp);
	if (rc < 0)
		return rc;
	if (r == NULL)
		return ct_web_error_page(req, resp, 404, "There is no such page.");
	if (!method_ok(r, req->method)) {
		rc = ct_web_error_page(req, resp, 405, "Method not allowed.");
		return rc;
	}
	rc = r->fn(req, resp);
	if (rc < 0) {
		int st = status_of(rc);

		if (st == 500)
			ct_log_warn("web: %s %s: %s", req->method, req->path,
				    ct_errmsg(rc));
		ct_buf_reset(&resp->body);
		rc = ct_web_error_page(req, resp, st,
				       st == 500 ? "Something went wrong; it was logged."
						 : ct_errmsg(rc));
	}
	return rc;
}
