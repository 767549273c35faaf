/*
 * test_dl.c - the data layer on the embedded server in a temporary
 * directory: typed statement arguments (db_args.h), the row mapper (dl.h),
 * and the job and result state machines (job_state.h, result_state.h),
 * whose tables are walked pair by pair: every allowed move succeeds and
 * writes what its edge says, every other is refused and changes nothing.
 * And every statement of the server written with a db.h type string: read
 * from the sources, prepared on the real database, its placeholders counted
 * against its type string (the typed macros are checked by the compiler).
 */
#include "ct_test_db.h"
#include "data/wu_state.h"

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ct_err.h"
#include "ct_file.h"
#include "data/db.h"
#include "data/db_args.h"
#include "data/dl.h"
#include "data/dl_job.h"
#include "data/job_state.h"
#include "data/result_state.h"

static char *g_dir;
static struct ct_db *g_db;

static int setup_all(void **state)
{
	(void)state;
	return ct_test_db_open(&g_dir, &g_db);
}

static int teardown_all(void **state)
{
	(void)state;
	return ct_test_db_close(g_dir, g_db);
}

/* ---- typed arguments and the mapper -------------------------------------- */

struct trow {
	int64_t id, big;
	int small;
	double d, maybe;
	char s[8];
};

static const struct ct_dl_col trow_cols[] = {
	CT_DL_COL(struct trow, id), CT_DL_COL(struct trow, big),
	CT_DL_COL(struct trow, small), CT_DL_COL(struct trow, d),
	CT_DL_COL_NAN(struct trow, maybe), CT_DL_COL(struct trow, s),
};

static void test_typed_args_and_mapper(void **state)
{
	const unsigned char blob[3] = { 0, 9, 0 };
	struct ct_db_res *res = NULL;
	struct trow r, *all = NULL;
	int64_t big = INT64_MAX - 1, n = 0;
	unsigned small = 7;
	size_t nall = 0;

	(void)state;
	assert_int_equal(ct_db_execa(g_db, "CREATE TABLE dl_t (id BIGINT AUTO_INCREMENT "
				    "PRIMARY KEY, big BIGINT, small INT, d DOUBLE, maybe DOUBLE "
				    "NULL, s VARCHAR(100) NULL, b BLOB)", NULL, 0), 0);
	/* each C type picks its binding: unsigned, int64_t, double, char *, blob */
	assert_int_equal(CT_DB_EXEC(g_db, "INSERT INTO dl_t (big, small, d, maybe, s, b) "
				    "VALUES (?, ?, ?, ?, ?, ?)", big, small, 0.25, 1.5,
				    "a longer string", CT_DB_BLOB(blob, sizeof(blob))), 1);
	assert_int_equal(CT_DB_EXEC(g_db, "INSERT INTO dl_t (big, small, d, maybe, s, b) "
				    "VALUES (?, ?, ?, ?, ?, ?)", (int64_t)-1, -2, 2.0f, CT_DB_NULL,
				    (const char *)NULL, CT_DB_NULL), 1);
	/* a wrong count is an error, not undefined behaviour */
	assert_int_equal(CT_DB_EXEC(g_db, "UPDATE dl_t SET small=? WHERE id=?", 1), CT_EINVAL);

	assert_int_equal(CT_DB_QUERY(g_db, &res, "SELECT id, big, small, d, maybe, s FROM "
				     "dl_t WHERE big=?", big), 0);
	assert_int_equal(ct_dl_one(res, &r, trow_cols, CT_DL_NCOLS(trow_cols)), 0);
	assert_true(r.id > 0);
	assert_true(r.big == big);
	assert_int_equal(r.small, 7);
	assert_true(r.d == 0.25 && r.maybe == 1.5);
	assert_string_equal(r.s, "a longe");	/* truncated to the member */

	assert_int_equal(CT_DB_QUERY(g_db, &res, "SELECT id, big, small, d, maybe, s FROM "
				     "dl_t ORDER BY id", CT_DB_NULL), CT_EINVAL);	/* no '?' */
	assert_int_equal(ct_db_querya(g_db, &res, "SELECT id, big, small, d, maybe, s FROM "
				     "dl_t ORDER BY id", NULL, 0), 0);
	assert_int_equal(ct_dl_all(res, sizeof(*all), trow_cols, CT_DL_NCOLS(trow_cols),
				   "rows", (void **)&all, &nall), 0);
	assert_int_equal(nall, 2);
	assert_true(all[1].big == -1 && all[1].small == -2 && all[1].d == 2.0);
	assert_true(isnan(all[1].maybe));	/* SQL NULL */
	assert_string_equal(all[1].s, "");
	free(all);

	/* the SQL and the table disagree: refused, result set freed */
	assert_int_equal(ct_db_querya(g_db, &res, "SELECT id, big FROM dl_t", NULL, 0), 0);
	assert_int_equal(ct_dl_one(res, &r, trow_cols, CT_DL_NCOLS(trow_cols)), CT_EINVAL);
	assert_int_equal(CT_DB_QUERY(g_db, &res, "SELECT id, big, small, d, maybe, s FROM "
				     "dl_t WHERE id=?", (int64_t)-5), 0);
	assert_int_equal(ct_dl_one(res, &r, trow_cols, CT_DL_NCOLS(trow_cols)), CT_ENOTFOUND);
	assert_int_equal(CT_DB_QUERY_INT(g_db, &n, "SELECT LENGTH(b) FROM dl_t WHERE big=?",
					 big), 0);
	assert_int_equal(n, 3);

	/* into a caller's array: at most max rows; the SQL and the table disagree */
	{
		struct trow fixed[2];
		size_t nf = 9;

		memset(fixed, 0x5a, sizeof(fixed));
		assert_int_equal(CT_DL_ROWS(g_db, fixed, 1, &nf, trow_cols, "SELECT id, big, "
					    "small, d, maybe, s FROM dl_t WHERE id>? ORDER BY id",
					    (int64_t)0), 0);
		assert_int_equal(nf, 1);
		assert_true(fixed[0].big == big && fixed[0].small == 7);
		assert_string_equal(fixed[0].s, "a longe");
		assert_int_equal(CT_DL_ROWS(g_db, fixed, 2, &nf, trow_cols, "SELECT id, big, "
					    "small, d, maybe, s FROM dl_t WHERE id>? ORDER BY id",
					    (int64_t)0), 0);
		assert_int_equal(nf, 2);
		assert_true(fixed[1].big == -1 && fixed[1].small == -2);
		assert_string_equal(fixed[1].s, "");	/* SQL NULL */
		assert_int_equal(CT_DL_ROWS(g_db, fixed, 2, &nf, trow_cols, "SELECT id, big FROM "
					    "dl_t WHERE id>?", (int64_t)0), CT_EINVAL);
		assert_int_equal(nf, 0);
	}
}

/* ---- the job's state machine ---------------------------------------------- */

static int64_t new_job(int status)
{
	assert_int_equal(CT_DB_EXEC(g_db, "INSERT INTO job (name, create_time, update_time, "
				    "status, model_sha256, model_size, train_sha256, eval_sha256, "
				    "nshards, nrounds, steps, batch, seq, lr, max_upload_bytes) "
				    "VALUES ('t', 1, 1, ?, 'm', 1, 't', 'e', 1, 1, 1, 1, 1, 0.1, 1)",
				    status), 1);
	return ct_db_last_id(g_db);
}

struct jrow {
	int status;
	int64_t finish_time, update_time;
	char final_sha[65], error_message[260];
	double final_loss;
};

static const struct ct_dl_col jrow_cols[] = {
	CT_DL_COL(struct jrow, status), CT_DL_COL(struct jrow, finish_time),
	CT_DL_COL(struct jrow, update_time), CT_DL_COL(struct jrow, final_sha),
	CT_DL_COL(struct jrow, error_message), CT_DL_COL_NAN(struct jrow, final_loss),
};

/* The row `id` of a one-parameter query into *row per cols[0..n). */
static void read_row(const char *sql, int64_t id, void *row, const struct ct_dl_col *cols,
		     size_t n)
{
	struct ct_db_res *res = NULL;

	assert_int_equal(CT_DB_QUERY(g_db, &res, sql, id), 0);
	assert_int_equal(ct_dl_one(res, row, cols, n), 0);
}

static struct jrow get_job(int64_t id)
{
	struct jrow j;

	read_row("SELECT status, finish_time, update_time, final_model_sha256, error_message, "
		 "final_eval_loss FROM job WHERE id=?", id, &j, jrow_cols,
		 CT_DL_NCOLS(jrow_cols));
	return j;
}

static void test_job_table_walk(void **state)
{
	const struct ct_job_change c = { .now = 500, .out_sha = "out", .eval_loss = 2.5,
					 .msg = "why" };
	int nallowed = 0;

	(void)state;
	for (int from = CT_JOB_RUNNING; from <= CT_JOB_ERROR; from++)
		for (int to = CT_JOB_RUNNING; to <= CT_JOB_ERROR; to++) {
			int64_t id = new_job(from);
			int ok = ct_job_move_allowed(from, to);
			int rc = ct_job_move(g_db, id, from, to, &c);
			struct jrow j = get_job(id);

			nallowed += ok;
			if (!ok) {
				assert_int_equal(rc, CT_ESTATE);
				assert_int_equal(j.status, from);
				assert_true(j.update_time == 1);
				continue;
			}
			assert_int_equal(rc, 1);
			assert_int_equal(j.status, to);
			assert_true(j.update_time == 500);
			assert_true(j.finish_time == (to == CT_JOB_ERROR ? 0 : 500));
			assert_string_equal(j.final_sha, to == CT_JOB_DONE ? "out" : "");
			assert_string_equal(j.error_message, to == CT_JOB_ERROR ? "why" : "");
			/* the same move again: the job is not at `from` any more */
			assert_int_equal(ct_job_move(g_db, id, from, to, &c), 0);
		}
	assert_int_equal(nallowed, (int)ct_job_nedges);
	assert_int_equal(nallowed, 3);
}

static void test_job_rows(void **state)
{
	int64_t id = new_job(CT_JOB_RUNNING);
	struct ct_job_row j, *all = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(ct_job_move(g_db, id, CT_JOB_RUNNING, CT_JOB_DONE,
				     &(struct ct_job_change){ .now = 3, .out_sha = "f",
							      .eval_loss = 0.125 }), 1);
	assert_int_equal(ct_job_get(g_db, id, &j), 0);
	assert_true(j.id == id && j.status == CT_JOB_DONE && j.lr == 0.1);
	assert_string_equal(j.name, "t");
	assert_string_equal(j.final_model_sha256, "f");
	assert_true(j.final_eval_loss == 0.125);
	assert_int_equal(ct_job_get(g_db, id + 1000, &j), CT_ENOTFOUND);
	assert_int_equal(ct_job_list(g_db, &all, &n), 0);
	assert_true(n >= 1 && all[n - 1].id == id);	/* oldest first */
	assert_int_equal(all[n - 1].status, CT_JOB_DONE);
	assert_true(all[n - 1].final_eval_loss == 0.125);
	for (size_t i = 0; i + 1 < n; i++)
		assert_true(all[i].id < all[i + 1].id);
	free(all);
}

static void test_job_error_message_and_cancel(void **state)
{
	int64_t job = new_job(CT_JOB_RUNNING), other = new_job(CT_JOB_RUNNING), n = 0;
	int64_t round, wu;

	(void)state;
	/* ERROR keeps an earlier notice after the new message */
	assert_int_equal(CT_DB_EXEC(g_db, "UPDATE job SET error_message='stalled' WHERE id=?",
				    other), 1);
	assert_int_equal(ct_job_move(g_db, other, CT_JOB_RUNNING, CT_JOB_ERROR,
				     &(struct ct_job_change){ .now = 9, .msg = "wu failed" }), 1);
	assert_string_equal(get_job(other).error_message, "wu failed; stalled");

	assert_int_equal(CT_DB_EXEC(g_db, "INSERT INTO `round` (jobid, idx, create_time, "
				    "model_sha256, nwus, status) VALUES (?, 1, 1, 'm', 1, ?)", job,
				    CT_ROUND_OPEN), 1);
	round = ct_db_last_id(g_db);
	assert_int_equal(CT_DB_EXEC(g_db, "INSERT INTO workunit (create_time, name, jobid, "
				    "roundid, round_idx, shard, seed, model_sha256, model_size, "
				    "data_sha256, data_size, data_tokens, target_nresults, min_quorum, "
				    "max_error_results, max_total_results, max_success_results, "
				    "delay_bound, transition_time) VALUES (1, 'cw', ?, ?, 1, 0, 1, "
				    "'m', 1, 'd', 1, 1, 2, 2, 3, 6, 5, 100, 1)", job, round), 1);
	wu = ct_db_last_id(g_db);
	assert_int_equal(ct_res_create(g_db, wu, job, "cw-0", 1), 0);
	assert_int_equal(ct_res_create(g_db, wu, job, "cw-1", 1), 0);
	assert_int_equal(ct_res_move(g_db, ct_db_last_id(g_db), CT_RES_UNSENT,
				     CT_RES_IN_PROGRESS, &(struct ct_res_change){ .now = 2 }), 1);

	assert_int_equal(ct_job_cancel(g_db, job), 0);
	assert_int_equal(get_job(job).status, CT_JOB_CANCELED);
	assert_int_equal(CT_DB_QUERY_INT(g_db, &n, "SELECT status FROM `round` WHERE id=?",
					 round), 0);
	assert_int_equal(n, CT_ROUND_CANCELED);
	assert_int_equal(CT_DB_QUERY_INT(g_db, &n, "SELECT error_mask FROM workunit WHERE id=?",
					 wu), 0);
	assert_int_equal(n, CT_WU_ERR_CANCELED);
	/* the unsent result is no longer needed; the one out stays out */
	assert_int_equal(CT_DB_QUERY_INT(g_db, &n, "SELECT outcome FROM result WHERE name=?",
					 "cw-0"), 0);
	assert_int_equal(n, CT_RO_DIDNT_NEED);
	assert_int_equal(CT_DB_QUERY_INT(g_db, &n, "SELECT server_state FROM result WHERE "
					 "name=?", "cw-1"), 0);
	assert_int_equal(n, CT_RS_IN_PROGRESS);

	assert_int_equal(ct_job_cancel(g_db, job), CT_ESTATE);
	assert_int_equal(ct_job_cancel(g_db, other), CT_ESTATE);
	assert_int_equal(ct_job_cancel(g_db, 999999), CT_ENOTFOUND);
}

/* ---- the result's state machine ------------------------------------------- */

struct rrow {
	int server_state, outcome, validate_state, conforming, exit_status;
	int64_t hostid, report_deadline, received_time, validate_time;
	double final_loss, probe_loss;
	char error_message[260];
};

static const struct ct_dl_col rrow_cols[] = {
	CT_DL_COL(struct rrow, server_state), CT_DL_COL(struct rrow, outcome),
	CT_DL_COL(struct rrow, validate_state), CT_DL_COL(struct rrow, conforming),
	CT_DL_COL(struct rrow, exit_status), CT_DL_COL(struct rrow, hostid),
	CT_DL_COL(struct rrow, report_deadline), CT_DL_COL(struct rrow, received_time),
	CT_DL_COL(struct rrow, validate_time), CT_DL_COL_NAN(struct rrow, final_loss),
	CT_DL_COL_NAN(struct rrow, probe_loss), CT_DL_COL(struct rrow, error_message),
};

static struct rrow get_result(int64_t id)
{
	struct rrow r;

	read_row("SELECT server_state, outcome, validate_state, conforming, exit_status, "
		 "hostid, report_deadline, received_time, validate_time, final_loss, "
		 "probe_loss, error_message FROM result WHERE id=?", id, &r, rrow_cols,
		 CT_DL_NCOLS(rrow_cols));
	return r;
}

/* A result row in state s (its columns written directly, as a fixture). */
static int64_t new_result(int64_t jobid, enum ct_res_state s)
{
	static int seq;
	const struct ct_res_cols *c = &ct_res_states[s];
	char name[32];

	snprintf(name, sizeof(name), "walk-%d", seq++);
	assert_int_equal(ct_res_create(g_db, 1, jobid, name, 1), 0);
	int64_t id = ct_db_last_id(g_db);
	assert_int_equal(CT_DB_EXEC(g_db, "UPDATE result SET server_state=?, outcome=?, "
				    "validate_state=? WHERE id=?", c->server_state, c->outcome,
				    c->validate_state, id), 1);
	return id;
}

/* What the move from -> to must have written besides the state columns. */
static void check_extras(const struct rrow *r, enum ct_res_state from, enum ct_res_state to)
{
	if (from == CT_RES_UNSENT && to == CT_RES_IN_PROGRESS)
		assert_true(r->hostid == 11 && r->report_deadline == 900);
	if (to == CT_RES_REPORTED && from == CT_RES_IN_PROGRESS)
		assert_true(r->received_time == 700 && r->final_loss == 3.5 && r->conforming == 1);
	if (to == CT_RES_CLIENT_ERROR)
		assert_true(r->received_time == 700 && r->exit_status == -4);
	if (to == CT_RES_CLIENT_ERROR || to == CT_RES_VALIDATE_ERROR ||
	    from == CT_RES_VALID)
		assert_string_equal(r->error_message, "msg");
	else
		assert_string_equal(r->error_message, "");
	if (from == CT_RES_REPORTED || from == CT_RES_INCONCLUSIVE)
		assert_true(r->validate_time == 700 &&
			    (to == CT_RES_VALIDATE_ERROR || r->probe_loss == 0.75));
}

static void test_result_table_walk(void **state)
{
	const struct ct_res_change c = {
		.now = 700, .hostid = 11, .deadline = 900, .elapsed_s = 1, .final_loss = 3.5,
		.conforming = 1, .exit_status = -4, .error_message = "msg", .has_probe = 1,
		.probe_loss = 0.75, .update_norm = 0.5,
	};
	int64_t job = new_job(CT_JOB_RUNNING);
	size_t nallowed = 0;

	(void)state;
	for (int from = 0; from < CT_RES_NSTATES; from++)
		for (int to = 0; to < CT_RES_NSTATES; to++) {
			int64_t id = new_result(job, from);
			int ok = ct_res_move_allowed(from, to);
			int rc = ct_res_move(g_db, id, from, to, &c);
			struct rrow r = get_result(id);
			const struct ct_res_cols *want = &ct_res_states[ok ? to : from];

			assert_int_equal(rc, ok ? 1 : CT_ESTATE);
			assert_int_equal(r.server_state, want->server_state);
			assert_int_equal(r.outcome, want->outcome);
			assert_int_equal(r.validate_state, want->validate_state);
			if (!ok) {
				assert_true(r.received_time == 0 && r.validate_time == 0);
				continue;
			}
			nallowed++;
			check_extras(&r, from, to);
			/* a move guarded by a state the row is not in moves nothing */
			if (from != to)
				assert_int_equal(ct_res_move(g_db, id, from, to, &c), 0);
		}
	assert_int_equal(nallowed, ct_res_nedges);
	assert_int_equal(nallowed, 16);
	/* the validator's reading of validate_state */
	assert_int_equal(ct_res_validated(CT_VS_INIT), CT_RES_REPORTED);
	assert_int_equal(ct_res_validated(CT_VS_INCONCLUSIVE), CT_RES_INCONCLUSIVE);
	assert_int_equal(ct_res_validated(99), -1);
}

static void test_result_drop_unsent(void **state)
{
	int64_t job = new_job(CT_JOB_RUNNING), a, b, c, n = 0;

	(void)state;
	assert_int_equal(ct_res_create(g_db, 77, job, "drop-0", 1), 0);
	a = ct_db_last_id(g_db);
	assert_int_equal(ct_res_create(g_db, 77, job, "drop-1", 1), 0);
	b = ct_db_last_id(g_db);
	assert_int_equal(ct_res_create(g_db, 77, job, "drop-2", 1), 0);
	c = ct_db_last_id(g_db);
	assert_int_equal(ct_res_create(g_db, 77, job, "drop-0", 1), CT_EDUP);
	assert_int_equal(ct_res_move(g_db, c, CT_RES_UNSENT, CT_RES_IN_PROGRESS,
				     &(struct ct_res_change){ .now = 2 }), 1);
	assert_int_equal(ct_res_drop_unsent_wu(g_db, 77, a), 1);	/* b only */
	assert_int_equal(get_result(b).outcome, CT_RO_DIDNT_NEED);
	assert_int_equal(get_result(a).server_state, CT_RS_UNSENT);
	assert_int_equal(ct_res_drop_unsent_job(g_db, job), 1);	/* a */
	assert_int_equal(get_result(a).outcome, CT_RO_DIDNT_NEED);
	assert_int_equal(get_result(c).server_state, CT_RS_IN_PROGRESS);
	assert_int_equal(CT_DB_QUERY_INT(g_db, &n, "SELECT COUNT(*) FROM result WHERE "
					 "workunitid=77 AND server_state=?", CT_RS_UNSENT), 0);
	assert_int_equal(n, 0);
}

/* ---- every type-string statement of the server -------------------------- */

struct scan {
	int checked, skipped;
};

/* Past blanks and comments. */
static const char *skip_ws(const char *p)
{
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			p = e ? e + 2 : p + strlen(p);
		} else if (p[0] == '/' && p[1] == '/') {
			p += strcspn(p, "\n");
		} else {
			return p;
		}
	}
}

/* Past one argument and its comma; NULL at the call's end. */
static const char *skip_arg(const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '"' || *p == '\'') {
			char q = *p++;
			while (*p && *p != q)
				p += p[0] == '\\' && p[1] ? 2 : 1;
			if (*p == 0)
				return NULL;
		} else if (*p == '(') {
			depth++;
		} else if (*p == ')') {
			if (depth-- == 0)
				return NULL;
		} else if (*p == ',' && depth == 0) {
			return p + 1;
		}
	}
	return NULL;
}

/* Consecutive string literals from p, joined into out; NULL if p is not
 * at one (the SQL is built some other way). */
static const char *read_literals(const char *p, char *out, size_t cap)
{
	size_t n = 0;
	int any = 0;

	for (p = skip_ws(p); *p == '"'; p = skip_ws(p)) {
		for (p++; *p && *p != '"'; p++) {
			char c = *p;
			if (c == '\\') {
				c = *++p;
				c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
			}
			if (n + 1 < cap)
				out[n++] = c;
		}
		if (*p++ != '"')
			return NULL;
		any = 1;
	}
	out[n] = 0;
	return any ? p : NULL;
}

/* Check each call of `fn` (its SQL after `skip` arguments, then one
 * argument per placeholder) in text. */
static void check_calls(const char *path, const char *text, const char *fn, int skip,
			struct scan *sc)
{
	size_t fl = strlen(fn);

	for (const char *p = strstr(text, fn); p; p = strstr(p + fl, fn)) {
		char sql[8192];
		const char *q = p + fl;
		int line = 1, want, nargs = 0;

		if (p > text && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
				 (p[-1] >= 'A' && p[-1] <= 'Z')))
			continue;	/* a longer name */
		for (int i = 0; q && i < skip; i++)
			q = skip_arg(q);
		q = q ? read_literals(q, sql, sizeof(sql)) : NULL;
		q = q ? skip_ws(q) : NULL;
		if (q == NULL || *q != ',') {
			sc->skipped++;
			continue;
		}
		if (strncmp(skip_ws(q + 1), "NULL, 0)", 8) == 0) {
			nargs = 0;	/* ct_db_execa(db, sql, NULL, 0) and friends */
		} else if (fn[0] == 'c') {
			sc->skipped++;	/* an argument array built at run time */
			continue;
		} else {
			for (q++; q; q = skip_arg(q))
				nargs++;
		}
		for (const char *c = text; c < p; c++)
			line += *c == '\n';
		want = ct_db_param_count(g_db, sql);
		if (want != nargs)
			fail_msg("%s:%d: %d placeholders%s%s, %d arguments: %s", path, line, want,
				 want < 0 ? ": " : "", want < 0 ? ct_errmsg(want) : "", nargs, sql);
		sc->checked++;
	}
}

static void scan_dir(const char *dir, struct scan *sc)
{
	static const struct { const char *fn; int skip; } calls[] = {
		{ "CT_DB_EXEC(", 1 }, { "CT_DB_QUERY(", 2 }, { "CT_DB_QUERY_INT(", 2 },
		{ "CT_DB_QUERY_DOUBLE(", 2 }, { "ct_db_execa(", 1 }, { "ct_db_querya(", 2 },
		{ "ct_db_query_inta(", 2 }, { "ct_db_query_doublea(", 2 }, { "CT_DL_ONE(", 3 },
		{ "CT_DL_IDS(", 4 }, { "CT_DL_LIST(", 5 }, { "CT_DL_ALL(", 6 },
		{ "CT_DL_ROWS(", 5 },
	};
	DIR *d = opendir(dir);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		char path[4096];
		size_t l = strlen(e->d_name);
		unsigned char *text = NULL;
		size_t n = 0;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR) {
			scan_dir(path, sc);
			continue;
		}
		if (l < 3 || strcmp(e->d_name + l - 2, ".c") != 0 || strcmp(e->d_name, "db.c") == 0)
			continue;
		assert_int_equal(ct_file_read_all(path, 1 << 24, &text, &n), 0);
		for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
			check_calls(path, (const char *)text, calls[i].fn, calls[i].skip, sc);
		free(text);
	}
	closedir(d);
}

static void test_every_statement(void **state)
{
	const char *src = getenv("top_srcdir");
	struct scan sc = { 0 };
	char dir[4096];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/server", src ? src : "..");
	scan_dir(dir, &sc);
	print_message("%d statements prepared and counted, %d built otherwise (skipped)\n",
		      sc.checked, sc.skipped);
	assert_true(sc.checked >= 150);	/* the scan found the server's statements */
}

CT_TEST_MAIN_GROUP(setup_all, teardown_all, test_typed_args_and_mapper,
	test_job_table_walk, test_job_rows, test_job_error_message_and_cancel,
	test_result_table_walk, test_result_drop_unsent, test_every_statement)
