/*
 * web_account.c - the pages where people act: create an account (the page
 * then shows the account key and the `ctune attach` command to paste), look
 * up one's key with e-mail and password, sign in and out, create a team,
 * join or leave one.
 *
 * Accounts themselves (password hashing with PBKDF2, the key stored only
 * as a hash) are the account module's (account.h, shared with POST
 * /rpc/account); this file adds web sessions: a random 32-byte token in an
 * HttpOnly, SameSite=Strict cookie, of which the web_session table keeps
 * only the SHA-256, valid 30 days. Every POST is checked for its CSRF token
 * (web.c) before anything else happens.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/account.h"
#include "ct_err.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_utf8.h"
#include "data/db.h"
#include "data/dl.h"
#include "data/dl_team.h"
#include "rpc/ratelimit.h"
#include "data/server.h"
#include "tmpl.h"
#include "web_int.h"

#define SESSION_SECONDS (30 * 86400)
#define CONTENT_MAX (1u << 20)

/* ---- sessions ------------------------------------------------------------ */

int ct_web_auth_session(struct ct_web_req *req)
{
	char hash[CT_SHA256_HEXLEN + 1];
	int rc;

	struct ct_web_session_user u;

	ct_sha256_hex(req->session, strlen(req->session), hash);
	rc = ct_web_session_get(req->db, hash, ct_db_now(req->db), &u);
	if (rc == CT_ENOTFOUND)
		return 0;	/* no session: signed out */
	if (rc < 0)
		return rc;
	req->userid = u.userid;
	req->user_teamid = u.teamid;
	snprintf(req->user_name, sizeof(req->user_name), "%s", u.name);
	return 0;
}

/* Sign `userid` in: new session row + cookie; the rest of this response
 * (forms, header) already sees the user as signed in. */
static int session_start(struct ct_web_req *req, struct ct_web_resp *resp,
			 int64_t userid)
{
	unsigned char rnd[32];
	char hash[CT_SHA256_HEXLEN + 1];
	int64_t now = ct_db_now(req->db);
	int rc;

	rc = ct_random_bytes(rnd, sizeof(rnd));
	if (rc < 0)
		return rc;
	ct_hex_encode(rnd, sizeof(rnd), req->session);
	ct_sha256_hex(req->session, 64, hash);
	rc = ct_web_session_add(req->db, hash, userid, now, now + SESSION_SECONDS);
	if (rc < 0)
		return rc;
	rc = ct_web_auth_session(req);
	if (rc < 0)
		return rc;
	snprintf(req->csrf_seed, sizeof(req->csrf_seed), "%s", req->session);
	req->new_csrf_seed = 0;
	resp->ncookies = 0;
	snprintf(resp->cookies[resp->ncookies++], sizeof(resp->cookies[0]),
		 "ct_session=%s; Path=/; HttpOnly; SameSite=Strict; Max-Age=%d%s",
		 req->session, SESSION_SECONDS, req->https ? "; Secure" : "");
	return 0;
}

int ct_web_page_logout(struct ct_web_req *req, struct ct_web_resp *resp)
{
	char hash[CT_SHA256_HEXLEN + 1];
	int rc;

	if (!ct_web_csrf_ok(req))
		return ct_web_error_page(req, resp, 403, "The form expired; "
					 "reload the page and try again.");
	if (req->session[0] != '\0') {
		ct_sha256_hex(req->session, strlen(req->session), hash);
		rc = ct_web_session_delete(req->db, hash);
		if (rc < 0)
			return rc;
	}
	ct_web_redirect(resp, "/");
	resp->ncookies = 0;
	snprintf(resp->cookies[resp->ncookies++], sizeof(resp->cookies[0]),
		 "ct_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
	return 0;
}

/* The user whose account key is `key` (any case): 0, CT_EAUTH, CT_EDB. */
static int user_by_key(struct ct_db *db, const char *key, int64_t *userid)
{
	char lower[CT_ACCOUNT_KEY_HEXLEN + 1], hash[65];
	size_t n = strlen(key);
	int rc;

	if (n != CT_ACCOUNT_KEY_HEXLEN)
		return ct_error(CT_EAUTH, "bad account key");
	for (size_t i = 0; i <= n; i++)
		lower[i] = (char)(key[i] >= 'A' && key[i] <= 'F' ? key[i] + 32 : key[i]);
	rc = ct_account_key_hash(lower, hash);
	if (rc < 0)
		return rc;
	rc = ct_web_user_by_auth_hash(db, hash, userid);
	return rc == CT_ENOTFOUND ? ct_error(CT_EAUTH, "unknown account key") : rc;
}

/* ---- forms --------------------------------------------------------------- */

static int notice(struct ct_buf *c, const char *msg, int error)
{
	if (msg == NULL)
		return 0;
	return ct_tmpl_printf(c, "<p class=\"notice%s\" role=\"%s\">%s</p>",
			      error ? " error" : "", error ? "alert" : "status", msg);
}

/* An input with its label; `extra` is attribute markup this file writes
 * (appended raw), `value` is escaped. */
static int field(struct ct_buf *c, const char *name, const char *label,
		 const char *type, const char *value, const char *extra)
{
	int rc = ct_tmpl_printf(c, "<label for=\"%s\">%s</label><input id=\"%s\" "
		"name=\"%s\" type=\"%s\" value=\"%s\" ", name, label, name,
		name, type, value ? value : "");

	if (rc == 0)
		rc = ct_buf_appends(c, extra);
	if (rc == 0)
		rc = ct_buf_appends(c, ">");
	return rc;
}

/* A form as a table of parts, rendered in order after the error notice. */
enum form_part_kind { FP_END = 0, FP_HTML, FP_CSRF, FP_FIELD };

struct form_part {
	enum form_part_kind kind;
	const char *html;		/* FP_HTML: markup this file writes */
	const char *name, *label, *type, *extra;	/* FP_FIELD, see field() */
	int echo;			/* FP_FIELD: refill with the sent value */
};

#define HTML(h) { .kind = FP_HTML, .html = (h) }
#define CSRF { .kind = FP_CSRF }
#define FIELD(n, l, t, x, e) { .kind = FP_FIELD, .name = (n), .label = (l), \
	.type = (t), .extra = (x), .echo = (e) }

struct form {
	const char *title;
	int error_status;		/* HTTP status when showing an error */
	const struct form_part *parts;	/* ends with FP_END */
};

/* Render form `f`, with `error` (or no notice when NULL) above it. */
static int form_page(struct ct_web_req *req, struct ct_web_resp *resp,
		     const struct form *f, const char *error)
{
	struct ct_buf c = CT_BUF_INIT(CONTENT_MAX);
	const struct form_part *p;
	int rc;

	rc = notice(&c, error, 1);
	for (p = f->parts; rc == 0 && p->kind != FP_END; p++) {
		if (p->kind == FP_HTML)
			rc = ct_buf_appends(&c, p->html);
		else if (p->kind == FP_CSRF)
			rc = ct_web_csrf_field(req, &c);
		else
			rc = field(&c, p->name, p->label, p->type,
				   p->echo ? ct_web_arg(req, p->name) : "",
				   p->extra);
	}
	if (rc == 0)
		rc = ct_web_render(req, resp, f->title, &c, NULL);
	if (rc == 0 && error != NULL)
		resp->status = f->error_status;
	ct_buf_free(&c);
	return rc;
}

/* The first steps of every form's handler: a GET shows form f, a POST
 * whose CSRF token does not match shows it again with a notice. Returns 0
 * when the POST may go on, 1 when resp holds the page, or a CT_E* code. */
static int form_start(struct ct_web_req *req, struct ct_web_resp *resp, const struct form *f)
{
	int rc;

	if (strcmp(req->method, "POST") != 0)
		rc = form_page(req, resp, f, NULL);
	else if (!ct_web_csrf_ok(req))
		rc = form_page(req, resp, f, "The form expired; please send it again.");
	else
		return 0;
	return rc < 0 ? rc : 1;
}

static const struct form_part create_parts[] = {
	HTML("<form class=\"box\" method=\"post\" action=\"/account/create\">"),
	CSRF,
	FIELD("name", "Name (shown on the leaderboards)", "text",
	      "required maxlength=\"64\"", 1),
	FIELD("email", "E-mail address", "email",
	      "required maxlength=\"254\"", 1),
	FIELD("password", "Password (8 characters or more)", "password",
	      "required minlength=\"8\" maxlength=\"256\" "
	      "autocomplete=\"new-password\"", 0),
	HTML("<button type=\"submit\" id=\"create\">Create account</button>"
	     "</form><p>Already have an account? <a href=\"/account/login\">"
	     "Sign in or look up your key</a>.</p>"),
	{ .kind = FP_END },
};

static const struct form create_form_def = {
	.title = "Create an account", .error_status = 400, .parts = create_parts,
};


/* The page that hands over the account key: the key and the exact
 * command that attaches a computer with it. */
static int key_page(struct ct_web_req *req, struct ct_web_resp *resp,
		    const char *title, const char *key, const char *intro)
{
	struct ct_buf c = CT_BUF_INIT(CONTENT_MAX);
	char url[300];
	int rc;

	/* the URL clients reach the project by */
	ct_web_project_url(req->srv, url, sizeof(url));
	rc = notice(&c, intro, 0);
	if (rc == 0)
		rc = ct_tmpl_printf(&c, "<p>Your account key is <code class=\"key\" "
			"id=\"account-key\">%s</code>. Keep it like a password: it "
			"lets a computer work (and earn credit) for you.</p>"
			"<p>To attach a computer, install <code>ctune</code> and run:"
			"</p><pre class=\"cmd\" id=\"attach-cmd\">ctune attach %s "
			"--key %s</pre><p>See <a href=\"/user/%lld\">your page</a> "
			"for your credit, or <a href=\"/teams\">join a team</a>.</p>",
			key, url, key, (long long)req->userid);
	if (rc == 0)
		rc = ct_web_render(req, resp, title, &c, NULL);
	ct_buf_free(&c);
	return rc;
}

/* The 429 page of the account forms' rate limits (ratelimit.h): checked
 * before any password is hashed. Returns 0 when the action may go on, 1
 * when resp holds the refusal, or a CT_E* code. */
static int rate_limited(struct ct_web_req *req, struct ct_web_resp *resp,
			enum ct_rl_action action, const char *account)
{
	struct ct_buf c = CT_BUF_INIT(4096);
	int wait = 0, rc;

	if (ct_rl_allow(req->srv->rl, req->srv->conf, action, req->remote_addr, account,
			ct_db_now(req->db), &wait))
		return 0;
	ct_log_info("web: %s from %s: rate-limited", action == CT_RL_LOGIN ? "sign-in" :
		    "sign-up", req->remote_addr ? req->remote_addr : "?");
	rc = ct_tmpl_printf(&c, "<p class=\"notice error\" id=\"rate-limited\">Too many "
			    "%s attempts from your address%s. Please try again in %d "
			    "minute%s.</p><p><a href=\"/\">Home</a></p>",
			    action == CT_RL_LOGIN ? "sign-in" : "sign-up",
			    action == CT_RL_LOGIN ? " or for this account" : "",
			    (wait + 59) / 60, (wait + 59) / 60 == 1 ? "" : "s");
	if (rc == 0)
		rc = ct_web_render(req, resp, "Too many attempts", &c, NULL);
	resp->status = 429;
	ct_buf_free(&c);
	return rc < 0 ? rc : 1;
}

int ct_web_page_create(struct ct_web_req *req, struct ct_web_resp *resp)
{
	const char *name = ct_web_arg(req, "name"), *email = ct_web_arg(req, "email");
	const char *pw = ct_web_arg(req, "password");
	char key[CT_ACCOUNT_KEY_HEXLEN + 1];
	int64_t userid = 0;
	int rc;

	rc = form_start(req, resp, &create_form_def);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (name == NULL || email == NULL || pw == NULL)
		return form_page(req, resp, &create_form_def, "Please fill in every field.");
	rc = rate_limited(req, resp, CT_RL_SIGNUP, NULL);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	rc = ct_account_create(req->db, name, email, pw, key, &userid);
	if (rc == CT_EEXISTS || rc == CT_EDUP)	/* the detail names the e-mail or the name */
		return form_page(req, resp, &create_form_def, ct_errmsg(rc));
	if (rc == CT_EINVAL || rc == CT_EPROTO || rc == CT_ERANGE)
		return form_page(req, resp, &create_form_def, ct_errmsg(rc));
	if (rc < 0)
		return rc;
	rc = session_start(req, resp, userid);
	if (rc < 0)
		return rc;
	ct_log_info("web: account %lld created", (long long)userid);
	return key_page(req, resp, "Welcome!", key, "Your account is ready.");
}

static const struct form_part login_parts[] = {
	HTML("<h2>With e-mail and password</h2><p>This also shows your account "
	     "key again.</p><form class=\"box\" method=\"post\" "
	     "action=\"/account/login\">"),
	CSRF,
	FIELD("email", "E-mail address", "email", "required", 1),
	FIELD("password", "Password", "password",
	      "required autocomplete=\"current-password\"", 0),
	HTML("<button type=\"submit\" id=\"login\">Sign in</button></form>"
	     "<p><a href=\"/account/forgot\" id=\"forgot-link\">Forgot your password?</a></p>"
	     "<h2>With your account key</h2><form class=\"box\" "
	     "method=\"post\" action=\"/account/login\">"),
	CSRF,
	FIELD("key", "Account key", "password", "required autocomplete=\"off\"", 0),
	HTML("<button type=\"submit\" id=\"login-key\">Sign in</button></form>"
	     "<p>No account yet? <a href=\"/account/create\">Create one</a>.</p>"),
	{ .kind = FP_END },
};

static const struct form login_form_def = {
	.title = "Sign in", .error_status = 403, .parts = login_parts,
};


int ct_web_page_login(struct ct_web_req *req, struct ct_web_resp *resp)
{
	const char *email = ct_web_arg(req, "email"), *pw = ct_web_arg(req, "password");
	const char *key = ct_web_arg(req, "key");
	char out_key[CT_ACCOUNT_KEY_HEXLEN + 1], name65[65];
	int64_t userid = 0;
	int rc;

	rc = form_start(req, resp, &login_form_def);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	rc = rate_limited(req, resp, CT_RL_LOGIN, key != NULL && *key != '\0' ? NULL : email);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (key != NULL && *key != '\0')
		rc = user_by_key(req->db, key, &userid);
	else if (email != NULL && pw != NULL)
		rc = ct_account_lookup(req->db, email, pw, out_key, &userid, name65);
	else
		return form_page(req, resp, &login_form_def, "Please fill in the form.");
	if (rc == CT_EAUTH || rc == CT_ENOTFOUND || rc == CT_EINVAL ||
	    rc == CT_EFORMAT || rc == CT_EPROTO)
		return form_page(req, resp, &login_form_def, key != NULL && *key != '\0' ?
				 "Unknown account key." : "Wrong e-mail address or password.");
	if (rc < 0)
		return rc;
	rc = session_start(req, resp, userid);
	if (rc < 0)
		return rc;
	if (key != NULL && *key != '\0') {
		ct_web_redirect(resp, "/account");
		return 0;
	}
	if (out_key[0] == '\0') {	/* the password was reset: the key is not wrapped */
		ct_web_redirect(resp, "/account/settings");
		return 0;
	}
	return key_page(req, resp, "Your account key", out_key, "You are signed in.");
}

/* ---- the account page ---------------------------------------------------- */

static int signed_out(struct ct_web_req *req, struct ct_web_resp *resp)
{
	ct_web_redirect(resp, "/account/login");
	(void)req;
	return 0;
}

int ct_web_page_account(struct ct_web_req *req, struct ct_web_resp *resp)
{
	struct ct_buf c = CT_BUF_INIT(CONTENT_MAX);
	int rc;

	if (req->userid <= 0)
		return signed_out(req, resp);
	rc = ct_tmpl_printf(&c, "<p>Signed in as <a href=\"/user/%lld\" id=\"me\">"
		"%s</a>.</p>", (long long)req->userid, req->user_name);
	if (rc == 0 && req->user_teamid > 0)
		rc = ct_tmpl_printf(&c, "<p>You are in <a href=\"/team/%lld\">team "
			"#%lld</a>.</p>", (long long)req->user_teamid,
			(long long)req->user_teamid);
	if (rc == 0)
		rc = ct_buf_appends(&c, "<p><a href=\"/account/prefs\" id=\"prefs-link\">Computing "
			"preferences</a> (for all your computers) · <a href=\"/account/settings\" "
			"id=\"settings-link\">Name, e-mail, password, profile</a></p>"
			"<p><a href=\"/teams\">Join a team</a> · "
			"<a href=\"/teams/create\">Create a team</a> · <a href=\""
			"/account/login\">Look up your account key</a></p>"
			"<form method=\"post\" action=\"/account/logout\">");
	if (rc == 0)
		rc = ct_web_csrf_field(req, &c);
	if (rc == 0)
		rc = ct_buf_appends(&c, "<button type=\"submit\" id=\"logout\">"
				    "Sign out</button></form>");
	if (rc == 0)
		rc = ct_web_render(req, resp, "Your account", &c, NULL);
	ct_buf_free(&c);
	return rc;
}

/* ---- teams --------------------------------------------------------------- */

static int team_post(struct ct_web_req *req, struct ct_web_resp *resp, int join)
{
	const char *t = ct_web_arg(req, "team");
	int64_t to;
	char loc[64];
	int rc;

	if (req->userid <= 0)
		return signed_out(req, resp);
	if (!ct_web_csrf_ok(req))
		return ct_web_error_page(req, resp, 403, "The form expired; "
					 "reload the page and try again.");
	to = join && t != NULL ? strtoll(t, NULL, 10) : 0;
	if (join && to <= 0)
		return ct_error(CT_EINVAL, "no team given");
	rc = ct_team_move(req->db, req->userid, to);
	if (rc < 0)
		return rc;
	snprintf(loc, sizeof(loc), "/team/%lld",
		 (long long)(join ? to : t != NULL ? strtoll(t, NULL, 10) : 0));
	ct_web_redirect(resp, join || (t != NULL && strtoll(t, NULL, 10) > 0) ?
			loc : "/account");
	return 0;
}

int ct_web_page_team_join(struct ct_web_req *req, struct ct_web_resp *resp)
{
	return team_post(req, resp, 1);
}

int ct_web_page_team_leave(struct ct_web_req *req, struct ct_web_resp *resp)
{
	return team_post(req, resp, 0);
}

static const struct form_part team_parts[] = {
	HTML("<form class=\"box\" method=\"post\" action=\"/teams/create\">"),
	CSRF,
	FIELD("name", "Team name", "text", "required maxlength=\"64\"", 1),
	FIELD("description", "Description", "text", "maxlength=\"1000\"", 1),
	HTML("<button type=\"submit\" id=\"team-create\">Create team</button>"
	     "</form>"),
	{ .kind = FP_END },
};

static const struct form team_form_def = {
	.title = "Create a team", .error_status = 400, .parts = team_parts,
};


int ct_web_page_team_create(struct ct_web_req *req, struct ct_web_resp *resp)
{
	const char *name, *description;
	int64_t id = 0;
	char loc[64];
	int rc;

	if (req->userid <= 0)
		return signed_out(req, resp);
	rc = form_start(req, resp, &team_form_def);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	name = ct_web_arg(req, "name");
	description = ct_web_arg(req, "description");
	if (description == NULL)
		description = "";
	if (name == NULL || name[0] == '\0' || strlen(name) > 64 ||
	    strlen(description) > 1000)
		return form_page(req, resp, &team_form_def, "A team needs a name of 1 to 64 "
				 "bytes and a description of at most 1000.");
	if (!ct_utf8_valid(name) || !ct_utf8_valid(description))
		return form_page(req, resp, &team_form_def,
				 "The name and description must be UTF-8 text.");
	rc = ct_team_create(req->db, req->userid, name, description, &id);
	if (rc == CT_EDUP)
		return form_page(req, resp, &team_form_def,
				 "A team with this name exists already.");
	if (rc < 0)
		return rc;
	snprintf(loc, sizeof(loc), "/team/%lld", (long long)id);
	ct_web_redirect(resp, loc);
	return 0;
}
