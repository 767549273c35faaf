/*
 * dl_worklimit.c - the work limits' counts of the result table (see
 * dl_worklimit.h): the statements with their column tables beside them.
 */
#include "dl_worklimit.h"

#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "db.h"
#include "db_args.h"
#include "dl.h"
#include "dl_sched.h"
#include "dl_web.h"
#include "result_state.h"

/* The counts as one derived row k (13 placeholders: wlim_args()). In
 * progress is task_state 1 (server_state in progress and nothing else,
 * migration 048), read from (owner, task_state). The last day by
 * result_host_sent: on small tables MariaDB took a (hostid, ...) index
 * without sent_time, every result the host ever had. */
#define COUNTS_SQL "(SELECT (SELECT COUNT(*) FROM result FORCE INDEX (result_host_task) " \
	"WHERE hostid=? AND task_state=?) AS inprog, hr.n, hr.e, hr.v, (SELECT COUNT(*) FROM " \
	"result FORCE INDEX (result_user_task) WHERE userid=? AND task_state=?) AS " \
	"acc_inprog, (SELECT COUNT(*) FROM result WHERE " \
	"userid=? AND validate_state=? AND sent_time > ?) AS acc_valid FROM (SELECT COUNT(*) " \
	"AS n, COALESCE(SUM(outcome IN (?, ?, ?)), 0) AS e, COALESCE(SUM(validate_state = ?), " \
	"0) AS v FROM result FORCE INDEX (result_host_sent) WHERE hostid=? AND sent_time > ?) " \
	"hr) k"
#define COUNTS_NARGS 13

static void wlim_args(struct ct_db_arg *a, int64_t userid, int64_t hostid, int64_t since)
{
	const int64_t v[COUNTS_NARGS] = {
		hostid, CT_WEB_TASK_IN_PROGRESS, userid, CT_WEB_TASK_IN_PROGRESS, userid,
		CT_VS_VALID, since,
		CT_RO_CLIENT_ERROR, CT_RO_NO_REPLY, CT_RO_VALIDATE_ERROR, CT_VS_VALID, hostid, since,
	};

	for (int i = 0; i < COUNTS_NARGS; i++)
		a[i] = ct_db_arg_l(v[i]);
}

#define K struct ct_dl_wlim_counts
#define COUNTS_COLS(T, k) CT_DL_COL(T, k.inprog), CT_DL_COL(T, k.sent24), \
	CT_DL_COL(T, k.err24), CT_DL_COL(T, k.valid24), CT_DL_COL(T, k.acc_inprog), \
	CT_DL_COL(T, k.acc_valid24)

struct counts_row {
	struct ct_dl_wlim_counts k;
};

static const struct ct_dl_col counts_cols[] = { COUNTS_COLS(struct counts_row, k) };
#undef K

int ct_dl_wlim_counts(struct ct_db *db, int64_t userid, int64_t hostid, int64_t since,
		      struct ct_dl_wlim_counts *k)
{
	struct ct_db_arg a[COUNTS_NARGS];
	struct counts_row r = { { 0 } };
	int rc;

	wlim_args(a, userid, hostid, since);
	rc = ct_dl_query_one(db, &r, counts_cols, CT_DL_NCOLS(counts_cols),
			     "SELECT k.* FROM " COUNTS_SQL, a, COUNTS_NARGS);
	*k = r.k;
	return rc;
}

struct acc_row {
	int64_t inprog, valid24;
};

static const struct ct_dl_col acc_cols[] = {
	CT_DL_COL(struct acc_row, inprog), CT_DL_COL(struct acc_row, valid24),
};

int ct_dl_wlim_counts_account(struct ct_db *db, int64_t userid, int64_t since,
			      struct ct_dl_wlim_counts *k)
{
	struct acc_row r = { 0 };
	int rc;

	memset(k, 0, sizeof(*k));
	rc = CT_DL_ONE(db, &r, acc_cols, "SELECT (SELECT COUNT(*) FROM result FORCE INDEX "
		       "(result_user_task) WHERE userid=? AND task_state=?), (SELECT COUNT(*) FROM "
		       "result WHERE userid=? AND validate_state=? AND sent_time > ?)", userid,
		       CT_WEB_TASK_IN_PROGRESS, userid, CT_VS_VALID, since);
	k->acc_inprog = r.inprog;
	k->acc_valid24 = r.valid24;
	return rc;
}

/* One row of the counts with one held result (id 0: none). */
struct held_row {
	struct ct_dl_wlim_counts k;
	struct ct_sched_held h;
};

#define HR struct held_row
static const struct ct_dl_col held_cols[] = {
	COUNTS_COLS(HR, k), CT_DL_COL(HR, h.id), CT_DL_COL(HR, h.name),
	CT_DL_COL(HR, h.error_mask),
};
#undef HR

int ct_dl_wlim_counts_held(struct ct_db *db, int64_t userid, int64_t hostid, int64_t since,
			   int64_t now, struct ct_dl_wlim_counts *k, struct ct_sched_held *rows,
			   int max, int *n)
{
	struct ct_db_arg a[COUNTS_NARGS + 4];
	struct held_row *v = NULL;
	size_t nv = 0;
	int rc;

	*n = 0;
	memset(k, 0, sizeof(*k));
	wlim_args(a, userid, hostid, since);
	a[COUNTS_NARGS] = ct_db_arg_l(hostid);
	a[COUNTS_NARGS + 1] = ct_db_arg_l(CT_WEB_TASK_IN_PROGRESS);
	a[COUNTS_NARGS + 2] = ct_db_arg_l(now);
	a[COUNTS_NARGS + 3] = ct_db_arg_l(max);
	/* the one row of counts joined to every held result, or to none */
	rc = ct_dl_query_list(db, sizeof(*v), &v, &nv, held_cols, CT_DL_NCOLS(held_cols),
			      "held results", "SELECT k.*, x.id, x.name, x.error_mask FROM "
			      COUNTS_SQL " LEFT JOIN (SELECT r.id, r.name, w.error_mask FROM "
			      "result r FORCE INDEX (result_host_task) JOIN workunit w ON "
			      "w.id=r.workunitid WHERE r.hostid=? AND r.task_state=? AND "
			      "r.report_deadline>? ORDER BY r.id LIMIT ?) x "
			      "ON 1 = 1 ORDER BY x.id", a, COUNTS_NARGS + 4);
	if (rc == 0 && nv == 0)
		rc = ct_error(CT_ENOTFOUND, "host counts: no row");
	if (rc == 0)
		*k = v[0].k;
	for (size_t i = 0; rc == 0 && i < nv && *n < max; i++)
		if (v[i].h.id != 0)
			rows[(*n)++] = v[i].h;
	free(v);
	return rc;
}

static const struct ct_dl_col elapsed_cols[] = {
	CT_DL_COL(struct ct_dl_run_time, elapsed_s),
};

int ct_dl_job_run_times(struct ct_db *db, int64_t wuid, int max, struct ct_dl_run_time **v,
			size_t *n)
{
	*v = NULL;
	*n = 0;
	/* newest first along result_job_valid: a few rows, however many
	 * results the job has (as a join on workunit, MariaDB walked back
	 * through all of them while few were valid) */
	return CT_DL_LIST(db, v, n, elapsed_cols, "run times", "SELECT elapsed_s FROM result "
			  "FORCE INDEX (result_job_valid) WHERE jobid=(SELECT jobid FROM workunit "
			  "WHERE id=?) AND validate_state=? AND elapsed_s > 0 ORDER BY id DESC "
			  "LIMIT ?", wuid, CT_VS_VALID, max);
}

#define S struct ct_dl_wu_size
static const struct ct_dl_col size_cols[] = {
	CT_DL_COL(S, steps), CT_DL_COL(S, batch), CT_DL_COL(S, seq), CT_DL_COL(S, model_size),
};
#undef S

int ct_dl_wu_size(struct ct_db *db, int64_t wuid, struct ct_dl_wu_size *s)
{
	int rc;

	memset(s, 0, sizeof(*s));
	rc = CT_DL_ONE(db, s, size_cols, "SELECT j.steps, j.batch, j.seq, j.model_size FROM "
		       "workunit w JOIN job j ON j.id = w.jobid WHERE w.id=?", wuid);
	return rc == CT_ENOTFOUND ? 0 : rc;
}

