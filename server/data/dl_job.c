/*
 * dl_job.c - the `job` table's reads (see dl_job.h): one column list, one
 * column table, the statements beside them.
 */
#include <inttypes.h>
#include <string.h>

#include "ct_err.h"
#include "db.h"
#include "job_state.h"
#include "db_args.h"
#include "dl.h"
#include "dl_job.h"

#define J struct ct_job_row
#define JOB_COLS "id, name, status, cur_round, nrounds, nshards, steps, batch, seq, lr, " \
	"min_quorum, target_nresults, model_sha256, final_model_sha256, error_message, " \
	"final_eval_loss, probe_tokens, eval_tokens, aggregation, outer_method, outer_lr, " \
	"outer_momentum, round_quorum, round_timeout"
static const struct ct_dl_col job_cols[] = {
	CT_DL_COL(J, id), CT_DL_COL(J, name), CT_DL_COL(J, status), CT_DL_COL(J, cur_round),
	CT_DL_COL(J, nrounds), CT_DL_COL(J, nshards), CT_DL_COL(J, steps),
	CT_DL_COL(J, batch), CT_DL_COL(J, seq), CT_DL_COL(J, lr), CT_DL_COL(J, min_quorum),
	CT_DL_COL(J, target_nresults), CT_DL_COL(J, model_sha256),
	CT_DL_COL(J, final_model_sha256), CT_DL_COL(J, error_message),
	CT_DL_COL_NAN(J, final_eval_loss), CT_DL_COL(J, probe_tokens),
	CT_DL_COL(J, eval_tokens), CT_DL_COL(J, aggregation), CT_DL_COL(J, outer_method),
	CT_DL_COL(J, outer_lr), CT_DL_COL(J, outer_momentum), CT_DL_COL(J, round_quorum),
	CT_DL_COL(J, round_timeout),
};
#undef J

int ct_job_get(struct ct_db *db, int64_t id, struct ct_job_row *j)
{
	return CT_DL_ONE(db, j, job_cols, "SELECT " JOB_COLS " FROM job WHERE id=?", id);
}

int ct_job_list(struct ct_db *db, struct ct_job_row **jobs, size_t *n)
{
	return ct_dl_query_list(db, sizeof(**jobs), jobs, n, job_cols, CT_DL_NCOLS(job_cols),
				"jobs", "SELECT " JOB_COLS " FROM job ORDER BY id", NULL, 0);
}

struct job_status {
	int status;
};

static const struct ct_dl_col status_col[] = { CT_DL_COL(struct job_status, status) };

int ct_job_status(struct ct_db *db, int64_t id, int *status)
{
	struct job_status j;
	int rc = CT_DL_ONE(db, &j, status_col, "SELECT status FROM job WHERE id=?", id);

	if (rc == 0)
		*status = j.status;
	return rc;
}

int ct_job_insert(struct ct_db *db, const struct ct_job_new *j, int64_t *id)
{
	int rc = CT_DB_EXEC(db,
		"INSERT INTO job (name, create_time, update_time, status, model_sha256, model_size, "
		"train_sha256, eval_sha256, nshards, nrounds, steps, batch, seq, lr, beta1, beta2, "
		"eps, weight_decay, grad_clip, seed, min_quorum, target_nresults, max_error_results, "
		"max_total_results, max_success_results, delay_bound, adaptive_replication, "
		"tolerance, loss_margin, upload_encoding, max_upload_bytes, probe_tokens, "
		"eval_tokens, aggregation) VALUES "
		"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
		"?, ?, ?, ?, ?, ?, ?)",
		j->name, j->now, j->now, CT_JOB_RUNNING, j->model_sha256, j->model_size,
		j->train_sha256, j->eval_sha256, j->nshards, j->nrounds, j->steps, j->batch,
		j->seq, j->lr, j->beta1, j->beta2, j->eps, j->weight_decay, j->grad_clip, j->seed,
		j->min_quorum, j->target_nresults, j->max_error_results, j->max_total_results,
		j->max_success_results, j->delay_bound, j->adaptive_replication, j->tolerance,
		j->loss_margin, j->upload_encoding, j->max_upload_bytes, j->probe_tokens,
		j->eval_tokens, j->aggregation);

	if (rc < 0)
		return rc;
	*id = ct_db_last_id(db);
	return 0;
}

int ct_job_set_outer(struct ct_db *db, int64_t id, const char *method, double lr,
		     double momentum)
{
	int rc = CT_DB_EXEC(db, "UPDATE job SET outer_method=?, outer_lr=?, outer_momentum=? "
			    "WHERE id=?", method, lr, momentum, id);

	return rc < 0 ? rc : 0;
}

int ct_job_set_round_close(struct ct_db *db, int64_t id, double quorum, int timeout)
{
	int rc = CT_DB_EXEC(db, "UPDATE job SET round_quorum=?, round_timeout=? WHERE id=?",
			    quorum, timeout, id);

	return rc < 0 ? rc : 0;
}

int ct_job_set_wu_needs(struct ct_db *db, int64_t id, int64_t bytes, int64_t ref_bytes,
			int chain_every)
{
	int rc = CT_DB_EXEC(db, "UPDATE job SET wu_mem_bytes=?, wu_mem_ref_bytes=?, chain_every=? "
			    "WHERE id=?", bytes, ref_bytes, chain_every, id);

	return rc < 0 ? rc : 0;
}

int ct_job_set_cur_round(struct ct_db *db, int64_t id, int idx, int64_t now)
{
	int rc = CT_DB_EXEC(db, "UPDATE job SET cur_round=GREATEST(cur_round, ?), update_time=? "
			    "WHERE id=?", idx, now, id);

	return rc < 0 ? rc : 0;
}

#define P struct ct_job_policy
static const struct ct_dl_col policy_cols[] = {
	CT_DL_COL(P, status), CT_DL_COL(P, nshards), CT_DL_COL(P, nrounds),
	CT_DL_COL(P, target_nresults), CT_DL_COL(P, min_quorum), CT_DL_COL(P, max_error_results),
	CT_DL_COL(P, max_total_results), CT_DL_COL(P, max_success_results),
	CT_DL_COL(P, delay_bound), CT_DL_COL(P, seed),
};
#undef P

int ct_job_lock_policy(struct ct_db *db, int64_t id, struct ct_job_policy *p)
{
	int rc = CT_DL_ONE(db, p, policy_cols, "SELECT status, nshards, nrounds, "
			   "target_nresults, min_quorum, max_error_results, max_total_results, "
			   "max_success_results, delay_bound, seed FROM job WHERE id=? FOR UPDATE",
			   id);

	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "no job %" PRId64, id);
	return rc;
}

#define S struct ct_job_shard_row
static const struct ct_dl_col shard_cols[] = {
	CT_DL_COL(S, sha256), CT_DL_COL(S, size), CT_DL_COL(S, ntokens),
};
#undef S

int ct_job_shard_put(struct ct_db *db, int64_t jobid, int k, const struct ct_job_shard_row *r)
{
	int rc = CT_DB_EXEC(db, "INSERT INTO job_shard (jobid, shard, sha256, size, ntokens) "
			    "VALUES (?, ?, ?, ?, ?)", jobid, k, r->sha256, r->size, r->ntokens);

	return rc < 0 ? rc : 0;
}

int ct_job_shard_get(struct ct_db *db, int64_t jobid, int k, struct ct_job_shard_row *r)
{
	int rc = CT_DL_ONE(db, r, shard_cols, "SELECT sha256, size, ntokens FROM job_shard "
			   "WHERE jobid=? AND shard=?", jobid, k);

	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "job %" PRId64 " has no shard %d", jobid, k);
	return rc;
}

int ct_job_set_base_loss(struct ct_db *db, int64_t id, double loss)
{
	int rc = CT_DB_EXEC(db, "UPDATE job SET base_eval_loss=? WHERE id=? AND base_eval_loss "
			    "IS NULL", loss, id);

	return rc < 0 ? rc : 0;
}

int ct_job_touch(struct ct_db *db, int64_t id, int64_t now)
{
	int rc = CT_DB_EXEC(db, "UPDATE job SET update_time=? WHERE id=?", now, id);

	return rc < 0 ? rc : 0;
}

int ct_job_loss_margin(struct ct_db *db, int64_t id, double *margin)
{
	return CT_DB_QUERY_DOUBLE(db, margin, "SELECT loss_margin FROM job WHERE id=?", id);
}

struct model_sha {
	char sha[65];
};

static const struct ct_dl_col model_sha_cols[] = { CT_DL_COL(struct model_sha, sha) };

int ct_job_model(struct ct_db *db, int64_t id, int round, char sha[65])
{
	struct model_sha m = { "" };
	int rc = round > 0 ? CT_DL_ONE(db, &m, model_sha_cols, "SELECT out_model_sha256 FROM "
				       "`round` WHERE jobid=? AND idx=?", id, round)
			   : CT_DL_ONE(db, &m, model_sha_cols, "SELECT final_model_sha256 FROM "
				       "job WHERE id=?", id);

	memcpy(sha, m.sha, 65);
	return rc == CT_ENOTFOUND ? 0 : rc;
}

int ct_job_notice_first(struct ct_db *db, int64_t id, const char *msg)
{
	int rc = CT_DB_EXEC(db, "UPDATE job SET error_message=? WHERE id=? AND status=? AND "
			    "error_message=''", msg, id, CT_JOB_RUNNING);

	return rc < 0 ? rc : rc > 0;
}

int ct_job_notice_prepend(struct ct_db *db, int64_t id, const char *msg)
{
	int rc = CT_DB_EXEC(db, "UPDATE job SET error_message=LEFT(CONCAT(?, IF(error_message"
			    "='', '', CONCAT('; ', error_message))), 255) WHERE id=? AND "
			    "status=?", msg, id, CT_JOB_RUNNING);

	return rc < 0 ? rc : rc > 0;
}
