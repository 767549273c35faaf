/*
 * dl_web.c - the leaderboards, rows, credit histories and status numbers
 * behind the web pages and the JSON API (see dl_web.h). Each SQL text is
 * a literal, so db.h's per-connection cache prepares it once; the two
 * orders of a leaderboard are two literals.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_utf8.h"
#include "db.h"
#include "dl.h"
#include "dl_web.h"
#include "job_state.h"
#include "wu_state.h"

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
 * in column `hcol` of credit_event. A rank counts the range of credit
 * index `nm`_expavg or `nm`_total above the row: named, since the
 * optimizer reads the whole index for a range it guesses at half the
 * table (a user ranked 26,153rd of 100,000 read 100,001 rows, forced
 * 26,153). */
#define BOARD(T, cols_, tbl, nm, a, sel, join, hcol) \
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
		[CT_WEB_SORT_RAC] = "SELECT COUNT(*) FROM " tbl " FORCE INDEX (" nm \
			"_expavg) WHERE expavg_credit > ?", \
		[CT_WEB_SORT_TOTAL] = "SELECT COUNT(*) FROM " tbl " FORCE INDEX (" nm \
			"_total) WHERE total_credit > ?", \
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
	BOARD(U, user_cols, "`user`", "user", "u", USER_SEL, USER_JOIN, "userid"),
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
	BOARD(T, team_cols, "team", "team", "t", TEAM_SEL, TEAM_JOIN, "teamid"),
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
	BOARD(H, host_cols, "host", "host", "h", HOST_SEL, HOST_JOIN, "hostid"),
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


int ct_web_text_ok(const char *s, size_t min, size_t max, int newlines)
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

/* Every figure in one statement (one round trip, not twelve: at a third
 * of a millisecond each on a busy machine they were most of the page):
 * unsent and in-progress results from the per-round counters the result
 * triggers keep (round_stat, migration 004); accounts, accounts with
 * credit, teams, computers and the accounts' total credit from the 16 rows
 * of site_stat that the user, team and host triggers keep (migration 041);
 * the rest are index ranges (wu_validate, wu_assimilate, host_rpc_time,
 * job_status, credit_time: what is waiting or recent, not the history). */
#define WS struct ct_web_status
static const struct ct_dl_col status_cols[] = {
	CT_DL_COL(WS, res_unsent), CT_DL_COL(WS, res_in_progress),
	CT_DL_COL(WS, users), CT_DL_COL(WS, users_with_credit), CT_DL_COL(WS, teams),
	CT_DL_COL(WS, hosts), CT_DL_COL(WS, total_credit),
	CT_DL_COL(WS, wu_need_validate), CT_DL_COL(WS, wu_need_assimilate),
	CT_DL_COL(WS, hosts_active_24h), CT_DL_COL(WS, jobs_running), CT_DL_COL(WS, jobs_done),
	CT_DL_COL(WS, credit_24h), CT_DL_COL(WS, credit_events_24h),
};
#undef WS

int ct_web_get_status(struct ct_db *db, struct ct_web_status *st)
{
	int64_t day_ago;
	int rc;

	memset(st, 0, sizeof(*st));
	st->now = ct_db_now(db);
	day_ago = st->now - 86400;
	rc = CT_DL_ONE(db, st, status_cols, "SELECT r.unsent, r.in_progress, s.users, "
		"s.with_credit, s.teams, s.hosts, s.credit, "
		"(SELECT COUNT(*) FROM workunit WHERE need_validate = 1), "
		"(SELECT COUNT(*) FROM workunit WHERE assimilate_state = ?), "
		"(SELECT COUNT(*) FROM host WHERE rpc_time > ?), "
		"(SELECT COUNT(*) FROM job WHERE status = ?), "
		"(SELECT COUNT(*) FROM job WHERE status = ?), c.credit, c.n "
		"FROM (SELECT COALESCE(SUM(n_unsent), 0) AS unsent, "
		"COALESCE(SUM(n_in_progress), 0) AS in_progress FROM round_stat) r, "
		"(SELECT COALESCE(SUM(n_users), 0) AS users, COALESCE(SUM(n_users_credit), 0) "
		"AS with_credit, COALESCE(SUM(n_teams), 0) AS teams, COALESCE(SUM(n_hosts), 0) "
		"AS hosts, COALESCE(SUM(user_credit), 0) AS credit FROM site_stat) s, "
		"(SELECT COALESCE(SUM(credit), 0) AS credit, COUNT(*) AS n FROM credit_event "
		"WHERE create_time > ?) c", (int64_t)CT_AS_READY, day_ago,
		(int64_t)CT_JOB_RUNNING, (int64_t)CT_JOB_DONE, day_ago);
	if (rc == 0)
		rc = status_roles(db, st);
	/* 1 cobblestone = 432 GFLOP; over one day that is 5e-6 TFLOPS. */
	st->tflops = st->credit_24h * 432e9 / 86400.0 / 1e12;
	return rc;
}

#define TT struct ct_web_totals
static const struct ct_dl_col totals_cols[] = {
	CT_DL_COL(TT, users), CT_DL_COL(TT, teams), CT_DL_COL(TT, hosts), CT_DL_COL(TT, credit),
};
#undef TT

int ct_web_get_totals(struct ct_db *db, struct ct_web_totals *tot)
{
	memset(tot, 0, sizeof(*tot));
	return ct_dl_query_one(db, tot, totals_cols, CT_DL_NCOLS(totals_cols), "SELECT "
			       "COALESCE(SUM(n_users), 0), COALESCE(SUM(n_teams), 0), "
			       "COALESCE(SUM(n_hosts), 0), COALESCE(SUM(user_credit), 0) FROM site_stat",
			       NULL, 0);
}
