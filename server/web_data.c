/*
 * web_data.c - the queries behind the web pages and the JSON API (see
 * web_data.h). Each SQL text is a literal, so db.h's per-connection cache
 * prepares it once; the two orders of a leaderboard are two literals.
 */
#include <math.h>
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

/* ---- users --------------------------------------------------------------- */

#define USER_SEL "u.id, u.name, u.country, u.url, u.teamid, " \
	"COALESCE(t.name, ''), u.total_credit, u.expavg_credit, " \
	"u.expavg_time, u.create_time "
#define USER_JOIN "LEFT JOIN team t ON t.id = u.teamid "
#define USER_COLS USER_SEL "FROM `user` u " USER_JOIN

/* A team's members and a user's computers are read through the owner's
 * index (FORCE INDEX: left alone, MariaDB walks the whole credit index
 * and filters, bench/bench_web measured 70 ms with 20,000 users).
 *
 * Leaderboards are "deferred joins": the inner SELECT reads only the
 * credit index (ids in order, LIMIT/OFFSET applied there), then the page's
 * rows are joined by primary key. Joining first makes MariaDB sort the
 * whole table instead (measured by bench/bench_web). */
#define USER_PAGE(order) "SELECT " USER_SEL "FROM (SELECT id FROM `user` " \
	"ORDER BY " order " DESC, id DESC LIMIT ? OFFSET ?) k " \
	"JOIN `user` u ON u.id = k.id " USER_JOIN \
	"ORDER BY u." order " DESC, u.id DESC"

static void read_user(const struct ct_db_res *res, struct ct_web_user *u)
{
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

static int fill_users(struct ct_db_res *res, struct ct_web_board *b,
		      int64_t first_rank)
{
	size_t n = ct_db_nrows(res), i = 0;

	b->users = n ? calloc(n, sizeof(*b->users)) : NULL;
	if (n && b->users == NULL)
		return ct_error(CT_ENOMEM, "web: %zu users", n);
	while (ct_db_next(res) > 0 && i < n) {
		read_user(res, &b->users[i]);
		b->users[i].rank = first_rank + (int64_t)i;
		i++;
	}
	b->n = i;
	return 0;
}

int ct_web_users(struct ct_db *db, enum ct_web_sort sort, int64_t page,
		 int64_t teamid, struct ct_web_board *b)
{
	struct ct_db_res *res = NULL;
	int64_t total = 0, off;
	int rc;

	memset(b, 0, sizeof(*b));
	b->sort = sort;
	if (page < 1 || page > CT_WEB_MAX_PAGE)
		page = 1;
	if (teamid > 0) {
		page = 1;
		rc = ct_db_query_int(db, &total, "SELECT COUNT(*) FROM `user` "
				     "WHERE teamid = ?", "l", teamid);
		if (rc < 0)
			return rc;
		rc = sort == CT_WEB_SORT_TOTAL ?
			ct_db_query(db, &res, "SELECT " USER_SEL "FROM `user` u FORCE INDEX (user_team) " USER_JOIN
				"WHERE u.teamid = ? "
				"ORDER BY u.total_credit DESC, u.id DESC LIMIT ?",
				"li", teamid, CT_WEB_PAGE_SIZE * 4) :
			ct_db_query(db, &res, "SELECT " USER_SEL "FROM `user` u FORCE INDEX (user_team) " USER_JOIN
				"WHERE u.teamid = ? "
				"ORDER BY u.expavg_credit DESC, u.id DESC LIMIT ?",
				"li", teamid, CT_WEB_PAGE_SIZE * 4);
		off = 0;
	} else {
		rc = ct_db_query_int(db, &total, "SELECT COUNT(*) FROM `user`", "");
		if (rc < 0)
			return rc;
		off = (page - 1) * CT_WEB_PAGE_SIZE;
		rc = sort == CT_WEB_SORT_TOTAL ?
			ct_db_query(db, &res, USER_PAGE("total_credit"), "ll",
				    (int64_t)CT_WEB_PAGE_SIZE, off) :
			ct_db_query(db, &res, USER_PAGE("expavg_credit"), "ll",
				    (int64_t)CT_WEB_PAGE_SIZE, off);
	}
	if (rc < 0)
		return rc;
	board_pages(b, page, total);
	rc = fill_users(res, b, off + 1);
	ct_db_res_free(res);
	return rc;
}

int ct_web_get_user(struct ct_db *db, int64_t id, struct ct_web_user *u)
{
	struct ct_db_res *res = NULL;
	int64_t above = 0;
	int rc;

	rc = ct_db_query(db, &res, "SELECT " USER_COLS "WHERE u.id = ?", "l", id);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) <= 0) {
		ct_db_res_free(res);
		return ct_error(CT_ENOTFOUND, "no user %lld", (long long)id);
	}
	read_user(res, u);
	ct_db_res_free(res);
	rc = ct_db_query_int(db, &above, "SELECT COUNT(*) FROM `user` WHERE "
		"expavg_credit > ? OR (expavg_credit = ? AND id > ?)", "ddl",
		u->expavg_credit, u->expavg_credit, id);
	if (rc < 0)
		return rc;
	u->rank = above + 1;
	return ct_db_query_int(db, &u->nhosts, "SELECT COUNT(*) FROM host "
			       "WHERE userid = ?", "l", id);
}

/* ---- teams --------------------------------------------------------------- */

#define TEAM_SEL "t.id, t.name, t.userid, COALESCE(u.name, ''), t.url, " \
	"t.description, t.nusers, t.total_credit, t.expavg_credit, " \
	"t.expavg_time, t.create_time "
#define TEAM_JOIN "LEFT JOIN `user` u ON u.id = t.userid "
#define TEAM_COLS TEAM_SEL "FROM team t " TEAM_JOIN
#define TEAM_PAGE(order) "SELECT " TEAM_SEL "FROM (SELECT id FROM team " \
	"ORDER BY " order " DESC, id DESC LIMIT ? OFFSET ?) k " \
	"JOIN team t ON t.id = k.id " TEAM_JOIN \
	"ORDER BY t." order " DESC, t.id DESC"

static void read_team(const struct ct_db_res *res, struct ct_web_team *t)
{
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

int ct_web_teams(struct ct_db *db, enum ct_web_sort sort, int64_t page,
		 struct ct_web_board *b)
{
	struct ct_db_res *res = NULL;
	int64_t total = 0, off;
	size_t n, i = 0;
	int rc;

	memset(b, 0, sizeof(*b));
	b->sort = sort;
	if (page < 1 || page > CT_WEB_MAX_PAGE)
		page = 1;
	rc = ct_db_query_int(db, &total, "SELECT COUNT(*) FROM team", "");
	if (rc < 0)
		return rc;
	off = (page - 1) * CT_WEB_PAGE_SIZE;
	rc = sort == CT_WEB_SORT_TOTAL ?
		ct_db_query(db, &res, TEAM_PAGE("total_credit"), "ll",
			    (int64_t)CT_WEB_PAGE_SIZE, off) :
		ct_db_query(db, &res, TEAM_PAGE("expavg_credit"), "ll",
			    (int64_t)CT_WEB_PAGE_SIZE, off);
	if (rc < 0)
		return rc;
	board_pages(b, page, total);
	n = ct_db_nrows(res);
	b->teams = n ? calloc(n, sizeof(*b->teams)) : NULL;
	if (n && b->teams == NULL) {
		ct_db_res_free(res);
		return ct_error(CT_ENOMEM, "web: %zu teams", n);
	}
	while (ct_db_next(res) > 0 && i < n) {
		read_team(res, &b->teams[i]);
		b->teams[i].rank = off + 1 + (int64_t)i;
		i++;
	}
	b->n = i;
	ct_db_res_free(res);
	return 0;
}

int ct_web_get_team(struct ct_db *db, int64_t id, struct ct_web_team *t)
{
	struct ct_db_res *res = NULL;
	int64_t above = 0;
	int rc;

	rc = ct_db_query(db, &res, "SELECT " TEAM_COLS "WHERE t.id = ?", "l", id);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) <= 0) {
		ct_db_res_free(res);
		return ct_error(CT_ENOTFOUND, "no team %lld", (long long)id);
	}
	read_team(res, t);
	ct_db_res_free(res);
	rc = ct_db_query_int(db, &above, "SELECT COUNT(*) FROM team WHERE "
		"expavg_credit > ? OR (expavg_credit = ? AND id > ?)", "ddl",
		t->expavg_credit, t->expavg_credit, id);
	t->rank = above + 1;
	return rc < 0 ? rc : 0;
}

/* ---- hosts --------------------------------------------------------------- */

#define HOST_SEL "h.id, h.userid, COALESCE(u.name, ''), h.os, h.cpu_model, " \
	"COALESCE(d.name, ''), h.ncpus, h.ram_bytes, h.client_version, " \
	"h.nresults_valid, h.nresults_invalid, h.total_credit, " \
	"h.expavg_credit, h.expavg_time, h.create_time, h.rpc_time "
#define HOST_JOIN "LEFT JOIN `user` u ON u.id = h.userid " \
	"LEFT JOIN device d ON d.hostid = h.id AND d.slot = 0 "
#define HOST_COLS HOST_SEL "FROM host h " HOST_JOIN
#define HOST_PAGE(order) "SELECT " HOST_SEL "FROM (SELECT id FROM host " \
	"ORDER BY " order " DESC, id DESC LIMIT ? OFFSET ?) k " \
	"JOIN host h ON h.id = k.id " HOST_JOIN \
	"ORDER BY h." order " DESC, h.id DESC"

static void read_host(const struct ct_db_res *res, struct ct_web_host *h)
{
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

static int host_query(struct ct_db *db, struct ct_db_res **res,
		      enum ct_web_sort sort, int64_t userid, int64_t off)
{
	if (userid > 0)
		return sort == CT_WEB_SORT_TOTAL ?
			ct_db_query(db, res, "SELECT " HOST_SEL "FROM host h FORCE INDEX (host_user_cpid) " HOST_JOIN
				"WHERE h.userid = ? "
				"ORDER BY h.total_credit DESC, h.id DESC LIMIT ?",
				"li", userid, CT_WEB_PAGE_SIZE * 4) :
			ct_db_query(db, res, "SELECT " HOST_SEL "FROM host h FORCE INDEX (host_user_cpid) " HOST_JOIN
				"WHERE h.userid = ? "
				"ORDER BY h.expavg_credit DESC, h.id DESC LIMIT ?",
				"li", userid, CT_WEB_PAGE_SIZE * 4);
	return sort == CT_WEB_SORT_TOTAL ?
		ct_db_query(db, res, HOST_PAGE("total_credit"), "ll",
			    (int64_t)CT_WEB_PAGE_SIZE, off) :
		ct_db_query(db, res, HOST_PAGE("expavg_credit"), "ll",
			    (int64_t)CT_WEB_PAGE_SIZE, off);
}

int ct_web_hosts(struct ct_db *db, enum ct_web_sort sort, int64_t page,
		 int64_t userid, struct ct_web_board *b)
{
	struct ct_db_res *res = NULL;
	int64_t total = 0, off;
	size_t n, i = 0;
	int rc;

	memset(b, 0, sizeof(*b));
	b->sort = sort;
	if (page < 1 || page > CT_WEB_MAX_PAGE || userid > 0)
		page = 1;
	rc = userid > 0 ?
		ct_db_query_int(db, &total, "SELECT COUNT(*) FROM host "
				"WHERE userid = ?", "l", userid) :
		ct_db_query_int(db, &total, "SELECT COUNT(*) FROM host", "");
	if (rc < 0)
		return rc;
	off = (page - 1) * CT_WEB_PAGE_SIZE;
	rc = host_query(db, &res, sort, userid, off);
	if (rc < 0)
		return rc;
	board_pages(b, page, total);
	n = ct_db_nrows(res);
	b->hosts = n ? calloc(n, sizeof(*b->hosts)) : NULL;
	if (n && b->hosts == NULL) {
		ct_db_res_free(res);
		return ct_error(CT_ENOMEM, "web: %zu hosts", n);
	}
	while (ct_db_next(res) > 0 && i < n) {
		read_host(res, &b->hosts[i]);
		b->hosts[i].rank = off + 1 + (int64_t)i;
		i++;
	}
	b->n = i;
	ct_db_res_free(res);
	return 0;
}

int ct_web_get_host(struct ct_db *db, int64_t id, struct ct_web_host *h)
{
	struct ct_db_res *res = NULL;
	int64_t above = 0;
	int rc;

	rc = ct_db_query(db, &res, "SELECT " HOST_COLS "WHERE h.id = ?", "l", id);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) <= 0) {
		ct_db_res_free(res);
		return ct_error(CT_ENOTFOUND, "no host %lld", (long long)id);
	}
	read_host(res, h);
	ct_db_res_free(res);
	rc = ct_db_query_int(db, &above, "SELECT COUNT(*) FROM host WHERE "
		"expavg_credit > ? OR (expavg_credit = ? AND id > ?)", "ddl",
		h->expavg_credit, h->expavg_credit, id);
	if (rc < 0)
		return rc;
	h->rank = above + 1;
	return ct_db_query_int(db, &h->ndevices, "SELECT COUNT(*) FROM device "
			       "WHERE hostid = ?", "l", id);
}

/* ---- credit history ------------------------------------------------------ */

static int history_query(struct ct_db *db, struct ct_db_res **res,
			 const char *kind, int64_t id)
{
	if (strcmp(kind, "user") == 0)
		return ct_db_query(db, res, "SELECT create_time DIV 86400 AS d, "
			"SUM(credit) FROM credit_event WHERE userid = ? "
			"GROUP BY d ORDER BY d DESC LIMIT ?", "li", id,
			CT_WEB_HIST_DAYS);
	if (strcmp(kind, "team") == 0)
		return ct_db_query(db, res, "SELECT create_time DIV 86400 AS d, "
			"SUM(credit) FROM credit_event WHERE teamid = ? "
			"GROUP BY d ORDER BY d DESC LIMIT ?", "li", id,
			CT_WEB_HIST_DAYS);
	if (strcmp(kind, "host") == 0)
		return ct_db_query(db, res, "SELECT create_time DIV 86400 AS d, "
			"SUM(credit) FROM credit_event WHERE hostid = ? "
			"GROUP BY d ORDER BY d DESC LIMIT ?", "li", id,
			CT_WEB_HIST_DAYS);
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
