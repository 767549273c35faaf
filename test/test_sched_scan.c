/*
 * test_sched_scan.c - a scheduler RPC's cost must not grow with the unsent
 * work. The rows its statements examine are read from the
 * database's own counters (the session's Handler_read_* status) around
 * real RPCs (ct_sched_rpc on this test's connection), first with 1,000
 * unsent WUs, then with 10,000: the count per RPC may not grow by more
 * than a constant, whatever the implementation of the day.
 *
 * Each measured host makes the RPCs of a busy volunteer: a first contact
 * that asks for 4 results, one that reports them (as client errors, so no
 * uploads are involved) and asks for 4 more, and one that asks for none
 * while it computes those (listed as its other results). No result is
 * ever valid, the case in which an estimate over the job's valid results
 * has the most to walk.
 */
#include "ct_test_db.h"

#include <inttypes.h>

#include "rpc/account.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_gpt2.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_tokens.h"
#include "data/db_args.h"
#include "data/result_state.h"
#include "sched_load.h"
#include "rpc/feeder.h"
#include "rpc/sched_rpc.h"
#include "daemons/wg.h"

#define HOSTS_PER_STEP 8

static struct ct_server g_srv;
static struct ct_db *g_db;
static char *g_dir;
static int g_next_user;

static void make_job(void)
{
	const struct ct_model_config cfg = { .maxT = 64, .V = 256, .L = 1, .NH = 2, .C = 8,
					    .Vp = 256 };
	struct ct_gpt2 m = { 0 };
	char mp[4200], tp[4200];
	static ct_tok tok[4000];
	int64_t jobid = 0;

	for (size_t i = 0; i < sizeof(tok) / sizeof(tok[0]); i++)
		tok[i] = (ct_tok)(i % 200);
	snprintf(mp, sizeof(mp), "%s/model.bin", g_dir);
	snprintf(tp, sizeof(tp), "%s/tokens.bin", g_dir);
	assert_int_equal(ct_gpt2_alloc(&m, &cfg), 0);
	assert_int_equal(ct_gpt2_save(mp, &m.cfg, m.params), 0);
	ct_gpt2_free(&m);
	assert_int_equal(ct_tokens_save(tp, tok, sizeof(tok) / sizeof(tok[0])), 0);
	struct ct_job_spec spec = { .name = "scan", .model_path = mp, .train_path = tp,
		.eval_path = tp, .shards = 8, .rounds = 1, .steps = 1, .batch = 1, .seq = 8,
		.lr = 1e-3, .quorum = 2, .replicas = 2, .adaptive = 0 };
	assert_int_equal(ct_wg_submit(&g_srv, g_db, &spec, &jobid), 0);
	assert_int_equal(jobid, 1);
}

static int setup_all(void **state)
{
	struct ct_project_opts o = { .name = "scan", .listen = "127.0.0.1:0" };

	(void)state;
	ct_log_set_level(getenv("SCAN_DEBUG") ? CT_LOG_DEBUG : CT_LOG_WARN);
	if (ct_test_project_open(&o, &g_dir, &g_srv, &g_db) < 0)
		return -1;
	ct_server_set_base_url(&g_srv, "http://127.0.0.1:1");
	/* room for the errors the hosts report: the limits are not measured */
	/* the cache's full reads by its own triggers only, not every 2 s of
	 * wall time: on a slow machine more RPCs would share each */
	if (ct_conf_set(g_srv.conf, "sched.feeder_full_s", "3600") < 0 ||
	    ct_conf_set(g_srv.conf, "sched.daily_quota", "100000") < 0 ||
	    ct_conf_set(g_srv.conf, "sched.max_in_progress", "64") < 0)
		return -1;
	make_job();
	return 0;
}

static int teardown_all(void **state)
{
	(void)state;
	ct_db_close(g_db);
	ct_db_global_end();
	ct_server_free(&g_srv);
	ct_test_rmtree(g_dir);
	free(g_dir);
	return 0;
}

/* This connection's session counter(s) matching pattern, summed. */
static int64_t counter(const char *pattern)
{
	int64_t n = 0;

	assert_int_equal(CT_DB_QUERY_INT(g_db, &n, "SELECT CAST(SUM(VARIABLE_VALUE) AS SIGNED) "
					 "FROM information_schema.SESSION_STATUS WHERE "
					 "VARIABLE_NAME LIKE ?", pattern), 0);
	return n;
}

/* Rows read by this connection's statements so far. */
static int64_t rows_read(void)
{
	return counter("HANDLER_READ%");
}

/* A new account; its key into key (33 bytes). */
static void new_user(char *key)
{
	unsigned char raw[16];
	char hash[65], email[64];

	assert_int_equal(ct_random_bytes(raw, sizeof(raw)), 0);
	ct_hex_encode(raw, sizeof(raw), key);
	assert_int_equal(ct_account_key_hash(key, hash), 0);
	snprintf(email, sizeof(email), "u%d@scan", g_next_user++);
	assert_int_equal(CT_DB_EXEC(g_db, "INSERT INTO `user` (create_time, name, email, "
				    "passwd_hash, auth_hash) VALUES (?, ?, ?, 'x', ?)",
				    ct_db_now(g_db), email, email, hash), 1);
}

/* One RPC of the host (key, cpid, *hostid) asking for `want` results:
 * with want > 0 it reports `held` as errors and the names it got back
 * replace them; with want 0 it lists them as still running. Returns how
 * many it got. */
static int rpc(const char *key, const char *cpid, const char *ip, int want, int64_t *hostid,
	       char held[4][96], int *nheld)
{
	struct ct_buf req = CT_BUF_INIT(1 << 20), out = CT_BUF_INIT(1 << 24);
	const char *p;
	int status = 0, got = 0;

	assert_int_equal(ct_buf_appendf(&req, "<scheduler_request><authenticator>%s"
					"</authenticator><host_id>%" PRId64 "</host_id><host_cpid>%s"
					"</host_cpid><host><ncpus>4</ncpus></host>", key, *hostid,
					cpid), 0);
	for (int i = 0; want > 0 && i < *nheld; i++)
		assert_int_equal(ct_buf_appendf(&req, "<result><name>%s</name><status>error"
						"</status><error_code>-1</error_code></result>",
						held[i]), 0);
	assert_int_equal(ct_buf_appends(&req, "<other_results>"), 0);
	for (int i = 0; want == 0 && i < *nheld; i++)
		assert_int_equal(ct_buf_appendf(&req, "<name>%s</name>", held[i]), 0);
	assert_int_equal(ct_buf_appendf(&req, "</other_results><work_req><want_results>%d"
					"</want_results></work_req></scheduler_request>", want), 0);
	assert_int_equal(ct_sched_rpc(&g_srv, g_db, req.data, req.len, ip, &out,
				      &status), 0);
	assert_int_equal(status, 200);
	p = strstr(ct_buf_cstr(&out), "<host_id>");
	assert_non_null(p);
	*hostid = strtoll(p + 9, NULL, 10);
	for (p = strstr(ct_buf_cstr(&out), "<result>"); p && want > 0 && got < 4;
	     p = strstr(p + 1, "<result>")) {
		const char *n = strstr(p, "<name>"), *e = n ? strstr(n, "</name>") : NULL;
		assert_non_null(e);
		snprintf(held[got++], 96, "%.*s", (int)(e - n - 6), n + 6);
	}
	if (want > 0)
		*nheld = got;
	ct_buf_free(&req);
	ct_buf_free(&out);
	return got;
}

/* 1: each measured host is made trusted after its first contact (below) */
static int g_trusted;

/* The host looks trusted to adaptive replication (trust.h, with the limits
 * test_every_statement_indexed sets): a long run of valid results, and
 * one valid result of its own, made of an unsent one of another WU. */
static void trace(void *arg, const char *sql, const struct ct_db_arg *a, size_t n);

static void make_trusted(int64_t hostid)
{
	ct_db_set_trace(g_db, NULL, NULL);	/* not the RPC's statements */
	assert_int_equal(CT_DB_EXEC(g_db, "UPDATE host SET consecutive_valid=1000 WHERE id=?",
				    hostid), 1);
	assert_int_equal(CT_DB_EXEC(g_db, "UPDATE result r JOIN host h ON h.id=? SET "
				    "r.hostid=h.id, r.userid=h.userid, r.server_state=?, r.outcome=?, "
				    "r.validate_state=?, r.received_time=? WHERE r.server_state=? "
				    "ORDER BY r.id DESC LIMIT 1", hostid, CT_RS_OVER,
				    CT_RO_SUCCESS, CT_VS_VALID, ct_db_now(g_db), CT_RS_UNSENT), 1);
	ct_db_set_trace(g_db, trace, NULL);
}

/* Rows examined per RPC over HOSTS_PER_STEP new hosts' three RPCs each;
 * the statements run per RPC into *stmts. */
static double rows_per_rpc(double *stmts)
{
	int64_t before, total = 0, s0 = counter("COM_STMT_EXECUTE");
	int nrpc = 0;

	for (int h = 0; h < HOSTS_PER_STEP; h++) {
		char key[33], cpid[33], held[4][96], ip[32];
		unsigned char raw[16];
		int64_t hostid = 0;
		int nheld = 0;

		new_user(key);
		assert_int_equal(ct_random_bytes(raw, sizeof(raw)), 0);
		ct_hex_encode(raw, sizeof(raw), cpid);
		/* a network of its own: replicas apart by /24 stay placeable */
		snprintf(ip, sizeof(ip), "10.%d.%d.1", g_next_user / 250, g_next_user % 250);
		for (int k = 0; k < 3; k++) {
			int want = k < 2 ? 4 : 0;
			before = rows_read();
			assert_int_equal(rpc(key, cpid, ip, want, &hostid, held, &nheld), want);
			total += rows_read() - before;
			nrpc++;
			if (k == 0 && g_trusted)
				make_trusted(hostid);
		}
	}
	/* less the two counter reads around each RPC */
	*stmts = (double)(counter("COM_STMT_EXECUTE") - s0) / nrpc - 2;
	return (double)total / nrpc;
}

static void test_rows_flat_in_unsent_work(void **state)
{
	double small, large, s1, s2;
	int rc;

	(void)state;
	assert_int_equal(ct_sched_load_clone(g_db, 1, "scan", 0, 1000, 2), 0);
	small = rows_per_rpc(&s1);
	rc = ct_sched_load_clone(g_db, 1, "scan", 1000, 9000, 2);
	if (rc < 0) print_message("%s\n", ct_errmsg(rc));
	assert_int_equal(rc, 0);
	large = rows_per_rpc(&s2);
	print_message("rows examined per RPC: %.0f at 1,000 unsent WUs, %.0f at 10,000 "
		      "(%.2fx); statements per RPC: %.1f, %.1f\n", small, large, large / small,
		      s1, s2);
	/* a few rows more for the B-trees' extra level and the history the
	 * first step left; 10x the work may not cost anything like 10x */
	assert_true(large <= small * 1.5 + 50);
}

/* ---- every statement of an RPC, EXPLAINed ------------------------------ */

#define MAX_STMTS 128
#define MAX_ARGS 48

/* A statement the RPCs ran, with the arguments of its first run. */
struct traced {
	char *sql;
	struct ct_db_arg a[MAX_ARGS];
	char *strs[MAX_ARGS];		/* copies of the string arguments */
	size_t n;
};

static struct traced g_stmts[MAX_STMTS];
static int g_nstmts;

static void trace(void *arg, const char *sql, const struct ct_db_arg *a, size_t n)
{
	struct traced *t;

	(void)arg;
	for (int i = 0; i < g_nstmts; i++)
		if (strcmp(g_stmts[i].sql, sql) == 0)
			return;
	if (g_nstmts == MAX_STMTS || n > MAX_ARGS)
		return;
	t = &g_stmts[g_nstmts++];
	t->sql = strdup(sql);
	t->n = n;
	for (size_t i = 0; i < n; i++) {
		t->a[i] = a[i];
		t->strs[i] = NULL;
		if (a[i].type == 's' && a[i].v.s) {
			t->strs[i] = strdup(a[i].v.s);
			t->a[i].v.s = t->strs[i];
		} else if (a[i].type == 'b') {	/* no statement here binds blobs */
			t->a[i].type = 'n';
		}
	}
}

/* Tables whose rows grow with the work, the hosts or the volunteers: a
 * statement of the RPC may not read one of them whole. */
static int big_table(const char *t)
{
	static const char *const big[] = { "result", "workunit", "host", "user", "device",
					    "credit_event", "r", "r2", "w", "h", "x", NULL };

	for (int i = 0; big[i]; i++)
		if (strcmp(t, big[i]) == 0)
			return 1;
	return 0;
}

/* EXPLAIN t's statement: one line per plan row (table, type, key, rows);
 * returns how many rows read a big table whole. */
static int explain(const struct traced *t)
{
	struct ct_db_res *res = NULL;
	size_t len = strlen(t->sql) + 16;
	char *sql = malloc(len);
	int whole = 0;

	assert_non_null(sql);
	snprintf(sql, len, "EXPLAIN %s", t->sql);
	assert_int_equal(ct_db_querya(g_db, &res, sql, t->a, t->n), 0);
	print_message("%.110s\n", t->sql);
	while (ct_db_next(res) > 0) {
		const char *table = ct_db_isnull(res, 2) ? "" : ct_db_str(res, 2);
		const char *type = ct_db_isnull(res, 3) ? "" : ct_db_str(res, 3);
		const char *key = ct_db_isnull(res, 5) ? "-" : ct_db_str(res, 5);
		print_message("    %-12s %-12s %-22s rows %s\n", table, type, key,
			      ct_db_isnull(res, 8) ? "-" : ct_db_str(res, 8));
		if (strcmp(type, "ALL") == 0 && big_table(table))
			whole++;
	}
	ct_db_res_free(res);
	free(sql);
	return whole;
}

/* Every statement the three RPCs of new hosts run (first contact, then
 * reports and more work, then none) is EXPLAINed at 10,000 unsent WUs: none reads
 * the results, WUs, hosts or users whole. The hosts are trusted and the
 * job has adaptive replication on, so that the trust decision's
 * statements run too (its draw aside: a spot-check floor of 1%). The
 * plans printed are the ones doc/internals-server.md lists. */
static void test_every_statement_indexed(void **state)
{
	double stmts;
	int whole = 0;

	(void)state;
	assert_int_equal(ct_conf_set(g_srv.conf, "sched.trust_min_valid", "1"), 0);
	assert_int_equal(ct_conf_set(g_srv.conf, "sched.trust_min_rounds", "1"), 0);
	assert_int_equal(ct_conf_set(g_srv.conf, "sched.trust_min_age", "0"), 0);
	assert_int_equal(ct_conf_set(g_srv.conf, "sched.spot_check_floor", "0.01"), 0);
	assert_int_equal(ct_db_execa(g_db, "UPDATE job SET adaptive_replication=1 WHERE id=1", NULL, 0),
			 1);
	g_trusted = 1;
	/* a cold ready-to-send cache: the statements it saves a busy server
	 * (the deadline's estimate, the look for new results) run too */
	ct_feeder_free(g_srv.feeder);
	g_srv.feeder = NULL;
	ct_db_set_trace(g_db, trace, NULL);
	rows_per_rpc(&stmts);
	ct_db_set_trace(g_db, NULL, NULL);
	assert_true(g_nstmts > 10);
	for (int i = 0; i < g_nstmts; i++) {
		const char *q = g_stmts[i].sql;
		if (strncmp(q, "SELECT", 6) == 0 || strncmp(q, "UPDATE", 6) == 0 ||
		    strncmp(q, "DELETE", 6) == 0)
			whole += explain(&g_stmts[i]);
	}
	for (int i = 0; i < g_nstmts; i++) {
		for (size_t k = 0; k < g_stmts[i].n; k++)
			free(g_stmts[i].strs[k]);
		free(g_stmts[i].sql);
	}
	print_message("%d distinct statements, %d read a big table whole\n", g_nstmts, whole);
	assert_int_equal(whole, 0);
}

CT_TEST_MAIN_GROUP(setup_all, teardown_all, test_rows_flat_in_unsent_work,
	test_every_statement_indexed)
