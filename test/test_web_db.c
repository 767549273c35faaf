/*
 * Integration test of the web module against a real embedded database
 * populated through the server's own functions (test/web_fixture.c):
 * leaderboard order and totals in the JSON API and the HTML, escaping of a
 * hostile user name, credit history and loss-curve charts, the account and
 * team forms with their CSRF and session cookies, server status and
 * metrics, and the BOINC-style stats export parsed back and compared with
 * the database row by row.
 */
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "ct_test.h"
#include "rpc/account.h"
#include "ct_buf.h"
#include "ct_conf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gzip.h"
#include "data/db.h"
#include "web/web.h"
#include "web_fixture.h"

#define NUSERS 5

static struct web_fx fx;
static char *tmpdir;

static int setup(void **state)
{
	char dir[4200];
	int rc;

	(void)state;
	tmpdir = ct_test_mkdtemp();
	if (tmpdir == NULL)
		return -1;
	snprintf(dir, sizeof(dir), "%s/project", tmpdir);
	rc = web_fx_open(&fx, dir);
	if (rc == 0)
		rc = web_fx_seed(&fx, NUSERS, 10.0);
	if (rc < 0)
		fprintf(stderr, "fixture: %s\n", ct_errmsg(rc));
	return rc < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	web_fx_close(&fx);
	ct_test_rmtree(tmpdir);
	free(tmpdir);
	return 0;
}

/* Markup the server wrote must never come out escaped (a trusted string
 * sent through an escaping %s): no tag or attribute syntax as entities. */
static void assert_no_escaped_markup(const char *html)
{
	static const char *const bad[] = { "&lt;th", "&lt;td", "&lt;tr",
		"&lt;a ", "&lt;div", "&lt;span", "&lt;p", "&lt;input", "=&quot;",
		"&quot; class", NULL };

	for (int i = 0; bad[i] != NULL; i++)
		if (strstr(html, bad[i]) != NULL)
			fail_msg("escaped markup '%s' in: %.200s", bad[i],
				 strstr(html, bad[i]));
}

/* One request through ct_web_handle(); the caller frees resp. */
static void request(const char *method, const char *path, const char *query,
		    const char *cookie, const char *form, struct ct_web_resp *resp)
{
	struct ct_web_req req;

	ct_web_req_init(&req, &fx.srv, fx.db, method, path);
	req.cookie = cookie;
	ct_web_resp_init(resp);
	if (query != NULL)
		assert_int_equal(ct_web_req_parse_form(&req, query, strlen(query)), 0);
	if (form != NULL)
		assert_int_equal(ct_web_req_parse_form(&req, form, strlen(form)), 0);
	assert_int_equal(ct_web_handle(&req, resp), 0);
	ct_web_req_free(&req);
	assert_no_escaped_markup(ct_buf_cstr(&resp->body));
}

static const char *body(const struct ct_web_resp *r)
{
	return ct_buf_cstr(&r->body);
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void test_api_users_by_total(void **state)
{
	struct ct_web_resp r;
	const char *prev = NULL;
	char pat[64];

	(void)state;
	request("GET", "/api/v1/users", "sort=total", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, "application/json");
	assert_non_null(strstr(body(&r), "\"total\":5"));
	/* Highest credit first: user NUSERS-1 down to user 0. */
	for (int i = NUSERS - 1; i >= 0; i--) {
		const char *p;

		snprintf(pat, sizeof(pat), "\"id\":%lld,", (long long)fx.users[i].id);
		p = strstr(body(&r), pat);
		assert_non_null(p);
		if (prev != NULL)
			assert_true(p > prev);
		prev = p;
		snprintf(pat, sizeof(pat), "\"total_credit\":%.15g",
			 fx.users[i].credit);
		assert_non_null(strstr(p, pat));
		assert_true(fx.users[i].credit > 0);
	}
	/* The hostile name is data in JSON, escaped for HTML embedding too. */
	assert_non_null(strstr(body(&r), "\\u003cscript\\u003ealert(1)"));
	ct_web_resp_free(&r);
}

static void test_users_page_escapes_and_orders(void **state)
{
	struct ct_web_resp r;
	const char *top, *bottom;

	(void)state;
	request("GET", "/users", "sort=total&page=1", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_null(strstr(body(&r), "<script>"));
	assert_non_null(strstr(body(&r),
		"&lt;script&gt;alert(1)&lt;/script&gt;"));
	/* the active tab is marked, the team column is a real header */
	assert_non_null(strstr(body(&r), "href=\"/users?sort=total\" class=\"on\""));
	assert_non_null(strstr(body(&r), "<th>Team</th>"));
	top = strstr(body(&r), "volunteer 4");
	bottom = strstr(body(&r), "&lt;script&gt;");
	assert_non_null(top);
	assert_true(top < bottom);
	ct_web_resp_free(&r);
}

static void test_user_page_history_chart(void **state)
{
	struct ct_web_resp r;
	char path[64];

	(void)state;
	snprintf(path, sizeof(path), "/user/%lld", (long long)fx.users[2].id);
	request("GET", path, NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(body(&r), "id=\"credit-history\""));
	/* three grant days plus the starting point */
	assert_int_equal(count_of(body(&r), "<circle"), fx.users[2].nresults + 1);
	assert_non_null(strstr(body(&r), "Test GPU 2"));
	ct_web_resp_free(&r);

	request("GET", "/user/999999", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 404);
	ct_web_resp_free(&r);
	request("GET", "/user/12abc", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 404);
	ct_web_resp_free(&r);
}

static void test_job_page(void **state)
{
	struct ct_web_resp r;
	char path[64];

	(void)state;
	snprintf(path, sizeof(path), "/job/%lld", (long long)fx.jobid);
	request("GET", path, NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(body(&r), "id=\"loss-curve\""));
	assert_non_null(strstr(body(&r), "Tiny &lt;b&gt;test&lt;/b&gt; job"));
	assert_non_null(strstr(body(&r), "href=\"/download/"));
	assert_non_null(strstr(body(&r), "id=\"rounds\""));
	ct_web_resp_free(&r);
	snprintf(path, sizeof(path), "/api/v1/job/%lld", (long long)fx.jobid);
	request("GET", path, NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(body(&r), "\"nshards\":3"));
	assert_non_null(strstr(body(&r), "\"rounds\":[{\"round\":1"));
	ct_web_resp_free(&r);
}

static void test_status_and_metrics(void **state)
{
	struct ct_web_resp r;
	int64_t inprog = 0;
	char pat[96];

	(void)state;
	assert_int_equal(ct_db_query_int(fx.db, &inprog, "SELECT COUNT(*) FROM "
		"result WHERE server_state = ?", "i", CT_RS_IN_PROGRESS), 0);
	request("GET", "/api/v1/status", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	snprintf(pat, sizeof(pat), "\"results_in_progress\":%lld", (long long)inprog);
	assert_non_null(strstr(body(&r), pat));
	/* the kept counters (round_stat) agree with the result table */
	assert_int_equal(ct_db_query_int(fx.db, &inprog, "SELECT COUNT(*) FROM "
		"result WHERE server_state = ?", "i", CT_RS_UNSENT), 0);
	snprintf(pat, sizeof(pat), "\"results_ready_to_send\":%lld", (long long)inprog);
	assert_non_null(strstr(body(&r), pat));
	assert_non_null(strstr(body(&r), "\"hosts_active_24h\":5"));
	ct_web_resp_free(&r);
	request("GET", "/metrics", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(body(&r), "\nctune_users 5\n"));
	assert_non_null(strstr(body(&r), "# TYPE ctune_tflops gauge"));
	ct_web_resp_free(&r);
}

/* ---- forms, cookies, CSRF -------------------------------------------------- */

/* Copy "name=value" of Set-Cookie `name` from resp into out. */
static void take_cookie(const struct ct_web_resp *r, const char *name,
			char *out, size_t cap)
{
	for (int i = 0; i < r->ncookies; i++)
		if (strncmp(r->cookies[i], name, strlen(name)) == 0) {
			snprintf(out, cap, "%.*s", (int)strcspn(r->cookies[i], ";"),
				 r->cookies[i]);
			return;
		}
	fail_msg("no cookie %s", name);
}

/* The value of the hidden csrf field in a page. */
static void take_csrf(const struct ct_web_resp *r, char out[65])
{
	const char *p = strstr(body(r), "name=\"csrf\" value=\"");

	assert_non_null(p);
	snprintf(out, 65, "%.64s", p + strlen("name=\"csrf\" value=\""));
}

static void test_create_account_needs_csrf(void **state)
{
	struct ct_web_resp r;
	int64_t before = 0, after = 0;

	(void)state;
	ct_db_query_int(fx.db, &before, "SELECT COUNT(*) FROM `user`", "");
	request("POST", "/account/create", NULL, NULL,
		"name=mallory&email=m%40example.org&password=12345678xx", &r);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(body(&r), "expired"));
	ct_web_resp_free(&r);
	ct_db_query_int(fx.db, &after, "SELECT COUNT(*) FROM `user`", "");
	assert_int_equal(before, after);
}

static void test_create_account_shows_key_then_team(void **state)
{
	struct ct_web_resp r;
	char cookie[200], session[200], csrf[65], form[512], key[40], hash[65];
	const char *p;
	int64_t id = 0, teamid = 0, nusers = 0;

	(void)state;
	request("GET", "/account/create", NULL, NULL, NULL, &r);
	assert_non_null(strstr(body(&r), "required maxlength=\"64\">"));
	take_cookie(&r, "ct_csrf=", cookie, sizeof(cookie));
	take_csrf(&r, csrf);
	ct_web_resp_free(&r);
	snprintf(form, sizeof(form), "csrf=%s&name=Carol+%%3Ci%%3E&email=carol%%40"
		 "example.org&password=carol-secret", csrf);
	request("POST", "/account/create", NULL, cookie, form, &r);
	assert_int_equal(r.status, 200);
	p = strstr(body(&r), "id=\"account-key\">");
	assert_non_null(p);
	snprintf(key, sizeof(key), "%.32s", p + strlen("id=\"account-key\">"));
	assert_non_null(strstr(body(&r), "ctune attach "));
	assert_non_null(strstr(body(&r), key));
	take_cookie(&r, "ct_session=", session, sizeof(session));
	ct_web_resp_free(&r);
	/* The key shown is the account's key. */
	assert_int_equal(ct_account_key_hash(key, hash), 0);
	assert_int_equal(ct_db_query_int(fx.db, &id, "SELECT id FROM `user` "
		"WHERE auth_hash = ? AND name = ?", "ss", hash, "Carol <i>"), 0);

	/* Signed in by the session cookie; create a team with the new token. */
	request("GET", "/teams/create", NULL, session, NULL, &r);
	assert_int_equal(r.status, 200);
	take_csrf(&r, csrf);
	ct_web_resp_free(&r);
	snprintf(form, sizeof(form), "csrf=%s&name=Team+Carol&description=hi", csrf);
	request("POST", "/teams/create", NULL, session, form, &r);
	assert_int_equal(r.status, 303);
	assert_int_equal(strncmp(r.location, "/team/", 6), 0);
	ct_web_resp_free(&r);
	assert_int_equal(ct_db_query_int(fx.db, &teamid, "SELECT teamid FROM "
		"`user` WHERE id = ?", "l", id), 0);
	assert_true(teamid > 0);
	assert_int_equal(ct_db_query_int(fx.db, &nusers, "SELECT nusers FROM "
		"team WHERE id = ?", "l", teamid), 0);
	assert_int_equal(nusers, 1);

	/* Leave it: the count follows. A forged token changes nothing. */
	snprintf(form, sizeof(form), "csrf=%064d&team=%lld", 0, (long long)teamid);
	request("POST", "/teams/leave", NULL, session, form, &r);
	assert_int_equal(r.status, 403);
	ct_web_resp_free(&r);
	snprintf(form, sizeof(form), "csrf=%s&team=%lld", csrf, (long long)teamid);
	request("POST", "/teams/leave", NULL, session, form, &r);
	assert_int_equal(r.status, 303);
	ct_web_resp_free(&r);
	ct_db_query_int(fx.db, &nusers, "SELECT nusers FROM team WHERE id = ?",
			"l", teamid);
	assert_int_equal(nusers, 0);
}

static void test_login_with_password_shows_same_key(void **state)
{
	struct ct_web_resp r;
	char cookie[200], csrf[65], form[512];

	(void)state;
	request("GET", "/account/login", NULL, NULL, NULL, &r);
	take_cookie(&r, "ct_csrf=", cookie, sizeof(cookie));
	take_csrf(&r, csrf);
	ct_web_resp_free(&r);
	snprintf(form, sizeof(form), "csrf=%s&email=user1%%40example.org&"
		 "password=wrong-password", csrf);
	request("POST", "/account/login", NULL, cookie, form, &r);
	assert_int_equal(r.status, 403);
	assert_null(strstr(body(&r), fx.users[1].key));
	ct_web_resp_free(&r);
	snprintf(form, sizeof(form), "csrf=%s&email=user1%%40example.org&"
		 "password=%s", csrf, fx.users[1].password);
	request("POST", "/account/login", NULL, cookie, form, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(body(&r), fx.users[1].key));
	ct_web_resp_free(&r);
}

/* ---- stats export ---------------------------------------------------------- */

static xmlDocPtr read_export(const char *file)
{
	char path[4400];
	unsigned char *data = NULL;
	size_t len = 0;
	struct ct_buf xml = CT_BUF_INIT(1 << 26);
	xmlDocPtr doc;

	snprintf(path, sizeof(path), "%s/html/stats/%s", fx.srv.dir, file);
	assert_int_equal(ct_file_read_all(path, 1 << 26, &data, &len), 0);
	if (strstr(file, ".gz") != NULL) {
		assert_int_equal(ct_gzip_decompress(data, len, &xml), 0);
	} else {
		assert_int_equal(ct_buf_append(&xml, data, len), 0);
	}
	doc = xmlReadMemory((const char *)xml.data, (int)xml.len, file, NULL,
			    XML_PARSE_NONET);
	assert_non_null(doc);
	free(data);
	ct_buf_free(&xml);
	return doc;
}

static const char *child_text(xmlNodePtr n, const char *name, char *buf, size_t cap)
{
	for (xmlNodePtr c = n->children; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, name) == 0) {
			xmlChar *t = xmlNodeGetContent(c);
			snprintf(buf, cap, "%s", (const char *)t);
			xmlFree(t);
			return buf;
		}
	return NULL;
}

static void test_stats_export_matches_db(void **state)
{
	xmlDocPtr doc;
	xmlNodePtr root;
	double sum = 0, dbsum = 0;
	int64_t nusers = 0, nhosts = 0;
	int n = 0;
	char buf[300];

	(void)state;
	assert_int_equal(ct_stats_export(&fx.srv, fx.db), 0);
	doc = read_export("user.gz");
	root = xmlDocGetRootElement(doc);
	assert_string_equal((const char *)root->name, "users");
	for (xmlNodePtr u = root->children; u; u = u->next) {
		double dbv = -1;
		int64_t id;

		if (u->type != XML_ELEMENT_NODE)
			continue;
		assert_string_equal((const char *)u->name, "user");
		id = strtoll(child_text(u, "id", buf, sizeof(buf)), NULL, 10);
		sum += strtod(child_text(u, "total_credit", buf, sizeof(buf)), NULL);
		assert_int_equal(ct_db_query_double(fx.db, &dbv, "SELECT total_credit "
			"FROM `user` WHERE id = ?", "l", id), 0);
		assert_true(dbv == strtod(buf, NULL));
		assert_int_equal(strlen(child_text(u, "cpid", buf, sizeof(buf))), 32);
		n++;
	}
	xmlFreeDoc(doc);
	ct_db_query_double(fx.db, &dbsum, "SELECT SUM(total_credit) FROM `user`", "");
	ct_db_query_int(fx.db, &nusers, "SELECT COUNT(*) FROM `user`", "");
	assert_int_equal(n, nusers);
	assert_true(sum == dbsum);

	doc = read_export("tables.xml");
	root = xmlDocGetRootElement(doc);
	assert_int_equal(strtoll(child_text(root, "nusers_total", buf, sizeof(buf)),
				 NULL, 10), nusers);
	assert_true(strtod(child_text(root, "total_credit", buf, sizeof(buf)), NULL) == dbsum);
	xmlFreeDoc(doc);

	doc = read_export("host.gz");
	n = 0;
	for (xmlNodePtr h = xmlDocGetRootElement(doc)->children; h; h = h->next)
		n += h->type == XML_ELEMENT_NODE;
	ct_db_query_int(fx.db, &nhosts, "SELECT COUNT(*) FROM host", "");
	assert_int_equal(n, nhosts);
	xmlFreeDoc(doc);
	doc = read_export("team.gz");
	assert_string_equal((const char *)xmlDocGetRootElement(doc)->name, "teams");
	xmlFreeDoc(doc);
	/* The stats role: not due right after an export, due once the
	 * interval passed. */
	assert_int_equal(ct_conf_set(fx.srv.conf, "web.stats_interval", "3600"), 0);
	assert_int_equal(ct_stats_export_run_once(&fx.srv, fx.db), 0);
	assert_int_equal(ct_conf_set(fx.srv.conf, "web.stats_interval", "1"), 0);
	sleep(2);
	assert_int_equal(ct_stats_export_run_once(&fx.srv, fx.db), 1);
}

CT_TEST_MAIN_GROUP(setup, teardown, test_api_users_by_total,
	test_users_page_escapes_and_orders, test_user_page_history_chart, test_job_page,
	test_status_and_metrics, test_create_account_needs_csrf,
	test_create_account_shows_key_then_team, test_login_with_password_shows_same_key,
	test_stats_export_matches_db)
