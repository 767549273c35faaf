/*
 * job_state.c - the job's lifecycle (see job_state.h): the table of allowed
 * status changes and the one statement per edge that writes job.status.
 */
#include <inttypes.h>

#include "ct_err.h"
#include "db.h"
#include "db_args.h"
#include "job_state.h"
#include "result_state.h"
#include "wu_state.h"

const struct ct_job_edge ct_job_edges[] = {
	{ CT_JOB_RUNNING, CT_JOB_DONE },
	{ CT_JOB_RUNNING, CT_JOB_ERROR },
	{ CT_JOB_RUNNING, CT_JOB_CANCELED },
};
const size_t ct_job_nedges = sizeof(ct_job_edges) / sizeof(ct_job_edges[0]);

int ct_job_move_allowed(int from, int to)
{
	for (size_t i = 0; i < ct_job_nedges; i++)
		if (ct_job_edges[i].from == from && ct_job_edges[i].to == to)
			return 1;
	return 0;
}

static int move_done(struct ct_db *db, int64_t jobid, int from, const struct ct_job_change *c)
{
	return CT_DB_EXEC(db, "UPDATE job SET status=?, final_model_sha256=?, "
			  "final_eval_loss=?, finish_time=?, update_time=? WHERE id=? "
			  "AND status=?", CT_JOB_DONE, c->out_sha ? c->out_sha : "", c->eval_loss,
			  c->now, c->now, jobid, from);
}

static int move_error(struct ct_db *db, int64_t jobid, int from, const struct ct_job_change *c)
{
	return CT_DB_EXEC(db, "UPDATE job SET status=?, error_message=LEFT(CONCAT(?, "
			  "IF(error_message='', '', CONCAT('; ', error_message))), 255), "
			  "update_time=? WHERE id=? AND status=?", CT_JOB_ERROR,
			  c->msg ? c->msg : "", c->now, jobid, from);
}

static int move_canceled(struct ct_db *db, int64_t jobid, int from,
			 const struct ct_job_change *c)
{
	return CT_DB_EXEC(db, "UPDATE job SET status=?, finish_time=?, update_time=? "
			  "WHERE id=? AND status=?", CT_JOB_CANCELED, c->now, c->now, jobid,
			  from);
}

int ct_job_move(struct ct_db *db, int64_t jobid, int from, int to,
		const struct ct_job_change *c)
{
	if (!ct_job_move_allowed(from, to))
		return ct_error(CT_ESTATE, "job %" PRId64 ": no move from %s to %s", jobid,
				ct_job_status_name(from), ct_job_status_name(to));
	switch (to) {
	case CT_JOB_DONE:
		return move_done(db, jobid, from, c);
	case CT_JOB_ERROR:
		return move_error(db, jobid, from, c);
	default:
		return move_canceled(db, jobid, from, c);
	}
}

static int cancel_txn(struct ct_db *db, void *arg)
{
	int64_t id = *(int64_t *)arg, st = 0;
	struct ct_job_change c = { .now = ct_db_now(db) };
	int rc;

	rc = CT_DB_QUERY_INT(db, &st, "SELECT status FROM job WHERE id=? FOR UPDATE", id);
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "no job %" PRId64, id);
	if (rc < 0)
		return rc;
	if (st != CT_JOB_RUNNING)
		return ct_error(CT_ESTATE, "job %" PRId64 " is %s", id, ct_job_status_name((int)st));
	rc = ct_job_move(db, id, CT_JOB_RUNNING, CT_JOB_CANCELED, &c);
	if (rc >= 0)
		rc = ct_round_cancel_job(db, id);
	if (rc >= 0)
		rc = ct_wu_cancel_job(db, id, c.now);
	if (rc >= 0)
		rc = ct_res_drop_unsent_job(db, id);
	return rc < 0 ? rc : 0;
}

int ct_job_cancel(struct ct_db *db, int64_t jobid)
{
	return ct_db_txn(db, cancel_txn, &jobid);
}

/* ---- state names -------------------------------------------------------- */

const char *ct_job_status_name(int s)
{
	static const char *const names[] = { "?", "running", "done", "canceled", "error" };

	return s >= 0 && s < 5 ? names[s] : "?";
}
