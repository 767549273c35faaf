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
#include "db.h"
#include "web_data.h"

#define COPY(dst, res, col) snprintf((dst), sizeof(dst), "%s", ct_db_str((res), (col)))

static double dbl_or_nan(const struct ct_db_res *res, int col)
{
	return ct_db_isnull(res, col) ? NAN : ct_db_double(res, col);
}

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
 * PAGE(tbl, a, SEL, JOIN, order): one such page of table `tbl` aliased `a`;
 * OWNED(tbl, a, SEL, JOIN, idx, col, order): the rows whose `col` is the
 * owner's id, read through index `idx`, at most 4 pages. */
#define PAGE(tbl, a, sel, join, order) "SELECT " sel "FROM (SELECT id FROM " \
	tbl " ORDER BY " order " DESC, id DESC LIMIT ? OFFSET ?) k " \
	"JOIN " tbl " " a " ON " a ".id = k.id " join \
	"ORDER BY " a "." order " DESC, " a ".id DESC"
#define OWNED(tbl, a, sel, join, idx, col, order) "SELECT " sel "FROM " tbl \
	" " a " FORCE INDEX (" idx ") " join "WHERE " a "." col " = ? " \
	"ORDER BY " a "." order " DESC, " a ".id DESC LIMIT ?"
/* How many rows rank above a row with this RAC (ties broken by id). */
#define RANK(tbl) "SELECT COUNT(*) FROM " tbl " WHERE " \
	"expavg_credit > ? OR (expavg_credit = ? AND id > ?)"
/* Credit granted per day to one row, newest day first. */
#define HISTORY(col) "SELECT create_time DIV 86400 AS d, SUM(credit) " \
	"FROM credit_event WHERE " col " = ? GROUP BY d ORDER BY d DESC LIMIT ?"

/* What differs between the three leaderboards: the row struct (size, where
 * its rank and RAC live, how a result row fills it) and the SQL texts.
 * page_sql/owner_sql are indexed by enum ct_web_sort. */
struct board_kind {
	const char *name;		/* "user": for errors and history */
	size_t size, rank_off, expavg_off;
	void (*read)(const struct ct_db_res *res, void *row);
	const char *count_sql, *page_sql[2];
	const char *owner_count_sql, *owner_sql[2];	/* NULL: no owner */
	const char *get_sql, *rank_sql, *history_sql;
};

#define USER_SEL "u.id, u.name, u.country, u.url, u.teamid, " \
	"COALESCE(t.name, ''), u.total_credit, u.expavg_credit, " \
	"u.expavg_time, u.create_time "
#define USER_JOIN "LEFT JOIN team t ON t.id = u.teamid "

static void read_user(const struct ct_db_res *res, void *row)
{
	struct ct_web_user *u = row;

	memset(u, 0, sizeof(*u));
	u->id = ct_db_int(res, 0);
	COPY(u->name, res, 1);
	COPY(u->country, res, 2);
	COPY(u->url, res, 3);
	u->teamid = ct_db_int(res, 4);
	COPY(u->team_name, res, 5);
	u->total_credit = ct_db_double(res, 6);
	u->expavg_credit = ct_db_double(res, 7);
	u->expavg_time = ct_db_double(res, 8);
	u->create_time = ct_db_int(res, 9);
}

static const struct board_kind user_board = {
	.name = "user",
	.size = sizeof(struct ct_web_user),
	.rank_off = offsetof(struct ct_web_user, rank),
	.expavg_off = offsetof(struct ct_web_user, expavg_credit),
	.read = read_user,
	.count_sql = "SELECT COUNT(*) FROM `user`",
	.page_sql = {
		[CT_WEB_SORT_RAC] = PAGE("`user`", "u", USER_SEL, USER_JOIN,
					 "expavg_credit"),
		[CT_WEB_SORT_TOTAL] = PAGE("`user`", "u", USER_SEL, USER_JOIN,
					   "total_credit"),
	},
	.owner_count_sql = "SELECT COUNT(*) FROM `user` WHERE teamid = ?",
	.owner_sql = {
		[CT_WEB_SORT_RAC] = OWNED("`user`", "u", USER_SEL, USER_JOIN,
			"user_team", "teamid", "expavg_credit"),
		[CT_WEB_SORT_TOTAL] = OWNED("`user`", "u", USER_SEL, USER_JOIN,
			"user_team", "teamid", "total_credit"),
	},
	.get_sql = "SELECT " USER_SEL "FROM `user` u " USER_JOIN "WHERE u.id = ?",
	.rank_sql = RANK("`user`"),
	.history_sql = HISTORY("userid"),
};

#define TEAM_SEL "t.id, t.name, t.userid, COALESCE(u.name, ''), t.url, " \
	"t.description, t.nusers, t.total_credit, t.expavg_credit, " \
	"t.expavg_time, t.create_time "
#define TEAM_JOIN "LEFT JOIN `user` u ON u.id = t.userid "

static void read_team(const struct ct_db_res *res, void *row)
{
	struct ct_web_team *t = row;

	memset(t, 0, sizeof(*t));
	t->id = ct_db_int(res, 0);
	COPY(t->name, res, 1);
	t->userid = ct_db_int(res, 2);
	COPY(t->founder_name, res, 3);
	COPY(t->url, res, 4);
	COPY(t->description, res, 5);
	t->nusers = ct_db_int(res, 6);
	t->total_credit = ct_db_double(res, 7);
	t->expavg_credit = ct_db_double(res, 8);
	t->expavg_time = ct_db_double(res, 9);
	t->create_time = ct_db_int(res, 10);
}

static const struct board_kind team_board = {
	.name = "team",
	.size = sizeof(struct ct_web_team),
	.rank_off = offsetof(struct ct_web_team, rank),
	.expavg_off = offsetof(struct ct_web_team, expavg_credit),
	.read = read_team,
	.count_sql = "SELECT COUNT(*) FROM team",
	.page_sql = {
		[CT_WEB_SORT_RAC] = PAGE("team", "t", TEAM_SEL, TEAM_JOIN,
					 "expavg_credit"),
		[CT_WEB_SORT_TOTAL] = PAGE("team", "t", TEAM_SEL, TEAM_JOIN,
					   "total_credit"),
	},
	.get_sql = "SELECT " TEAM_SEL "FROM team t " TEAM_JOIN "WHERE t.id = ?",
	.rank_sql = RANK("team"),
	.history_sql = HISTORY("teamid"),
};

#define HOST_SEL "h.id, h.userid, COALESCE(u.name, ''), h.os, h.cpu_model, " \
	"COALESCE(d.name, ''), h.ncpus, h.ram_bytes, h.client_version, " \
	"h.nresults_valid, h.nresults_invalid, h.total_credit, " \
	"h.expavg_credit, h.expavg_time, h.create_time, h.rpc_time "
#define HOST_JOIN "LEFT JOIN `user` u ON u.id = h.userid " \
	"LEFT JOIN device d ON d.hostid = h.id AND d.slot = 0 "

static void read_host(const struct ct_db_res *res, void *row)
{
	struct ct_web_host *h = row;

	memset(h, 0, sizeof(*h));
	h->id = ct_db_int(res, 0);
	h->userid = ct_db_int(res, 1);
	COPY(h->owner_name, res, 2);
	COPY(h->os, res, 3);
	COPY(h->cpu_model, res, 4);
	COPY(h->device, res, 5);
	h->ncpus = ct_db_int(res, 6);
	h->ram_bytes = ct_db_int(res, 7);
	COPY(h->client_version, res, 8);
	h->nresults_valid = ct_db_int(res, 9);
	h->nresults_invalid = ct_db_int(res, 10);
	h->total_credit = ct_db_double(res, 11);
	h->expavg_credit = ct_db_double(res, 12);
	h->expavg_time = ct_db_double(res, 13);
	h->create_time = ct_db_int(res, 14);
	h->rpc_time = ct_db_int(res, 15);
}

static const struct board_kind host_board = {
	.name = "host",
	.size = sizeof(struct ct_web_host),
	.rank_off = offsetof(struct ct_web_host, rank),
	.expavg_off = offsetof(struct ct_web_host, expavg_credit),
	.read = read_host,
	.count_sql = "SELECT COUNT(*) FROM host",
	.page_sql = {
		[CT_WEB_SORT_RAC] = PAGE("host", "h", HOST_SEL, HOST_JOIN,
					 "expavg_credit"),
		[CT_WEB_SORT_TOTAL] = PAGE("host", "h", HOST_SEL, HOST_JOIN,
					   "total_credit"),
	},
	.owner_count_sql = "SELECT COUNT(*) FROM host WHERE userid = ?",
	.owner_sql = {
		[CT_WEB_SORT_RAC] = OWNED("host", "h", HOST_SEL, HOST_JOIN,
			"host_user_cpid", "userid", "expavg_credit"),
		[CT_WEB_SORT_TOTAL] = OWNED("host", "h", HOST_SEL, HOST_JOIN,
			"host_user_cpid", "userid", "total_credit"),
	},
	.get_sql = "SELECT " HOST_SEL "FROM host h " HOST_JOIN "WHERE h.id = ?",
	.rank_sql = RANK("host"),
	.history_sql = HISTORY("hostid"),
};

static int64_t *row_rank(const struct board_kind *k, void *row)
{
	return (int64_t *)((char *)row + k->rank_off);
}

/* Read every row of `res` into a new array at b->users (the union's members
 * share one pointer), ranked from first_rank. Does not free `res`. */
static int fill_board(const struct board_kind *k, struct ct_db_res *res,
		      struct ct_web_board *b, int64_t first_rank)
{
	size_t n = ct_db_nrows(res), i = 0;
	char *rows;

	rows = n ? calloc(n, k->size) : NULL;
	if (n && rows == NULL)
		return ct_error(CT_ENOMEM, "web: %zu %ss", n, k->name);
	b->users = (void *)rows;
	while (ct_db_next(res) > 0 && i < n) {
		k->read(res, rows + i * k->size);
		*row_rank(k, rows + i * k->size) = first_rank + (int64_t)i;
		i++;
	}
	b->n = i;
	return 0;
}

/* One page of board `k` in `sort` order, or (owner > 0, for kinds with an
 * owner) the rows of that owner, all on page 1. */
static int board(struct ct_db *db, const struct board_kind *k,
		 enum ct_web_sort sort, int64_t page, int64_t owner,
		 struct ct_web_board *b)
{
	struct ct_db_res *res = NULL;
	int64_t total = 0, off;
	int s = sort == CT_WEB_SORT_TOTAL ? CT_WEB_SORT_TOTAL : CT_WEB_SORT_RAC;
	int rc;

	memset(b, 0, sizeof(*b));
	b->sort = sort;
	if (page < 1 || page > CT_WEB_MAX_PAGE || owner > 0)
		page = 1;
	off = (page - 1) * CT_WEB_PAGE_SIZE;
	if (owner > 0) {
		rc = ct_db_query_int(db, &total, k->owner_count_sql, "l", owner);
		if (rc < 0)
			return rc;
		rc = ct_db_query(db, &res, k->owner_sql[s], "li", owner,
				 CT_WEB_PAGE_SIZE * 4);
	} else {
		rc = ct_db_query_int(db, &total, k->count_sql, "");
		if (rc < 0)
			return rc;
		rc = ct_db_query(db, &res, k->page_sql[s], "ll",
				 (int64_t)CT_WEB_PAGE_SIZE, off);
	}
	if (rc < 0)
		return rc;
	board_pages(b, page, total);
	rc = fill_board(k, res, b, off + 1);
	ct_db_res_free(res);
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

/* Row `id` of board `k` into `row`, with its rank by RAC. */
static int get_row(struct ct_db *db, const struct board_kind *k, int64_t id,
		   void *row)
{
	struct ct_db_res *res = NULL;
	int64_t above = 0;
	double rac;
	int rc;

	rc = ct_db_query(db, &res, k->get_sql, "l", id);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) <= 0) {
		ct_db_res_free(res);
		return ct_error(CT_ENOTFOUND, "no %s %lld", k->name, (long long)id);
	}
	k->read(res, row);
	ct_db_res_free(res);
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

/* ---- credit history ------------------------------------------------------ */

static const struct board_kind *const boards[] = {
	&user_board, &team_board, &host_board,
};

static int history_query(struct ct_db *db, struct ct_db_res **res,
			 const char *kind, int64_t id)
{
	size_t i;

	for (i = 0; i < sizeof(boards) / sizeof(boards[0]); i++)
		if (strcmp(kind, boards[i]->name) == 0)
			return ct_db_query(db, res, boards[i]->history_sql,
					   "li", id, CT_WEB_HIST_DAYS);
	return ct_error(CT_EINVAL, "web: history of '%s'", kind);
}

int ct_web_history(struct ct_db *db, const char *kind, int64_t id,
		   double total, double **t, double **credit, size_t *n)
{
	struct ct_db_res *res = NULL;
	size_t rows, k;
	double cum = total;
	int rc;

	*t = *credit = NULL;
	*n = 0;
	rc = history_query(db, &res, kind, id);
	if (rc < 0)
		return rc;
	rows = ct_db_nrows(res);
	if (rows == 0)
		goto out;
	*t = calloc(rows + 1, sizeof(double));
	*credit = calloc(rows + 1, sizeof(double));
	if (*t == NULL || *credit == NULL) {
		free(*t);
		free(*credit);
		*t = *credit = NULL;
		rc = ct_error(CT_ENOMEM, "web: history of %zu days", rows);
		goto out;
	}
	/* Rows come newest first: walk back from the total. */
	k = rows;
	while (ct_db_next(res) > 0 && k > 0) {
		int64_t day = ct_db_int(res, 0);

		(*t)[k] = (double)((day + 1) * 86400);
		(*credit)[k] = cum;
		cum -= ct_db_double(res, 1);
		if (k == 1)
			(*t)[0] = (double)(day * 86400);
		k--;
	}
	(*credit)[0] = cum > 0 ? cum : 0;
	*n = rows + 1;
out:
	ct_db_res_free(res);
	return rc < 0 ? rc : 0;
}

/* ---- jobs ---------------------------------------------------------------- */

#define JOB_COLS "j.id, j.name, j.create_time, j.finish_time, j.status, " \
	"j.error_message, j.model_sha256, j.final_model_sha256, j.nshards, " \
	"j.nrounds, j.cur_round, j.steps, j.batch, j.seq, j.lr, " \
	"j.min_quorum, j.target_nresults, j.base_eval_loss, j.final_eval_loss, " \
	"(SELECT COALESCE(SUM(nwus), 0) FROM `round` r WHERE r.jobid = j.id), " \
	"(SELECT COALESCE(SUM(nwus_done), 0) FROM `round` r WHERE r.jobid = j.id) " \
	"FROM job j "

static void read_job(const struct ct_db_res *res, struct ct_web_job *j)
{
	memset(j, 0, sizeof(*j));
	j->id = ct_db_int(res, 0);
	COPY(j->name, res, 1);
	j->create_time = ct_db_int(res, 2);
	j->finish_time = ct_db_int(res, 3);
	j->status = ct_db_int(res, 4);
	snprintf(j->status_name, sizeof(j->status_name), "%s",
		 ct_job_status_name((int)j->status));
	COPY(j->error_message, res, 5);
	COPY(j->model_sha256, res, 6);
	COPY(j->final_model_sha256, res, 7);
	j->nshards = ct_db_int(res, 8);
	j->nrounds = ct_db_int(res, 9);
	j->cur_round = ct_db_int(res, 10);
	j->steps = ct_db_int(res, 11);
	j->batch = ct_db_int(res, 12);
	j->seq = ct_db_int(res, 13);
	j->lr = ct_db_double(res, 14);
	j->min_quorum = ct_db_int(res, 15);
	j->target_nresults = ct_db_int(res, 16);
	j->base_eval_loss = dbl_or_nan(res, 17);
	j->final_eval_loss = dbl_or_nan(res, 18);
	j->nwus = ct_db_int(res, 19);
	j->nwus_done = ct_db_int(res, 20);
}

/* Result counts of one job by state (result_job index). */
static int job_counts(struct ct_db *db, struct ct_web_job *j)
{
	struct ct_db_res *res = NULL;
	int rc;

	rc = ct_db_query(db, &res, "SELECT COALESCE(SUM(server_state = ?), 0), "
		"COALESCE(SUM(server_state = ?), 0), "
		"COALESCE(SUM(validate_state = ?), 0), "
		"COALESCE(SUM(validate_state = ?), 0), "
		"COALESCE(SUM(server_state = ? AND outcome NOT IN (?, ?)), 0), "
		"COALESCE(SUM(granted_credit), 0) FROM result WHERE jobid = ?",
		"iiiiiiil", CT_RS_UNSENT, CT_RS_IN_PROGRESS, CT_VS_VALID,
		CT_VS_INVALID, CT_RS_OVER, CT_RO_SUCCESS, CT_RO_DIDNT_NEED, j->id);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) > 0) {
		j->res_unsent = ct_db_int(res, 0);
		j->res_in_progress = ct_db_int(res, 1);
		j->res_valid = ct_db_int(res, 2);
		j->res_invalid = ct_db_int(res, 3);
		j->res_error = ct_db_int(res, 4);
		j->credit = ct_db_double(res, 5);
	}
	ct_db_res_free(res);
	return 0;
}

int ct_web_jobs(struct ct_db *db, struct ct_web_job **jobs, size_t *n)
{
	struct ct_db_res *res = NULL;
	size_t rows, i = 0;
	int rc;

	*jobs = NULL;
	*n = 0;
	rc = ct_db_query(db, &res, "SELECT " JOB_COLS "ORDER BY j.id DESC LIMIT 500", "");
	if (rc < 0)
		return rc;
	rows = ct_db_nrows(res);
	*jobs = rows ? calloc(rows, sizeof(**jobs)) : NULL;
	if (rows && *jobs == NULL) {
		ct_db_res_free(res);
		return ct_error(CT_ENOMEM, "web: %zu jobs", rows);
	}
	while (ct_db_next(res) > 0 && i < rows)
		read_job(res, &(*jobs)[i++]);
	ct_db_res_free(res);
	*n = i;
	for (i = 0; i < *n; i++) {
		rc = job_counts(db, &(*jobs)[i]);
		if (rc < 0) {
			free(*jobs);
			*jobs = NULL;
			*n = 0;
			return rc;
		}
	}
	return 0;
}

static int job_rounds(struct ct_db *db, int64_t id, struct ct_web_round **out,
		      size_t *n)
{
	struct ct_db_res *res = NULL;
	struct ct_web_round *r;
	size_t rows, i = 0;
	int rc;

	rc = ct_db_query(db, &res, "SELECT r.idx, r.status, r.nwus, r.nwus_done, "
		"r.create_time, r.finish_time, r.model_sha256, r.out_model_sha256, "
		"r.eval_loss, r.base_eval_loss, "
		"(SELECT COUNT(*) FROM result x JOIN workunit w ON w.id = x.workunitid "
		" WHERE w.roundid = r.id AND x.server_state = ?), "
		"(SELECT COUNT(*) FROM result x JOIN workunit w ON w.id = x.workunitid "
		" WHERE w.roundid = r.id AND x.validate_state = ?), "
		"(SELECT COUNT(*) FROM result x JOIN workunit w ON w.id = x.workunitid "
		" WHERE w.roundid = r.id AND x.validate_state = ?) "
		"FROM `round` r WHERE r.jobid = ? ORDER BY r.idx LIMIT 10000",
		"iiil", CT_RS_IN_PROGRESS, CT_VS_VALID, CT_VS_INVALID, id);
	if (rc < 0)
		return rc;
	rows = ct_db_nrows(res);
	r = rows ? calloc(rows, sizeof(*r)) : NULL;
	if (rows && r == NULL) {
		ct_db_res_free(res);
		return ct_error(CT_ENOMEM, "web: %zu rounds", rows);
	}
	while (ct_db_next(res) > 0 && i < rows) {
		struct ct_web_round *x = &r[i++];

		x->idx = ct_db_int(res, 0);
		x->status = ct_db_int(res, 1);
		snprintf(x->status_name, sizeof(x->status_name), "%s",
			 ct_round_status_name((int)x->status));
		x->nwus = ct_db_int(res, 2);
		x->nwus_done = ct_db_int(res, 3);
		x->create_time = ct_db_int(res, 4);
		x->finish_time = ct_db_int(res, 5);
		COPY(x->model_sha256, res, 6);
		COPY(x->out_model_sha256, res, 7);
		x->eval_loss = dbl_or_nan(res, 8);
		x->base_eval_loss = dbl_or_nan(res, 9);
		x->res_in_progress = ct_db_int(res, 10);
		x->res_valid = ct_db_int(res, 11);
		x->res_invalid = ct_db_int(res, 12);
	}
	ct_db_res_free(res);
	*out = r;
	*n = i;
	return 0;
}

static int job_contributors(struct ct_db *db, int64_t id,
			    struct ct_web_contrib **out, size_t *n)
{
	struct ct_db_res *res = NULL;
	struct ct_web_contrib *c;
	size_t rows, i = 0;
	int rc;

	rc = ct_db_query(db, &res, "SELECT x.userid, COALESCE(u.name, ''), "
		"COUNT(*), SUM(x.granted_credit) AS cr FROM result x "
		"LEFT JOIN `user` u ON u.id = x.userid "
		"WHERE x.jobid = ? AND x.validate_state = ? "
		"GROUP BY x.userid, u.name ORDER BY cr DESC, x.userid LIMIT 50",
		"li", id, CT_VS_VALID);
	if (rc < 0)
		return rc;
	rows = ct_db_nrows(res);
	c = rows ? calloc(rows, sizeof(*c)) : NULL;
	if (rows && c == NULL) {
		ct_db_res_free(res);
		return ct_error(CT_ENOMEM, "web: %zu contributors", rows);
	}
	while (ct_db_next(res) > 0 && i < rows) {
		c[i].userid = ct_db_int(res, 0);
		COPY(c[i].name, res, 1);
		c[i].nresults = ct_db_int(res, 2);
		c[i].credit = ct_db_double(res, 3);
		i++;
	}
	ct_db_res_free(res);
	*out = c;
	*n = i;
	return 0;
}

int ct_web_get_job(struct ct_db *db, int64_t id, struct ct_web_job *job,
		   struct ct_web_round **rounds, size_t *nrounds,
		   struct ct_web_contrib **contrib, size_t *ncontrib)
{
	struct ct_db_res *res = NULL;
	int rc;

	*rounds = NULL;
	*contrib = NULL;
	*nrounds = *ncontrib = 0;
	rc = ct_db_query(db, &res, "SELECT " JOB_COLS "WHERE j.id = ?", "l", id);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) <= 0) {
		ct_db_res_free(res);
		return ct_error(CT_ENOTFOUND, "no job %lld", (long long)id);
	}
	read_job(res, job);
	ct_db_res_free(res);
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

static int status_roles(struct ct_db *db, struct ct_web_status *st)
{
	struct ct_db_res *res = NULL;
	int rc;

	rc = ct_db_query(db, &res, "SELECT role, instance, start_time, "
		"beat_time, nruns, nitems, last_error FROM role_heartbeat "
		"ORDER BY role, instance LIMIT 32", "");
	if (rc < 0)
		return rc;
	while (ct_db_next(res) > 0 && st->nroles < 32) {
		struct ct_web_role *r = &st->roles[st->nroles++];

		COPY(r->role, res, 0);
		COPY(r->instance, res, 1);
		r->start_time = ct_db_int(res, 2);
		r->beat_time = ct_db_int(res, 3);
		r->nruns = ct_db_int(res, 4);
		r->nitems = ct_db_int(res, 5);
		COPY(r->last_error, res, 6);
		r->alive = st->now - r->beat_time <= 120;
	}
	ct_db_res_free(res);
	return 0;
}

int ct_web_get_status(struct ct_db *db, struct ct_web_status *st)
{
	int64_t day_ago;
	int rc;

	memset(st, 0, sizeof(*st));
	st->now = ct_db_now();
	day_ago = st->now - 86400;
	rc = ct_db_query_int(db, &st->res_unsent, "SELECT COUNT(*) FROM result "
			     "WHERE server_state = ?", "i", CT_RS_UNSENT);
	if (rc == 0)
		rc = ct_db_query_int(db, &st->res_in_progress, "SELECT COUNT(*) "
			"FROM result WHERE server_state = ?", "i", CT_RS_IN_PROGRESS);
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
