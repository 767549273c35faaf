/*
 * result_state.c - a result's lifecycle (see result_state.h): the states,
 * the table of allowed moves, and the one statement per kind of move that
 * writes result's state columns.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "ct_err.h"
#include "db.h"
#include "db_args.h"
#include "dl.h"
#include "result_state.h"

const struct ct_res_cols ct_res_states[CT_RES_NSTATES] = {
	[CT_RES_UNSENT] = { CT_RS_UNSENT, CT_RO_INIT, CT_VS_INIT },
	[CT_RES_IN_PROGRESS] = { CT_RS_IN_PROGRESS, CT_RO_INIT, CT_VS_INIT },
	[CT_RES_REPORTED] = { CT_RS_OVER, CT_RO_SUCCESS, CT_VS_INIT },
	[CT_RES_CLIENT_ERROR] = { CT_RS_OVER, CT_RO_CLIENT_ERROR, CT_VS_INIT },
	[CT_RES_NO_REPLY] = { CT_RS_OVER, CT_RO_NO_REPLY, CT_VS_INIT },
	[CT_RES_DIDNT_NEED] = { CT_RS_OVER, CT_RO_DIDNT_NEED, CT_VS_INIT },
	[CT_RES_VALID] = { CT_RS_OVER, CT_RO_SUCCESS, CT_VS_VALID },
	[CT_RES_INVALID] = { CT_RS_OVER, CT_RO_SUCCESS, CT_VS_INVALID },
	[CT_RES_INCONCLUSIVE] = { CT_RS_OVER, CT_RO_SUCCESS, CT_VS_INCONCLUSIVE },
	[CT_RES_TOO_LATE] = { CT_RS_OVER, CT_RO_SUCCESS, CT_VS_TOO_LATE },
	[CT_RES_VALIDATE_ERROR] = { CT_RS_OVER, CT_RO_VALIDATE_ERROR, CT_VS_INVALID },
};

const struct ct_res_edge ct_res_edges[] = {
	{ CT_RES_UNSENT, CT_RES_IN_PROGRESS },
	{ CT_RES_UNSENT, CT_RES_DIDNT_NEED },
	{ CT_RES_IN_PROGRESS, CT_RES_REPORTED },
	{ CT_RES_IN_PROGRESS, CT_RES_CLIENT_ERROR },
	{ CT_RES_IN_PROGRESS, CT_RES_NO_REPLY },
	{ CT_RES_IN_PROGRESS, CT_RES_DIDNT_NEED },	/* its WU canceled (sched.c) */
	{ CT_RES_REPORTED, CT_RES_REPORTED },	/* looked at, undecided */
	{ CT_RES_REPORTED, CT_RES_VALID },
	{ CT_RES_REPORTED, CT_RES_INVALID },
	{ CT_RES_REPORTED, CT_RES_INCONCLUSIVE },
	{ CT_RES_REPORTED, CT_RES_TOO_LATE },
	{ CT_RES_REPORTED, CT_RES_VALIDATE_ERROR },
	{ CT_RES_INCONCLUSIVE, CT_RES_VALID },
	{ CT_RES_INCONCLUSIVE, CT_RES_INVALID },
	{ CT_RES_INCONCLUSIVE, CT_RES_VALIDATE_ERROR },
	{ CT_RES_VALID, CT_RES_INVALID },	/* set aside */
};
const size_t ct_res_nedges = sizeof(ct_res_edges) / sizeof(ct_res_edges[0]);

int ct_res_validated(int vs)
{
	for (int s = CT_RES_REPORTED; s < CT_RES_NSTATES; s++)
		if (ct_res_states[s].outcome == CT_RO_SUCCESS &&
		    ct_res_states[s].validate_state == vs)
			return s;
	return -1;
}

int ct_res_move_allowed(int from, int to)
{
	for (size_t i = 0; i < ct_res_nedges; i++)
		if ((int)ct_res_edges[i].from == from && (int)ct_res_edges[i].to == to)
			return 1;
	return 0;
}

/* The WHERE clause every move ends with: the row and its whole old state. */
#define FROM " WHERE id=? AND server_state=? AND outcome=? AND validate_state=?"
#define FROM_ARGS(id, f) (id), (f)->server_state, (f)->outcome, (f)->validate_state

static int write_send(struct ct_db *db, int64_t id, const struct ct_res_cols *f,
		      const struct ct_res_cols *t, const struct ct_res_change *c)
{
	return CT_DB_EXEC(db, "UPDATE result SET server_state=?, hostid=?, userid=?, "
			  "teamid=?, sent_time=?, report_deadline=?, sent_net=?, sent_round=?" FROM,
			  t->server_state, c->hostid, c->userid, c->teamid, c->now, c->deadline,
			  c->sent_net ? c->sent_net : "", c->sent_round, FROM_ARGS(id, f));
}

static int write_reported(struct ct_db *db, int64_t id, const struct ct_res_cols *f,
			  const struct ct_res_cols *t, const struct ct_res_change *c)
{
	/* a final loss of NAN: none said, SQL NULL */
	struct ct_db_arg loss = isnan(c->final_loss) ? CT_DB_NULL : ct_db_arg_d(c->final_loss);

	return CT_DB_EXEC(db, "UPDATE result SET server_state=?, outcome=?, received_time=?, "
			  "elapsed_s=?, final_loss=?, conforming=?" FROM, t->server_state,
			  t->outcome, c->now, c->elapsed_s, loss, c->conforming,
			  FROM_ARGS(id, f));
}

static int write_client_error(struct ct_db *db, int64_t id, const struct ct_res_cols *f,
			      const struct ct_res_cols *t, const struct ct_res_change *c)
{
	return CT_DB_EXEC(db, "UPDATE result SET server_state=?, outcome=?, received_time=?, "
			  "elapsed_s=?, exit_status=?, error_message=?" FROM, t->server_state,
			  t->outcome, c->now, c->elapsed_s, c->exit_status,
			  c->error_message ? c->error_message : "", FROM_ARGS(id, f));
}

static int write_over(struct ct_db *db, int64_t id, const struct ct_res_cols *f,
		      const struct ct_res_cols *t, const struct ct_res_change *c)
{
	(void)c;
	return CT_DB_EXEC(db, "UPDATE result SET server_state=?, outcome=?" FROM,
			  t->server_state, t->outcome, FROM_ARGS(id, f));
}

static int write_validated(struct ct_db *db, int64_t id, const struct ct_res_cols *f,
			   const struct ct_res_cols *t, const struct ct_res_change *c)
{
	if (c->has_probe)
		return CT_DB_EXEC(db, "UPDATE result SET validate_state=?, probe_loss=?, "
				  "update_norm=?, validate_time=?" FROM, t->validate_state,
				  c->probe_loss, c->update_norm, c->now, FROM_ARGS(id, f));
	return CT_DB_EXEC(db, "UPDATE result SET validate_state=?, validate_time=?" FROM,
			  t->validate_state, c->now, FROM_ARGS(id, f));
}

static int write_validate_error(struct ct_db *db, int64_t id, const struct ct_res_cols *f,
				const struct ct_res_cols *t, const struct ct_res_change *c)
{
	return CT_DB_EXEC(db, "UPDATE result SET validate_state=?, outcome=?, "
			  "error_message=?, validate_time=?" FROM, t->validate_state, t->outcome,
			  c->error_message ? c->error_message : "", c->now, FROM_ARGS(id, f));
}

static int write_set_aside(struct ct_db *db, int64_t id, const struct ct_res_cols *f,
			   const struct ct_res_cols *t, const struct ct_res_change *c)
{
	return CT_DB_EXEC(db, "UPDATE result SET validate_state=?, error_message=?" FROM,
			  t->validate_state, c->error_message ? c->error_message : "",
			  FROM_ARGS(id, f));
}

typedef int (*write_fn)(struct ct_db *db, int64_t id, const struct ct_res_cols *f,
			const struct ct_res_cols *t, const struct ct_res_change *c);

/* The statement of an allowed move. */
static write_fn writer(enum ct_res_state from, enum ct_res_state to)
{
	if (from == CT_RES_UNSENT && to == CT_RES_IN_PROGRESS)
		return write_send;
	if (from == CT_RES_IN_PROGRESS && to == CT_RES_REPORTED)
		return write_reported;
	if (to == CT_RES_CLIENT_ERROR)
		return write_client_error;
	if (to == CT_RES_NO_REPLY || to == CT_RES_DIDNT_NEED)
		return write_over;
	if (to == CT_RES_VALIDATE_ERROR)
		return write_validate_error;
	if (from == CT_RES_VALID)
		return write_set_aside;
	return write_validated;
}

int ct_res_move(struct ct_db *db, int64_t id, enum ct_res_state from,
		enum ct_res_state to, const struct ct_res_change *c)
{
	if (!ct_res_move_allowed((int)from, (int)to))
		return ct_error(CT_ESTATE, "result %" PRId64 ": no move from state %d to %d", id,
				(int)from, (int)to);
	return writer(from, to)(db, id, &ct_res_states[from], &ct_res_states[to], c);
}

/* The session's @ct_result_counted: set (on), the result update triggers
 * skip the rows (migration 047), their writer counts them; NULL (off),
 * the triggers count. */
static int counted_set(struct ct_db *db, int on)
{
	const struct ct_db_arg v = on ? ct_db_arg_l(1) : CT_DB_NULL;

	return ct_db_execa(db, "SET @ct_result_counted = ?", &v, 1);
}

/* What the result triggers (migration 044) add for k sends of change c,
 * each UNSENT -> IN_PROGRESS of a result of job c->jobid with no owner
 * before and no credit: its round (sent_round, the WU's round as the
 * trigger would read it) one unsent fewer and one more in progress; the
 * new computer's and account's tasks one more in progress. Returns k or
 * a db error. */
static int sends_count(struct ct_db *db, const struct ct_res_change *c, int k)
{
	int rc;

	rc = CT_DB_EXEC(db, "INSERT INTO round_stat (roundid, jobid, n_unsent, n_in_progress, "
			"n_valid, n_invalid, n_error, credit) VALUES (?, ?, ?, ?, 0, 0, 0, 0) "
			"ON DUPLICATE KEY UPDATE n_unsent = n_unsent + VALUES(n_unsent), "
			"n_in_progress = n_in_progress + VALUES(n_in_progress)", c->sent_round,
			c->jobid, -k, k);
	if (rc >= 0)
		rc = CT_DB_EXEC(db, "INSERT INTO task_stat (kind, ownerid, jobid, n_in_progress, "
				"n_pending, n_valid, n_invalid, n_error, credit) VALUES "
				"(0, ?, ?, ?, 0, 0, 0, 0, 0), (1, ?, ?, ?, 0, 0, 0, 0, 0) "
				"ON DUPLICATE KEY UPDATE n_in_progress = n_in_progress + "
				"VALUES(n_in_progress)", c->hostid, c->jobid, k, c->userid, c->jobid,
				k);
	return rc < 0 ? rc : k;
}

int ct_res_send_many(struct ct_db *db, const int64_t *ids, int n, const struct ct_res_change *c)
{
	const struct ct_res_cols *f = &ct_res_states[CT_RES_UNSENT];
	const struct ct_res_cols *t = &ct_res_states[CT_RES_IN_PROGRESS];
	struct ct_db_arg a[8 + CT_DL_IN_MAX + 3];
	char sql[512];
	int m, rc, unset;

	rc = ct_dl_in_list(sql, sizeof(sql), "UPDATE result SET server_state=?, hostid=?, "
			   "userid=?, teamid=?, sent_time=?, report_deadline=?, sent_net=?, "
			   "sent_round=? WHERE id IN (", ") AND server_state=? AND outcome=? AND "
			   "validate_state=?", n, &m);
	if (rc < 0)
		return rc;
	a[0] = ct_db_arg_l(t->server_state);
	a[1] = ct_db_arg_l(c->hostid);
	a[2] = ct_db_arg_l(c->userid);
	a[3] = ct_db_arg_l(c->teamid);
	a[4] = ct_db_arg_l(c->now);
	a[5] = ct_db_arg_l(c->deadline);
	a[6] = ct_db_arg_s(c->sent_net ? c->sent_net : "");
	a[7] = ct_db_arg_l(c->sent_round);
	ct_dl_in_ids(a + 8, ids, n, m);
	a[8 + m] = ct_db_arg_l(f->server_state);
	a[9 + m] = ct_db_arg_l(f->outcome);
	a[10 + m] = ct_db_arg_l(f->validate_state);
	rc = counted_set(db, 1);
	if (rc < 0)
		return rc;
	rc = ct_db_execa(db, sql, a, (size_t)m + 11);
	/* unset whatever the UPDATE did: every later statement of this
	 * session is counted by the triggers again */
	unset = counted_set(db, 0);
	if (rc >= 0 && unset < 0)
		rc = unset;
	if (rc > 0)
		rc = sends_count(db, c, rc);
	return rc;
}

/* The columns a report writes per result, beside its state and time. */
struct report_cols {
	const char *col[3];
	struct ct_db_arg (*arg)(const struct ct_res_change *c, int k);
};

static struct ct_db_arg reported_arg(const struct ct_res_change *c, int k)
{
	if (k == 0)
		return ct_db_arg_d(c->elapsed_s);
	if (k == 1)	/* a final loss of NAN: none said, SQL NULL */
		return isnan(c->final_loss) ? CT_DB_NULL : ct_db_arg_d(c->final_loss);
	return ct_db_arg_l(c->conforming);
}

static struct ct_db_arg client_error_arg(const struct ct_res_change *c, int k)
{
	if (k == 0)
		return ct_db_arg_d(c->elapsed_s);
	if (k == 1)
		return ct_db_arg_l(c->exit_status);
	return ct_db_arg_s(c->error_message ? c->error_message : "");
}

static const struct report_cols reported_cols = {
	{ "elapsed_s", "final_loss", "conforming" }, reported_arg };
static const struct report_cols client_error_cols = {
	{ "elapsed_s", "exit_status", "error_message" }, client_error_arg };

/* ", col=CASE id WHEN ? THEN ? ... END" with m arms, appended at *len. */
static void case_arms(char *sql, size_t cap, size_t *len, const char *col, int m)
{
	if (*len < cap)
		*len += (size_t)snprintf(sql + *len, cap - *len, ", %s=CASE id", col);
	for (int i = 0; i < m && *len < cap; i++)
		*len += (size_t)snprintf(sql + *len, cap - *len, " WHEN ? THEN ?");
	if (*len < cap)
		*len += (size_t)snprintf(sql + *len, cap - *len, " END");
}

/* ", (v)" n times at *len: a VALUES list of n rows v. */
static void values_rows(char *sql, size_t cap, size_t *len, const char *v, int n)
{
	for (int i = 0; i < n && *len < cap; i++)
		*len += (size_t)snprintf(sql + *len, cap - *len, "%s(%s)", i ? ", " : "", v);
}

/* What the result triggers (migration 044) add for the reports ch[0..n),
 * each IN_PROGRESS -> OVER (a success: validation pending; error: a
 * client error) of a result of job ch[i].jobid in round ch[i].sent_round
 * owned by ch[i].hostid and ch[i].userid, its credit unchanged: the round
 * one in progress fewer (and one error more), the computer's and the
 * account's tasks one in progress fewer and one pending (or error) more.
 * Returns n or a db error. */
static int reports_count(struct ct_db *db, int error, const struct ct_res_change *ch, int n)
{
	struct ct_db_arg a[10 * CT_RES_REPORT_MAX];	/* 5 a task_stat row, 2 a report */
	char sql[1024];
	size_t len, k = 0;
	int rc;

	len = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO round_stat (roundid, jobid, "
			       "n_unsent, n_in_progress, n_valid, n_invalid, n_error, credit) "
			       "VALUES ");
	values_rows(sql, sizeof(sql), &len, "?, ?, 0, -1, 0, 0, ?, 0", n);
	if (len < sizeof(sql))
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, " ON DUPLICATE KEY UPDATE "
					"n_in_progress = n_in_progress + VALUES(n_in_progress), "
					"n_error = n_error + VALUES(n_error)");
	if (len >= sizeof(sql))
		return ct_error(CT_EINTERNAL, "statement too long");
	for (int i = 0; i < n; i++) {
		a[k++] = ct_db_arg_l(ch[i].sent_round);
		a[k++] = ct_db_arg_l(ch[i].jobid);
		a[k++] = ct_db_arg_l(error);
	}
	rc = ct_db_execa(db, sql, a, k);
	if (rc < 0)
		return rc;
	len = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO task_stat (kind, ownerid, jobid, "
			       "n_in_progress, n_pending, n_valid, n_invalid, n_error, credit) "
			       "VALUES ");
	values_rows(sql, sizeof(sql), &len, "?, ?, ?, -1, ?, 0, 0, ?, 0", 2 * n);
	if (len < sizeof(sql))
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, " ON DUPLICATE KEY UPDATE "
					"n_in_progress = n_in_progress + VALUES(n_in_progress), "
					"n_pending = n_pending + VALUES(n_pending), "
					"n_error = n_error + VALUES(n_error)");
	if (len >= sizeof(sql))
		return ct_error(CT_EINTERNAL, "statement too long");
	k = 0;
	for (int i = 0; i < 2 * n; i++) {	/* the computer's row, then the account's */
		a[k++] = ct_db_arg_l(i % 2);
		a[k++] = ct_db_arg_l(i % 2 ? ch[i / 2].userid : ch[i / 2].hostid);
		a[k++] = ct_db_arg_l(ch[i / 2].jobid);
		a[k++] = ct_db_arg_l(!error);
		a[k++] = ct_db_arg_l(error);
	}
	rc = ct_db_execa(db, sql, a, k);
	return rc < 0 ? rc : n;
}

int ct_res_report_many(struct ct_db *db, enum ct_res_state to, const int64_t *ids,
		       const struct ct_res_change *ch, int n)
{
	const struct ct_res_cols *f = &ct_res_states[CT_RES_IN_PROGRESS], *t = &ct_res_states[to];
	const struct report_cols *cols = to == CT_RES_REPORTED ? &reported_cols :
					 to == CT_RES_CLIENT_ERROR ? &client_error_cols : NULL;
	struct ct_db_arg a[3 + 7 * CT_RES_REPORT_MAX + 3];
	char sql[3072], in[512];
	size_t len, k = 0;
	int m, rc, unset;

	if (cols == NULL)
		return ct_error(CT_ESTATE, "no report move to state %d", (int)to);
	if (n < 1 || n > CT_RES_REPORT_MAX)
		return ct_error(CT_EINVAL, "%d reports in one statement (1 to %d)", n,
				CT_RES_REPORT_MAX);
	rc = ct_dl_in_list(in, sizeof(in), " WHERE id IN (", ") AND server_state=? AND "
			   "outcome=? AND validate_state=?", n, &m);
	if (rc < 0)
		return rc;
	len = (size_t)snprintf(sql, sizeof(sql), "UPDATE result SET server_state=?, outcome=?, "
			       "received_time=?");
	a[k++] = ct_db_arg_l(t->server_state);
	a[k++] = ct_db_arg_l(t->outcome);
	a[k++] = ct_db_arg_l(ch[0].now);
	for (int c = 0; c < 3; c++) {
		case_arms(sql, sizeof(sql), &len, cols->col[c], m);
		for (int i = 0; i < m; i++) {	/* padding repeats the last */
			a[k++] = ct_db_arg_l(ids[i < n ? i : n - 1]);
			a[k++] = cols->arg(&ch[i < n ? i : n - 1], c);
		}
	}
	if (len < sizeof(sql))
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s", in);
	if (len >= sizeof(sql))
		return ct_error(CT_EINTERNAL, "statement too long");
	ct_dl_in_ids(a + k, ids, n, m);
	k += (size_t)m;
	a[k++] = ct_db_arg_l(f->server_state);
	a[k++] = ct_db_arg_l(f->outcome);
	a[k++] = ct_db_arg_l(f->validate_state);
	rc = counted_set(db, 1);
	if (rc < 0)
		return rc;
	rc = ct_db_execa(db, sql, a, k);
	unset = counted_set(db, 0);	/* whatever the UPDATE did */
	if (rc >= 0 && unset < 0)
		rc = unset;
	if (rc == n)
		rc = reports_count(db, to == CT_RES_CLIENT_ERROR, ch, n);
	return rc;
}

int ct_res_create(struct ct_db *db, int64_t wuid, int64_t jobid, const char *name,
		  int64_t now)
{
	const struct ct_res_cols *u = &ct_res_states[CT_RES_UNSENT];
	int rc;

	rc = CT_DB_EXEC(db, "INSERT INTO result (create_time, name, workunitid, jobid, "
			"server_state, outcome, validate_state) VALUES (?,?,?,?,?,?,?)", now,
			name, wuid, jobid, u->server_state, u->outcome, u->validate_state);
	return rc < 0 ? rc : 0;
}

/* One INSERT of v[0..n) (n <= CT_RES_CREATE_CHUNK), uncounted. */
static int create_chunk(struct ct_db *db, const struct ct_res_new *v, int n, int64_t now)
{
	const struct ct_res_cols *u = &ct_res_states[CT_RES_UNSENT];
	struct ct_db_arg a[4 * CT_RES_CREATE_CHUNK];
	char sql[1024];
	size_t len;
	int rc;

	len = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO result (create_time, name, "
			       "workunitid, jobid, server_state, outcome, validate_state) VALUES ");
	for (int i = 0; i < n && len < sizeof(sql); i++) {
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s(?, ?, ?, ?, %d, %d, %d)",
					i ? ", " : "", u->server_state, u->outcome,
					u->validate_state);
		a[4 * i] = ct_db_arg_l(now);
		a[4 * i + 1] = ct_db_arg_s(v[i].name);
		a[4 * i + 2] = ct_db_arg_l(v[i].wuid);
		a[4 * i + 3] = ct_db_arg_l(v[i].jobid);
	}
	if (len >= sizeof(sql))
		return ct_error(CT_EINTERNAL, "new results: statement too long");
	rc = ct_db_execa(db, sql, a, (size_t)(4 * n));
	return rc < 0 ? rc : 0;
}

int ct_res_create_many(struct ct_db *db, const struct ct_res_new *v, int n, int64_t now,
		       int *done)
{
	int rc, unset;

	*done = 0;
	rc = counted_set(db, 1);
	for (int k = 0; rc >= 0 && k < n; k += CT_RES_CREATE_CHUNK) {
		int m = n - k < CT_RES_CREATE_CHUNK ? n - k : CT_RES_CREATE_CHUNK;

		rc = create_chunk(db, v + k, m, now);
		if (rc >= 0)
			*done += m;
	}
	unset = counted_set(db, 0);
	if (rc >= 0 && unset < 0)
		rc = unset;
	/* what the insert trigger (migration 049) leaves to us: each round
	 * one more unsent a row; v is in WU order, so a round's rows mostly
	 * come together */
	for (int i = 0, err = 0; err >= 0 && i < *done;) {
		int j = i;

		while (j < *done && v[j].roundid == v[i].roundid && v[j].jobid == v[i].jobid)
			j++;
		err = CT_DB_EXEC(db, "INSERT INTO round_stat (roundid, jobid, n_unsent, "
				 "n_in_progress, n_valid, n_invalid, n_error, credit) VALUES (?, ?, ?, "
				 "0, 0, 0, 0, 0) ON DUPLICATE KEY UPDATE n_unsent = n_unsent + "
				 "VALUES(n_unsent)", v[i].roundid, v[i].jobid, j - i);
		if (err < 0)
			rc = err;	/* the caller's transaction rolls back */
		i = j;
	}
	return rc;
}

int ct_res_drop_unsent_wu(struct ct_db *db, int64_t wuid, int64_t except)
{
	const struct ct_res_cols *f = &ct_res_states[CT_RES_UNSENT];
	const struct ct_res_cols *t = &ct_res_states[CT_RES_DIDNT_NEED];

	return CT_DB_EXEC(db, "UPDATE result SET server_state=?, outcome=? WHERE "
			  "workunitid=? AND id<>? AND server_state=?", t->server_state,
			  t->outcome, wuid, except, f->server_state);
}

int ct_res_drop_unsent_round(struct ct_db *db, int64_t roundid)
{
	const struct ct_res_cols *f = &ct_res_states[CT_RES_UNSENT];
	const struct ct_res_cols *t = &ct_res_states[CT_RES_DIDNT_NEED];

	return CT_DB_EXEC(db, "UPDATE result r JOIN workunit w ON w.id = r.workunitid SET "
			  "r.server_state=?, r.outcome=? WHERE w.roundid=? AND w.error_mask<>0 "
			  "AND r.server_state=?", t->server_state, t->outcome, roundid,
			  f->server_state);
}

int ct_res_drop_unsent_job(struct ct_db *db, int64_t jobid)
{
	const struct ct_res_cols *f = &ct_res_states[CT_RES_UNSENT];
	const struct ct_res_cols *t = &ct_res_states[CT_RES_DIDNT_NEED];

	return CT_DB_EXEC(db, "UPDATE result SET server_state=?, outcome=? WHERE jobid=? "
			  "AND server_state=?", t->server_state, t->outcome, jobid,
			  f->server_state);
}

/* ---- state names -------------------------------------------------------- */

const char *ct_rs_name(int s)
{
	switch (s) {
	case CT_RS_UNSENT: return "unsent";
	case CT_RS_IN_PROGRESS: return "in_progress";
	case CT_RS_OVER: return "over";
	default: return "?";
	}
}

const char *ct_ro_name(int o)
{
	static const char *const names[] = { "init", "success", "?", "client_error",
		"no_reply", "?", "validate_error", "didnt_need" };

	return o >= 0 && o < 8 ? names[o] : "?";
}

const char *ct_vs_name(int v)
{
	static const char *const names[] = { "init", "valid", "invalid", "?",
		"inconclusive", "too_late" };

	return v >= 0 && v < 6 ? names[v] : "?";
}
