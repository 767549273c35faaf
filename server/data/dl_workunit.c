/*
 * dl_workunit.c - the `workunit` table's locks (see dl_workunit.h) and the
 * reads of WUs' results (dl_result.h's ct_result_list_wus), which the lock
 * reads too: the statements with their column tables beside them.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"

#include "db_args.h"

#include "db.h"
#include "dl.h"
#include "dl_result.h"
#include "dl_workunit.h"
#include "wu_state.h"

#define W struct ct_workunit_row
static const struct ct_dl_col wu_cols[] = {
	CT_DL_COL(W, id), CT_DL_COL(W, jobid), CT_DL_COL(W, roundid),
	CT_DL_COL(W, canonical_resultid), CT_DL_COL(W, name), CT_DL_COL(W, target_nresults),
	CT_DL_COL(W, max_error_results), CT_DL_COL(W, max_total_results),
	CT_DL_COL(W, max_success_results), CT_DL_COL(W, error_mask),
	CT_DL_COL(W, assimilate_state), CT_DL_COL(W, file_delete_state),
	CT_DL_COL(W, need_validate), CT_DL_COL(W, transition_time),
};
#undef W

#define R struct ct_result_row
static const struct ct_dl_col result_cols[] = {
	CT_DL_COL(R, id), CT_DL_COL(R, name), CT_DL_COL(R, hostid),
	CT_DL_COL(R, server_state), CT_DL_COL(R, outcome), CT_DL_COL(R, validate_state),
	CT_DL_COL(R, report_deadline), CT_DL_COL(R, sent_time), CT_DL_COL(R, received_time),
};
static const struct ct_dl_col results_cols[] = {
	CT_DL_COL(R, id), CT_DL_COL(R, workunitid), CT_DL_COL(R, name), CT_DL_COL(R, hostid),
	CT_DL_COL(R, server_state), CT_DL_COL(R, outcome), CT_DL_COL(R, validate_state),
	CT_DL_COL(R, report_deadline), CT_DL_COL(R, sent_time), CT_DL_COL(R, received_time),
	CT_DL_COL(R, host_unproven),
};
#undef R

int ct_result_list_wus(struct ct_db *db, const int64_t *wuids, int n,
		       struct ct_result_row **rows, size_t *nrows)
{
	struct ct_db_arg a[CT_DL_IN_MAX];
	char sql[1024];
	int m, rc;

	*rows = NULL;
	*nrows = 0;
	rc = ct_dl_in_list(sql, sizeof(sql), "SELECT r.id, r.workunitid, r.name, r.hostid, "
			   "r.server_state, r.outcome, r.validate_state, r.report_deadline, "
			   "r.sent_time, r.received_time, COALESCE(h.nresults_valid, 1) = 0 FROM "
			   "result r LEFT JOIN host h ON h.id = r.hostid WHERE r.workunitid IN (",
			   ") ORDER BY r.workunitid, r.id", n, &m);
	if (rc < 0)
		return rc;
	ct_dl_in_ids(a, wuids, n, m);
	return ct_dl_query_list(db, sizeof(**rows), rows, nrows, results_cols,
				CT_DL_NCOLS(results_cols), "results", sql, a, (size_t)m);
}

int ct_wu_lock(struct ct_db *db, int64_t wuid, struct ct_workunit_row *w, struct ct_result_row **rs,
	       size_t *n)
{
	int rc;

	memset(w, 0, sizeof(*w));
	if (rs) {
		*rs = NULL;
		*n = 0;
	}
	rc = CT_DL_ONE(db, w, wu_cols, "SELECT id, jobid, roundid, canonical_resultid, name, "
		       "target_nresults, max_error_results, max_total_results, "
		       "max_success_results, error_mask, assimilate_state, file_delete_state, "
		       "need_validate, transition_time FROM workunit WHERE id=? FOR UPDATE", wuid);
	if (rc < 0 || rs == NULL)
		return rc;
	return CT_DL_LIST(db, rs, n, result_cols, "results", "SELECT id, name, hostid, "
			  "server_state, outcome, validate_state, report_deadline, sent_time, "
			  "received_time FROM result WHERE workunitid=? ORDER BY id FOR UPDATE", wuid);
}

int ct_wu_lock_rows(struct ct_db *db, const int64_t *ids, int n, struct ct_workunit_row *rows)
{
	memset(rows, 0, (size_t)(n > 0 ? n : 0) * sizeof(*rows));
	return ct_dl_by_ids(db, "SELECT id, jobid, roundid, canonical_resultid, name, "
			    "target_nresults, max_error_results, max_total_results, "
			    "max_success_results, error_mask, assimilate_state, file_delete_state, "
			    "need_validate, transition_time FROM workunit WHERE id IN (",
			    ") ORDER BY id FOR UPDATE", ids, n, rows, sizeof(*rows), wu_cols,
			    CT_DL_NCOLS(wu_cols), offsetof(struct ct_workunit_row, id), -1);
}

#define S struct ct_wu_sched_row
static const struct ct_dl_col sched_cols[] = {
	CT_DL_COL(S, id), CT_DL_COL(S, error_mask), CT_DL_COL(S, delay_bound),
	CT_DL_COL(S, roundid), CT_DL_COL(S, min_quorum), CT_DL_COL(S, jobid), CT_DL_COL(S, name),
	CT_DL_COL(S, round_idx), CT_DL_COL(S, shard), CT_DL_COL(S, seed),
	CT_DL_COL(S, model_sha256), CT_DL_COL(S, model_size), CT_DL_COL(S, data_sha256),
	CT_DL_COL(S, data_size),
};
#undef S

int ct_wu_lock_ids(struct ct_db *db, const int64_t *ids, int n, struct ct_wu_sched_row *rows)
{
	struct ct_wu_sched_row *tmp = rows;
	int rc;

	if (rows == NULL && n > 0)
		tmp = calloc((size_t)n, sizeof(*tmp));
	if (tmp == NULL && n > 0)
		return CT_ENOMEM;
	memset(tmp, 0, (size_t)(n > 0 ? n : 0) * sizeof(*tmp));
	rc = ct_dl_by_ids(db, "SELECT id, error_mask, delay_bound, roundid, min_quorum, jobid, "
			  "name, round_idx, shard, seed, model_sha256, model_size, data_sha256, "
			  "data_size FROM workunit WHERE id IN (", ") ORDER BY id FOR UPDATE", ids, n,
			  tmp, sizeof(*tmp), sched_cols, CT_DL_NCOLS(sched_cols),
			  offsetof(struct ct_wu_sched_row, id), -1);
	if (tmp != rows)
		free(tmp);
	return rc;
}

int ct_wu_set_single(struct ct_db *db, int64_t wuid)
{
	int rc = CT_DB_EXEC(db, "UPDATE workunit SET min_quorum=1, target_nresults=1 WHERE "
			    "id=?", wuid);

	return rc < 0 ? rc : 0;
}

int ct_wu_wake_job(struct ct_db *db, int64_t jobid, int64_t except, int64_t now)
{
	int rc = CT_DB_EXEC(db, "UPDATE workunit SET transition_time=? WHERE jobid=? AND id<>? "
			    "AND canonical_resultid=0 AND error_mask=0", now, jobid, except);

	return rc < 0 ? rc : 0;
}

int ct_wu_due_ids(struct ct_db *db, int64_t now, int64_t nshare, int64_t k, int64_t *ids,
		  size_t cap, size_t *n)
{
	return CT_DL_IDS(db, ids, cap, n, "SELECT id FROM workunit WHERE transition_time<=? AND "
			 "MOD(id, ?)=? ORDER BY transition_time LIMIT ?", now, nshare, k,
			 (int64_t)cap);
}

int ct_wu_insert(struct ct_db *db, const struct ct_wu_new *w, int64_t *id)
{
	int rc = CT_DB_EXEC(db, "INSERT INTO workunit (create_time, name, jobid, roundid, "
			    "round_idx, shard, seed, model_sha256, model_size, data_sha256, "
			    "data_size, data_tokens, target_nresults, min_quorum, "
			    "max_error_results, max_total_results, max_success_results, "
			    "delay_bound, transition_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
			    "?, ?, ?, ?, ?, ?, ?, ?)", w->now, w->name, w->jobid, w->roundid,
			    w->round_idx, w->shard, w->seed, w->model_sha256, w->model_size,
			    w->data_sha256, w->data_size, w->data_tokens, w->target_nresults,
			    w->min_quorum, w->max_error_results, w->max_total_results,
			    w->max_success_results, w->delay_bound, w->now);

	if (rc < 0)
		return rc;
	*id = ct_db_last_id(db);
	return 0;
}

static const struct ct_dl_col canonical_cols[] = {
	CT_DL_COL(struct ct_canonical_row, shard), CT_DL_COL(struct ct_canonical_row, name),
};

int ct_wu_canonicals(struct ct_db *db, int64_t roundid, struct ct_canonical_row **rows,
		     size_t *n)
{
	return CT_DL_LIST(db, rows, n, canonical_cols, "canonical results", "SELECT w.shard, "
			  "r.name FROM workunit w JOIN result r ON r.id = w.canonical_resultid "
			  "WHERE w.roundid=? AND w.assimilate_state=? ORDER BY w.shard", roundid,
			  CT_AS_READY);
}

static const struct ct_dl_col round_count_cols[] = {
	CT_DL_COL(struct ct_round_count, round_idx), CT_DL_COL(struct ct_round_count, n),
};

int ct_wu_done_by_round(struct ct_db *db, int64_t jobid, struct ct_round_count **rows,
			size_t *n)
{
	return CT_DL_LIST(db, rows, n, round_count_cols, "WUs done", "SELECT round_idx, "
			  "COUNT(*) FROM workunit WHERE jobid=? AND canonical_resultid<>0 GROUP BY "
			  "round_idx", jobid);
}

/* The one column ct_wu_get_name reads. */
struct name_row {
	char name[72];
};

static const struct ct_dl_col name_cols[] = { CT_DL_COL(struct name_row, name) };

int ct_wu_get_name(struct ct_db *db, int64_t wuid, char name[72])
{
	struct name_row w;
	int rc;

	name[0] = '\0';
	rc = CT_DL_ONE(db, &w, name_cols, "SELECT name FROM workunit WHERE id=?", wuid);
	if (rc == 0)
		memcpy(name, w.name, sizeof(w.name));
	return rc;
}

int ct_wu_seed(struct ct_db *db, int64_t wuid, int64_t *seed)
{
	return CT_DB_QUERY_INT(db, seed, "SELECT seed FROM workunit WHERE id=?", wuid);
}

/* The two aggregates of ct_wu_round_seeds. */
struct seeds_row {
	int64_t nseeds, seed;
};

static const struct ct_dl_col seeds_cols[] = {
	CT_DL_COL(struct seeds_row, nseeds), CT_DL_COL(struct seeds_row, seed),
};

int ct_wu_round_seeds(struct ct_db *db, int64_t roundid, int64_t *nseeds, int64_t *seed)
{
	struct seeds_row r = { 0, 0 };
	int rc;

	rc = CT_DL_ONE(db, &r, seeds_cols, "SELECT COUNT(DISTINCT seed), MIN(seed) FROM "
		       "workunit WHERE roundid=?", roundid);
	if (rc < 0)
		return rc;
	*nseeds = r.nseeds;
	*seed = r.seed;
	return 0;
}

#define S struct ct_seeded_canonical_row
static const struct ct_dl_col seeded_cols[] = {
	CT_DL_COL(S, shard), CT_DL_COL(S, seed), CT_DL_COL(S, name),
};
#undef S

int ct_wu_seeded_canonicals(struct ct_db *db, int64_t roundid,
			    struct ct_seeded_canonical_row **rows, size_t *n)
{
	return CT_DL_LIST(db, rows, n, seeded_cols, "canonical results", "SELECT w.shard, "
			  "w.seed, r.name FROM workunit w JOIN result r ON r.id = "
			  "w.canonical_resultid WHERE w.roundid=? ORDER BY w.shard", roundid);
}

#define C struct ct_wu_check_row
static const struct ct_dl_col check_cols[] = {
	CT_DL_COL(C, wuid), CT_DL_COL(C, jobid), CT_DL_COL(C, canonical),
	CT_DL_COL(C, job_status), CT_DL_COL(C, error_mask), CT_DL_COL(C, min_quorum),
	CT_DL_COL(C, wu_name), CT_DL_COL(C, model_sha), CT_DL_COL(C, eval_sha),
	CT_DL_COL(C, tolerance), CT_DL_COL(C, loss_margin), CT_DL_COL(C, probe_tokens),
	CT_DL_COL(C, batch), CT_DL_COL(C, seq), CT_DL_COL(C, max_upload),
	CT_DL_COL(C, steps), CT_DL_COL(C, lr), CT_DL_COL(C, beta1), CT_DL_COL(C, beta2),
	CT_DL_COL(C, weight_decay), CT_DL_COL(C, job_model_sha), CT_DL_COL(C, eps),
	CT_DL_COL(C, grad_clip), CT_DL_COL(C, data_sha), CT_DL_COL(C, chain_every),
};
#undef C

int ct_wu_check_get(struct ct_db *db, int64_t wuid, struct ct_wu_check_row *w)
{
	memset(w, 0, sizeof(*w));
	return CT_DL_ONE(db, w, check_cols, "SELECT w.id, w.jobid, w.canonical_resultid, "
			 "j.status, w.error_mask, w.min_quorum, w.name, w.model_sha256, "
			 "j.eval_sha256, j.tolerance, j.loss_margin, j.probe_tokens, j.batch, "
			 "j.seq, j.max_upload_bytes, j.steps, j.lr, j.beta1, j.beta2, "
			 "j.weight_decay, j.model_sha256, j.eps, j.grad_clip, w.data_sha256, "
			 "j.chain_every FROM workunit w JOIN job j ON j.id = w.jobid WHERE w.id=?",
			 wuid);
}

int ct_wu_raise_target(struct ct_db *db, int64_t wuid, int64_t n)
{
	int rc = CT_DB_EXEC(db, "UPDATE workunit SET target_nresults=? WHERE id=? AND "
			    "target_nresults<?", n, wuid, n);

	return rc < 0 ? rc : rc > 0;
}

int ct_wu_validate_ids(struct ct_db *db, int64_t nshare, int64_t k, int64_t *ids, size_t cap,
		       size_t *n)
{
	return CT_DL_IDS(db, ids, cap, n, "SELECT id FROM workunit WHERE need_validate=1 AND "
			 "MOD(id, ?)=? ORDER BY id LIMIT ?", nshare, k, (int64_t)cap);
}
