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
#include "ct_utf8.h"
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
	size_t size, rank_off, key_off[2];	/* key_off: by enum ct_web_sort */
	const struct ct_dl_col *cols;		/* the SELECT's columns, in order */
	size_t ncols;
	const char *count_sql, *page_sql[2];
	const char *owner_count_sql, *owner_sql[2];	/* NULL: no owner */
	const char *get_sql, *history_sql;
	const char *above_sql[2];	/* rows with more of the credit: the rank rule */
	const char *after_sql;		/* id order after an id (the stats export) */
	const char *search_sql;		/* names starting with ?: NULL, no names */
};

/* The members of a struct board_kind for row type T with columns `cols`,
 * read from table `tbl` aliased `a` by `sel` + `join`, with credit events
 * in column `hcol` of credit_event. */
#define BOARD(T, cols_, tbl, a, sel, join, hcol) \
	.size = sizeof(T), .rank_off = offsetof(T, rank), \
	.key_off = { [CT_WEB_SORT_RAC] = offsetof(T, expavg_credit), \
		     [CT_WEB_SORT_TOTAL] = offsetof(T, total_credit) }, \
	.cols = (cols_), .ncols = CT_DL_NCOLS(cols_), \
	.count_sql = "SELECT COUNT(*) FROM " tbl, \
	.page_sql = { \
		[CT_WEB_SORT_RAC] = PAGE(tbl, a, sel, join, "expavg_credit"), \
		[CT_WEB_SORT_TOTAL] = PAGE(tbl, a, sel, join, "total_credit"), \
	}, \
	.get_sql = "SELECT " sel "FROM " tbl " " a " " join "WHERE " a ".id = ?", \
	.after_sql = "SELECT " sel "FROM " tbl " " a " " join "WHERE " a ".id > ? " \
		"ORDER BY " a ".id LIMIT ?", \
	.above_sql = { \
		[CT_WEB_SORT_RAC] = "SELECT COUNT(*) FROM " tbl " WHERE expavg_credit > ?", \
		[CT_WEB_SORT_TOTAL] = "SELECT COUNT(*) FROM " tbl " WHERE total_credit > ?", \
	}, \
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

/* SEARCH(tbl, a, sel, join): the rows whose name starts with ? (a LIKE
 * pattern, its wildcards escaped), through the name index, most recent
 * average credit first among them. */
#define SEARCH(tbl, a, sel, join) "SELECT " sel "FROM " tbl " " a " " join \
	"WHERE " a ".name LIKE ? ORDER BY " a ".expavg_credit DESC, " a ".id DESC LIMIT ?"

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
	.search_sql = SEARCH("`user`", "u", USER_SEL, USER_JOIN),
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
	.search_sql = SEARCH("team", "t", TEAM_SEL, TEAM_JOIN),
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

static double row_key(const struct board_kind *k, const void *row, int sort)
{
	double v;

	memcpy(&v, (const char *)row + k->key_off[sort], sizeof(v));
	return v;
}

/* The one ranking rule of every board, page, API answer and the client's
 * `ctune status` (sched.c's put_standing counts the same way): a row's
 * rank is 1 + the number of rows with strictly more of the board's credit,
 * so ties share a rank ("1, 2, 2, 4") and no tie is broken by anything a
 * volunteer cannot see. Rows of a tie are listed newest id first (the
 * credit index's own order). Rows [0, n) of a page that starts at row
 * `off` get their ranks here; `first` is the rank of row 0. */
static void rank_rows(const struct board_kind *k, void *rows, size_t n, int sort,
		      int64_t off, int64_t first)
{
	for (size_t i = 0; i < n; i++) {
		char *row = (char *)rows + i * k->size;

		if (i == 0)
			*row_rank(k, row) = first;
		else if (row_key(k, row, sort) == row_key(k, row - k->size, sort))
			*row_rank(k, row) = *row_rank(k, row - k->size);
		else
			*row_rank(k, row) = off + (int64_t)i + 1;
	}
}

/* Run board k's SELECT `sql` with the arguments a[0..na) and read every
 * row into a new array at b->users (the union's members share one
 * pointer), unranked. */
static int fill_board(struct ct_db *db, const struct board_kind *k, const char *sql,
		      const struct ct_db_arg *a, size_t na, struct ct_web_board *b)
{
	void *rows;
	char name[16];
	int rc;

	snprintf(name, sizeof(name), "%ss", k->name);
	rc = ct_dl_query_all(db, k->size, k->cols, k->ncols, name, &rows, &b->n, sql, a, na);
	if (rc < 0)
		return rc;
	b->users = rows;
	return 0;
}

/* The rank of a row whose board credit (in `sort` order) is `key`. */
static int rank_of(struct ct_db *db, const struct board_kind *k, int sort, double key,
		   int64_t *rank)
{
	int64_t above = 0;
	int rc = CT_DB_QUERY_INT(db, &above, k->above_sql[sort], key);

	*rank = above + 1;
	return rc;
}

/* One page of board `k` in `sort` order, or (owner > 0, for kinds with an
 * owner) the rows of that owner, all on page 1. */
static int board(struct ct_db *db, const struct board_kind *k,
		 enum ct_web_sort sort, int64_t page, int64_t owner,
		 struct ct_web_board *b)
{
	int64_t total = 0, off, first = 1;
	int s = sort == CT_WEB_SORT_TOTAL ? CT_WEB_SORT_TOTAL : CT_WEB_SORT_RAC;
	int rc;

	memset(b, 0, sizeof(*b));
	b->sort = sort;
	if (page < 1 || page > CT_WEB_MAX_PAGE || owner > 0)
		page = 1;
	off = (page - 1) * CT_WEB_PAGE_SIZE;
	if (owner > 0)
		rc = CT_DB_QUERY_INT(db, &total, k->owner_count_sql, owner);
	else
		rc = ct_db_query_inta(db, &total, k->count_sql, NULL, 0);
	if (rc < 0)
		return rc;
	board_pages(b, page, total);
	if (owner > 0) {	/* ranks within the owner's rows */
		rc = fill_board(db, k, k->owner_sql[s], CT_DB_ARGS(owner, CT_WEB_PAGE_SIZE * 4),
				b);
		if (rc == 0)
			rank_rows(k, b->users, b->n, s, 0, 1);
		return rc;
	}
	rc = fill_board(db, k, k->page_sql[s], CT_DB_ARGS(CT_WEB_PAGE_SIZE, off), b);
	if (rc == 0 && b->n > 0)
		rc = rank_of(db, k, s, row_key(k, b->users, s), &first);
	if (rc == 0)
		rank_rows(k, b->users, b->n, s, off, first);
	if (rc < 0)
		ct_web_board_free(b);
	return rc;
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
	return fill_board(db, k, k->after_sql, CT_DB_ARGS(after, limit), b);
}

int ct_web_search(struct ct_db *db, const char *kind, const char *q, struct ct_web_board *b)
{
	const struct board_kind *k = board_kind(kind);
	char pat[2 * 64 + 2];
	size_t o = 0;
	int rc;

	memset(b, 0, sizeof(*b));
	if (k == NULL || k->search_sql == NULL)
		return ct_error(CT_EINVAL, "web: no search of %s", kind);
	if (strlen(q) > 64)
		return ct_error(CT_EINVAL, "search for at most 64 bytes");
	for (const char *p = q; *p; p++) {	/* the text, not a pattern */
		if (*p == '%' || *p == '_' || *p == '\\')
			pat[o++] = '\\';
		pat[o++] = *p;
	}
	pat[o++] = '%';
	pat[o] = '\0';
	rc = fill_board(db, k, k->search_sql, CT_DB_ARGS(pat, CT_WEB_SEARCH_MAX), b);
	b->page = b->npages = 1;
	b->total = (int64_t)b->n;
	return rc;
}

/* Row `id` of board `k` into `row`, with its rank by RAC. */
static int get_row(struct ct_db *db, const struct board_kind *k, int64_t id,
		   void *row)
{
	int rc;

	memset(row, 0, k->size);
	rc = ct_dl_query_one(db, row, k->cols, k->ncols, k->get_sql, CT_DB_ARGS(id));
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "no %s %lld", k->name, (long long)id);
	if (rc < 0)
		return rc;
	return rank_of(db, k, CT_WEB_SORT_RAC, row_key(k, row, CT_WEB_SORT_RAC),
		       row_rank(k, row));
}

static int text_ok(const char *s, size_t min, size_t max, int newlines);

static const struct ct_dl_col profile_cols[] = {
	CT_DL_COL(struct ct_web_user, nhosts), CT_DL_COL(struct ct_web_user, profile),
};

int ct_web_get_user(struct ct_db *db, int64_t id, struct ct_web_user *u)
{
	int rc = get_row(db, &user_board, id, u);

	if (rc < 0)
		return rc;
	return CT_DL_ONE(db, u, profile_cols, "SELECT (SELECT COUNT(*) FROM host h WHERE "
			 "h.userid = u.id), u.profile FROM `user` u WHERE u.id = ?", id);
}

int ct_web_set_profile(struct ct_db *db, int64_t id, const char *country, const char *text)
{
	int rc;

	if (!text_ok(text, 0, 1024, 1))
		return ct_error(CT_EINVAL, "the profile text must be at most 1024 bytes of text");
	rc = CT_DB_EXEC(db, "UPDATE `user` SET country = ?, profile = ? WHERE id = ?",
			country, text, id);
	return rc < 0 ? rc : 0;
}

int ct_web_get_team(struct ct_db *db, int64_t id, struct ct_web_team *t)
{
	int rc = get_row(db, &team_board, id, t);

	if (rc < 0)
		return rc;
	return CT_DB_QUERY_DOUBLE(db, &t->members_credit, "SELECT COALESCE(SUM(total_credit), "
				  "0) FROM `user` WHERE teamid = ?", id);
}

int ct_web_get_host(struct ct_db *db, int64_t id, struct ct_web_host *h)
{
	int rc = get_row(db, &host_board, id, h);

	if (rc < 0)
		return rc;
	return CT_DB_QUERY_INT(db, &h->ndevices, "SELECT COUNT(*) FROM device "
			       "WHERE hostid = ?", id);
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
	int64_t now = ct_db_now(db);
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
	/* Rows come newest first: walk back from the total. A point is at the
	 * end of its day, and today's (not over yet) at the present. */
	for (size_t i = 0, k = nd; i < nd; i++, k--) {
		int64_t end = (d[i].day + 1) * 86400;

		(*t)[k] = (double)(end < now ? end : now);
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

#define JI struct ct_web_job_inputs
static const struct ct_dl_col inputs_cols[] = {
	CT_DL_COL(JI, model_sha256), CT_DL_COL(JI, model_size), CT_DL_COL(JI, train_sha256),
	CT_DL_COL(JI, eval_sha256), CT_DL_COL(JI, eval_tokens), CT_DL_COL(JI, train_tokens),
	CT_DL_COL(JI, tokenizer), CT_DL_COL(JI, tokenizer_files), CT_DL_COL(JI, lora_rank),
	CT_DL_COL(JI, lora_alpha), CT_DL_COL(JI, lora_targets),
};
#undef JI

/* One row about job `id` into `row` (size bytes) by `sql` (one "?": the
 * job's id); CT_ENOTFOUND names the job. */
static int job_row(struct ct_db *db, int64_t id, void *row, size_t size,
		   const struct ct_dl_col *cols, size_t ncols, const char *sql)
{
	int rc;

	memset(row, 0, size);
	rc = ct_dl_query_one(db, row, cols, ncols, sql, CT_DB_ARGS(id));
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "no job %lld", (long long)id);
	return rc;
}

int ct_web_get_job_inputs(struct ct_db *db, int64_t id, struct ct_web_job_inputs *in)
{
	/* one row: the side tables (text, tokenizer files, LoRA) by primary key */
	return job_row(db, id, in, sizeof(*in), inputs_cols, CT_DL_NCOLS(inputs_cols),
		"SELECT j.model_sha256, j.model_size, "
		"j.train_sha256, j.eval_sha256, j.eval_tokens, "
		"(SELECT COALESCE(SUM(ntokens), 0) FROM job_shard s WHERE s.jobid = j.id), "
		"COALESCE(t.tokenizer, ''), (SELECT COALESCE(SUBSTRING(GROUP_CONCAT(f.name "
		"ORDER BY f.name SEPARATOR ', '), 1, 290), '') FROM job_tokenizer_file f "
		"WHERE f.jobid = j.id), COALESCE(l.lora_rank, 0), COALESCE(l.lora_alpha, 0), "
		"COALESCE(l.lora_targets, 0) FROM job j LEFT JOIN job_text t ON t.jobid = j.id "
		"LEFT JOIN job_lora l ON l.jobid = j.id WHERE j.id = ?");
}

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

#define JC struct ct_web_job_credit
static const struct ct_dl_col job_credit_cols[] = {
	CT_DL_COL(JC, nvalid), CT_DL_COL(JC, credit), CT_DL_COL(JC, model_sha256),
	CT_DL_COL(JC, seq), CT_DL_COL(JC, batch), CT_DL_COL(JC, steps),
};
#undef JC

int ct_web_get_job_credit(struct ct_db *db, int64_t id, struct ct_web_job_credit *jc)
{
	return job_row(db, id, jc, sizeof(*jc), job_credit_cols, CT_DL_NCOLS(job_credit_cols),
		"SELECT (SELECT COALESCE(SUM(n_valid), 0) "
		"FROM round_stat s WHERE s.jobid = j.id), (SELECT COALESCE(SUM(credit), 0) "
		"FROM round_stat s WHERE s.jobid = j.id), j.model_sha256, j.seq, j.batch, "
		"j.steps FROM job j WHERE j.id = ?");
}

/* ---- computing preferences ------------------------------------------------ */

struct prefs_row {
	char text[2049];
	int64_t mod_time;
};

static const struct ct_dl_col prefs_cols[] = {
	CT_DL_COL(struct prefs_row, text), CT_DL_COL(struct prefs_row, mod_time),
};

int ct_web_get_prefs(struct ct_db *db, int64_t userid, char *text, size_t cap,
		     int64_t *mod_time)
{
	struct prefs_row r = { "", 0 };
	int rc = CT_DL_ONE(db, &r, prefs_cols, "SELECT prefs, mod_time FROM user_prefs "
			   "WHERE userid = ?", userid);

	if (rc == CT_ENOTFOUND)
		rc = 0;
	snprintf(text, cap, "%s", rc == 0 ? r.text : "");
	*mod_time = rc == 0 ? r.mod_time : 0;
	return rc;
}

int ct_web_put_prefs(struct ct_db *db, int64_t userid, const char *text)
{
	int64_t now = ct_db_now(db);
	int rc;

	if (strlen(text) > 2048)
		return ct_error(CT_ETOOBIG, "web: preferences of %zu bytes", strlen(text));
	rc = CT_DB_EXEC(db, "INSERT INTO user_prefs (userid, prefs, mod_time) VALUES (?, ?, ?) "
			"ON DUPLICATE KEY UPDATE prefs = VALUES(prefs), mod_time = "
			"GREATEST(VALUES(mod_time), mod_time + 1)", userid, text, now);
	return rc < 0 ? rc : 0;
}

/* ---- news ----------------------------------------------------------------- */

static int text_ok(const char *s, size_t min, size_t max, int newlines)
{
	size_t n = strlen(s);

	if (n < min || n > max || !ct_utf8_valid(s))
		return 0;
	for (const char *p = s; *p; p++)
		if (((unsigned char)*p < 0x20 && !(newlines && (*p == '\n' || *p == '\r'))) ||
		    *p == 0x7f)
			return 0;
	return 1;
}

int ct_web_news_add(struct ct_db *db, const char *title, const char *body, int64_t *id)
{
	int rc;

	if (!text_ok(title, 1, CT_WEB_NEWS_TITLE_MAX, 0))
		return ct_error(CT_EINVAL, "news: a title of 1 to %d bytes of text, one line",
				CT_WEB_NEWS_TITLE_MAX);
	if (!text_ok(body, 0, CT_WEB_NEWS_BODY_MAX, 1))
		return ct_error(CT_EINVAL, "news: a text of at most %d bytes", CT_WEB_NEWS_BODY_MAX);
	rc = CT_DB_EXEC(db, "INSERT INTO news (create_time, title, body) VALUES (?, ?, ?)",
			ct_db_now(db), title, body);
	if (rc < 0)
		return rc;
	*id = ct_db_last_id(db);
	return 0;
}

#define NW struct ct_web_news
static const struct ct_dl_col news_cols[] = {
	CT_DL_COL(NW, id), CT_DL_COL(NW, create_time), CT_DL_COL(NW, title), CT_DL_COL(NW, body),
};
#undef NW

int ct_web_news(struct ct_db *db, size_t max, struct ct_web_news **items, size_t *n)
{
	void *rows = NULL;
	int rc = CT_DL_ALL(db, sizeof(**items), news_cols, "news", &rows, n, "SELECT id, "
			   "create_time, title, body FROM news ORDER BY id DESC LIMIT ?",
			   (int64_t)max);

	*items = rows;
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

	rc = ct_db_querya(db, &res, "SELECT COALESCE(SUM(n_unsent), 0), "
			 "COALESCE(SUM(n_in_progress), 0) FROM round_stat", NULL, 0);
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
		rc = ct_db_query_inta(db, &st->wu_need_validate, "SELECT COUNT(*) "
			"FROM workunit WHERE need_validate = 1", NULL, 0);
	if (rc == 0)
		rc = CT_DB_QUERY_INT(db, &st->wu_need_assimilate, "SELECT COUNT(*) "
			"FROM workunit WHERE assimilate_state = ?", CT_AS_READY);
	if (rc == 0)
		rc = ct_db_query_inta(db, &st->users, "SELECT COUNT(*) FROM `user`", NULL, 0);
	if (rc == 0)
		rc = ct_db_query_inta(db, &st->users_with_credit, "SELECT COUNT(*) "
			"FROM `user` WHERE total_credit > 0", NULL, 0);
	if (rc == 0)
		rc = ct_db_query_inta(db, &st->teams, "SELECT COUNT(*) FROM team", NULL, 0);
	if (rc == 0)
		rc = ct_db_query_inta(db, &st->hosts, "SELECT COUNT(*) FROM host", NULL, 0);
	if (rc == 0)
		rc = CT_DB_QUERY_INT(db, &st->hosts_active_24h, "SELECT COUNT(*) "
			"FROM host WHERE rpc_time > ?", day_ago);
	if (rc == 0)
		rc = CT_DB_QUERY_INT(db, &st->jobs_running, "SELECT COUNT(*) FROM "
			"job WHERE status = ?", CT_JOB_RUNNING);
	if (rc == 0)
		rc = CT_DB_QUERY_INT(db, &st->jobs_done, "SELECT COUNT(*) FROM "
			"job WHERE status = ?", CT_JOB_DONE);
	if (rc == 0)
		rc = CT_DB_QUERY_DOUBLE(db, &st->credit_24h, "SELECT "
			"COALESCE(SUM(credit), 0) FROM credit_event "
			"WHERE create_time > ?", day_ago);
	if (rc == 0)
		rc = CT_DB_QUERY_INT(db, &st->credit_events_24h, "SELECT COUNT(*) "
			"FROM credit_event WHERE create_time > ?", day_ago);
	if (rc == 0)
		rc = ct_db_query_doublea(db, &st->total_credit, "SELECT "
			"COALESCE(SUM(total_credit), 0) FROM `user`", NULL, 0);
	if (rc == 0)
		rc = status_roles(db, st);
	/* 1 cobblestone = 432 GFLOP; over one day that is 5e-6 TFLOPS. */
	st->tflops = st->credit_24h * 432e9 / 86400.0 / 1e12;
	return rc;
}
