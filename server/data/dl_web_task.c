/*
 * dl_web_task.c - the tasks (results) of one computer or one user, with
 * their counts by state and credit (see dl_web.h).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "db.h"
#include "dl.h"
#include "dl_web.h"

/* ---- tasks ---------------------------------------------------------------- */

static const char *const task_state_names[CT_WEB_TASK_NSTATES] = {
	[CT_WEB_TASK_ANY] = "all", [CT_WEB_TASK_IN_PROGRESS] = "in progress",
	[CT_WEB_TASK_PENDING] = "pending validation", [CT_WEB_TASK_VALID] = "valid",
	[CT_WEB_TASK_INVALID] = "invalid", [CT_WEB_TASK_ERROR] = "error",
};

const char *ct_web_task_state_name(int state)
{
	return state >= 0 && state < CT_WEB_TASK_NSTATES ? task_state_names[state] : "?";
}

/* A result's ct_web_task_state from its three state columns (db.h): the
 * pending rule is sched.c's pending_results. Results never sent
 * (unsent, didn't need) are no one's tasks. */
#define TASK_STATE "(CASE WHEN r.server_state = 4 THEN 1 WHEN r.validate_state = 1 " \
	"THEN 3 WHEN r.validate_state = 2 THEN 4 WHEN r.outcome = 1 AND " \
	"r.validate_state IN (0, 4) THEN 2 ELSE 5 END)"
#define TASK_SENT "r.server_state IN (4, 5) AND r.outcome <> 7 "
/* TASKS(col): a page of the tasks whose `col` is ?, state filter ? (0:
 * any) given twice, newest first; read through result_host / result_user. */
#define TASKS(col) "SELECT r.id, r.workunitid, r.jobid, r.hostid, " TASK_STATE ", " \
	"w.round_idx, w.shard, r.sent_time, r.report_deadline, r.received_time, " \
	"r.name, COALESCE(j.name, ''), r.elapsed_s, r.granted_credit " \
	"FROM result r LEFT JOIN workunit w ON w.id = r.workunitid " \
	"LEFT JOIN job j ON j.id = r.jobid WHERE r." col " = ? AND " TASK_SENT \
	"AND (? = 0 OR " TASK_STATE " = ?) ORDER BY r.id DESC LIMIT ? OFFSET ?"
/* TASK_SUM(col): count and credit by (state, job) of one owner's tasks */
#define TASK_SUM(col) "SELECT " TASK_STATE " AS st, r.jobid, COUNT(*), " \
	"COALESCE(SUM(r.granted_credit), 0) FROM result r WHERE r." col " = ? AND " \
	TASK_SENT "GROUP BY st, r.jobid LIMIT 10000"

#define TK struct ct_web_task
static const struct ct_dl_col task_cols[] = {
	CT_DL_COL(TK, id), CT_DL_COL(TK, workunitid), CT_DL_COL(TK, jobid),
	CT_DL_COL(TK, hostid), CT_DL_COL(TK, state), CT_DL_COL(TK, round_idx),
	CT_DL_COL(TK, shard), CT_DL_COL(TK, sent_time), CT_DL_COL(TK, report_deadline),
	CT_DL_COL(TK, received_time), CT_DL_COL(TK, name), CT_DL_COL(TK, job_name),
	CT_DL_COL(TK, elapsed_s), CT_DL_COL(TK, granted_credit),
};
#undef TK

/* A row of TASK_SUM. */
struct task_group {
	int64_t state, jobid, n;
	double credit;
};

static const struct ct_dl_col group_cols[] = {
	CT_DL_COL(struct task_group, state), CT_DL_COL(struct task_group, jobid),
	CT_DL_COL(struct task_group, n), CT_DL_COL(struct task_group, credit),
};

/* One cached answer of credit_of per job of the page and the sums. */
struct job_credit {
	int64_t jobid;
	double credit;
};

static int job_credit(struct job_credit *c, size_t *nc, size_t cap, int64_t jobid,
		      int (*credit_of)(int64_t, void *, double *), void *arg, double *out)
{
	int rc;

	for (size_t i = 0; i < *nc; i++)
		if (c[i].jobid == jobid) {
			*out = c[i].credit;
			return 0;
		}
	rc = credit_of(jobid, arg, out);
	if (rc == 0 && *nc < cap)
		c[(*nc)++] = (struct job_credit){ jobid, *out };
	return rc;
}

static int task_sums(struct ct_db *db, int host, int64_t id, struct job_credit *jc,
		     size_t *njc, size_t cap, int (*credit_of)(int64_t, void *, double *),
		     void *arg, struct ct_web_task_sum *sum)
{
	struct task_group *g = NULL;
	void *rows = NULL;
	size_t n = 0;
	int rc;

	rc = host ? CT_DL_ALL(db, sizeof(*g), group_cols, "task sums", &rows, &n,
			      TASK_SUM("hostid"), id)
		  : CT_DL_ALL(db, sizeof(*g), group_cols, "task sums", &rows, &n,
			      TASK_SUM("userid"), id);
	g = rows;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		double per = 0;

		if (g[i].state <= 0 || g[i].state >= CT_WEB_TASK_NSTATES)
			continue;
		sum->n[g[i].state] += g[i].n;
		sum->n[CT_WEB_TASK_ANY] += g[i].n;
		if (g[i].state == CT_WEB_TASK_VALID)
			sum->granted += g[i].credit;
		if (g[i].state == CT_WEB_TASK_PENDING) {
			rc = job_credit(jc, njc, cap, g[i].jobid, credit_of, arg, &per);
			sum->pending += per * (double)g[i].n;
		}
	}
	free(g);
	return rc;
}

int ct_web_tasks(struct ct_db *db, const char *kind, int64_t id, int state, int64_t page,
		 int (*credit_of)(int64_t jobid, void *arg, double *credit), void *arg,
		 struct ct_web_task **tasks, size_t *n, struct ct_web_task_sum *sum)
{
	struct job_credit jc[64];
	size_t njc = 0, cap = sizeof(jc) / sizeof(jc[0]);
	int host = strcmp(kind, "host") == 0;
	struct ct_web_task *t;
	void *rows = NULL;
	int64_t off;
	int rc;

	*tasks = NULL;
	*n = 0;
	memset(sum, 0, sizeof(*sum));
	if (!host && strcmp(kind, "user") != 0)
		return ct_error(CT_EINVAL, "web: no tasks of a %s", kind);
	if (state < 0 || state >= CT_WEB_TASK_NSTATES)
		state = CT_WEB_TASK_ANY;
	if (page < 1 || page > CT_WEB_MAX_PAGE)
		page = 1;
	off = (page - 1) * CT_WEB_PAGE_SIZE;
	rc = host ? CT_DL_ALL(db, sizeof(*t), task_cols, "tasks", &rows, n, TASKS("hostid"), id,
			      state, state, CT_WEB_PAGE_SIZE, off)
		  : CT_DL_ALL(db, sizeof(*t), task_cols, "tasks", &rows, n, TASKS("userid"), id,
			      state, state, CT_WEB_PAGE_SIZE, off);
	t = rows;
	for (size_t i = 0; rc == 0 && i < *n; i++) {
		snprintf(t[i].state_name, sizeof(t[i].state_name), "%s",
			 ct_web_task_state_name((int)t[i].state));
		t[i].credit = t[i].granted_credit;
		if (t[i].state == CT_WEB_TASK_PENDING || t[i].state == CT_WEB_TASK_IN_PROGRESS)
			rc = job_credit(jc, &njc, cap, t[i].jobid, credit_of, arg, &t[i].credit);
	}
	if (rc == 0)
		rc = task_sums(db, host, id, jc, &njc, cap, credit_of, arg, sum);
	if (rc < 0) {
		free(t);
		*n = 0;
		return rc;
	}
	*tasks = t;
	return 0;
}
