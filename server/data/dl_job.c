/*
 * dl_job.c - the `job` table's reads (see dl_job.h): one column list, one
 * column table, the statements beside them.
 */
#include "ct_err.h"
#include "db.h"
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
