/*
 * web_prefs.c - computing preferences on the web (/account/prefs): the
 * volunteer sets them once for every computer; the scheduler sends them in
 * each reply (sched.c) and every client applies them at once, under its
 * own prefs.conf and options (cl_prefs.h), as BOINC clients do.
 *
 * They are stored as the prefs.conf lines of the keys below, so the client
 * reads them with the parser it reads its own file with. A field left
 * empty is not sent: the computer's own setting (or the default) holds.
 * Every value is checked here with the client's ranges, so a client never
 * sees one it would refuse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_conf.h"
#include "ct_err.h"
#include "ct_time.h"
#include "data/db.h"
#include "tmpl.h"
#include "web_int.h"

#define CONTENT_MAX (1u << 20)
#define PREFS_MAX 2048

enum pref_kind { PK_NUM, PK_INT, PK_HOURS, PK_BOOL };

/* One key the web sets: its prefs.conf name, the form's words, its range. */
struct pref_key {
	const char *key, *label, *hint;
	enum pref_kind kind;
	double min, max;
};

static const struct pref_key pref_keys[] = {
	{ "max_cpu_percent", "Use at most this share of the CPU time (%)", "1 to 100",
	  PK_INT, 1, 100 },
	{ "run_hours", "Compute only between these hours (each computer's local time)",
	  "HH:MM-HH:MM, e.g. 22:00-07:00; empty: any time", PK_HOURS, 0, 0 },
	{ "idle_minutes", "Compute only after the computer was idle this long (minutes)",
	  "0: also while it is in use", PK_NUM, 0, 1e6 },
	{ "run_on_battery", "Compute on a laptop running on battery", "", PK_BOOL, 0, 0 },
	{ "suspend_cpu_percent", "Pause while other programs use more CPU than (%)",
	  "0: never", PK_INT, 0, 100 },
	{ "disk_max_gb", "Use at most this much disk (GB)", "", PK_NUM, 0, 1e9 },
	{ "disk_min_free_gb", "Leave at least this much disk free (GB)", "", PK_NUM, 0, 1e9 },
};
#define NKEYS (sizeof(pref_keys) / sizeof(pref_keys[0]))

/* Check the form's value v of key k; the canonical text into out. Returns
 * 0, or CT_EINVAL with a message for the form. */
static int check_value(const struct pref_key *k, const char *v, char *out, size_t cap)
{
	char *end;
	double d;
	int a, b;

	switch (k->kind) {
	case PK_HOURS:
		if (ct_time_parse_hours(v, &a, &b) < 0)
			return ct_error(CT_EINVAL, "%s: expected HH:MM-HH:MM, as 22:00-07:00",
					k->key);
		if (a < 0)
			return ct_error(CT_EINVAL, "%s: leave it empty for any time", k->key);
		snprintf(out, cap, "%02d:%02d-%02d:%02d", a / 60, a % 60, b / 60, b % 60);
		return 0;
	case PK_BOOL:
		if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
			return ct_error(CT_EINVAL, "%s: on or off", k->key);
		snprintf(out, cap, "%s", v);
		return 0;
	default:
		d = strtod(v, &end);
		if (end == v || *end != '\0' || !(d >= k->min && d <= k->max) ||
		    (k->kind == PK_INT && d != (double)(long)d))
			return ct_error(CT_EINVAL, "%s: a%s number from %g to %g", k->key,
					k->kind == PK_INT ? " whole" : "", k->min, k->max);
		snprintf(out, cap, "%.10g", d);
		return 0;
	}
}

/* The prefs.conf text of the form's values, or CT_EINVAL (message in the
 * error detail) for the first bad one. */
static int form_to_text(const struct ct_web_req *req, struct ct_buf *text)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < NKEYS; i++) {
		const char *v = ct_web_arg(req, pref_keys[i].key);
		char canon[64];

		if (v == NULL || v[0] == '\0')
			continue;
		rc = check_value(&pref_keys[i], v, canon, sizeof(canon));
		if (rc == 0)
			rc = ct_buf_appendf(text, "%s = %s\n", pref_keys[i].key, canon);
	}
	if (rc == 0 && text->len > PREFS_MAX)
		rc = ct_error(CT_ETOOBIG, "preferences too long");
	return rc;
}

static int bool_field(struct ct_buf *c, const struct pref_key *k, const char *v)
{
	static const char *const opts[][2] = { { "", "as each computer says" },
		{ "on", "yes" }, { "off", "no" } };
	int rc = ct_tmpl_printf(c, "<label for=\"%s\">%s</label><select id=\"%s\" name=\"%s\">",
				k->key, k->label, k->key, k->key);

	for (size_t i = 0; rc == 0 && i < 3; i++)
		rc = ct_tmpl_printf(c, "<option value=\"%s\"%s>%s</option>", opts[i][0],
				    strcmp(v, opts[i][0]) == 0 ? " selected" : "", opts[i][1]);
	if (rc == 0)
		rc = ct_buf_appends(c, "</select>");
	return rc;
}

/* The form, filled from `conf` (the saved text; NULL: none) or, after a
 * refused POST, from the request. */
static int prefs_form(struct ct_web_req *req, struct ct_buf *c, const struct ct_conf *conf,
		      int from_req)
{
	int rc = ct_buf_appends(c, "<form class=\"box\" method=\"post\" action=\"/account/prefs\" "
				"id=\"prefs\">");

	if (rc == 0)
		rc = ct_web_csrf_field(req, c);
	for (size_t i = 0; rc == 0 && i < NKEYS; i++) {
		const struct pref_key *k = &pref_keys[i];
		const char *v = from_req ? ct_web_arg(req, k->key) :
				conf ? ct_conf_get(conf, k->key) : NULL;

		if (v == NULL)
			v = "";
		if (k->kind == PK_BOOL)
			rc = bool_field(c, k, v);
		else
			rc = ct_tmpl_printf(c, "<label for=\"%s\">%s</label><input id=\"%s\" "
					    "name=\"%s\" type=\"text\" value=\"%s\" maxlength=\"40\" "
					    "placeholder=\"%s\">", k->key, k->label, k->key, k->key,
					    v, k->hint);
	}
	if (rc == 0)
		rc = ct_buf_appends(c, "<button type=\"submit\" id=\"prefs-save\">Save</button>"
				    "</form>");
	return rc;
}

int ct_web_page_prefs(struct ct_web_req *req, struct ct_web_resp *resp)
{
	struct ct_buf c = CT_BUF_INIT(CONTENT_MAX), text = CT_BUF_INIT(PREFS_MAX + 256);
	struct ct_conf *conf = NULL;
	char saved[PREFS_MAX + 1], when[32];
	const char *notice = NULL;
	int64_t mod_time = 0;
	int rc = 0, bad = 0;

	if (req->userid <= 0) {
		ct_web_redirect(resp, "/account/login");
		return 0;
	}
	if (strcmp(req->method, "POST") == 0) {
		if (!ct_web_csrf_ok(req)) {
			notice = "The form expired; please send it again.";
			bad = 403;
		} else if (form_to_text(req, &text) < 0) {
			notice = ct_errmsg(CT_EINVAL);
			bad = 400;
		} else {
			rc = ct_web_put_prefs(req->db, req->userid, ct_buf_cstr(&text));
			notice = "Saved. Each of your computers applies them at its next "
				 "scheduler contact (within the hour, at once when it asks for work).";
		}
	}
	if (rc == 0)
		rc = ct_web_get_prefs(req->db, req->userid, saved, sizeof(saved), &mod_time);
	if (rc == 0 && saved[0] != '\0')
		rc = ct_conf_parse(saved, strlen(saved), "web prefs", &conf);
	if (rc == 0 && notice != NULL)
		rc = ct_tmpl_printf(&c, "<p class=\"notice%s\" role=\"%s\" id=\"prefs-notice\">"
				    "%s</p>", bad ? " error" : "", bad ? "alert" : "status", notice);
	if (rc == 0)
		rc = ct_tmpl_printf(&c, "<p>These apply to every computer attached to your "
			"account. A computer's own <code>prefs.conf</code> and the options of "
			"<code>ctune run</code> win over them; a field left empty leaves each "
			"computer's own setting. Last saved: <span id=\"prefs-time\">%s</span> "
			"(UTC).</p>", ct_tmpl_datetime(when, sizeof(when), mod_time));
	if (rc == 0)
		rc = prefs_form(req, &c, conf, bad != 0);
	if (rc == 0)
		rc = ct_web_render(req, resp, "Computing preferences", &c, NULL);
	if (rc == 0 && bad)
		resp->status = bad;
	ct_conf_free(conf);
	ct_buf_free(&text);
	ct_buf_free(&c);
	return rc;
}
