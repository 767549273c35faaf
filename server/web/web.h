/*
 * web.h - crowdtune's web pages, JSON API, stats export and metrics, as
 * served by ctune-server's http role.
 *
 * The web module does not speak HTTP itself: the HTTP front end (http.c,
 * libmicrohttpd) turns a request into a struct ct_web_req, calls
 * ct_web_handle(), and sends the struct ct_web_resp back. That keeps every
 * page testable without a socket and the front end free of page logic.
 *
 * Paths served (GET unless noted; every page has a JSON twin under
 * /api/v1/ and renders without JavaScript):
 *   /  /users  /teams  /hosts  (?sort=rac|total&page=N)  /user/ID
 *   /team/ID  /host/ID  /jobs  /job/ID  /status  /tasks (?host=ID|user=ID&state=N)
 *   /about  /news  /news.atom  /client/NAME  (?q=TEXT on /users, /teams)
 *   /account  /account/create (GET, POST)  /account/login (GET, POST)
 *   /account/logout (POST)  /account/settings (GET, POST)
 *   /account/prefs (GET, POST)  /account/forgot  /account/reset (GET, POST)
 *   /teams/create (GET, POST)  /teams/join (POST)  /teams/leave (POST)
 *   /api/v1/{users,teams,hosts,jobs,status,tasks}  /api/v1/{user,team,host,job}/ID
 *   /static/{style.css,icon.svg}  /stats/{tables.xml,user.gz,team.gz,host.gz}
 *   /metrics (Prometheus text format)
 *
 * Sign-in: a login cookie (ct_session: 32 random bytes in hex, HttpOnly,
 * SameSite=Strict; the database keeps only its SHA-256, in web_session) or
 * the account key in the forms that accept it. Every POST form carries a
 * CSRF token, HMAC-SHA256(key derived from the project secret, session
 * token or, before sign-in, the random ct_csrf cookie), checked in constant
 * time.
 */
#ifndef CT_WEB_H
#define CT_WEB_H

#include <stddef.h>
#include <stdint.h>

#include "ct_buf.h"

struct ct_server;
struct ct_db;

/* A static file embedded at build time by html/embed.sh (web_assets.c). */
struct ct_web_asset {
	const char *name;	/* "style.css" */
	const char *data;	/* NUL-terminated */
	size_t len;
};
extern const struct ct_web_asset ct_web_assets[];	/* ends with name NULL */

#define CT_WEB_MAX_ARGS 32		/* query + form fields kept */
#define CT_WEB_MAX_ARG_LEN 4096		/* bytes of one decoded value */
#define CT_WEB_MAX_FORM 65536		/* bytes of a form body */
#define CT_WEB_MAX_BODY (64u << 20)	/* largest response body */

struct ct_web_arg {
	char *name, *value;	/* owned by the request */
};

struct ct_web_req {
	/* filled by the caller */
	struct ct_server *srv;
	struct ct_db *db;		/* this thread's connection */
	const char *method;		/* "GET", "HEAD", "POST" */
	const char *path;		/* decoded path, no query string */
	const char *cookie;		/* raw Cookie header or NULL */
	const char *remote_addr;	/* for logs, may be NULL */
	int https;			/* set the cookies' Secure flag */
	struct ct_web_arg args[CT_WEB_MAX_ARGS];	/* ct_web_req_add_arg() */
	size_t nargs;

	/* filled by ct_web_handle() */
	int64_t userid;			/* signed-in user, 0 if none */
	char user_name[260];
	int64_t user_teamid;
	char session[65];		/* login token from the cookie (hex) */
	char csrf_seed[65];		/* what the CSRF token is bound to */
	int new_csrf_seed;		/* csrf_seed was made for this response */
};

#define CT_WEB_MAX_COOKIES 2

struct ct_web_resp {
	int status;			/* 200, 303, 400, 403, 404, 500 ... */
	const char *content_type;	/* static string */
	struct ct_buf body;		/* capped at CT_WEB_MAX_BODY */
	char location[512];		/* Location header for 3xx, or "" */
	char cookies[CT_WEB_MAX_COOKIES][300];	/* Set-Cookie values */
	int ncookies;
	char cache_control[64];		/* Cache-Control value */
	char etag[80];			/* ETag value or "" */
};

/* Make an empty request/response. ct_web_req_free() frees the args. */
void ct_web_req_init(struct ct_web_req *req, struct ct_server *srv,
		     struct ct_db *db, const char *method, const char *path);
void ct_web_req_free(struct ct_web_req *req);
void ct_web_resp_init(struct ct_web_resp *resp);
void ct_web_resp_free(struct ct_web_resp *resp);

/* Add one argument (copied). Over CT_WEB_MAX_ARGS, or a value over
 * CT_WEB_MAX_ARG_LEN, is CT_ETOOBIG. Returns 0 or a CT_E* code. */
int ct_web_req_add_arg(struct ct_web_req *req, const char *name,
		       const char *value);

/* Parse an application/x-www-form-urlencoded string (a query string or a
 * POST body of n bytes, at most CT_WEB_MAX_FORM) into the arguments.
 * Returns 0, CT_ETOOBIG or CT_EFORMAT (bad %-escape). */
int ct_web_req_parse_form(struct ct_web_req *req, const char *s, size_t n);

/* The value of argument `name` (first one), or NULL. */
const char *ct_web_arg(const struct ct_web_req *req, const char *name);

/* 1 if ct_web_handle() serves `path` (so the front end can route every
 * other path elsewhere), else 0. */
int ct_web_owns_path(const char *path);

/* Serve one request: fills resp (status, type, body, headers). Returns 0 when resp is ready to send (error pages included),
 * or a negative CT_E* code when no response could be made at all (the
 * front end then answers 500). */
int ct_web_handle(struct ct_web_req *req, struct ct_web_resp *resp);

/* The stats-export role: when the files under PROJECT/html/stats/ are
 * older than the export interval (config key web.stats_interval, seconds,
 * default 3600), write tables.xml, user.gz, team.gz and host.gz (BOINC
 * db_dump's XML shape) atomically, delete expired web sessions, and
 * return 1; else return 0. A negative
 * CT_E* code on failure. Safe in several processes (the files are
 * replaced atomically; at worst two exports race and one wins). */
int ct_stats_export_run_once(struct ct_server *srv, struct ct_db *db);

/* Write the export now, whatever the age of the files. */
int ct_stats_export(struct ct_server *srv, struct ct_db *db);

#endif
