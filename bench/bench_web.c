/*
 * bench_web - how fast the web pages render with many volunteers.
 *
 *   bench/bench_web [NUSERS [NWUS]]   (defaults 20000, 100000)
 *
 * Makes a project in a temporary directory on the embedded database, fills
 * it with NUSERS users, NUSERS/4 teams and NUSERS hosts with random credit
 * (plain INSERTs: this is load, not behaviour, and account creation costs
 * a deliberate 200,000-iteration PBKDF2 each), then times ct_web_handle()
 * for each page, without the content cache and with it, and prints a table
 * of the median and worst of 15 requests, plus the plan MariaDB picks for
 * the leaderboard query (it must read the credit index, not sort the
 * table) and for a task list of host 1, which holds every result. With
 * NWUS > 0 it also times the page of a job of NWUS work units (two results
 * each, all on host 1 and user 1): goal <= 50 ms uncached. Last, each
 * statement of the status page and /metrics, timed and EXPLAINed; the
 * statements /host/1, /user/777 and /users?q=volunteer+12 run (caught by
 * the statement trace), each timed alone with the rows it reads (the
 * session's Handler_read_* counters) and its plan, next to candidate
 * statements for the same figures; and the forgot page's answer for a
 * known and an unknown address.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ct_err.h"
#include "ct_log.h"
#include "daemons/daemons.h"
#include "data/db.h"
#include "data/dl_web.h"
#include "data/result_state.h"
#include "web/web.h"
#include "web/web_recover.h"
#include "web_fixture.h"

#define REPS 15

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int fill(struct ct_db *db, int n)
{
	int64_t t0 = ct_db_now(db) - 86400 * 365;
	int rc = ct_db_begin(db);

	srand(7);
	for (int i = 0; i < n / 4 && rc >= 0; i++) {
		char name[64];

		snprintf(name, sizeof(name), "team %d", i);
		rc = CT_DB_EXEC(db, "INSERT INTO team (create_time, name, nusers, "
			"total_credit, expavg_credit) VALUES (?, ?, 4, ?, ?)",
			t0 + i, name, rand() % 1000000 / 3.0, rand() % 10000 / 7.0);
	}
	for (int i = 0; i < n && rc >= 0; i++) {
		char name[64], email[64], auth[65];

		snprintf(name, sizeof(name), "volunteer %d", i);
		snprintf(email, sizeof(email), "v%d@example.org", i);
		snprintf(auth, sizeof(auth), "%064d", i);
		rc = CT_DB_EXEC(db, "INSERT INTO `user` (create_time, name, email, "
			"passwd_hash, auth_hash, teamid, total_credit, expavg_credit) "
			"VALUES (?, ?, ?, 'x', ?, ?, ?, ?)", t0 + i, name,
			email, auth, (int64_t)(i % (n / 4) + 1),
			rand() % 1000000 / 3.0, rand() % 10000 / 7.0);
		if (rc >= 0)
			rc = CT_DB_EXEC(db, "INSERT INTO host (create_time, userid, "
				"host_cpid, os, cpu_model, total_credit, expavg_credit) "
				"VALUES (?, ?, ?, 'Linux', 'CPU', ?, ?)", t0 + i,
				ct_db_last_id(db), auth + 32, rand() % 1000000 / 3.0,
				rand() % 10000 / 7.0);
		if (rc >= 0 && i % 2000 == 1999) {
			rc = ct_db_commit(db);
			if (rc >= 0)
				rc = ct_db_begin(db);
		}
	}
	if (rc >= 0)
		rc = ct_db_commit(db);
	return rc < 0 ? rc : 0;
}

/* A job with about nwus work units in one round, two results each (one
 * valid, one in progress): a submitted job's WU doubled by INSERT ...
 * SELECT until there are enough (load, not behaviour). */
static int big_job(struct web_fx *fx, int nwus, int64_t *jobid)
{
	int64_t have = 0;
	int rc = web_fx_submit(fx, "big job", 1, 1, 2, jobid);

	for (int gen = 0; rc == 0 && have < nwus; gen++) {
		rc = CT_DB_QUERY_INT(fx->db, &have, "SELECT COUNT(*) FROM workunit WHERE jobid=?",
				     *jobid);
		if (rc == 0 && have < nwus)
			rc = CT_DB_EXEC(fx->db, "INSERT INTO workunit (create_time, name, jobid, "
				"roundid, round_idx, shard, seed, model_sha256, model_size, "
				"data_sha256, data_size, data_tokens, target_nresults, min_quorum, "
				"max_error_results, max_total_results, max_success_results, "
				"delay_bound, transition_time) SELECT create_time, CONCAT(name, 'x', ?), "
				"jobid, roundid, round_idx, shard + ?, seed, model_sha256, model_size, "
				"data_sha256, data_size, data_tokens, target_nresults, min_quorum, "
				"max_error_results, max_total_results, max_success_results, "
				"delay_bound, transition_time FROM workunit WHERE jobid=? LIMIT ?",
				gen, have, *jobid, (int64_t)nwus - have) < 0 ? CT_EDB : 0;
	}
	for (int k = 0; rc == 0 && k < 2; k++)
		rc = CT_DB_EXEC(fx->db, "INSERT INTO result (create_time, name, workunitid, jobid, "
			"server_state, outcome, validate_state, userid, hostid) SELECT w.create_time, "
			"CONCAT(w.name, '-b', ?), w.id, w.jobid, ?, ?, ?, 1, 1 FROM workunit w WHERE "
			"w.jobid=? AND w.id > (SELECT MIN(id) FROM workunit WHERE jobid=?)",
			k, k == 0 ? CT_RS_OVER : CT_RS_IN_PROGRESS, k == 0 ? CT_RO_SUCCESS : 0,
			k == 0 ? CT_VS_VALID : 0, *jobid, *jobid) < 0 ? CT_EDB : 0;
	if (rc == 0)
		rc = CT_DB_EXEC(fx->db, "UPDATE `round` SET nwus=(SELECT COUNT(*) FROM workunit "
				"WHERE jobid=?) WHERE jobid=?", *jobid, *jobid) < 0 ? CT_EDB : 0;
	return rc;
}

static void sort_ms(double t[REPS])
{
	for (int i = 1; i < REPS; i++)
		for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
			double x = t[j];
			t[j] = t[j - 1];
			t[j - 1] = x;
		}
}

static int time_page(struct web_fx *fx, const char *path, const char *query,
		     double *med, double *worst, size_t *bytes)
{
	double t[REPS];
	int rc = 0;

	for (int k = 0; k < REPS && rc == 0; k++) {
		struct ct_web_req req;
		struct ct_web_resp resp;
		double t0 = now_ms();

		ct_web_req_init(&req, &fx->srv, fx->db, "GET", path);
		ct_web_resp_init(&resp);
		if (query != NULL)
			rc = ct_web_req_parse_form(&req, query, strlen(query));
		if (rc == 0)
			rc = ct_web_handle(&req, &resp);
		if (rc == 0 && resp.status != 200)
			rc = ct_error(CT_EINTERNAL, "%s: status %d", path, resp.status);
		t[k] = now_ms() - t0;
		*bytes = resp.body.len;
		ct_web_resp_free(&resp);
		ct_web_req_free(&req);
	}
	sort_ms(t);
	*med = t[REPS / 2];
	*worst = t[REPS - 1];
	return rc;
}

static void explain_one(struct ct_db *db, const char *label, const char *sql)
{
	struct ct_db_res *res = NULL;

	if (ct_db_querya(db, &res, sql, NULL, 0) < 0)
		return;
	printf("%s\n", label);
	while (ct_db_next(res) > 0)
		printf("  table %-3s type %-6s key %-12s rows %-8s %s\n",
		       ct_db_str(res, 2), ct_db_str(res, 3), ct_db_str(res, 5),
		       ct_db_str(res, 8), ct_db_str(res, 9));
	ct_db_res_free(res);
}

static void explain(struct ct_db *db)
{
	explain_one(db, "\nleaderboard plan (EXPLAIN of /users?sort=rac&page=101):",
		"EXPLAIN SELECT u.id, t.name FROM (SELECT id FROM `user` ORDER BY "
		"expavg_credit DESC, id DESC LIMIT 50 OFFSET 5000) k JOIN `user` u "
		"ON u.id = k.id LEFT JOIN team t ON t.id = u.teamid "
		"ORDER BY u.expavg_credit DESC, u.id DESC");
	explain_one(db, "scheduler's one-replica-per-user check (user 1 holds every "
		"result of the big job):", "EXPLAIN SELECT r.id, r.workunitid FROM result r "
		"WHERE r.server_state=2 AND NOT EXISTS (SELECT 1 FROM result r2 FORCE INDEX "
		"(result_wu) WHERE r2.workunitid=r.workunitid AND r2.userid=1) "
		"ORDER BY r.priority DESC, r.id LIMIT 24");
	explain_one(db, "the same without FORCE INDEX (the plan before):",
		"EXPLAIN SELECT r.id, r.workunitid FROM result r "
		"WHERE r.server_state=2 AND NOT EXISTS (SELECT 1 FROM result r2 "
		"WHERE r2.workunitid=r.workunitid AND r2.userid=1) "
		"ORDER BY r.priority DESC, r.id LIMIT 24");
	explain_one(db, "task list of host 1, one state (/tasks?host=1&state=3): one page of ids "
		"from (hostid, task_state, id):", "EXPLAIN SELECT r.id FROM (SELECT id FROM result "
		"FORCE INDEX (result_host_task) WHERE hostid = 1 AND task_state = 3 ORDER BY id DESC "
		"LIMIT 50 OFFSET 0) k JOIN result r ON r.id = k.id ORDER BY r.id DESC");
	explain_one(db, "task list of host 1, every state: from (hostid, id, task_state):",
		"EXPLAIN SELECT id FROM result FORCE INDEX (result_host_id) WHERE hostid = 1 AND "
		"task_state > 0 ORDER BY id DESC LIMIT 50 OFFSET 0");
	explain_one(db, "task counts of host 1 (task_stat):", "EXPLAIN SELECT state, jobid, n, "
		"credit FROM task_stat WHERE kind = 0 AND ownerid = 1 AND n > 0 LIMIT 10000");
	explain_one(db, "team members:", "EXPLAIN SELECT u.id, t.name FROM `user` u "
		"FORCE INDEX (user_team) "
		"LEFT JOIN team t ON t.id = u.teamid WHERE u.teamid = 12 "
		"ORDER BY u.expavg_credit DESC, u.id DESC LIMIT 200");
}

/* POST /account/forgot for `email` as the visitor of `cookie` with its
 * csrf value: the answer's time (ms) and status. */
static double forgot_once(struct web_fx *fx, const char *cookie, const char *csrf,
			  const char *email, int *status)
{
	struct ct_web_req req;
	struct ct_web_resp resp;
	char form[256];
	double t0;

	snprintf(form, sizeof(form), "csrf=%s&email=%s", csrf, email);
	ct_web_req_init(&req, &fx->srv, fx->db, "POST", "/account/forgot");
	req.cookie = cookie;
	req.remote_addr = "127.0.0.1";		/* loopback: not rate-limited */
	ct_web_resp_init(&resp);
	t0 = now_ms();
	if (ct_web_req_parse_form(&req, form, strlen(form)) == 0 &&
	    ct_web_handle(&req, &resp) == 0)
		*status = resp.status;
	t0 = now_ms() - t0;
	ct_web_resp_free(&resp);
	ct_web_req_free(&req);
	return t0;
}

/* The forgot page's answer time for an address an account has and one
 * none has, interleaved (mail to a port nothing listens on: the sending
 * fails after the answer, in the recovery worker). */
static void forgot_timing(struct web_fx *fx)
{
	struct ct_web_req req;
	struct ct_web_resp resp;
	char cookie[300] = "", csrf[65] = "";
	double known[REPS], unknown[REPS];
	int st_known = 0, st_unknown = 0;
	const char *p;

	ct_conf_set(fx->srv.conf, "mail.smtp_url", "smtp://127.0.0.1:9");
	ct_conf_set(fx->srv.conf, "mail.from", "bench@example.org");
	ct_conf_set(fx->srv.conf, "limits.reset_acct_burst", "1000");
	ct_web_req_init(&req, &fx->srv, fx->db, "GET", "/account/forgot");
	ct_web_resp_init(&resp);
	if (ct_web_handle(&req, &resp) == 0 && resp.ncookies > 0 &&
	    (p = strstr(ct_buf_cstr(&resp.body), "name=\"csrf\" value=\"")) != NULL) {
		snprintf(cookie, sizeof(cookie), "%.*s", (int)strcspn(resp.cookies[0], ";"),
			 resp.cookies[0]);
		snprintf(csrf, sizeof(csrf), "%.64s", p + strlen("name=\"csrf\" value=\""));
	}
	ct_web_resp_free(&resp);
	ct_web_req_free(&req);
	for (int k = 0; k < REPS; k++) {
		char email[64];

		snprintf(email, sizeof(email), "v%d%%40example.org", k);
		known[k] = forgot_once(fx, cookie, csrf, email, &st_known);
		snprintf(email, sizeof(email), "nobody%d%%40example.org", k);
		unknown[k] = forgot_once(fx, cookie, csrf, email, &st_unknown);
	}
	(void)ct_web_recover_drain(&fx->srv, 30);
	sort_ms(known);
	sort_ms(unknown);
	printf("\n/account/forgot POST, median of %d (max): known address %.3f ms (%.3f), "
	       "unknown %.3f ms (%.3f), statuses %d and %d\n", REPS, known[REPS / 2],
	       known[REPS - 1], unknown[REPS / 2], unknown[REPS - 1], st_known, st_unknown);
}

/* What the status page and /metrics run (ct_web_get_status): each
 * statement's median of REPS runs and the rows its plan reads, next to the
 * scans they replaced (marked "before"), to show where the time goes. */
static void status_statements(struct ct_db *db)
{
	static const char *const sql[][2] = {
		{ "round_stat sums", "SELECT COALESCE(SUM(n_unsent), 0), "
		  "COALESCE(SUM(n_in_progress), 0) FROM round_stat" },
		{ "site_stat sums", "SELECT COALESCE(SUM(n_users), 0), COALESCE(SUM(n_users_credit), "
		  "0), COALESCE(SUM(n_teams), 0), COALESCE(SUM(n_hosts), 0), "
		  "COALESCE(SUM(user_credit), 0) FROM site_stat" },
		{ "WUs to validate", "SELECT COUNT(*) FROM workunit WHERE need_validate = 1" },
		{ "WUs to assimilate", "SELECT COUNT(*) FROM workunit WHERE assimilate_state = 1" },
		{ "hosts active 24 h", "SELECT COUNT(*) FROM host WHERE rpc_time > "
		  "UNIX_TIMESTAMP() - 86400" },
		{ "jobs running", "SELECT COUNT(*) FROM job WHERE status = 1" },
		{ "jobs done", "SELECT COUNT(*) FROM job WHERE status = 2" },
		{ "credit 24 h", "SELECT COALESCE(SUM(credit), 0) FROM credit_event WHERE "
		  "create_time > UNIX_TIMESTAMP() - 86400" },
		{ "events 24 h", "SELECT COUNT(*) FROM credit_event WHERE create_time > "
		  "UNIX_TIMESTAMP() - 86400" },
		{ "roles", "SELECT role, instance FROM role_heartbeat ORDER BY role, instance "
		  "LIMIT 32" },
		{ "before: users", "SELECT COUNT(*) FROM `user`" },
		{ "before: w/ credit", "SELECT COUNT(*) FROM `user` WHERE total_credit > 0" },
		{ "before: teams", "SELECT COUNT(*) FROM team" },
		{ "before: hosts", "SELECT COUNT(*) FROM host" },
		{ "before: credit", "SELECT COALESCE(SUM(total_credit), 0) FROM `user`" },
	};

	struct ct_web_status st;
	double t[REPS];

	for (int k = 0; k < REPS; k++) {
		double t0 = now_ms();

		(void)ct_web_get_status(db, &st);
		t[k] = now_ms() - t0;
	}
	sort_ms(t);
	printf("\nct_web_get_status (the figures of /status and /metrics: two statements), "
	       "median of %d: %.3f ms\n", REPS, t[REPS / 2]);
	printf("what it reads, each alone (median of %d, ms; rows the plan reads):\n", REPS);
	for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
		struct ct_db_res *res = NULL;
		char explain[1024], rows[160] = "";

		for (int k = 0; k < REPS; k++) {
			double t0 = now_ms();

			if (ct_db_querya(db, &res, sql[i][1], NULL, 0) == 0)
				while (ct_db_next(res) > 0)
					;
			ct_db_res_free(res);
			res = NULL;
			t[k] = now_ms() - t0;
		}
		sort_ms(t);
		snprintf(explain, sizeof(explain), "EXPLAIN %s", sql[i][1]);
		if (ct_db_querya(db, &res, explain, NULL, 0) == 0)
			while (ct_db_next(res) > 0 && strlen(rows) < sizeof(rows) - 40)
				snprintf(rows + strlen(rows), sizeof(rows) - strlen(rows), "%s%s %s",
					 rows[0] ? ", " : "", ct_db_str(res, 2),
					 ct_db_str(res, 8)[0] ? ct_db_str(res, 8) : "-");
		ct_db_res_free(res);
		printf("  %-18s %8.3f   %s\n", sql[i][0], t[REPS / 2], rows);
	}
}

/* ---- the statements a page runs --------------------------------------- */

#define MAX_TRACED 64
#define MAX_TRACED_ARGS 16

/* One statement a page ran, copied from the trace hook (its text and
 * arguments outlive the page). */
struct traced {
	char *sql;
	struct ct_db_arg a[MAX_TRACED_ARGS];
	size_t n;
};

struct trace_log {
	struct traced st[MAX_TRACED];
	size_t n;
};

static void trace_stmt(void *arg, const char *sql, const struct ct_db_arg *a, size_t n)
{
	struct trace_log *log = arg;
	struct traced *t;

	if (log->n >= MAX_TRACED || n > MAX_TRACED_ARGS)
		return;
	t = &log->st[log->n++];
	t->sql = strdup(sql);
	t->n = n;
	for (size_t i = 0; i < n; i++) {
		t->a[i] = a[i];
		if (a[i].type == 's' && a[i].v.s != NULL)
			t->a[i].v.s = strdup(a[i].v.s);
	}
}

static void trace_free(struct trace_log *log)
{
	for (size_t i = 0; i < log->n; i++) {
		for (size_t k = 0; k < log->st[i].n; k++)
			if (log->st[i].a[k].type == 's')
				free((char *)log->st[i].a[k].v.s);
		free(log->st[i].sql);
	}
	log->n = 0;
}

/* Rows this connection's statements have read so far (the session's
 * Handler_read_* counters). */
static int64_t rows_read(struct ct_db *db)
{
	int64_t n = 0;

	(void)CT_DB_QUERY_INT(db, &n, "SELECT CAST(SUM(VARIABLE_VALUE) AS SIGNED) FROM "
			      "information_schema.SESSION_STATUS WHERE VARIABLE_NAME LIKE ?",
			      "HANDLER_READ%");
	return n;
}

/* The rows one run of `sql` reads, less what reading the counters reads. */
static int64_t stmt_rows(struct ct_db *db, const char *sql, const struct ct_db_arg *a,
			 size_t n, int64_t base)
{
	struct ct_db_res *res = NULL;
	int64_t r0 = rows_read(db);

	if (ct_db_querya(db, &res, sql, a, n) == 0)
		while (ct_db_next(res) > 0)
			;
	ct_db_res_free(res);
	return rows_read(db) - r0 - base;
}

/* The plan of `sql` on one line: table, access type, key, rows. */
static void plan_line(struct ct_db *db, const char *sql, const struct ct_db_arg *a, size_t n)
{
	struct ct_db_res *res = NULL;
	char explain[4096];

	snprintf(explain, sizeof(explain), "EXPLAIN %s", sql);
	if (ct_db_querya(db, &res, explain, a, n) < 0)
		return;
	printf("%20s", "plan:");
	while (ct_db_next(res) > 0)
		printf(" [%s %s %s %s]", ct_db_str(res, 2), ct_db_str(res, 3), ct_db_str(res, 5),
		       ct_db_str(res, 8));
	printf("\n");
	ct_db_res_free(res);
}

/* Page `path`?`query` uncached: the rows it reads in all, then each of
 * its statements, timed alone (median of REPS) with the rows it reads. */
static void page_statements(struct web_fx *fx, const char *path, const char *query)
{
	static struct trace_log log;
	struct ct_web_req req;
	struct ct_web_resp resp;
	int64_t base, r0, total;
	double t[REPS];

	base = rows_read(fx->db);
	base = rows_read(fx->db) - base;	/* what the counter query reads */
	ct_conf_set(fx->srv.conf, "web.cache_ttl", "0");
	ct_web_req_init(&req, &fx->srv, fx->db, "GET", path);
	ct_web_resp_init(&resp);
	if (query != NULL)
		(void)ct_web_req_parse_form(&req, query, strlen(query));
	r0 = rows_read(fx->db);
	ct_db_set_trace(fx->db, trace_stmt, &log);
	(void)ct_web_handle(&req, &resp);
	ct_db_set_trace(fx->db, NULL, NULL);
	total = rows_read(fx->db) - r0 - base;
	ct_web_resp_free(&resp);
	ct_web_req_free(&req);
	printf("\n%s%s%s: %zu statements, %lld rows read (median ms, rows; each alone)\n", path,
	       query ? "?" : "", query ? query : "", log.n, (long long)total);
	for (size_t i = 0; i < log.n; i++) {
		struct traced *s = &log.st[i];

		for (int k = 0; k < REPS; k++) {
			struct ct_db_res *res = NULL;
			double t0 = now_ms();

			if (ct_db_querya(fx->db, &res, s->sql, s->a, s->n) == 0)
				while (ct_db_next(res) > 0)
					;
			ct_db_res_free(res);
			t[k] = now_ms() - t0;
		}
		sort_ms(t);
		printf("  %8.3f %8lld  %.110s\n", t[REPS / 2],
		       (long long)stmt_rows(fx->db, s->sql, s->a, s->n, base), s->sql);
		plan_line(fx->db, s->sql, s->a, s->n);
	}
	trace_free(&log);
}

/* A statement not of a page (a candidate), timed and counted the same way. */
static void candidate(struct ct_db *db, const char *label, const char *sql,
		      const struct ct_db_arg *a, size_t n)
{
	int64_t base = rows_read(db);
	double t[REPS];

	base = rows_read(db) - base;
	for (int k = 0; k < REPS; k++) {
		struct ct_db_res *res = NULL;
		double t0 = now_ms();

		if (ct_db_querya(db, &res, sql, a, n) == 0)
			while (ct_db_next(res) > 0)
				;
		ct_db_res_free(res);
		t[k] = now_ms() - t0;
	}
	sort_ms(t);
	printf("  %8.3f %8lld  %s: %.90s\n", t[REPS / 2],
	       (long long)stmt_rows(db, sql, a, n, base), label, sql);
	plan_line(db, sql, a, n);
}

/* Other ways to the figures the pages above spend their rows on. */
static void candidates(struct web_fx *fx)
{
	struct ct_web_user u;
	struct ct_db_arg key[1], pat[2];

	if (ct_web_get_user(fx->db, 777, &u) < 0)
		return;
	key[0] = (struct ct_db_arg){ .type = 'd', .v.d = u.expavg_credit };
	pat[0] = (struct ct_db_arg){ .type = 's', .v.s = "volunteer 12%" };
	pat[1] = (struct ct_db_arg){ .type = 'l', .v.l = 50 };
	printf("\ncandidates (user 777's RAC %.3f, rank %lld):\n", u.expavg_credit,
	       (long long)u.rank);
	candidate(fx->db, "rank, no index named (before)", "SELECT COUNT(*) FROM `user` "
		  "WHERE expavg_credit > ?", key, 1);
	candidate(fx->db, "rank, index named (now)", "SELECT COUNT(*) FROM `user` FORCE INDEX "
		  "(user_expavg) WHERE expavg_credit > ?", key, 1);
	candidate(fx->db, "rank, no index named (before)", "SELECT COUNT(*) FROM `user` "
		  "WHERE expavg_credit > ?", key, 1);
	candidate(fx->db, "rank, index named (now)", "SELECT COUNT(*) FROM `user` FORCE INDEX "
		  "(user_expavg) WHERE expavg_credit > ?", key, 1);
	candidate(fx->db, "rows at or below", "SELECT COUNT(*) FROM `user` FORCE INDEX "
		  "(user_expavg) WHERE expavg_credit <= ?", key, 1);
	candidate(fx->db, "search by the name index", "SELECT u.id, u.expavg_credit FROM `user` "
		  "u FORCE INDEX (user_name) WHERE u.name LIKE ? ORDER BY u.expavg_credit DESC, "
		  "u.id DESC LIMIT ?", pat, 2);
}

int main(int argc, char **argv)
{
	static struct web_fx fx;
	static const char *const pages[][2] = {
		{ "/users", "sort=rac" }, { "/users", "sort=total&page=101" },
		{ "/teams", "sort=rac" }, { "/hosts", "sort=total&page=50" },
		{ "/user/777", NULL }, { "/team/12", NULL }, { "/status", NULL },
		{ "/api/v1/users", "sort=rac&page=3" }, { "/metrics", NULL },
		{ "/tasks", "host=1" }, { "/tasks", "user=1&state=3" }, { "/host/1", NULL },
		{ "/users", "q=volunteer+12" }, { "/teams", "q=team+3" }, { "/about", NULL },
		{ "/news.atom", NULL },
	};
	int n = argc > 1 ? atoi(argv[1]) : 20000, rc;
	int nwus = argc > 2 ? atoi(argv[2]) : 100000;
	char dir[] = "/tmp/ctune-bench-web-XXXXXX", proj[64], jobpath[64] = "";
	int64_t jobid = 0;
	double t0;

	ct_log_set_level(CT_LOG_WARN);
	if (n < 100 || mkdtemp(dir) == NULL)
		return 2;
	snprintf(proj, sizeof(proj), "%s/p", dir);
	rc = web_fx_open(&fx, proj);
	t0 = now_ms();
	if (rc == 0)
		rc = fill(fx.db, n);
	if (rc < 0) {
		fprintf(stderr, "bench_web: %s\n", ct_errmsg(rc));
		return 1;
	}
	printf("%d users, %d teams, %d hosts inserted in %.1f s\n", n, n / 4, n,
	       (now_ms() - t0) / 1e3);
	t0 = now_ms();
	if (nwus > 0) {
		rc = big_job(&fx, nwus, &jobid);
		snprintf(jobpath, sizeof(jobpath), "/job/%lld", (long long)jobid);
		printf("a job of %d work units, 2 results each, inserted in %.1f s\n", nwus,
		       (now_ms() - t0) / 1e3);
	}
	printf("\n");
	printf("%-14s %-22s %10s %10s %10s %10s %9s\n", "page", "query",
	       "med ms", "max ms", "cached ms", "max ms", "bytes");
	for (size_t i = 0; i <= sizeof(pages) / sizeof(pages[0]) && rc == 0; i++) {
		int last = i == sizeof(pages) / sizeof(pages[0]);
		const char *path = last ? jobpath : pages[i][0];
		const char *query = last ? NULL : pages[i][1];
		double m1 = 0, w1 = 0, m2 = 0, w2 = 0;
		size_t bytes = 0;

		if (path[0] == '\0')
			continue;
		ct_conf_set(fx.srv.conf, "web.cache_ttl", "0");
		rc = time_page(&fx, path, query, &m1, &w1, &bytes);
		ct_conf_set(fx.srv.conf, "web.cache_ttl", "60");
		if (rc == 0)
			rc = time_page(&fx, path, query, &m2, &w2, &bytes);
		printf("%-14s %-22s %10.3f %10.3f %10.3f %10.3f %9zu\n", path,
		       query ? query : "", m1, w1, m2, w2, bytes);
	}
	if (rc < 0)
		fprintf(stderr, "bench_web: %s\n", ct_errmsg(rc));
	if (jobid > 0)
		printf("\njob page at %d WUs: goal <= 50 ms uncached\n", nwus);
	explain(fx.db);
	status_statements(fx.db);
	page_statements(&fx, "/host/1", NULL);
	page_statements(&fx, "/user/777", NULL);
	page_statements(&fx, "/users", "q=volunteer+12");
	candidates(&fx);
	forgot_timing(&fx);
	web_fx_close(&fx);
	snprintf(proj, sizeof(proj), "rm -rf '%s'", dir);
	if (system(proj) != 0)
		fprintf(stderr, "bench_web: could not remove %s\n", dir);
	return rc < 0 ? 1 : 0;
}
