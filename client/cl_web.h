/*
 * cl_web.h - the local control page of `ctune run` (prefs `web = on` or
 * `ctune run --web`): one HTML page with a little inline JavaScript, served
 * on 127.0.0.1 only, showing the daemon's status, projects, tasks, the
 * running WU's loss curve and its preferences, with suspend/resume and a
 * preferences form. It is a client of the daemon's control handler
 * (cl_ctl.h's commands), so the page can do what `ctune status`, `ctune
 * suspend|resume` and `ctune prefs set` do, and nothing more.
 *
 * Who may use it: whoever holds the token, 32 random bytes kept in
 * DIR/web_token (made at the first start, 0600 in the private state
 * directory) and printed in the address, `ctune web` and `ctune status`:
 *
 *   http://127.0.0.1:PORT/?token=HEX
 *
 * A visit with the right token gets it back as an HttpOnly, SameSite=Strict
 * cookie (ctune_PORT) and a redirect to "/", so the token leaves the
 * address bar. Every request is checked, in constant time, for that token;
 * requests whose Host is not 127.0.0.1:PORT or localhost:PORT (DNS
 * rebinding) or whose Origin is another site are refused (403). A POST
 * must also carry the page's CSRF value (X-Ctune-Csrf, an HMAC of the
 * token that only the page itself can read) and a form body. Sizes are
 * capped by cl_web_http.h; at most CT_WEB_MAX_CONN connections are served
 * at once, each within CT_WEB_DEADLINE_S, one request per connection.
 *
 * Routes: GET / (the page), GET /api/state (JSON: status, projects, tasks,
 * losses, preferences), POST /api/suspend, /api/resume, /api/prefs
 * (key=value&... of the keys the page sets), POST /api/attach (url=, and
 * key= or email= and password=: the account is looked up and the key
 * checked with the project, as `ctune attach` does, then the daemon
 * attaches), /api/detach, /api/project_suspend, /api/project_resume
 * (url=: the daemon's "detach URL", "project suspend|resume URL").
 */
#ifndef CT_CL_WEB_H
#define CT_CL_WEB_H

#include "ct_buf.h"

#define CT_WEB_TOKEN_HEX 64
#define CT_WEB_MAX_CONN 8
#define CT_WEB_DEADLINE_S 5.0

struct ct_conf;
struct ct_web;

struct ct_web_conf {
	int port;			/* 127.0.0.1:port; 0: a free one */
	const char *token_path;		/* DIR/web_token */
	/* the daemon's control handler (cl_ctl.h), called from the page's
	 * threads with "status", "prefs get", "prefs set K=V...", "suspend",
	 * "resume"; it takes the daemon's lock itself */
	int (*ctl)(const char *cmd, struct ct_buf *reply, void *arg);
	void *ctl_arg;
	const struct ct_conf *cli_prefs;	/* the command line's (NULL: none);
						 * must outlive the page */
	const char *cpid;		/* the daemon's client id (copied), sent
					 * with an attach's key check */
};

/* Read (or make) the token, listen and start serving. *out is freed by
 * ct_web_stop; NULL on failure. Returns 0, CT_EBUSY (port taken), or a
 * CT_E* code. */
int ct_web_start(const struct ct_web_conf *c, struct ct_web **out);

/* "http://127.0.0.1:PORT/?token=HEX", owned by w. */
const char *ct_web_url(const struct ct_web *w);

/* Stop listening, wait for the connections being served (each ends within
 * CT_WEB_DEADLINE_S) and free w. NULL is a no-op. */
void ct_web_stop(struct ct_web *w);

/* The token in path (CT_WEB_TOKEN_HEX lowercase hex digits and a newline),
 * made with secure random bytes when the file is missing or not a token,
 * into token (CT_WEB_TOKEN_HEX + 1 bytes). 0 or a CT_E* code. */
int ct_web_token(const char *path, char *token);

/* The page's state document (GET /api/state) from the daemon's status s,
 * its preferences in force (prefs: a ct_conf of prefs.conf keys) and the
 * command line's (cli, may be NULL: "forced" lists them), into out.
 * Strings are JSON-escaped ('<', '>', '&' too); NaN and infinities are
 * null. 0 or CT_ETOOBIG / CT_ENOMEM. */
struct ct_status;
int ct_web_state_json(const struct ct_status *s, const struct ct_conf *prefs,
		      const struct ct_conf *cli, struct ct_buf *out);

/* s as a JSON string into b: controls, quotes, backslashes and <>&
 * escaped, bytes that are not UTF-8 as U+FFFD. 0 or a ct_buf error. */
int ct_web_json_str(struct ct_buf *b, const char *s);

/* The page's HTML with nonce (the CSP's, for its inline script and style)
 * and csrf filled in, into out. 0 or CT_ETOOBIG / CT_ENOMEM. */
int ct_web_page(const char *nonce, const char *csrf, struct ct_buf *out);

#endif
