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

/* A page of one owner's tasks. result.task_state (migration 036) is the
 * result's ct_web_task_state, computed from its three state columns (the
 * pending rule is sched.c's pending_results; 0: never sent, no one's
 * task). The inner SELECT reads one page of ids from an index alone, newest
 * first: (owner, task_state, id) for one state, (owner, id, task_state)
 * for all; then the page's rows are joined by primary key. */
#define TASK_COLS(inner) "SELECT r.id, r.workunitid, r.jobid, r.hostid, r.task_state, " \
	"w.round_idx, w.shard, r.sent_time, r.report_deadline, r.received_time, " \
	"r.name, COALESCE(j.name, ''), r.elapsed_s, r.granted_credit " \
	"FROM (" inner ") k JOIN result r ON r.id = k.id " \
	"LEFT JOIN workunit w ON w.id = r.workunitid " \
	"LEFT JOIN job j ON j.id = r.jobid ORDER BY r.id DESC"
#define TASKS_ALL(col, idx) TASK_COLS("SELECT id FROM result FORCE INDEX (" idx ") " \
	"WHERE " col " = ? AND task_state > 0 ORDER BY id DESC LIMIT ? OFFSET ?")
#define TASKS_IN(col, idx) TASK_COLS("SELECT id FROM result FORCE INDEX (" idx ") " \
	"WHERE " col " = ? AND task_state = ? ORDER BY id DESC LIMIT ? OFFSET ?")

/* The counts by state and the credit granted on the valid ones of one
 * owner, one row per job in job order, as the result triggers keep them
 * (task_stat, migration 036): kind 0 a computer, 1 an account. */
#define TASK_SUM "SELECT jobid, n_in_progress, n_pending, n_valid, n_invalid, n_error, " \
	"credit FROM task_stat WHERE kind = ? AND ownerid = ? ORDER BY jobid LIMIT 10000"

#define TK struct ct_web_task
static const struct ct_dl_col task_cols[] = {
	CT_DL_COL(TK, id), CT_DL_COL(TK, workunitid), CT_DL_COL(TK, jobid),
	CT_DL_COL(TK, hostid), CT_DL_COL(TK, state), CT_DL_COL(TK, round_idx),
	CT_DL_COL(TK, shard), CT_DL_COL(TK, sent_time), CT_DL_COL(TK, report_deadline),
	CT_DL_COL(TK, received_time), CT_DL_COL(TK, name), CT_DL_COL(TK, job_name),
	CT_DL_COL(TK, elapsed_s), CT_DL_COL(TK, granted_credit),
};
#undef TK

/* A row of task_stat: n[] by enum ct_web_task_state ([0] unused). */
struct task_group {
	int64_t jobid, n[CT_WEB_TASK_NSTATES];
	double credit;
};

#define G struct task_group
static const struct ct_dl_col group_cols[] = {
	CT_DL_COL(G, jobid), CT_DL_COL(G, n[CT_WEB_TASK_IN_PROGRESS]),
	CT_DL_COL(G, n[CT_WEB_TASK_PENDING]), CT_DL_COL(G, n[CT_WEB_TASK_VALID]),
	CT_DL_COL(G, n[CT_WEB_TASK_INVALID]), CT_DL_COL(G, n[CT_WEB_TASK_ERROR]),
	CT_DL_COL(G, credit),
};
#undef G

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

	rc = CT_DL_ALL(db, sizeof(*g), group_cols, "task sums", &rows, &n, TASK_SUM,
		       host ? 0 : 1, id);
	g = rows;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		double per = 0;

		for (int st = CT_WEB_TASK_IN_PROGRESS; st < CT_WEB_TASK_NSTATES; st++) {
			sum->n[st] += g[i].n[st];
			sum->n[CT_WEB_TASK_ANY] += g[i].n[st];
		}
		if (g[i].n[CT_WEB_TASK_VALID] > 0)
			sum->granted += g[i].credit;
		if (g[i].n[CT_WEB_TASK_PENDING] > 0) {
			rc = job_credit(jc, njc, cap, g[i].jobid, credit_of, arg, &per);
			sum->pending += per * (double)g[i].n[CT_WEB_TASK_PENDING];
		}
	}
	free(g);
	return rc;
}

/* One page of owner `id`'s tasks in `state` from row `off`, into *rows. */
static int task_page(struct ct_db *db, int host, int64_t id, int state, int64_t off,
		     void **rows, size_t *n)
{
	const size_t size = sizeof(struct ct_web_task);
	const int64_t lim = CT_WEB_PAGE_SIZE;

	if (state == CT_WEB_TASK_ANY)
		return host ? CT_DL_ALL(db, size, task_cols, "tasks", rows, n,
					TASKS_ALL("hostid", "result_host_id"), id, lim, off)
			    : CT_DL_ALL(db, size, task_cols, "tasks", rows, n,
					TASKS_ALL("userid", "result_user"), id, lim, off);
	return host ? CT_DL_ALL(db, size, task_cols, "tasks", rows, n,
				TASKS_IN("hostid", "result_host_task"), id, state, lim, off)
		    : CT_DL_ALL(db, size, task_cols, "tasks", rows, n,
				TASKS_IN("userid", "result_user_task"), id, state, lim, off);
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
	rc = task_page(db, host, id, state, off, &rows, n);
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
