/*
 * web_http.c - plugs the web module into ctune-server's HTTP front end
 * (http.h): one route table naming every web path, each row calling one
 * adapter that turns the struct ct_http_req into a struct ct_web_req, runs
 * ct_web_handle() and copies the answer back, adding the security headers
 * every page gets (CSP without scripts, nosniff, no framing).
 */
#include <stdio.h>
#include <string.h>

#include "ct_err.h"
#include "ct_log.h"
#include "rpc/http.h"
#include "data/server.h"
#include "web.h"
#include "web_http.h"
#include "web_mail.h"

/* Query arguments the pages read (the front end looks them up by name). */
static const char *const query_args[] = { "sort", "page", "host", "user", "state", "q",
	"token", NULL };

#define CSP "default-src 'none'; style-src 'self'; img-src 'self'; " \
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

static int copy_back(struct ct_web_req *wreq, struct ct_web_resp *w,
		     struct ct_http_resp *resp)
{
	int rc = 0;

	resp->status = w->status;
	resp->content_type = w->content_type;
	ct_buf_reset(&resp->body);
	if (wreq->method[0] != 'H')
		rc = ct_buf_append(&resp->body, w->body.data, w->body.len);
	for (int i = 0; i < w->ncookies && rc == 0; i++)
		rc = ct_http_resp_header(resp, "Set-Cookie", "%s", w->cookies[i]);
	if (rc == 0 && w->location[0])
		rc = ct_http_resp_header(resp, "Location", "%s", w->location);
	if (rc == 0)
		rc = ct_http_resp_header(resp, "Cache-Control", "%s", w->cache_control);
	if (rc == 0)
		rc = ct_http_resp_header(resp, "X-Content-Type-Options", "nosniff");
	if (rc == 0 && strncmp(w->content_type, "text/html", 9) == 0) {
		rc = ct_http_resp_header(resp, "Content-Security-Policy", "%s", CSP);
		if (rc == 0)
			rc = ct_http_resp_header(resp, "X-Frame-Options", "DENY");
		if (rc == 0)
			rc = ct_http_resp_header(resp, "Referrer-Policy", "same-origin");
	}
	return rc;
}

static int fill_args(struct ct_http_req *req, struct ct_web_req *w)
{
	int rc = 0;

	for (int i = 0; query_args[i] != NULL && rc == 0; i++) {
		const char *v = ct_http_query(req, query_args[i]);

		if (v != NULL)
			rc = ct_web_req_add_arg(w, query_args[i], v);
	}
	if (rc == 0 && strcmp(req->method, "POST") == 0 && req->body_len > 0)
		rc = ct_web_req_parse_form(w, (const char *)req->body,
					   req->body_len);
	return rc;
}

static int web_route(struct ct_http_req *req, struct ct_http_resp *resp)
{
	struct ct_db *db = ct_http_db(req);
	struct ct_web_req w;
	struct ct_web_resp out;
	const char *tls;
	int rc;

	if (db == NULL)
		return ct_error(CT_EDB, "web: no database connection");
	ct_web_req_init(&w, req->srv, db, req->method, req->path);
	ct_web_resp_init(&out);
	w.cookie = ct_http_header(req, "Cookie");
	w.remote_addr = req->remote_ip;
	tls = req->srv->conf ? ct_conf_get(req->srv->conf, "http.tls_cert") : NULL;
	w.https = tls != NULL && *tls != '\0';
	rc = fill_args(req, &w);
	if (rc < 0) {
		out.status = 400;
		out.content_type = "text/plain; charset=utf-8";
		rc = ct_buf_appends(&out.body, "bad request: malformed arguments\n");
	} else {
		rc = ct_web_handle(&w, &out);
	}
	if (rc == CT_EDB)
		ct_http_db_reset(req);
	if (rc == 0)
		rc = copy_back(&w, &out, resp);
	ct_web_resp_free(&out);
	ct_web_req_free(&w);
	return rc;
}

#define GET(p) { .method = "GET", .path = (p), .handler = web_route }
#define POST(p) { .method = "POST", .path = (p), .handler = web_route }

static const struct ct_http_route web_routes[] = {
	GET("/"), GET("/users"), GET("/teams"), GET("/hosts"),
	GET("/user/*"), GET("/team/*"), GET("/host/*"),
	GET("/jobs"), GET("/job/*"), GET("/status"), GET("/tasks"),
	GET("/about"), GET("/news"), GET("/news.atom"), GET("/client/*"),
	GET("/account"), GET("/account/create"), POST("/account/create"),
	GET("/account/prefs"), POST("/account/prefs"),
	GET("/account/settings"), POST("/account/settings"), GET("/account/forgot"), POST("/account/forgot"),
	GET("/account/reset"), POST("/account/reset"),
	GET("/account/login"), POST("/account/login"), POST("/account/logout"),
	GET("/teams/create"), POST("/teams/create"), POST("/teams/join"),
	POST("/teams/leave"),
	GET("/api/v1/*"), GET("/static/*"), GET("/stats/*"),
	GET("/metrics"),
	{ .path = NULL },
};

int ct_web_register(struct ct_server *srv)
{
	struct ct_mail_conf mc;
	long ttl;
	/* a [mail] section that cannot send stops the start, as any bad key */
	int rc = ct_mail_conf_load(srv->conf, &mc);

	if (rc == 0)
		rc = ct_conf_get_int(srv->conf, "mail.reset_ttl", 3600, 300, 86400, &ttl);
	if (rc < 0)
		return rc;
	if (mc.url[0] != '\0')
		ct_log_info("web: recovery mails go through %s from %s", mc.url, mc.from_addr);
	return ct_http_register_routes(srv, web_routes);
}
