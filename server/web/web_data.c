/*
 * web_data.c - the queries behind the web pages and the JSON API (see
 * web_data.h). Each SQL text is a literal, so db.h's per-connection cache
 * prepares it once; the two orders of a leaderboard are two literals.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "data/db.h"
#include "data/dl.h"
#include "web_data.h"

static void board_pages(struct ct_web_board *b, int64_t page, int64_t total)
{
	b->page = page;
	b->total = total;
	b->npages = total == 0 ? 1 : (total + CT_WEB_PAGE_SIZE - 1) / CT_WEB_PAGE_SIZE;
}

void ct_web_board_free(struct ct_web_board *b)
{
	free(b->users);	/* the union's members share one pointer */
	b->users = NULL;
	b->n = 0;
}

/* ---- leaderboards: users, teams, hosts ----------------------------------- */

/* A team's members and a user's computers are read through the owner's
 * index (FORCE INDEX: left alone, MariaDB walks the whole credit index
 * and filters, bench/bench_web measured 70 ms with 20,000 users).
 *
 * Leaderboards are "deferred joins": the inner SELECT reads only the
 * credit index (ids in order, LIMIT/OFFSET applied there), then the page's
 * rows are joined by primary key. Joining first makes MariaDB sort the
 * whole table instead (measured by bench/bench_web).
 *
 * PAGE(tbl, a, sel, join, order): one such page of table `tbl` aliased `a`;
 * OWNED(tbl, a, sel, join, idx, col, order): the rows whose `col` is the
 * owner's id, read through index `idx`, at most 4 pages. */
#define PAGE(tbl, a, sel, join, order) "SELECT " sel "FROM (SELECT id FROM " \
	tbl " ORDER BY " order " DESC, id DESC LIMIT ? OFFSET ?) k " \
	"JOIN " tbl " " a " ON " a ".id = k.id " join \
	"ORDER BY " a "." order " DESC, " a ".id DESC"
#define OWNED(tbl, a, sel, join, idx, col, order) "SELECT " sel "FROM " tbl \
	" " a " FORCE INDEX (" idx ") " join "WHERE " a "." col " = ? " \
	"ORDER BY " a "." order " DESC, " a ".id DESC LIMIT ?"

/* What differs between the three leaderboards: the row struct (size, where
 * its rank and RAC live, its columns) and the SQL texts. page_sql and
 * owner_sql are indexed by enum ct_web_sort. */
struct board_kind {
	const char *name;		/* "user": for errors and history */
	size_t size, rank_off, expavg_off;
	const struct ct_dl_col *cols;		/* the SELECT's columns, in order */
	size_t ncols;
	const char *count_sql, *page_sql[2];
	const char *owner_count_sql, *owner_sql[2];	/* NULL: no owner */
	const char *get_sql, *rank_sql, *history_sql;
	const char *after_sql;		/* id order after an id (the stats export) */
};

/* The members of a struct board_kind for row type T with columns `cols`,
 * read from table `tbl` aliased `a` by `sel` + `join`, with credit events
 * in column `hcol` of credit_event. */
#define BOARD(T, cols_, tbl, a, sel, join, hcol) \
	.size = sizeof(T), .rank_off = offsetof(T, rank), \
	.expavg_off = offsetof(T, expavg_credit), \
	.cols = (cols_), .ncols = CT_DL_NCOLS(cols_), \
	.count_sql = "SELECT COUNT(*) FROM " tbl, \
	.page_sql = { \
		[CT_WEB_SORT_RAC] = PAGE(tbl, a, sel, join, "expavg_credit"), \
		[CT_WEB_SORT_TOTAL] = PAGE(tbl, a, sel, join, "total_credit"), \
	}, \
	.get_sql = "SELECT " sel "FROM " tbl " " a " " join "WHERE " a ".id = ?", \
	.after_sql = "SELECT " sel "FROM " tbl " " a " " join "WHERE " a ".id > ? " \
		"ORDER BY " a ".id LIMIT ?", \
	.rank_sql = "SELECT COUNT(*) FROM " tbl " WHERE expavg_credit > ? OR " \
		"(expavg_credit = ? AND id > ?)", \
	.history_sql = "SELECT create_time DIV 86400 AS d, SUM(credit) FROM " \
		"credit_event WHERE " hcol " = ? GROUP BY d ORDER BY d DESC LIMIT ?"

/* ... and, for a board whose rows have an owner (column `col`, index `idx`). */
#define OWNER(tbl, a, sel, join, idx, col) \
	.owner_count_sql = "SELECT COUNT(*) FROM " tbl " WHERE " col " = ?", \
	.owner_sql = { \
		[CT_WEB_SORT_RAC] = OWNED(tbl, a, sel, join, idx, col, \
					  "expavg_credit"), \
		[CT_WEB_SORT_TOTAL] = OWNED(tbl, a, sel, join, idx, col, \
					    "total_credit"), \
	}

#define USER_SEL "u.id, u.name, u.country, u.url, u.teamid, " \
	"COALESCE(t.name, ''), u.total_credit, u.expavg_credit, " \
	"u.expavg_time, u.create_time "
#define USER_JOIN "LEFT JOIN team t ON t.id = u.teamid "
#define U struct ct_web_user
static const struct ct_dl_col user_cols[] = {
	CT_DL_COL(U, id), CT_DL_COL(U, name), CT_DL_COL(U, country), CT_DL_COL(U, url),
	CT_DL_COL(U, teamid), CT_DL_COL(U, team_name), CT_DL_COL(U, total_credit),
	CT_DL_COL(U, expavg_credit), CT_DL_COL(U, expavg_time), CT_DL_COL(U, create_time),
};

static const struct board_kind user_board = {
	.name = "user",
	BOARD(U, user_cols, "`user`", "u", USER_SEL, USER_JOIN, "userid"),
	OWNER("`user`", "u", USER_SEL, USER_JOIN, "user_team", "teamid"),
};
#undef U

#define TEAM_SEL "t.id, t.name, t.userid, COALESCE(u.name, ''), t.url, " \
	"t.description, t.nusers, t.total_credit, t.expavg_credit, " \
	"t.expavg_time, t.create_time "
#define TEAM_JOIN "LEFT JOIN `user` u ON u.id = t.userid "
#define T struct ct_web_team
static const struct ct_dl_col team_cols[] = {
	CT_DL_COL(T, id), CT_DL_COL(T, name), CT_DL_COL(T, userid), CT_DL_COL(T, founder_name),
	CT_DL_COL(T, url), CT_DL_COL(T, description), CT_DL_COL(T, nusers),
	CT_DL_COL(T, total_credit), CT_DL_COL(T, expavg_credit), CT_DL_COL(T, expavg_time),
	CT_DL_COL(T, create_time),
};

static const struct board_kind team_board = {
	.name = "team",
	BOARD(T, team_cols, "team", "t", TEAM_SEL, TEAM_JOIN, "teamid"),
};
#undef T

#define HOST_SEL "h.id, h.userid, COALESCE(u.name, ''), h.os, h.cpu_model, " \
	"COALESCE(d.name, ''), h.ncpus, h.ram_bytes, h.client_version, " \
	"h.nresults_valid, h.nresults_invalid, h.total_credit, " \
	"h.expavg_credit, h.expavg_time, h.create_time, h.rpc_time "
#define HOST_JOIN "LEFT JOIN `user` u ON u.id = h.userid " \
	"LEFT JOIN device d ON d.hostid = h.id AND d.slot = 0 "
#define H struct ct_web_host
static const struct ct_dl_col host_cols[] = {
	CT_DL_COL(H, id), CT_DL_COL(H, userid), CT_DL_COL(H, owner_name), CT_DL_COL(H, os),
	CT_DL_COL(H, cpu_model), CT_DL_COL(H, device), CT_DL_COL(H, ncpus),
	CT_DL_COL(H, ram_bytes), CT_DL_COL(H, client_version), CT_DL_COL(H, nresults_valid),
	CT_DL_COL(H, nresults_invalid), CT_DL_COL(H, total_credit),
	CT_DL_COL(H, expavg_credit), CT_DL_COL(H, expavg_time), CT_DL_COL(H, create_time),
	CT_DL_COL(H, rpc_time),
};

static const struct board_kind host_board = {
	.name = "host",
	BOARD(H, host_cols, "host", "h", HOST_SEL, HOST_JOIN, "hostid"),
	OWNER("host", "h", HOST_SEL, HOST_JOIN, "host_user_cpid", "userid"),
};
#undef H

static const struct board_kind *const boards[] = {
	&user_board, &team_board, &host_board,
};

static int64_t *row_rank(const struct board_kind *k, void *row)
{
	return (int64_t *)((char *)row + k->rank_off);
}

/* Run board k's SELECT `sql` with the arguments a[0..na) and read every
 * row into a new array at b->users (the union's members share one
 * pointer), ranked from first_rank. */
static int fill_board(struct ct_db *db, const struct board_kind *k, const char *sql,
		      const struct ct_db_arg *a, size_t na, struct ct_web_board *b,
		      int64_t first_rank)
{
	void *rows;
	char name[16];
	int rc;

	snprintf(name, sizeof(name), "%ss", k->name);
	rc = ct_dl_query_all(db, k->size, k->cols, k->ncols, name, &rows, &b->n, sql, a, na);
	if (rc < 0)
		return rc;
	b->users = rows;
	for (size_t i = 0; i < b->n; i++)
		*row_rank(k, (char *)rows + i * k->size) = first_rank + (int64_t)i;
	return 0;
}

/* One page of board `k` in `sort` order, or (owner > 0, for kinds with an
 * owner) the rows of that owner, all on page 1. */
static int board(struct ct_db *db, const struct board_kind *k,
		 enum ct_web_sort sort, int64_t page, int64_t owner,
		 struct ct_web_board *b)
{
	int64_t total = 0, off;
	int s = sort == CT_WEB_SORT_TOTAL ? CT_WEB_SORT_TOTAL : CT_WEB_SORT_RAC;
	int rc;

	memset(b, 0, sizeof(*b));
	b->sort = sort;
	if (page < 1 || page > CT_WEB_MAX_PAGE || owner > 0)
		page = 1;
	off = (page - 1) * CT_WEB_PAGE_SIZE;
	if (owner > 0)
		rc = ct_db_query_int(db, &total, k->owner_count_sql, "l", owner);
	else
		rc = ct_db_query_int(db, &total, k->count_sql, "");
	if (rc < 0)
		return rc;
	board_pages(b, page, total);
	if (owner > 0)
		return fill_board(db, k, k->owner_sql[s], CT_DB_ARGS(owner, CT_WEB_PAGE_SIZE * 4),
				  b, off + 1);
	return fill_board(db, k, k->page_sql[s], CT_DB_ARGS(CT_WEB_PAGE_SIZE, off), b, off + 1);
}

int ct_web_users(struct ct_db *db, enum ct_web_sort sort, int64_t page,
		 int64_t teamid, struct ct_web_board *b)
{
	return board(db, &user_board, sort, page, teamid, b);
}

int ct_web_teams(struct ct_db *db, enum ct_web_sort sort, int64_t page,
		 struct ct_web_board *b)
{
	return board(db, &team_board, sort, page, 0, b);
}

int ct_web_hosts(struct ct_db *db, enum ct_web_sort sort, int64_t page,
		 int64_t userid, struct ct_web_board *b)
{
	return board(db, &host_board, sort, page, userid, b);
}

static const struct board_kind *board_kind(const char *kind)
{
	for (size_t i = 0; i < sizeof(boards) / sizeof(boards[0]); i++)
		if (strcmp(kind, boards[i]->name) == 0)
			return boards[i];
	return NULL;
}

int ct_web_board(struct ct_db *db, const char *kind, enum ct_web_sort sort, int64_t page,
		 int64_t owner, struct ct_web_board *b)
{
	const struct board_kind *k = board_kind(kind);

	if (k == NULL || (owner > 0 && k->owner_count_sql == NULL))
		return ct_error(CT_EINVAL, "web: no board of %s by owner", kind);
	return board(db, k, sort, page, owner, b);
}

int ct_web_board_after(struct ct_db *db, const char *kind, int64_t after, int64_t limit,
		       struct ct_web_board *b)
{
	const struct board_kind *k = board_kind(kind);

	memset(b, 0, sizeof(*b));
	if (k == NULL)
		return ct_error(CT_EINVAL, "web: no board of %s", kind);
	return fill_board(db, k, k->after_sql, CT_DB_ARGS(after, limit), b, 0);
}

/* Row `id` of board `k` into `row`, with its rank by RAC. */
static int get_row(struct ct_db *db, const struct board_kind *k, int64_t id,
		   void *row)
{
	int64_t above = 0;
	double rac;
	int rc;

	memset(row, 0, k->size);
	rc = ct_dl_query_one(db, row, k->cols, k->ncols, k->get_sql, CT_DB_ARGS(id));
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "no %s %lld", k->name, (long long)id);
	if (rc < 0)
		return rc;
	memcpy(&rac, (char *)row + k->expavg_off, sizeof(rac));
	rc = ct_db_query_int(db, &above, k->rank_sql, "ddl", rac, rac, id);
	if (rc < 0)
		return rc;
	*row_rank(k, row) = above + 1;
	return 0;
}

int ct_web_get_user(struct ct_db *db, int64_t id, struct ct_web_user *u)
{
	int rc = get_row(db, &user_board, id, u);

	if (rc < 0)
		return rc;
	return ct_db_query_int(db, &u->nhosts, "SELECT COUNT(*) FROM host "
			       "WHERE userid = ?", "l", id);
}

int ct_web_get_team(struct ct_db *db, int64_t id, struct ct_web_team *t)
{
	return get_row(db, &team_board, id, t);
}

int ct_web_get_host(struct ct_db *db, int64_t id, struct ct_web_host *h)
{
	int rc = get_row(db, &host_board, id, h);

	if (rc < 0)
		return rc;
	return ct_db_query_int(db, &h->ndevices, "SELECT COUNT(*) FROM device "
			       "WHERE hostid = ?", "l", id);
}

int ct_web_get(struct ct_db *db, const char *kind, int64_t id, void *row)
{
	if (strcmp(kind, "user") == 0)
		return ct_web_get_user(db, id, row);
	if (strcmp(kind, "team") == 0)
		return ct_web_get_team(db, id, row);
	if (strcmp(kind, "host") == 0)
		return ct_web_get_host(db, id, row);
	return ct_error(CT_EINVAL, "web: no %s rows", kind);
}

/* ---- credit history ------------------------------------------------------ */

/* A day of credit_event (history_sql's columns). */
struct hist_day {
	int64_t day;
	double credit;
};

static const struct ct_dl_col hist_cols[] = {
	CT_DL_COL(struct hist_day, day), CT_DL_COL(struct hist_day, credit),
};

int ct_web_history(struct ct_db *db, const char *kind, int64_t id,
		   double total, double **t, double **credit, size_t *n)
{
	const struct board_kind *k = board_kind(kind);
	struct hist_day *d = NULL;
	void *rows = NULL;
	size_t nd = 0;
	double cum = total;
	int rc;

	*t = *credit = NULL;
	*n = 0;
	if (k == NULL)
		return ct_error(CT_EINVAL, "web: history of '%s'", kind);
	rc = CT_DL_ALL(db, sizeof(*d), hist_cols, "history days", &rows, &nd, k->history_sql,
		       id, CT_WEB_HIST_DAYS);
	d = rows;
	if (rc < 0 || nd == 0)
		goto out;
	*t = calloc(nd + 1, sizeof(double));
	*credit = calloc(nd + 1, sizeof(double));
	if (*t == NULL || *credit == NULL) {
		free(*t);
		free(*credit);
		*t = *credit = NULL;
		rc = ct_error(CT_ENOMEM, "web: history of %zu days", nd);
		goto out;
	}
	/* Rows come newest first: walk back from the total. */
	for (size_t i = 0, k = nd; i < nd; i++, k--) {
		(*t)[k] = (double)((d[i].day + 1) * 86400);
		(*credit)[k] = cum;
		cum -= d[i].credit;
		if (k == 1)
			(*t)[0] = (double)(d[i].day * 86400);
	}
	(*credit)[0] = cum > 0 ? cum : 0;
	*n = nd + 1;
out:
	free(d);
	return rc < 0 ? rc : 0;
}

/* ---- jobs ---------------------------------------------------------------- */

#define JOB_COLS "j.id, j.name, j.create_time, j.finish_time, j.status, " \
	"j.error_message, j.model_sha256, j.final_model_sha256, j.nshards, " \
	"j.nrounds, j.cur_round, j.steps, j.batch, j.seq, j.lr, " \
	"j.min_quorum, j.target_nresults, j.base_eval_loss, j.final_eval_loss, " \
	"(SELECT COALESCE(SUM(nwus), 0) FROM `round` r WHERE r.jobid = j.id), " \
	"(SELECT COALESCE(SUM(nwus_done), 0) FROM `round` r WHERE r.jobid = j.id), " \
	"j.aggregation, j.outer_method, j.outer_lr, j.outer_momentum, j.round_quorum " \
	"FROM job j "

#define J struct ct_web_job
static const struct ct_dl_col job_cols[] = {
	CT_DL_COL(J, id), CT_DL_COL(J, name), CT_DL_COL(J, create_time), CT_DL_COL(J, finish_time),
	CT_DL_COL(J, status), CT_DL_COL(J, error_message), CT_DL_COL(J, model_sha256),
	CT_DL_COL(J, final_model_sha256), CT_DL_COL(J, nshards), CT_DL_COL(J, nrounds),
	CT_DL_COL(J, cur_round), CT_DL_COL(J, steps), CT_DL_COL(J, batch), CT_DL_COL(J, seq),
	CT_DL_COL(J, lr), CT_DL_COL(J, min_quorum), CT_DL_COL(J, target_nresults),
	CT_DL_COL_NAN(J, base_eval_loss), CT_DL_COL_NAN(J, final_eval_loss), CT_DL_COL(J, nwus),
	CT_DL_COL(J, nwus_done), CT_DL_COL(J, aggregation), CT_DL_COL(J, outer_method),
	CT_DL_COL(J, outer_lr), CT_DL_COL(J, outer_momentum), CT_DL_COL(J, round_quorum),
};
#undef J

static void job_status_name(struct ct_web_job *j)
{
	snprintf(j->status_name, sizeof(j->status_name), "%s",
		 ct_job_status_name((int)j->status));
}

#define J struct ct_web_job
static const struct ct_dl_col count_cols[] = {
	CT_DL_COL(J, res_unsent), CT_DL_COL(J, res_in_progress), CT_DL_COL(J, res_valid),
	CT_DL_COL(J, res_invalid), CT_DL_COL(J, res_error), CT_DL_COL(J, credit),
};
#undef J

/* Result counts of one job by state (result_job index). */
static int job_counts(struct ct_db *db, struct ct_web_job *j)
{
	/* the per-round counters the result triggers keep (migration 004):
	 * one row per round, whatever the number of results; an aggregate,
	 * so always one row */
	return CT_DL_ONE(db, j, count_cols, "SELECT COALESCE(SUM(n_unsent), 0), "
		"COALESCE(SUM(n_in_progress), 0), COALESCE(SUM(n_valid), 0), "
		"COALESCE(SUM(n_invalid), 0), COALESCE(SUM(n_error), 0), "
		"COALESCE(SUM(credit), 0) FROM round_stat WHERE jobid = ?", j->id);
}

int ct_web_jobs(struct ct_db *db, struct ct_web_job **jobs, size_t *n)
{
	void *rows = NULL;
	int rc;

	rc = ct_dl_query_all(db, sizeof(**jobs), job_cols, CT_DL_NCOLS(job_cols), "jobs", &rows,
			     n, "SELECT " JOB_COLS "ORDER BY j.id DESC LIMIT 500", NULL, 0);
	*jobs = rows;
	for (size_t i = 0; rc == 0 && i < *n; i++) {
		job_status_name(&(*jobs)[i]);
		rc = job_counts(db, &(*jobs)[i]);
	}
	if (rc < 0) {
		free(*jobs);
		*jobs = NULL;
		*n = 0;
	}
	return rc;
}

#define R struct ct_web_round
static const struct ct_dl_col round_cols[] = {
	CT_DL_COL(R, idx), CT_DL_COL(R, status), CT_DL_COL(R, nwus), CT_DL_COL(R, nwus_done),
	CT_DL_COL(R, create_time), CT_DL_COL(R, finish_time), CT_DL_COL(R, model_sha256),
	CT_DL_COL(R, out_model_sha256), CT_DL_COL_NAN(R, eval_loss), CT_DL_COL_NAN(R, base_eval_loss),
	CT_DL_COL(R, res_in_progress), CT_DL_COL(R, res_valid), CT_DL_COL(R, res_invalid),
	CT_DL_COL(R, eval_ntokens), CT_DL_COL(R, nfailed),
};
#undef R

static int job_rounds(struct ct_db *db, int64_t id, struct ct_web_round **out,
		      size_t *n)
{
	struct ct_web_round *r;
	void *rows = NULL;
	int rc;

	rc = CT_DL_ALL(db, sizeof(*r), round_cols, "rounds", &rows, n,
		"SELECT r.idx, r.status, r.nwus, r.nwus_done, "
		"r.create_time, r.finish_time, r.model_sha256, r.out_model_sha256, "
		"r.eval_loss, r.base_eval_loss, COALESCE(s.n_in_progress, 0), "
		"COALESCE(s.n_valid, 0), COALESCE(s.n_invalid, 0), r.eval_ntokens, "
		/* the round check's refusals (assimilator.c), one row per shard */
		"(SELECT COUNT(*) FROM robust_event e WHERE e.jobid = r.jobid AND "
		"e.round_idx = r.idx AND e.shard = 0 AND e.action = 4) "
		"FROM `round` r LEFT JOIN round_stat s ON s.roundid = r.id "
		"WHERE r.jobid = ? ORDER BY r.idx LIMIT 10000", id);
	if (rc < 0)
		return rc;
	*out = r = rows;
	for (size_t i = 0; i < *n; i++)
		snprintf(r[i].status_name, sizeof(r[i].status_name), "%s",
			 ct_round_status_name((int)r[i].status));
	return 0;
}

#define C struct ct_web_contrib
static const struct ct_dl_col contrib_cols[] = {
	CT_DL_COL(C, userid), CT_DL_COL(C, name), CT_DL_COL(C, nresults), CT_DL_COL(C, credit),
};
#undef C

static int job_contributors(struct ct_db *db, int64_t id,
			    struct ct_web_contrib **out, size_t *n)
{
	void *rows = NULL;
	int rc;

	/* the per-(job, user) counters a result trigger keeps (migration 004) */
	rc = CT_DL_ALL(db, sizeof(**out), contrib_cols, "contributors", &rows, n,
		"SELECT s.userid, COALESCE(u.name, ''), "
		"s.nvalid, s.credit FROM job_user_stat s "
		"LEFT JOIN `user` u ON u.id = s.userid "
		"WHERE s.jobid = ? AND s.nvalid > 0 "
		"ORDER BY s.credit DESC, s.userid LIMIT 50", id);
	*out = rows;
	return rc;
}

int ct_web_get_job(struct ct_db *db, int64_t id, struct ct_web_job *job,
		   struct ct_web_round **rounds, size_t *nrounds,
		   struct ct_web_contrib **contrib, size_t *ncontrib)
{
	int rc;

	*rounds = NULL;
	*contrib = NULL;
	*nrounds = *ncontrib = 0;
	memset(job, 0, sizeof(*job));
	rc = CT_DL_ONE(db, job, job_cols, "SELECT " JOB_COLS "WHERE j.id = ?", id);
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "no job %lld", (long long)id);
	if (rc < 0)
		return rc;
	job_status_name(job);
	rc = job_counts(db, job);
	if (rc == 0)
		rc = job_rounds(db, id, rounds, nrounds);
	if (rc == 0)
		rc = job_contributors(db, id, contrib, ncontrib);
	if (rc < 0) {
		free(*rounds);
		*rounds = NULL;
		*nrounds = 0;
	}
	return rc;
}

/* ---- server status ------------------------------------------------------- */

#define RL struct ct_web_role
static const struct ct_dl_col role_cols[] = {
	CT_DL_COL(RL, role), CT_DL_COL(RL, instance), CT_DL_COL(RL, start_time),
	CT_DL_COL(RL, beat_time), CT_DL_COL(RL, nruns), CT_DL_COL(RL, nitems),
	CT_DL_COL(RL, last_error),
};
#undef RL

static int status_roles(struct ct_db *db, struct ct_web_status *st)
{
	struct ct_web_role *r;
	void *rows = NULL;
	size_t n = 0;
	int rc;

	rc = ct_dl_query_all(db, sizeof(*r), role_cols, CT_DL_NCOLS(role_cols), "roles", &rows,
			     &n, "SELECT role, instance, start_time, beat_time, nruns, nitems, "
			     "last_error FROM role_heartbeat ORDER BY role, instance LIMIT 32",
			     NULL, 0);
	r = rows;
	for (size_t i = 0; i < n && st->nroles < 32; i++) {
		r[i].alive = st->now - r[i].beat_time <= 120;
		st->roles[st->nroles++] = r[i];
	}
	free(rows);
	return rc;
}

/* Unsent and in-progress results from the per-round counters the result
 * triggers keep (round_stat, migration 004): one row per round, not a
 * count over the result table. */
static int status_result_counts(struct ct_db *db, struct ct_web_status *st)
{
	struct ct_db_res *res = NULL;
	int rc;

	rc = ct_db_query(db, &res, "SELECT COALESCE(SUM(n_unsent), 0), "
			 "COALESCE(SUM(n_in_progress), 0) FROM round_stat", "");
	if (rc < 0)
		return rc;
	if (ct_db_next(res) > 0) {
		st->res_unsent = ct_db_int(res, 0);
		st->res_in_progress = ct_db_int(res, 1);
	}
	ct_db_res_free(res);
	return 0;
}

int ct_web_get_status(struct ct_db *db, struct ct_web_status *st)
{
	int64_t day_ago;
	int rc;

	memset(st, 0, sizeof(*st));
	st->now = ct_db_now(db);
	day_ago = st->now - 86400;
	rc = status_result_counts(db, st);
	if (rc == 0)
		rc = ct_db_query_int(db, &st->wu_need_validate, "SELECT COUNT(*) "
			"FROM workunit WHERE need_validate = 1", "");
	if (rc == 0)
		rc = ct_db_query_int(db, &st->wu_need_assimilate, "SELECT COUNT(*) "
			"FROM workunit WHERE assimilate_state = ?", "i", CT_AS_READY);
	if (rc == 0)
		rc = ct_db_query_int(db, &st->users, "SELECT COUNT(*) FROM `user`", "");
	if (rc == 0)
		rc = ct_db_query_int(db, &st->users_with_credit, "SELECT COUNT(*) "
			"FROM `user` WHERE total_credit > 0", "");
	if (rc == 0)
		rc = ct_db_query_int(db, &st->teams, "SELECT COUNT(*) FROM team", "");
	if (rc == 0)
		rc = ct_db_query_int(db, &st->hosts, "SELECT COUNT(*) FROM host", "");
	if (rc == 0)
		rc = ct_db_query_int(db, &st->hosts_active_24h, "SELECT COUNT(*) "
			"FROM host WHERE rpc_time > ?", "l", day_ago);
	if (rc == 0)
		rc = ct_db_query_int(db, &st->jobs_running, "SELECT COUNT(*) FROM "
			"job WHERE status = ?", "i", CT_JOB_RUNNING);
	if (rc == 0)
		rc = ct_db_query_int(db, &st->jobs_done, "SELECT COUNT(*) FROM "
			"job WHERE status = ?", "i", CT_JOB_DONE);
	if (rc == 0)
		rc = ct_db_query_double(db, &st->credit_24h, "SELECT "
			"COALESCE(SUM(credit), 0) FROM credit_event "
			"WHERE create_time > ?", "l", day_ago);
	if (rc == 0)
		rc = ct_db_query_int(db, &st->credit_events_24h, "SELECT COUNT(*) "
			"FROM credit_event WHERE create_time > ?", "l", day_ago);
	if (rc == 0)
		rc = ct_db_query_double(db, &st->total_credit, "SELECT "
			"COALESCE(SUM(total_credit), 0) FROM `user`", "");
	if (rc == 0)
		rc = status_roles(db, st);
	/* 1 cobblestone = 432 GFLOP; over one day that is 5e-6 TFLOPS. */
	st->tflops = st->credit_24h * 432e9 / 86400.0 / 1e12;
	return rc;
}
