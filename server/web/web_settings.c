/*
 * web_settings.c - a signed-in volunteer's account settings
 * (/account/settings: display name, e-mail address, password, a new
 * account key, the public profile) and password recovery (/account/forgot,
 * /account/reset?token=T).
 *
 * Every change but the profile asks for the current password; the account
 * module (rpc/account.h) checks it and keeps the account key wrapped under
 * the password. Recovery: with a mail server configured ([mail],
 * web_mail.h) the forgot page mails a one-time link to the address asked,
 * answering the same, in the same time, whether or not an account has it
 * (it queues the address and answers; web_recover.h does the rest); without one the
 * operator runs `ctune-server user reset-link DIR EMAIL`, which prints the
 * link, and hands it to the volunteer (doc/operator.md). Links are valid
 * mail.reset_ttl seconds (an hour), kept only as hashes (rpc/account.h). A
 * reset cannot unwrap the old key, so the page says the computers keep
 * working and a new key can be made here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_log.h"
#include "data/db.h"
#include "rpc/account.h"
#include "rpc/ratelimit.h"
#include "data/server.h"
#include "tmpl.h"
#include "web_int.h"
#include "web_mail.h"
#include "web_recover.h"

#define CONTENT_MAX (1u << 20)

/* ---- the settings page ---------------------------------------------------- */

/* One of the page's forms: what it changes, its fields' markup. */
struct settings_form {
	const char *what, *title, *button;
	const char *fields;	/* markup this file writes (no user data) */
	int password;		/* asks for the current password */
};

#define PW_FIELD "<label for=\"%s-password\">Current password</label><input id=\"%s-password\" " \
	"name=\"password\" type=\"password\" required autocomplete=\"current-password\">"

static const struct settings_form settings_forms[] = {
	{ "name", "Display name", "Change name",
	  "<label for=\"new-name\">New name (shown on the leaderboards; unique)</label>"
	  "<input id=\"new-name\" name=\"name\" type=\"text\" required maxlength=\"64\">", 1 },
	{ "email", "E-mail address", "Change e-mail",
	  "<label for=\"new-email\">New e-mail address</label><input id=\"new-email\" "
	  "name=\"email\" type=\"email\" required maxlength=\"254\">", 1 },
	{ "password", "Password", "Change password",
	  "<label for=\"new-password\">New password (8 characters or more)</label><input "
	  "id=\"new-password\" name=\"new_password\" type=\"password\" required minlength=\"8\" "
	  "maxlength=\"256\" autocomplete=\"new-password\">", 1 },
	{ "newkey", "Account key", "Make a new account key",
	  "<p>A new key replaces the old one: computers attached with the old key "
	  "must attach again with the new one.</p>", 1 },
};
#define NFORMS (sizeof(settings_forms) / sizeof(settings_forms[0]))

static int country_select(struct ct_buf *c, const char *current)
{
	int rc = ct_buf_appends(c, "<label for=\"country\">Country</label><select id=\"country\" "
				"name=\"country\"><option value=\"\">(none)</option>");

	for (size_t i = 0; rc == 0 && ct_web_countries[i] != NULL; i++)
		rc = ct_tmpl_printf(c, "<option%s>%s</option>",
				    strcmp(current, ct_web_countries[i]) == 0 ? " selected" : "",
				    ct_web_countries[i]);
	if (rc == 0)
		rc = ct_buf_appends(c, "</select>");
	return rc;
}

static int profile_form(struct ct_web_req *req, struct ct_buf *c, const struct ct_web_user *u)
{
	int rc = ct_buf_appends(c, "<h2>Profile</h2><form class=\"box\" method=\"post\" "
				"action=\"/account/settings\" id=\"form-profile\">");

	if (rc == 0)
		rc = ct_web_csrf_field(req, c);
	if (rc == 0)
		rc = ct_buf_appends(c, "<input type=\"hidden\" name=\"what\" value=\"profile\">");
	if (rc == 0)
		rc = country_select(c, u->country);
	if (rc == 0)
		rc = ct_tmpl_printf(c, "<label for=\"profile\">About you (plain text, at most 1024 "
				    "bytes; shown on your page)</label><textarea id=\"profile\" "
				    "name=\"profile\" maxlength=\"1024\" rows=\"4\">%s</textarea>"
				    "<button type=\"submit\" id=\"save-profile\">Save profile</button>"
				    "</form>", u->profile);
	return rc;
}

static int settings_page(struct ct_web_req *req, struct ct_web_resp *resp, const char *notice,
			 int error, const char *key)
{
	struct ct_buf c = CT_BUF_INIT(CONTENT_MAX);
	struct ct_web_user u;
	int rc = ct_web_get_user(req->db, req->userid, &u);

	if (rc == 0 && notice != NULL)
		rc = ct_tmpl_printf(&c, "<p class=\"notice%s\" role=\"%s\" id=\"settings-notice\">"
				    "%s</p>", error ? " error" : "", error ? "alert" : "status",
				    notice);
	if (rc == 0 && key != NULL)
		rc = ct_tmpl_printf(&c, "<p>Your new account key is <code class=\"key\" "
				    "id=\"account-key\">%s</code>.</p>", key);
	if (rc == 0)
		rc = ct_tmpl_printf(&c, "<p>Signed in as <a href=\"/user/%lld\">%s</a>. "
				    "<a href=\"/account\">Back to your account</a>.</p>",
				    (long long)req->userid, req->user_name);
	for (size_t i = 0; rc == 0 && i < NFORMS; i++) {
		const struct settings_form *f = &settings_forms[i];

		rc = ct_tmpl_printf(&c, "<h2>%s</h2><form class=\"box\" method=\"post\" action=\""
				    "/account/settings\" id=\"form-%s\">", f->title, f->what);
		if (rc == 0)
			rc = ct_web_csrf_field(req, &c);
		if (rc == 0)
			rc = ct_tmpl_printf(&c, "<input type=\"hidden\" name=\"what\" value=\"%s\">",
					    f->what);
		if (rc == 0)
			rc = ct_buf_appends(&c, f->fields);
		if (rc == 0 && f->password)
			rc = ct_tmpl_printf(&c, PW_FIELD, f->what, f->what);
		if (rc == 0)
			rc = ct_tmpl_printf(&c, "<button type=\"submit\" id=\"save-%s\">%s</button>"
					    "</form>", f->what, f->button);
	}
	if (rc == 0)
		rc = profile_form(req, &c, &u);
	if (rc == 0)
		rc = ct_web_render(req, resp, "Account settings", &c, NULL);
	if (rc == 0 && error)
		resp->status = error;
	ct_buf_free(&c);
	return rc;
}

/* Apply the POSTed change; *msg says what happened. Returns 0 (done), a
 * form error (CT_EINVAL, CT_EAUTH, CT_EEXISTS: shown) or another code. */
static int apply_change(struct ct_web_req *req, const char *what, const char **msg,
			char key[CT_ACCOUNT_KEY_HEXLEN + 1])
{
	const char *pw = ct_web_arg(req, "password");
	const char *v;
	int rc;

	*msg = "Saved.";
	if (strcmp(what, "profile") == 0) {
		v = ct_web_arg(req, "country");
		if (v == NULL || !ct_web_country_ok(v))
			return ct_error(CT_EINVAL, "choose a country from the list");
		return ct_web_set_profile(req->db, req->userid, v,
					  ct_web_arg(req, "profile") ? ct_web_arg(req, "profile") : "");
	}
	if (pw == NULL)
		return ct_error(CT_EAUTH, "the current password is needed");
	if (strcmp(what, "name") == 0) {
		v = ct_web_arg(req, "name");
		/* the password first, then the change (set_name does not ask) */
		rc = ct_account_check_password(req->db, req->userid, pw);
		if (rc == 0)
			rc = ct_account_set_name(req->db, req->userid, v ? v : "");
		if (rc == 0)
			snprintf(req->user_name, sizeof(req->user_name), "%s", v);
		*msg = "Your name is changed.";
		return rc;
	}
	if (strcmp(what, "email") == 0) {
		v = ct_web_arg(req, "email");
		*msg = "Your e-mail address is changed.";
		return ct_account_set_email(req->db, req->userid, pw, v ? v : "");
	}
	if (strcmp(what, "password") == 0) {
		v = ct_web_arg(req, "new_password");
		*msg = "Your password is changed; your account key stays the same.";
		return ct_account_set_password(req->db, req->userid, pw, v ? v : "");
	}
	if (strcmp(what, "newkey") == 0) {
		*msg = "A new account key is made: attach your computers with it again.";
		return ct_account_new_key(req->db, req->userid, pw, key);
	}
	return ct_error(CT_EINVAL, "nothing to change");
}

int ct_web_page_settings(struct ct_web_req *req, struct ct_web_resp *resp)
{
	char key[CT_ACCOUNT_KEY_HEXLEN + 1] = "";
	const char *what = ct_web_arg(req, "what"), *msg = NULL;
	int wait = 0, rc;

	if (req->userid <= 0) {
		ct_web_redirect(resp, "/account/login");
		return 0;
	}
	if (strcmp(req->method, "POST") != 0)
		return settings_page(req, resp, NULL, 0, NULL);
	if (!ct_web_csrf_ok(req))
		return settings_page(req, resp, "The form expired; please send it again.", 403, NULL);
	/* a password guessed here counts as a sign-in attempt (ratelimit.h) */
	if (ct_web_arg(req, "password") != NULL &&
	    !ct_rl_allow(req->srv->rl, req->srv->conf, CT_RL_LOGIN, req->remote_addr,
			 req->user_name, ct_db_now(req->db), &wait))
		return settings_page(req, resp, "Too many attempts; try again later.", 429, NULL);
	rc = apply_change(req, what ? what : "", &msg, key);
	if (rc == CT_EINVAL || rc == CT_EAUTH || rc == CT_EEXISTS)
		return settings_page(req, resp, ct_errmsg(rc), rc == CT_EAUTH ? 403 : 400, NULL);
	if (rc < 0)
		return rc;
	ct_log_info("web: user %lld changed their %s", (long long)req->userid, what);
	return settings_page(req, resp, msg, 0, key[0] ? key : NULL);
}

/* ---- password recovery ---------------------------------------------------- */

/* A page of fixed markup `html` (this file's own). */
static int fixed_page(struct ct_web_req *req, struct ct_web_resp *resp, const char *title,
		      const char *html)
{
	struct ct_buf c = CT_BUF_INIT(8192);
	int rc = ct_buf_appends(&c, html);

	if (rc == 0)
		rc = ct_web_render(req, resp, title, &c, NULL);
	ct_buf_free(&c);
	return rc;
}

static int forgot_operator(struct ct_web_req *req, struct ct_web_resp *resp)
{
	return fixed_page(req, resp, "Forgot your password?", "<p id=\"forgot\">A computer that is attached keeps working "
		"without the password. To set a new one, write to the project's operator from "
		"the e-mail address of your account: they send you a one-time link, valid for an "
		"hour, that lets you choose a new password.</p><p>Your account key is wrapped "
		"under your password, so after a reset it cannot be shown again; your account "
		"settings can make a new one.</p><p><a href=\"/account/login\">Sign in</a></p>");
}

/* The form that asks for the address, with a notice (NULL: none). */
static int forgot_form(struct ct_web_req *req, struct ct_web_resp *resp, long ttl,
		       const char *msg, int status)
{
	struct ct_buf c = CT_BUF_INIT(8192);
	int rc = 0;

	if (msg != NULL)
		rc = ct_tmpl_printf(&c, "<p class=\"notice%s\" role=\"%s\" id=\"forgot-notice\">"
				    "%s</p>", status ? " error" : "", status ? "alert" : "status",
				    msg);
	if (rc == 0)
		rc = ct_tmpl_printf(&c, "<p id=\"forgot\">Give the e-mail address of your "
			"account: a link to choose a new password goes to it, valid once, for %ld "
			"minutes. A computer that is attached keeps working without the "
			"password.</p><form class=\"box\" method=\"post\" action=\"/account/forgot\">",
			ttl / 60);
	if (rc == 0)
		rc = ct_web_csrf_field(req, &c);
	if (rc == 0)
		rc = ct_buf_appends(&c, "<label for=\"forgot-email\">E-mail address</label><input "
			"id=\"forgot-email\" name=\"email\" type=\"email\" required maxlength=\"254\">"
			"<button type=\"submit\" id=\"forgot-send\">Send the link</button></form>"
			"<p>Your account key is wrapped under your password, so after a reset it "
			"cannot be shown again; your account settings can make a new one.</p>"
			"<p><a href=\"/account/login\">Sign in</a></p>");
	if (rc == 0)
		rc = ct_web_render(req, resp, "Forgot your password?", &c, NULL);
	if (rc == 0 && status)
		resp->status = status;
	ct_buf_free(&c);
	return rc;
}

int ct_web_page_forgot(struct ct_web_req *req, struct ct_web_resp *resp)
{
	const char *given = ct_web_arg(req, "email");
	struct ct_mail_conf mc;
	char email[CT_MAIL_ADDR_MAX + 1];
	long ttl = 3600;
	int wait = 0, rc;

	rc = ct_mail_conf_load(req->srv->conf, &mc);
	if (rc == 0)
		rc = ct_conf_get_int(req->srv->conf, "mail.reset_ttl", 3600, 300, 86400, &ttl);
	if (rc < 0)
		ct_log_warn("web: no recovery mail: %s", ct_errmsg(rc));
	if (rc < 0 || mc.url[0] == '\0')
		return forgot_operator(req, resp);
	if (strcmp(req->method, "POST") != 0)
		return forgot_form(req, resp, ttl, NULL, 0);
	if (!ct_web_csrf_ok(req))
		return forgot_form(req, resp, ttl, "The form expired; please send it again.", 400);
	snprintf(email, sizeof(email), "%s", given ? given : "");
	for (char *p = email; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
	if (given == NULL || strlen(given) > CT_MAIL_ADDR_MAX || !ct_mail_addr_ok(email))
		return forgot_form(req, resp, ttl, "Please give an e-mail address.", 400);
	if (!ct_rl_allow(req->srv->rl, req->srv->conf, CT_RL_RESET, req->remote_addr, email,
			 ct_db_now(req->db), &wait))
		return forgot_form(req, resp, ttl, "Too many requests for a link; please try again "
				   "later.", 429);
	/* the lookup, the link and the mail come after the answer, which
	 * must not say (nor take longer when) an account has the address */
	rc = ct_web_recover_queue(req->srv, email, ttl);
	if (rc < 0)
		ct_log_warn("web: a recovery request dropped: %s", ct_errmsg(rc));
	return forgot_form(req, resp, ttl, "If an account has this address, a link to choose a "
			   "new password is on its way to it.", 0);
}

static int reset_form(struct ct_web_req *req, struct ct_web_resp *resp, const char *token,
		      const char *error)
{
	struct ct_buf c = CT_BUF_INIT(8192);
	int rc = 0;

	if (error != NULL)
		rc = ct_tmpl_printf(&c, "<p class=\"notice error\" role=\"alert\" id=\"reset-notice\">"
				    "%s</p>", error);
	if (rc == 0)
		rc = ct_buf_appends(&c, "<form class=\"box\" method=\"post\" action=\"/account/reset\">");
	if (rc == 0)
		rc = ct_web_csrf_field(req, &c);
	if (rc == 0)
		rc = ct_tmpl_printf(&c, "<input type=\"hidden\" name=\"token\" value=\"%s\">"
			"<label for=\"new-password\">New password (8 characters or more)</label>"
			"<input id=\"new-password\" name=\"new_password\" type=\"password\" required "
			"minlength=\"8\" maxlength=\"256\" autocomplete=\"new-password\">"
			"<button type=\"submit\" id=\"reset\">Set the password</button></form>",
			token ? token : "");
	if (rc == 0)
		rc = ct_web_render(req, resp, "Choose a new password", &c, NULL);
	if (rc == 0 && error != NULL)
		resp->status = 400;
	ct_buf_free(&c);
	return rc;
}

int ct_web_page_reset(struct ct_web_req *req, struct ct_web_resp *resp)
{
	const char *token = ct_web_arg(req, "token"), *pw = ct_web_arg(req, "new_password");
	int64_t userid = 0;
	int wait = 0, rc;

	if (strcmp(req->method, "POST") != 0)
		return reset_form(req, resp, token, NULL);
	if (!ct_web_csrf_ok(req))
		return reset_form(req, resp, token, "The form expired; please send it again.");
	if (!ct_rl_allow(req->srv->rl, req->srv->conf, CT_RL_LOGIN, req->remote_addr, NULL,
			 ct_db_now(req->db), &wait))
		return reset_form(req, resp, token, "Too many attempts; try again later.");
	rc = ct_account_reset_finish(req->db, token ? token : "", pw ? pw : "", &userid);
	if (rc == CT_EINVAL || rc == CT_EAUTH)
		return reset_form(req, resp, rc == CT_EAUTH ? NULL : token, ct_errmsg(rc));
	/* whoever may hold a session of the account (the reason for a reset,
	 * sometimes) is signed out with the old password */
	if (rc == 0)
		rc = ct_web_session_end_user(req->db, userid);
	if (rc < 0)
		return rc;
	ct_log_info("web: user %lld set a new password with a reset link", (long long)userid);
	return fixed_page(req, resp, "Password set", "<p class=\"notice\" role=\"status\" "
		"id=\"reset-done\">Your new password is set. Your computers keep working; your "
		"account key cannot be shown again, but your account settings can make a new "
		"one.</p><p><a href=\"/account/login\">Sign in</a></p>");
}
