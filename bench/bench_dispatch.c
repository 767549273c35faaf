/*
 * bench_dispatch - does the scheduler slow down as a volunteer's history
 * grows? (The goal: the dispatch rate flat from 1k to 100k results per
 * user.)
 *
 *   bench/bench_dispatch [RPCS]   (default 20 RPCs per row)
 *
 * Makes a project on the embedded database (the web tests' fixture: real
 * accounts, a real job, real scheduler RPCs), a pool of unsent results of
 * a second job for the scheduler to hand out, and a history for one
 * volunteer: 1,000, then 10,000, then 100,000 finished (valid) results of
 * that volunteer's host on work units of a third job (plain INSERTs: this
 * is load, not behaviour). At each size it times RPCS real scheduler
 * RPCs of that host (ct_sched_rpc, 3 results wanted each; between two
 * RPCs, untimed, the results just sent are marked reported, so the
 * in-progress cap never stops the dispatch) and prints the median and
 * worst time per RPC, the dispatch rate and the results sent. Flat means
 * the last row's median is within noise of the first's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ct_buf.h"
#include "ct_err.h"
#include "ct_log.h"
#include "data/db.h"
#include "data/result_state.h"
#include "rpc/sched_rpc.h"
#include "web_fixture.h"

#define POOL_WUS 2048

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Grow job jobid to n work units by copying its own rows. */
static int grow_wus(struct ct_db *db, int64_t jobid, int64_t n)
{
	int64_t have = 0;
	int rc = 0;

	for (;;) {
		rc = CT_DB_QUERY_INT(db, &have, "SELECT COUNT(*) FROM workunit WHERE jobid=?",
				     jobid);
		if (rc < 0 || have >= n)
			break;
		rc = CT_DB_EXEC(db, "INSERT INTO workunit (create_time, name, jobid, roundid, "
			"round_idx, shard, seed, model_sha256, model_size, data_sha256, data_size, "
			"data_tokens, target_nresults, min_quorum, max_error_results, "
			"max_total_results, max_success_results, delay_bound, transition_time) "
			"SELECT create_time, CONCAT('j', jobid, 'g', ?, '-', id), jobid, roundid, round_idx, "
			"shard + ?, seed, model_sha256, model_size, data_sha256, data_size, "
			"data_tokens, target_nresults, min_quorum, max_error_results, "
			"max_total_results, max_success_results, delay_bound, transition_time "
			"FROM workunit WHERE jobid=? LIMIT ?", have, have, jobid,
			n - have) < 0 ? CT_EDB : 0;
		if (rc < 0)
			break;
	}
	return rc;
}

/* One unsent result on every WU of the pool job that has none. */
static int fill_pool(struct ct_db *db, int64_t jobid)
{
	int rc = grow_wus(db, jobid, POOL_WUS);

	if (rc == 0)
		rc = CT_DB_EXEC(db, "INSERT INTO result (create_time, name, workunitid, jobid, "
			"server_state) SELECT w.create_time, CONCAT(w.name, '-p'), w.id, w.jobid, "
			"? FROM workunit w WHERE w.jobid=? AND NOT EXISTS (SELECT 1 FROM result x "
			"WHERE x.workunitid=w.id)", CT_RS_UNSENT, jobid) < 0 ? CT_EDB : 0;
	return rc;
}

/* User u's host holds n finished, valid results (one per WU of job hj). */
static int fill_history(struct ct_db *db, int64_t hj, const struct web_fx_user *u, int64_t n)
{
	int64_t last = 0;
	int rc = grow_wus(db, hj, n);

	/* the WUs after the last one u has a result of (no self-join: the
	 * embedded server would need a temporary table) */
	if (rc == 0)
		rc = CT_DB_QUERY_INT(db, &last, "SELECT COALESCE(MAX(workunitid), 0) FROM "
				     "result WHERE jobid=? AND userid=?", hj, u->id);
	if (rc == 0)
		rc = CT_DB_EXEC(db, "INSERT INTO result (create_time, name, workunitid, jobid, "
			"server_state, outcome, validate_state, userid, hostid) SELECT "
			"w.create_time, CONCAT(w.name, '-h'), w.id, w.jobid, ?, ?, ?, ?, ? FROM "
			"workunit w WHERE w.jobid=? AND w.id > ?", CT_RS_OVER,
			CT_RO_SUCCESS, CT_VS_VALID, u->id, u->hostid, hj, last) < 0 ? CT_EDB : 0;
	return rc;
}

/* One scheduler RPC of u's host asking for 3 results; *sent = results sent. */
static int rpc(struct web_fx *fx, const struct web_fx_user *u, int64_t *sent)
{
	struct ct_buf req = CT_BUF_INIT(1 << 16), out = CT_BUF_INIT(1 << 22);
	int status = 0, rc;

	rc = ct_buf_appendf(&req, "<scheduler_request><authenticator>%s</authenticator>"
		"<host_id>%lld</host_id><host_cpid>%032x</host_cpid><client_version>0.1.0"
		"</client_version><host><hostname>pc</hostname><os>Linux</os><cpu_model>cpu"
		"</cpu_model><ncpus>4</ncpus><ram_bytes>8589934592</ram_bytes><device><name>"
		"gpu</name><vendor>Test</vendor><type>gpu</type><global_mem>1073741824"
		"</global_mem><compute_units>8</compute_units><conforming>1</conforming>"
		"</device></host><work_req><want_results>3</want_results></work_req>"
		"</scheduler_request>", u->key, (long long)u->hostid, 1u);
	if (rc == 0)
		rc = ct_sched_rpc(&fx->srv, fx->db, req.data, req.len, "127.0.0.1", &out, &status);
	if (rc == 0 && status != 200)
		rc = ct_error(CT_EPROTO, "scheduler said %d", status);
	*sent = 0;
	for (const char *p = ct_buf_cstr(&out); rc == 0 && (p = strstr(p, "<result>")) != NULL;
	     p++)
		(*sent)++;
	ct_buf_free(&req);
	ct_buf_free(&out);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int row(struct web_fx *fx, const struct web_fx_user *u, int64_t hist, int reps)
{
	double *t = calloc((size_t)reps, sizeof(double)), total = 0;
	int64_t sent = 0, all = 0;
	int rc = t == NULL ? CT_ENOMEM : 0;

	for (int k = 0; k < reps && rc == 0; k++) {
		double t0 = now_ms();

		rc = rpc(fx, u, &sent);
		t[k] = now_ms() - t0;
		total += t[k];
		all += sent;
		/* untimed: the client reported them */
		if (rc == 0)
			rc = CT_DB_EXEC(fx->db, "UPDATE result SET server_state=?, outcome=? WHERE "
					"hostid=? AND server_state=?", CT_RS_OVER,
					CT_RO_SUCCESS, u->hostid, CT_RS_IN_PROGRESS) < 0 ? CT_EDB : 0;
	}
	if (rc == 0) {
		qsort(t, (size_t)reps, sizeof(double), cmp_double);
		printf("%10lld %10.2f %10.2f %12.1f %8lld\n", (long long)hist, t[reps / 2],
		       t[reps - 1], reps * 1e3 / total, (long long)all);
	}
	free(t);
	return rc;
}

/* The plan of each per-volunteer query of an RPC (user 1's host 1 style
 * ids filled in), as MariaDB runs it at the last history size. */
static void explain(struct ct_db *db, const struct web_fx_user *u)
{
	static const char *const q[][2] = {
		{ "host's last day (worklimit)", "SELECT COUNT(*) FROM result WHERE hostid=%lld "
		  "AND sent_time > 0" },
		{ "account in progress", "SELECT COUNT(*) FROM result WHERE userid=%lld AND "
		  "task_state=1" },
		{ "account valid, last day", "SELECT COUNT(*) FROM result WHERE userid=%lld AND "
		  "validate_state=1 AND sent_time > 0" },
		{ "pending (saver)", "SELECT COUNT(*) FROM result WHERE userid=%lld AND "
		  "task_state=2" },
		{ "host in progress", "SELECT id FROM result WHERE hostid=%lld AND task_state=1 "
		  "ORDER BY id LIMIT 64" },
		{ "dispatch (sched.c)", "SELECT r.id, r.workunitid FROM result r LEFT JOIN "
		  "result r2 FORCE INDEX (result_wu) ON r2.workunitid=r.workunitid AND "
		  "r2.userid=%lld WHERE r.server_state=2 AND r2.id IS NULL "
		  "AND (? OR NOT EXISTS (SELECT 1 FROM job_lora l WHERE l.jobid=r.jobid)) "
		  "ORDER BY r.priority DESC, r.id "
		  "LIMIT 20" },
	};
	char sql[512];

	printf("\nplans at the last size (EXPLAIN; rows = what MariaDB expects to read):\n");
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		struct ct_db_res *res = NULL;
		int64_t id = strstr(q[i][1], "hostid") ? u->hostid : u->id;
		struct ct_db_arg zero = CT_DB_ARG(0);

		snprintf(sql, sizeof(sql), "ANALYZE ");
		snprintf(sql + 8, sizeof(sql) - 8, q[i][1], (long long)id);

		if (ct_db_querya(db, &res, sql, &zero, strstr(sql, "(? OR") ? 1 : 0) < 0)
			continue;
		while (ct_db_next(res) > 0)
			printf("  %-28s %-4s %-18s %-8s %-18s rows %-8s r_rows %s %s\n", q[i][0],
			       ct_db_str(res, 2), ct_db_str(res, 1), ct_db_str(res, 3),
			       ct_db_str(res, 5), ct_db_str(res, 8), ct_db_str(res, 9), ct_db_str(res, 12));
		ct_db_res_free(res);
	}
}

int main(int argc, char **argv)
{
	static struct web_fx fx;
	static const int64_t sizes[] = { 1000, 10000, 100000 };
	int reps = argc > 1 ? atoi(argv[1]) : 20, rc;
	char dir[] = "/tmp/ctune-bench-dispatch-XXXXXX", proj[96];
	int64_t pool = 0, hist = 0;
	const struct web_fx_user *u = &fx.users[0];

	if (reps < 1 || reps > 10000 || (argc > 1 && strcmp(argv[1], "--help") == 0)) {
		fprintf(stderr, "usage: bench_dispatch [RPCS]  (1..10000 RPCs per row, "
			"default 20)\n");
		return 2;
	}
	ct_log_set_level(CT_LOG_WARN);
	if (mkdtemp(dir) == NULL)
		return 2;
	snprintf(proj, sizeof(proj), "%s/p", dir);
	rc = web_fx_open(&fx, proj);
	if (rc == 0)
		rc = web_fx_seed(&fx, 2, 1.0);
	if (rc == 0) {
		fx.srv.max_in_progress = 10000;
		rc = ct_conf_set(fx.srv.conf, "sched.daily_quota", "1000000");
	}
	if (rc == 0)
		rc = ct_conf_set(fx.srv.conf, "sched.daily_quota_max", "10000000");
	if (rc == 0)
		rc = web_fx_submit(&fx, "pool", 1, 1, 2, &pool);
	if (rc == 0)
		rc = fill_pool(fx.db, pool);
	if (rc == 0)
		rc = web_fx_submit(&fx, "history", 1, 1, 2, &hist);
	printf("scheduler RPCs of one host (3 results wanted; %d RPCs per row; pool of %d "
	       "unsent results)\n\n", reps, POOL_WUS);
	printf("%10s %10s %10s %12s %8s\n", "history", "med ms", "max ms", "RPCs/s", "sent");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && rc == 0; i++) {
		rc = fill_history(fx.db, hist, u, sizes[i]);
		if (rc == 0)
			rc = row(&fx, u, sizes[i], reps);
	}
	if (rc < 0)
		fprintf(stderr, "bench_dispatch: %s\n", ct_errmsg(rc));
	else
		explain(fx.db, u);
	web_fx_close(&fx);
	snprintf(proj, sizeof(proj), "rm -rf '%s'", dir);
	if (system(proj) != 0)
		fprintf(stderr, "bench_dispatch: could not remove %s\n", dir);
	return rc < 0 ? 1 : 0;
}
