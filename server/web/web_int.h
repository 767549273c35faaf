/*
 * web_int.h - what the web module's files share among themselves (not for
 * the rest of the server): the page handlers of the route table, the page
 * layout, error pages, the small content cache, CSRF tokens.
 */
#ifndef CT_WEB_INT_H
#define CT_WEB_INT_H

#include <stdint.h>

#include "ct_buf.h"
#include "web.h"
#include "data/dl_web.h"

/* A route handler: fill resp; return 0, or a negative CT_E* code for which
 * ct_web_handle() makes an error page (CT_ENOTFOUND -> 404, CT_EINVAL ->
 * 400, CT_EDENIED/CT_EAUTH -> 403, anything else -> 500). */
typedef int (*ct_web_handler)(struct ct_web_req *req, struct ct_web_resp *resp);

/* ---- pages (web_pages.c) ---- */
int ct_web_page_home(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_users(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_teams(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_hosts(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_user(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_team(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_host(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_jobs(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_job(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_status(struct ct_web_req *req, struct ct_web_resp *resp);

/* ---- tasks of a computer or a user (web_tasks.c) ---- */
int ct_web_page_tasks(struct ct_web_req *req, struct ct_web_resp *resp);
/* The tasks ?host=ID|user=ID[&state=N&page=N] ask for (ct_web_tasks with
 * the pending credit filled in); *t malloc'd, free it. */
int ct_web_req_tasks(struct ct_web_req *req, int *state, struct ct_web_task **t, size_t *n,
		     struct ct_web_task_sum *sum);
/* The "Tasks" section of a computer's ("host") or user's page: counts by
 * state, pending credit, the newest tasks. */
int ct_web_tasks_section(struct ct_web_req *req, struct ct_buf *c, const char *kind,
			 int64_t id);

/* ---- account settings, recovery, profiles (web_settings.c) ---- */
int ct_web_page_settings(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_forgot(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_reset(struct ct_web_req *req, struct ct_web_resp *resp);

/* ISO 3166-1 names a profile's country may be, NULL-terminated
 * (web_countries.c); 1 if name is one of them or "". */
extern const char *const ct_web_countries[];
int ct_web_country_ok(const char *name);

/* ---- project page, news, client downloads (web_news.c) ---- */
int ct_web_page_about(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_news(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_news_atom(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_client_file(struct ct_web_req *req, struct ct_web_resp *resp);
/* The newest `max` news titles with links to all and to the feed. */
int ct_web_news_section(struct ct_web_req *req, struct ct_buf *c, size_t max);

/* ---- computing preferences (web_prefs.c) ---- */
int ct_web_page_prefs(struct ct_web_req *req, struct ct_web_resp *resp);

/* ---- accounts and teams (web_account.c) ---- */
int ct_web_page_account(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_create(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_login(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_logout(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_team_create(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_team_join(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_page_team_leave(struct ct_web_req *req, struct ct_web_resp *resp);

/* Look up the signed-in user from req->session (fills req->userid, name,
 * teamid when the session is valid). Returns 0 or CT_EDB. */
int ct_web_auth_session(struct ct_web_req *req);

/* ---- JSON API (web_api.c) ---- */
int ct_web_api(struct ct_web_req *req, struct ct_web_resp *resp);

/* ---- stats export and metrics (web_stats.c) ---- */
int ct_web_stats_file(struct ct_web_req *req, struct ct_web_resp *resp);
int ct_web_metrics(struct ct_web_req *req, struct ct_web_resp *resp);

/* ---- shared helpers (web.c) ---- */

/* Wrap `content` (trusted markup built with tmpl.h) in the layout and put
 * the page in resp (200, text/html). `title` is escaped; `api` is the
 * JSON twin's path for the footer link (NULL: /api/v1/status). */
int ct_web_render(struct ct_web_req *req, struct ct_web_resp *resp,
		  const char *title, const struct ct_buf *content,
		  const char *api);

/* An error page with `status` and a one-line message (escaped). */
int ct_web_error_page(struct ct_web_req *req, struct ct_web_resp *resp,
		      int status, const char *message);

/* 303 See Other to `location` (a path the server built). */
void ct_web_redirect(struct ct_web_resp *resp, const char *location);

/* The CSRF token for forms in this response (64 hex + NUL into out). */
void ct_web_csrf_token(const struct ct_web_req *req, char out[65]);

/* 1 if the request's "csrf" argument is the right token. */
int ct_web_csrf_ok(const struct ct_web_req *req);

/* Append a hidden CSRF field to a form being built. */
int ct_web_csrf_field(const struct ct_web_req *req, struct ct_buf *b);

/* The id at the end of a path like "/user/123" after `prefix`; 0 if the
 * rest is not a positive decimal number. */
int64_t ct_web_path_id(const char *path, const char *prefix);

/* ?sort=total -> CT_WEB_SORT_TOTAL, anything else RAC; ?page=N (>= 1). */
enum ct_web_sort ct_web_arg_sort(const struct ct_web_req *req);
int64_t ct_web_arg_page(const struct ct_web_req *req);

/* Name of the project for page titles (config `project_name`, else
 * "crowdtune"). */
const char *ct_web_project_name(const struct ct_server *srv);
/* The URL visitors reach the project by (config `url`, else the address it
 * listens on), no trailing slash, into out. */
void ct_web_project_url(const struct ct_server *srv, char *out, size_t cap);

/* Round receipts on the web (web_receipt.c, doc/receipts.md): the file at
 * /job/N/round/R/receipt, their list in the API, the job page's section
 * and the home page's key. */
struct ct_json;
/* 1 if path is /job/N/round/R/receipt (N, R decimal, >= 1), else 0. */
int ct_web_receipt_match(const char *path);

/* GET /job/N/round/R/receipt. */
int ct_web_page_receipt(struct ct_web_req *req, struct ct_web_resp *resp);

/* what (after /api/v1/) is job/N/receipts: N, else 0. */
int64_t ct_web_receipt_api_match(const char *what);

/* The API's {"job", "key", "receipts": [{"round", "sha256", "size",
 * "url"}]}. */
int ct_web_api_receipts(struct ct_web_req *req, struct ct_json *j, int64_t jobid);

/* The home page's paragraph: the public key and what it signs. */
int ct_web_receipt_home_html(struct ct_web_req *req, struct ct_buf *c);

/* The job page's section: its receipts by round and how to check them. */
int ct_web_receipt_job_html(struct ct_web_req *req, struct ct_buf *c, int64_t jobid);

/* Where replicas compared by tolerance parted (ct_web_job_partings): the
 * job page's table (nothing when there is none) and the API job's
 * "partings" array (a key and its value, inside the job's object). */
int ct_web_partings_html(struct ct_web_req *req, struct ct_buf *c, int64_t jobid);
int ct_web_partings_json(struct ct_web_req *req, struct ct_json *j, int64_t jobid);

/* Key for HMACs of the web module, derived from the project secret. */
void ct_web_key(const struct ct_server *srv, const char *purpose,
		unsigned char out[32]);

#endif
