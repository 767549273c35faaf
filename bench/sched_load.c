/*
 * sched_load.c - unsent work cloned by SQL (see sched_load.h).
 */
#include "sched_load.h"

#include "ct_err.h"
#include "data/result_state.h"

#define BATCH 1000	/* MariaDB's max_recursive_iterations, by default */

/* WUs first .. first+n-1 and their results, in one transaction. Each is
 * due to the transitioner at its delay bound, as the transitioner leaves a
 * WU whose replicas exist (else a bench with the daemons running would
 * measure the transitioner's first pass over every clone). */
static int clone_batch(struct ct_db *db, int64_t jobid, const char *prefix, int64_t first,
		       int64_t n, int replicas)
{
	int64_t before = 0;
	int rc;

	/* the new WUs are the job's rows above its highest id now (ids need
	 * not be consecutive: Galera interleaves its nodes' ids) */
	rc = ct_db_query_inta(db, &before, "SELECT COALESCE(MAX(id), 0) FROM workunit", NULL, 0);
	if (rc >= 0)
		rc = CT_DB_EXEC(db, "INSERT INTO workunit (create_time, name, jobid, roundid, round_idx, "
				"shard, seed, model_sha256, model_size, data_sha256, data_size, data_tokens, "
				"target_nresults, min_quorum, max_error_results, max_total_results, "
				"max_success_results, delay_bound, transition_time) "
				"WITH RECURSIVE s(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM s WHERE i < ?) "
				"SELECT w.create_time, CONCAT(?, '-', s.i), w.jobid, w.roundid, w.round_idx, "
				"w.shard, w.seed, w.model_sha256, w.model_size, w.data_sha256, w.data_size, "
				"w.data_tokens, ?, w.min_quorum, w.max_error_results, w.max_total_results, "
				"w.max_success_results, w.delay_bound, w.create_time + w.delay_bound "
				"FROM s JOIN workunit w "
				"ON w.id = (SELECT MIN(id) FROM workunit WHERE jobid=?)", first,
				first + n - 1, prefix, replicas, jobid);
	if (rc >= 0)
		rc = CT_DB_EXEC(db, "INSERT INTO result (create_time, name, workunitid, jobid, "
				"server_state) WITH RECURSIVE k(j) AS (SELECT 0 UNION ALL SELECT j + 1 "
				"FROM k WHERE j < ? - 1) SELECT w.create_time, CONCAT(w.name, '-', k.j), "
				"w.id, w.jobid, ? FROM workunit w JOIN k WHERE w.jobid=? AND w.id > ? "
				"ORDER BY w.id, k.j", replicas, CT_RS_UNSENT, jobid, before);
	return rc < 0 ? rc : 0;
}

int ct_sched_load_clone(struct ct_db *db, int64_t jobid, const char *prefix, int64_t first,
			int64_t n, int replicas)
{
	int rc = 0;

	for (int64_t done = 0; rc == 0 && done < n; done += BATCH) {
		int64_t m = n - done < BATCH ? n - done : BATCH;

		rc = ct_db_begin(db);
		if (rc == 0)
			rc = clone_batch(db, jobid, prefix, first + done, m, replicas);
		if (rc == 0)
			rc = ct_db_commit(db);
		else
			ct_db_rollback(db);
	}
	return rc;
}

int ct_sched_load_settle(struct ct_db *db)
{
	/* returns when the history list is empty (MariaDB 10.5.7 and later) */
	int rc = ct_db_execa(db, "SET GLOBAL innodb_max_purge_lag_wait=0", NULL, 0);

	return rc < 0 ? rc : 0;
}
