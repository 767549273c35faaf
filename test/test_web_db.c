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

#include <math.h>
#include <time.h>
#include <utime.h>

#include "ct_test.h"
#include "rpc/account.h"
#include "ct_buf.h"
#include "ct_conf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gzip.h"
#include "ct_gpt2.h"
#include "validate/credit.h"
#include "data/db.h"
#include "data/dl.h"
#include "data/job_state.h"
#include "data/result_state.h"
#include "web/web.h"
#include "data/dl_web.h"
#include "web/web_recover.h"
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
	req.remote_addr = "127.0.0.1";	/* loopback: the rate limits let it be */
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
	/* no chains, no replicas compared by tolerance: none parted */
	assert_non_null(strstr(body(&r), "\"partings\":[],\"inputs\":{"));
	ct_web_resp_free(&r);
}

static void test_status_and_metrics(void **state)
{
	struct ct_web_resp r;
	int64_t inprog = 0;
	char pat[96];

	(void)state;
	assert_int_equal(CT_DB_QUERY_INT(fx.db, &inprog, "SELECT COUNT(*) FROM "
		"result WHERE server_state = ?", CT_RS_IN_PROGRESS), 0);
	request("GET", "/api/v1/status", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	snprintf(pat, sizeof(pat), "\"results_in_progress\":%lld", (long long)inprog);
	assert_non_null(strstr(body(&r), pat));
	/* the kept counters (round_stat) agree with the result table */
	assert_int_equal(CT_DB_QUERY_INT(fx.db, &inprog, "SELECT COUNT(*) FROM "
		"result WHERE server_state = ?", CT_RS_UNSENT), 0);
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

/* Every figure of the status page and /metrics against a direct count of
 * the tables (the page reads kept counters: round_stat, site_stat). */
static void assert_status_counts(void)
{
	struct ct_web_status st;
	struct ct_web_resp r;
	int64_t n = 0, day_ago = ct_db_now(fx.db) - 86400;
	double credit = 0;
	char pat[96];

	assert_int_equal(ct_web_get_status(fx.db, &st), 0);
	ct_db_query_inta(fx.db, &n, "SELECT COUNT(*) FROM `user`", NULL, 0);
	assert_int_equal(st.users, n);
	ct_db_query_inta(fx.db, &n, "SELECT COUNT(*) FROM `user` WHERE total_credit > 0", NULL, 0);
	assert_int_equal(st.users_with_credit, n);
	ct_db_query_inta(fx.db, &n, "SELECT COUNT(*) FROM team", NULL, 0);
	assert_int_equal(st.teams, n);
	ct_db_query_inta(fx.db, &n, "SELECT COUNT(*) FROM host", NULL, 0);
	assert_int_equal(st.hosts, n);
	CT_DB_QUERY_INT(fx.db, &n, "SELECT COUNT(*) FROM host WHERE rpc_time > ?", day_ago);
	assert_int_equal(st.hosts_active_24h, n);
	CT_DB_QUERY_INT(fx.db, &n, "SELECT COUNT(*) FROM job WHERE status = ?", CT_JOB_RUNNING);
	assert_int_equal(st.jobs_running, n);
	ct_db_query_inta(fx.db, &n, "SELECT COUNT(*) FROM workunit WHERE need_validate = 1",
			 NULL, 0);
	assert_int_equal(st.wu_need_validate, n);
	CT_DB_QUERY_INT(fx.db, &n, "SELECT COUNT(*) FROM result WHERE server_state = ?",
			CT_RS_UNSENT);
	assert_int_equal(st.res_unsent, n);
	ct_db_query_doublea(fx.db, &credit, "SELECT COALESCE(SUM(total_credit), 0) FROM `user`",
			    NULL, 0);
	assert_true(fabs(st.total_credit - credit) <= 1e-9 * (1 + fabs(credit)));
	CT_DB_QUERY_DOUBLE(fx.db, &credit, "SELECT COALESCE(SUM(credit), 0) FROM credit_event "
			   "WHERE create_time > ?", day_ago);
	assert_true(fabs(st.credit_24h - credit) <= 1e-9 * (1 + fabs(credit)));
	request("GET", "/metrics", NULL, NULL, NULL, &r);
	snprintf(pat, sizeof(pat), "\nctune_users %lld\n", (long long)st.users);
	assert_non_null(strstr(body(&r), pat));
	snprintf(pat, sizeof(pat), "\nctune_hosts %lld\n", (long long)st.hosts);
	assert_non_null(strstr(body(&r), pat));
	snprintf(pat, sizeof(pat), "\nctune_teams %lld\n", (long long)st.teams);
	assert_non_null(strstr(body(&r), pat));
	ct_web_resp_free(&r);
	request("GET", "/api/v1/status", NULL, NULL, NULL, &r);
	snprintf(pat, sizeof(pat), "\"users_with_credit\":%lld", (long long)st.users_with_credit);
	assert_non_null(strstr(body(&r), pat));
	ct_web_resp_free(&r);
}

/* The kept counts follow accounts, teams and computers as they come, get
 * credit, lose it and go. */
static void test_status_counts_follow_changes(void **state)
{
	int64_t uid = 0, hid = 0;

	(void)state;
	assert_int_equal(ct_conf_set(fx.srv.conf, "web.cache_ttl", "0"), 0);	/* uncached */
	assert_status_counts();
	assert_true(CT_DB_EXEC(fx.db, "INSERT INTO team (create_time, name) VALUES (?, ?)",
			       (int64_t)1, "counted team") >= 0);
	assert_true(CT_DB_EXEC(fx.db, "INSERT INTO `user` (create_time, name, email, passwd_hash, "
			       "auth_hash, total_credit) VALUES (1, 'counted', 'counted@example.org', "
			       "'x', ?, ?)", "counted-auth", 12.5) >= 0);
	uid = ct_db_last_id(fx.db);
	assert_true(CT_DB_EXEC(fx.db, "INSERT INTO host (create_time, userid, host_cpid, rpc_time) "
			       "VALUES (1, ?, 'counted-cpid', ?)", uid, ct_db_now(fx.db)) >= 0);
	hid = ct_db_last_id(fx.db);
	assert_status_counts();
	assert_true(CT_DB_EXEC(fx.db, "UPDATE `user` SET total_credit = total_credit + ? "
			       "WHERE id = ?", 0.25, uid) >= 0);
	assert_status_counts();
	assert_true(CT_DB_EXEC(fx.db, "UPDATE `user` SET total_credit = 0 WHERE id = ?", uid) >= 0);
	assert_status_counts();
	assert_true(CT_DB_EXEC(fx.db, "DELETE FROM host WHERE id = ?", hid) >= 0);
	assert_true(CT_DB_EXEC(fx.db, "DELETE FROM `user` WHERE id = ?", uid) >= 0);
	assert_true(CT_DB_EXEC(fx.db, "DELETE FROM team WHERE name = ?", "counted team") >= 0);
	assert_status_counts();
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
	ct_db_query_inta(fx.db, &before, "SELECT COUNT(*) FROM `user`", NULL, 0);
	request("POST", "/account/create", NULL, NULL,
		"name=mallory&email=m%40example.org&password=12345678xx", &r);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(body(&r), "expired"));
	ct_web_resp_free(&r);
	ct_db_query_inta(fx.db, &after, "SELECT COUNT(*) FROM `user`", NULL, 0);
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
	assert_int_equal(CT_DB_QUERY_INT(fx.db, &id, "SELECT id FROM `user` "
		"WHERE auth_hash = ? AND name = ?", hash, "Carol <i>"), 0);

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
	assert_int_equal(CT_DB_QUERY_INT(fx.db, &teamid, "SELECT teamid FROM "
		"`user` WHERE id = ?", id), 0);
	assert_true(teamid > 0);
	assert_int_equal(CT_DB_QUERY_INT(fx.db, &nusers, "SELECT nusers FROM "
		"team WHERE id = ?", teamid), 0);
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
	CT_DB_QUERY_INT(fx.db, &nusers, "SELECT nusers FROM team WHERE id = ?",
			teamid);
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
		assert_int_equal(CT_DB_QUERY_DOUBLE(fx.db, &dbv, "SELECT total_credit "
			"FROM `user` WHERE id = ?", id), 0);
		assert_true(dbv == strtod(buf, NULL));
		assert_int_equal(strlen(child_text(u, "cpid", buf, sizeof(buf))), 32);
		n++;
	}
	xmlFreeDoc(doc);
	ct_db_query_doublea(fx.db, &dbsum, "SELECT SUM(total_credit) FROM `user`", NULL, 0);
	ct_db_query_inta(fx.db, &nusers, "SELECT COUNT(*) FROM `user`", NULL, 0);
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
	ct_db_query_inta(fx.db, &nhosts, "SELECT COUNT(*) FROM host", NULL, 0);
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

/* The stats role redoes an export written before this process started,
 * however young: a restart refreshes tables.xml at once. */
static void test_stats_export_redone_after_restart(void **state)
{
	char path[4300];
	struct utimbuf old;

	(void)state;
	snprintf(path, sizeof(path), "%s/html/stats/tables.xml", fx.srv.dir);
	assert_int_equal(ct_conf_set(fx.srv.conf, "web.stats_interval", "2592000"), 0);
	assert_int_equal(ct_stats_export_run_once(&fx.srv, fx.db), 0);
	/* an hour old: well inside the interval, but older than this process */
	old.actime = old.modtime = time(NULL) - 86400;
	assert_int_equal(utime(path, &old), 0);
	assert_int_equal(ct_stats_export_run_once(&fx.srv, fx.db), 1);
	assert_int_equal(ct_stats_export_run_once(&fx.srv, fx.db), 0);
}

/* The rank of `id` in the JSON of a board or page (its "rank" member). */
static long long rank_in(const char *json, int64_t id)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "{\"id\":%lld,\"rank\":", (long long)id);
	p = strstr(json, pat);
	assert_non_null(p);
	return strtoll(p + strlen(pat), NULL, 10);
}

/* The rank on every user's, team's and computer's own page is 1 + a
 * direct count of the rows with more recent average credit (the page
 * counts through the credit index it names). */
static void test_page_ranks_direct(void **state)
{
	static const char *const kinds[][2] = {
		{ "user", "SELECT COUNT(*) FROM `user` WHERE expavg_credit > "
		  "(SELECT expavg_credit FROM `user` WHERE id = ?)" },
		{ "team", "SELECT COUNT(*) FROM team WHERE expavg_credit > "
		  "(SELECT expavg_credit FROM team WHERE id = ?)" },
		{ "host", "SELECT COUNT(*) FROM host WHERE expavg_credit > "
		  "(SELECT expavg_credit FROM host WHERE id = ?)" },
	};
	int checked = 0;

	(void)state;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		for (int64_t id = 1; id <= 64; id++) {
			union { struct ct_web_user u; struct ct_web_team t;
				struct ct_web_host h; } row;
			int64_t above = -1, rank;
			int rc = ct_web_get(fx.db, kinds[k][0], id, &row);

			if (rc == CT_ENOTFOUND)
				continue;
			assert_int_equal(rc, 0);
			rank = k == 0 ? row.u.rank : k == 1 ? row.t.rank : row.h.rank;
			assert_int_equal(CT_DB_QUERY_INT(fx.db, &above, kinds[k][1], id), 0);
			assert_int_equal(rank, above + 1);
			checked++;
		}
	assert_true(checked >= NUSERS);
}

/* One rule everywhere: ties share a rank, 1 + those with more credit,
 * on both orders, on the board, a user's own page and the host board;
 * the home page's top lists only who has earned credit. */
static void test_ties_share_a_rank(void **state)
{
	char key[CT_ACCOUNT_KEY_HEXLEN + 1], path[64];
	struct ct_web_resp r;
	int64_t id[2];

	(void)state;
	assert_int_equal(ct_conf_set(fx.srv.conf, "web.cache_ttl", "0"), 0);
	for (int i = 0; i < 2; i++) {
		char name[32], email[64];

		snprintf(name, sizeof(name), "tied %d", i);
		snprintf(email, sizeof(email), "tied%d@example.org", i);
		assert_int_equal(ct_account_create(fx.db, name, email, "tied-password", key,
						   &id[i]), 0);
	}
	for (int s = 0; s < 2; s++) {
		request("GET", "/api/v1/users", s ? "sort=total" : "sort=rac", NULL, NULL, &r);
		assert_int_equal(rank_in(body(&r), id[0]), NUSERS + 1);
		assert_int_equal(rank_in(body(&r), id[1]), NUSERS + 1);
		assert_int_equal(rank_in(body(&r), fx.users[NUSERS - 1].id), 1);
		ct_web_resp_free(&r);
	}
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/api/v1/user/%lld", (long long)id[i]);
		request("GET", path, NULL, NULL, NULL, &r);
		assert_int_equal(rank_in(body(&r), id[i]), NUSERS + 1);
		ct_web_resp_free(&r);
	}
	/* the HTML shows the same numbers */
	request("GET", "/users", "sort=total", NULL, NULL, &r);
	snprintf(path, sizeof(path), "<tr data-id=\"%lld\"><td class=\"num\">%d</td>",
		 (long long)id[0], NUSERS + 1);
	assert_non_null(strstr(body(&r), path));
	ct_web_resp_free(&r);
	/* the home page's top 10 leaves the two without credit out */
	request("GET", "/", NULL, NULL, NULL, &r);
	assert_non_null(strstr(body(&r), "volunteer 4"));
	assert_null(strstr(body(&r), "tied 0"));
	assert_null(strstr(body(&r), "tied 1"));
	ct_web_resp_free(&r);
}

/* A job page says what is trained and on what; a team page says why its
 * total is not the members' sum; the status page's speed has a unit. */
static void test_job_inputs_team_note_speed(void **state)
{
	struct ct_web_resp r;
	char path[64];

	(void)state;
	snprintf(path, sizeof(path), "/job/%lld", (long long)fx.jobid);
	request("GET", path, NULL, NULL, NULL, &r);
	assert_non_null(strstr(body(&r), "id=\"job-inputs\""));
	/* the fixture's model: GPT-2, L=1, C=8, NH=2, V=64, maxT=16 */
	assert_non_null(strstr(body(&r), "GPT-2, 1 layer, width 8, 2 heads, vocabulary 64, "
			       "context 16 tokens"));
	assert_non_null(strstr(body(&r), "full fine-tuning"));
	/* 300 training tokens in 3 shards */
	assert_non_null(strstr(body(&r), "300 tokens in 3 shards"));
	ct_web_resp_free(&r);
	snprintf(path, sizeof(path), "/api/v1/job/%lld", (long long)fx.jobid);
	request("GET", path, NULL, NULL, NULL, &r);
	assert_non_null(strstr(body(&r), "\"inputs\":{\"model_sha256\":\""));
	assert_non_null(strstr(body(&r), "\"train_tokens\":300"));
	ct_web_resp_free(&r);

	request("GET", "/status", NULL, NULL, NULL, &r);
	assert_non_null(strstr(body(&r), "Computing speed (24 h)"));
	assert_non_null(strstr(body(&r), "FLOPS</div>"));
	assert_null(strstr(body(&r), "e-0"));
	ct_web_resp_free(&r);
}

/* Move result `id` along the states `path` (ct_res_move, as the server's
 * roles do), recording the host and user on the send. */
static void walk(int64_t id, const enum ct_res_state *path, size_t n,
		 const struct web_fx_user *u)
{
	struct ct_res_change c = { .now = ct_db_now(fx.db), .hostid = u->hostid,
				   .userid = u->id, .deadline = ct_db_now(fx.db) + 86400,
				   .elapsed_s = 12 };

	for (size_t i = 1; i < n; i++)
		assert_int_equal(ct_res_move(fx.db, id, path[i - 1], path[i], &c), 1);
}

/* Rows of task_stat (kind 0 computers, 1 accounts) that disagree with a
 * count of the results themselves, both ways round. */
static int64_t task_stat_wrong(void)
{
	int64_t wrong = -1, missing = -1;

	assert_int_equal(ct_db_query_inta(fx.db, &wrong, "SELECT COUNT(*) FROM (SELECT s.kind "
		"FROM task_stat s "
		"LEFT JOIN (SELECT 0 AS kind, hostid AS ownerid, jobid, task_state, "
		"granted_credit FROM result UNION ALL SELECT 1, userid, jobid, task_state, "
		"granted_credit FROM result) r ON r.kind = s.kind AND r.ownerid = s.ownerid AND "
		"r.jobid = s.jobid AND r.task_state > 0 GROUP BY s.kind, s.ownerid, s.jobid "
		"HAVING MIN(s.n_in_progress) <> COALESCE(SUM(r.task_state = 1), 0) OR "
		"MIN(s.n_pending) <> COALESCE(SUM(r.task_state = 2), 0) OR "
		"MIN(s.n_valid) <> COALESCE(SUM(r.task_state = 3), 0) OR "
		"MIN(s.n_invalid) <> COALESCE(SUM(r.task_state = 4), 0) OR "
		"MIN(s.n_error) <> COALESCE(SUM(r.task_state = 5), 0) OR ABS(MIN(s.credit) - "
		"COALESCE(SUM(IF(r.task_state = 3, r.granted_credit, 0)), 0)) > 1e-9) x", NULL, 0),
		0);
	assert_int_equal(ct_db_query_inta(fx.db, &missing, "SELECT COUNT(*) FROM (SELECT 0 AS "
		"kind, hostid AS ownerid, jobid FROM result WHERE task_state > 0 UNION SELECT 1, "
		"userid, jobid FROM result WHERE task_state > 0) g LEFT JOIN task_stat s ON "
		"s.kind = g.kind AND s.ownerid = g.ownerid AND s.jobid = g.jobid "
		"WHERE s.n_valid IS NULL", NULL, 0), 0);
	return wrong + missing;
}

/* A computer's and a user's tasks: one in each state, listed and counted
 * by state, and the pending one's credit what the validator's formula
 * gives for the job (every valid result of a job earns the same). */
static void test_tasks_by_state_and_pending_credit(void **state)
{
	static const enum ct_res_state run[] = { CT_RES_UNSENT, CT_RES_IN_PROGRESS },
		rep[] = { CT_RES_UNSENT, CT_RES_IN_PROGRESS, CT_RES_REPORTED },
		bad[] = { CT_RES_UNSENT, CT_RES_IN_PROGRESS, CT_RES_REPORTED, CT_RES_INVALID },
		err[] = { CT_RES_UNSENT, CT_RES_IN_PROGRESS, CT_RES_CLIENT_ERROR };
	const struct ct_model_config cfg = { .maxT = 16, .V = 64, .L = 1, .NH = 2, .C = 8,
					    .Vp = 64 };
	const struct web_fx_user *u = &fx.users[1];
	double want = ct_credit_from_flops(ct_credit_wu_flops(&cfg, 8, 1, 2));
	int64_t jobid = 0, rid[4];
	struct ct_web_resp r;
	char q[96], pat[160];
	size_t n = 0;

	(void)state;
	assert_int_equal(ct_conf_set(fx.srv.conf, "web.cache_ttl", "0"), 0);
	assert_int_equal(web_fx_submit(&fx, "tasks <i>job</i>", 2, 1, 2, &jobid), 0);
	assert_int_equal(ct_dl_query_ids(fx.db, rid, 4, &n, "SELECT id FROM result WHERE "
					 "jobid = ? ORDER BY id", CT_DB_ARGS(jobid)), 0);
	assert_int_equal(n, 4);
	walk(rid[0], run, 2, u);
	walk(rid[1], rep, 3, u);
	walk(rid[2], bad, 4, u);
	walk(rid[3], err, 3, u);

	snprintf(q, sizeof(q), "host=%lld", (long long)u->hostid);
	request("GET", "/api/v1/tasks", q, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	/* the fixture's own results are still out (credited early, as it does) */
	snprintf(pat, sizeof(pat), "\"counts\":{\"all\":%d,\"in progress\":%d,"
		 "\"pending validation\":1,\"valid\":0,\"invalid\":1,\"error\":1}",
		 u->nresults + 4, u->nresults + 1);
	assert_non_null(strstr(body(&r), pat));
	snprintf(pat, sizeof(pat), "\"pending_credit\":%.17g", want);
	assert_non_null(strstr(body(&r), pat));
	assert_true(want > 0);
	ct_web_resp_free(&r);

	/* the page filtered to pending lists that one task, escaped job name */
	snprintf(q, sizeof(q), "host=%lld&state=2", (long long)u->hostid);
	request("GET", "/tasks", q, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(count_of(body(&r), "<tr data-id="), 1);
	snprintf(pat, sizeof(pat), "<tr data-id=\"%lld\" data-state=\"2\">", (long long)rid[1]);
	assert_non_null(strstr(body(&r), pat));
	assert_non_null(strstr(body(&r), "tasks &lt;i&gt;job&lt;/i&gt;"));
	assert_non_null(strstr(body(&r), "id=\"pending-credit\""));
	ct_web_resp_free(&r);

	/* the user's page has the same section; the user's list the same count */
	snprintf(q, sizeof(q), "/user/%lld", (long long)u->id);
	request("GET", q, NULL, NULL, NULL, &r);
	assert_non_null(strstr(body(&r), "id=\"task-states\""));
	snprintf(pat, sizeof(pat), "pending validation <span class=\"count\">1</span>");
	assert_non_null(strstr(body(&r), pat));
	ct_web_resp_free(&r);

	/* once one result of the job is valid, pending ones count its credit */
	walk(rid[1], (const enum ct_res_state[]){ CT_RES_REPORTED, CT_RES_VALID }, 2, u);
	assert_int_equal(ct_db_begin(fx.db), 0);
	assert_true(ct_credit_grant(fx.db, rid[1], 7.25, ct_db_now(fx.db)) >= 0);
	assert_int_equal(ct_db_commit(fx.db), 0);
	walk(rid[0], (const enum ct_res_state[]){ CT_RES_IN_PROGRESS, CT_RES_REPORTED }, 2, u);
	snprintf(q, sizeof(q), "user=%lld", (long long)u->id);
	request("GET", "/api/v1/tasks", q, NULL, NULL, &r);
	assert_non_null(strstr(body(&r), "\"pending validation\":1,\"valid\":1,"));
	assert_non_null(strstr(body(&r), "\"pending_credit\":7.25"));
	ct_web_resp_free(&r);

	request("GET", "/tasks", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 404);
	ct_web_resp_free(&r);

	/* the counters the result triggers keep agree with a count of the
	 * results, also after a result is deleted (as the purge does) */
	assert_true(task_stat_wrong() == 0);
	assert_int_equal(CT_DB_EXEC(fx.db, "DELETE FROM result WHERE id = ?", rid[2]), 1);
	assert_true(task_stat_wrong() == 0);
	snprintf(q, sizeof(q), "host=%lld", (long long)u->hostid);
	request("GET", "/api/v1/tasks", q, NULL, NULL, &r);
	assert_non_null(strstr(body(&r), "\"invalid\":0,\"error\":1}"));
	ct_web_resp_free(&r);
}

/* POST `form` (with the page's CSRF token in front) to `path` as the
 * session `cookie`; the caller frees r. */
static void post_form(const char *path, const char *cookie, const char *csrf,
		      const char *form, struct ct_web_resp *r)
{
	char full[1024];

	snprintf(full, sizeof(full), "csrf=%s&%s", csrf, form);
	request("POST", path, NULL, cookie, full, r);
}

/* A user's name (unique, without case), password, profile, a new key; a
 * forgotten password through an operator's one-time link. */
static void test_account_settings_and_reset(void **state)
{
	const struct web_fx_user *u = &fx.users[2];
	char session[200], anon[200], csrf[65], form[512], key[CT_ACCOUNT_KEY_HEXLEN + 1];
	char token[65], name[65], hash[65], path[96];
	struct ct_db_res *res = NULL;
	struct ct_web_resp r;
	int64_t uid = 0, id = 0;
	const char *p;

	(void)state;
	request("GET", "/account/login", NULL, NULL, NULL, &r);
	take_cookie(&r, "ct_csrf=", anon, sizeof(anon));
	take_csrf(&r, csrf);
	ct_web_resp_free(&r);
	snprintf(form, sizeof(form), "email=%s&password=%s", "user2%40example.org", u->password);
	post_form("/account/login", anon, csrf, form, &r);
	take_cookie(&r, "ct_session=", session, sizeof(session));
	ct_web_resp_free(&r);
	request("GET", "/account/settings", NULL, session, NULL, &r);
	assert_int_equal(r.status, 200);
	take_csrf(&r, csrf);
	ct_web_resp_free(&r);

	/* a name another user has, in other case: refused; a wrong password too */
	snprintf(form, sizeof(form), "what=name&name=VOLUNTEER+3&password=%s", u->password);
	post_form("/account/settings", session, csrf, form, &r);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(body(&r), "is taken"));
	ct_web_resp_free(&r);
	post_form("/account/settings", session, csrf, "what=name&name=Dana&password=wrong-one", &r);
	assert_int_equal(r.status, 403);
	ct_web_resp_free(&r);
	snprintf(form, sizeof(form), "what=name&name=Dana+%%3Cb%%3E&password=%s", u->password);
	post_form("/account/settings", session, csrf, form, &r);
	assert_int_equal(r.status, 200);
	ct_web_resp_free(&r);
	assert_int_equal(CT_DB_QUERY(fx.db, &res, "SELECT name FROM `user` WHERE id = ?",
				     u->id), 0);
	assert_true(ct_db_next(res) > 0);
	assert_string_equal(ct_db_str(res, 0), "Dana <b>");
	ct_db_res_free(res);
	/* the web's sign-up refuses a taken name as well */
	assert_int_equal(ct_account_create(fx.db, "dana <B>", "d2@example.org", "pw-12345678",
					   key, &id), CT_EEXISTS);

	/* a new password keeps the same account key */
	snprintf(form, sizeof(form), "what=password&new_password=new-pass-2&password=%s",
		 u->password);
	post_form("/account/settings", session, csrf, form, &r);
	assert_int_equal(r.status, 200);
	ct_web_resp_free(&r);
	assert_int_equal(ct_account_lookup(fx.db, u->email, "new-pass-2", key, &uid, name), 0);
	assert_string_equal(key, u->key);
	assert_int_equal(ct_account_lookup(fx.db, u->email, u->password, key, &uid, name),
			 CT_EAUTH);

	/* a profile: a country from the list, text that stays text */
	post_form("/account/settings", session, csrf, "what=profile&country=Atlantis&profile=x", &r);
	assert_int_equal(r.status, 400);
	ct_web_resp_free(&r);
	post_form("/account/settings", session, csrf, "what=profile&country=France&"
		  "profile=%3Cscript%3Ehi%3C%2Fscript%3E%0Athere", &r);
	assert_int_equal(r.status, 200);
	ct_web_resp_free(&r);
	snprintf(path, sizeof(path), "/user/%lld", (long long)u->id);
	request("GET", path, NULL, NULL, NULL, &r);
	assert_non_null(strstr(body(&r), "id=\"profile\">&lt;script&gt;hi&lt;/script&gt;\nthere"));
	assert_non_null(strstr(body(&r), "<div class=\"v\">France</div>"));
	ct_web_resp_free(&r);

	/* forgotten: the operator's one-time link sets a new password */
	assert_int_equal(ct_account_reset_start(fx.db, "USER2@example.org", 3600, token, &uid), 0);
	assert_int_equal(uid, u->id);
	snprintf(path, sizeof(path), "token=%s", token);
	request("GET", "/account/reset", path, anon, NULL, &r);
	take_csrf(&r, csrf);
	ct_web_resp_free(&r);
	snprintf(form, sizeof(form), "token=%s&new_password=short", token);
	post_form("/account/reset", anon, csrf, form, &r);
	assert_int_equal(r.status, 400);
	ct_web_resp_free(&r);
	snprintf(form, sizeof(form), "token=%s&new_password=after-reset-1", token);
	post_form("/account/reset", anon, csrf, form, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(body(&r), "id=\"reset-done\""));
	ct_web_resp_free(&r);
	post_form("/account/reset", anon, csrf, form, &r);	/* once only */
	assert_int_equal(r.status, 400);
	ct_web_resp_free(&r);
	/* the new password signs in; the old key cannot be shown, still works */
	assert_int_equal(ct_account_lookup(fx.db, u->email, "after-reset-1", key, &uid, name), 0);
	assert_string_equal(key, "");
	assert_int_equal(ct_account_key_hash(u->key, hash), 0);
	assert_int_equal(CT_DB_QUERY_INT(fx.db, &id, "SELECT id FROM `user` WHERE auth_hash = ?",
					 hash), 0);
	assert_int_equal(id, u->id);
	/* the reset ended the account's sessions (a stolen one with them):
	 * the session from before is signed out, a new sign-in works */
	request("GET", "/account/settings", NULL, session, NULL, &r);
	assert_int_equal(r.status, 303);
	ct_web_resp_free(&r);
	request("GET", "/account/login", NULL, anon, NULL, &r);
	take_csrf(&r, csrf);
	ct_web_resp_free(&r);
	post_form("/account/login", anon, csrf, "email=user2%40example.org&password=after-reset-1",
		  &r);
	take_cookie(&r, "ct_session=", session, sizeof(session));
	ct_web_resp_free(&r);

	/* a new key: shown once, the old one no longer signs anything */
	post_form("/account/settings", session, csrf, "what=newkey&password=after-reset-1", &r);
	assert_int_equal(r.status, 403);	/* the session's token, not the anonymous one */
	ct_web_resp_free(&r);
	request("GET", "/account/settings", NULL, session, NULL, &r);
	take_csrf(&r, csrf);
	ct_web_resp_free(&r);
	post_form("/account/settings", session, csrf, "what=newkey&password=after-reset-1", &r);
	assert_int_equal(r.status, 200);
	p = strstr(body(&r), "id=\"account-key\">");
	assert_non_null(p);
	snprintf(key, sizeof(key), "%.32s", p + strlen("id=\"account-key\">"));
	ct_web_resp_free(&r);
	assert_int_equal(ct_account_key_hash(key, hash), 0);
	assert_int_equal(CT_DB_QUERY_INT(fx.db, &id, "SELECT id FROM `user` WHERE auth_hash = ?",
					 hash), 0);
	assert_int_equal(id, u->id);
	assert_int_equal(ct_account_lookup(fx.db, u->email, "after-reset-1", token, &uid, name), 0);
	assert_string_equal(token, key);
	assert_int_equal(ct_account_key_hash(u->key, hash), 0);
	assert_int_equal(CT_DB_QUERY_INT(fx.db, &id, "SELECT id FROM `user` WHERE auth_hash = ?",
					 hash), CT_ENOTFOUND);
}

/* The rank and RAC of the first and the last row of a board's JSON page. */
static void page_ends(const char *json, long long *rank0, double *rac0, long long *rankn,
		      double *racn)
{
	const char *p = strstr(json, "\"rank\":"), *last = p;

	assert_non_null(p);
	*rank0 = strtoll(p + 7, NULL, 10);
	*rac0 = strtod(strstr(p, "\"expavg_credit\":") + 16, NULL);
	while ((p = strstr(p + 1, "\"rank\":")) != NULL)
		last = p;
	*rankn = strtoll(last + 7, NULL, 10);
	*racn = strtod(strstr(last, "\"expavg_credit\":") + 16, NULL);
}

/* Page numbers, a page to go to, a tie across a page boundary keeping one
 * rank, and name search (wildcards are text). 120 users by plain INSERTs:
 * load, not behaviour (as bench/bench_web). */
static void test_pages_and_search(void **state)
{
	long long r0, rn, s0, sn;
	double a0, an, b0, bn;
	struct ct_web_resp r;
	char auth[65], name[32], email[48];

	(void)state;
	for (int i = 0; i < 120; i++) {
		/* 1000, then pairs: 999.5 twice, 999 twice, ... (rows 49 and 50 tie) */
		double rac = 1000 - 0.5 * ((i + 1) / 2);

		snprintf(auth, sizeof(auth), "%064d", i);
		snprintf(name, sizeof(name), "pager %03d", i);
		snprintf(email, sizeof(email), "pager%d@example.org", i);
		assert_true(CT_DB_EXEC(fx.db, "INSERT INTO `user` (create_time, name, email, "
			"passwd_hash, auth_hash, total_credit, expavg_credit) VALUES "
			"(1, ?, ?, 'x', ?, ?, ?)", name, email, auth, rac, rac) >= 0);
	}
	request("GET", "/users", "sort=rac&page=2", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	/* 120 + the fixture's users: three pages, each linked, page 2 current */
	assert_non_null(strstr(body(&r), "href=\"/users?sort=rac&amp;page=1\">1</a>"));
	assert_non_null(strstr(body(&r), "<span class=\"on\" aria-current=\"page\">2</span>"));
	assert_non_null(strstr(body(&r), "href=\"/users?sort=rac&amp;page=3\">3</a>"));
	assert_non_null(strstr(body(&r), "name=\"page\" type=\"number\" min=\"1\" max=\"3\""));
	assert_non_null(strstr(body(&r), "\xe2\x86\x90 Previous</a>"));
	ct_web_resp_free(&r);
	/* the tie of rows 50 and 51 (1-based) keeps one rank across the pages */
	request("GET", "/api/v1/users", "sort=rac&page=1", NULL, NULL, &r);
	page_ends(body(&r), &r0, &a0, &rn, &an);
	ct_web_resp_free(&r);
	request("GET", "/api/v1/users", "sort=rac&page=2", NULL, NULL, &r);
	page_ends(body(&r), &s0, &b0, &sn, &bn);
	ct_web_resp_free(&r);
	assert_int_equal(r0, 1);
	assert_true(an == b0);
	assert_int_equal(rn, 50);
	assert_int_equal(s0, 50);
	assert_int_equal(sn, 100);	/* rows 100 and 101 tie too: the first of them */

	/* search: by the start of a name, any case; "%" is text */
	request("GET", "/users", "q=PAGER+11", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(count_of(body(&r), "<tr data-id="), 10);	/* pager 110..119 */
	assert_non_null(strstr(body(&r), "10 matches whose name starts with \"PAGER 11\""));
	ct_web_resp_free(&r);
	request("GET", "/users", "q=%25", NULL, NULL, &r);
	assert_non_null(strstr(body(&r), "0 matches"));
	ct_web_resp_free(&r);
	request("GET", "/teams", "q=team", NULL, NULL, &r);	/* "Team Carol" */
	assert_int_equal(count_of(body(&r), "<tr data-id="), 1);
	assert_non_null(strstr(body(&r), "Team Carol"));
	ct_web_resp_free(&r);
}

/* News posted by the operator on /news, the home page and a valid Atom
 * feed (escaped); the project page's description, five steps and the
 * client packages, served byte for byte and by name only. */
static void test_news_about_downloads(void **state)
{
	char dir[4300], path[4400];
	struct ct_web_resp r;
	xmlDocPtr doc;
	int64_t id = 0;
	FILE *f;

	(void)state;
	assert_int_equal(ct_web_news_add(fx.db, "Round <2> & more", "Line one\n<i>two</i>", &id),
			 0);
	assert_int_equal(ct_web_news_add(fx.db, "two\nlines", "", &id), CT_EINVAL);
	request("GET", "/news", NULL, NULL, NULL, &r);
	assert_non_null(strstr(body(&r), "<h3>Round &lt;2&gt; &amp; more</h3>"));
	assert_non_null(strstr(body(&r), "Line one\n&lt;i&gt;two&lt;/i&gt;"));
	ct_web_resp_free(&r);
	request("GET", "/", NULL, NULL, NULL, &r);
	assert_non_null(strstr(body(&r), "Round &lt;2&gt; &amp; more"));
	assert_non_null(strstr(body(&r), "href=\"/about\""));
	ct_web_resp_free(&r);
	request("GET", "/news.atom", NULL, NULL, NULL, &r);
	assert_string_equal(r.content_type, "application/atom+xml");
	doc = xmlReadMemory(body(&r), (int)r.body.len, "news.atom", NULL, XML_PARSE_NONET);
	assert_non_null(doc);
	assert_string_equal((const char *)xmlDocGetRootElement(doc)->name, "feed");
	xmlFreeDoc(doc);
	assert_non_null(strstr(body(&r), "<title>Round &lt;2&gt; &amp; more</title>"));
	ct_web_resp_free(&r);

	assert_int_equal(ct_conf_set(fx.srv.conf, "project_description", "We <b>tune</b> models."),
			 0);
	snprintf(dir, sizeof(dir), "%s/html/client", fx.srv.dir);
	assert_int_equal(ct_mkdir_p(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/ctune_0.1.0_amd64.deb", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not really a deb", f);
	fclose(f);
	request("GET", "/about", NULL, NULL, NULL, &r);
	assert_non_null(strstr(body(&r), "We &lt;b&gt;tune&lt;/b&gt; models."));
	assert_int_equal(count_of(strstr(body(&r), "id=\"join-steps\""), "<li>") -
			 count_of(strstr(body(&r), "</ol>"), "<li>"), 5);
	assert_non_null(strstr(body(&r), "href=\"/client/ctune_0.1.0_amd64.deb\""));
	ct_web_resp_free(&r);
	request("GET", "/client/ctune_0.1.0_amd64.deb", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, strlen("not really a deb"));
	ct_web_resp_free(&r);
	request("GET", "/client/..", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 404);
	ct_web_resp_free(&r);
	request("GET", "/client/nothing.deb", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 404);
	ct_web_resp_free(&r);
}

/* The forgot page answers a known and an unknown address alike, byte for
 * byte, having only queued them: the link is made after the answer (the
 * mail itself fails here, to a port nothing listens on, and is logged). */
static void test_forgot_answers_alike(void **state)
{
	const struct web_fx_user *u = &fx.users[3];
	struct ct_web_resp known, unknown, r;
	char anon[200], csrf[65], form[256], email[96];
	int64_t before = 0, after = 0, nobody = 0;

	(void)state;
	assert_int_equal(ct_conf_set(fx.srv.conf, "mail.smtp_url", "smtp://127.0.0.1:9"), 0);
	assert_int_equal(ct_conf_set(fx.srv.conf, "mail.from", "project@example.org"), 0);
	request("GET", "/account/forgot", NULL, NULL, NULL, &r);
	assert_non_null(strstr(body(&r), "id=\"forgot-email\""));
	take_cookie(&r, "ct_csrf=", anon, sizeof(anon));
	take_csrf(&r, csrf);
	ct_web_resp_free(&r);
	snprintf(email, sizeof(email), "%s", u->email);
	*strchr(email, '@') = '\0';
	CT_DB_QUERY_INT(fx.db, &before, "SELECT COUNT(*) FROM password_reset WHERE userid = ?",
			u->id);
	snprintf(form, sizeof(form), "email=%s%%40%s", email, strchr(u->email, '@') + 1);
	post_form("/account/forgot", anon, csrf, form, &known);
	post_form("/account/forgot", anon, csrf, "email=nobody%40example.org", &unknown);
	assert_int_equal(known.status, 200);
	assert_int_equal(unknown.status, known.status);
	assert_string_equal(unknown.content_type, known.content_type);
	assert_int_equal(unknown.ncookies, known.ncookies);
	assert_string_equal(body(&unknown), body(&known));
	assert_non_null(strstr(body(&known), "If an account has this address"));
	ct_web_resp_free(&known);
	ct_web_resp_free(&unknown);
	/* after the answer: a link for the account, none for the other */
	assert_int_equal(ct_web_recover_drain(&fx.srv, 20), 0);
	CT_DB_QUERY_INT(fx.db, &after, "SELECT COUNT(*) FROM password_reset WHERE userid = ?",
			u->id);
	assert_int_equal(after, before + 1);
	ct_db_query_inta(fx.db, &nobody, "SELECT COUNT(*) FROM password_reset r LEFT JOIN `user` "
			 "u ON u.id = r.userid WHERE u.id IS NULL", NULL, 0);
	assert_int_equal(nobody, 0);
	assert_int_equal(ct_conf_set(fx.srv.conf, "mail.smtp_url", ""), 0);
}

CT_TEST_MAIN_GROUP(setup, teardown, test_api_users_by_total,
	test_users_page_escapes_and_orders, test_user_page_history_chart, test_job_page,
	test_status_and_metrics, test_status_counts_follow_changes,
	test_create_account_needs_csrf,
	test_create_account_shows_key_then_team, test_login_with_password_shows_same_key,
	test_stats_export_matches_db, test_stats_export_redone_after_restart,
	test_ties_share_a_rank, test_page_ranks_direct, test_job_inputs_team_note_speed,
	test_tasks_by_state_and_pending_credit, test_account_settings_and_reset,
	test_forgot_answers_alike, test_pages_and_search, test_news_about_downloads)
