/*
 * dl_result.c - the `result` table's reads (see dl_result.h): each
 * statement with its column table beside it. The results of one WU are
 * read in dl_workunit.c, beside the WU's lock that reads them too.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ct_err.h"
#include "db.h"
#include "db_args.h"
#include "dl.h"
#include "dl_result.h"
#include "result_state.h"

#define R struct ct_result_row

static const struct ct_dl_col upload_cols[] = {
	CT_DL_COL(R, hostid), CT_DL_COL(R, server_state), CT_DL_COL(R, outcome),
	CT_DL_COL(R, validate_state), CT_DL_COL(R, upload_sha256), CT_DL_COL(R, upload_size),
};

int ct_result_get_upload(struct ct_db *db, int64_t id, struct ct_result_row *r)
{
	int rc;

	memset(r, 0, sizeof(*r));
	rc = CT_DL_ONE(db, r, upload_cols, "SELECT hostid, server_state, outcome, "
		       "validate_state, upload_sha256, upload_size FROM result WHERE id=?", id);
	if (rc == 0)
		r->id = id;
	return rc;
}

static const struct ct_dl_col name_cols[] = {
	CT_DL_COL(R, id), CT_DL_COL(R, workunitid),
};

int ct_result_by_name(struct ct_db *db, const char *name, struct ct_result_row *r)
{
	memset(r, 0, sizeof(*r));
	return CT_DL_ONE(db, r, name_cols, "SELECT id, workunitid FROM result WHERE name=?",
			 name);
}

/* ct_result_get_uploads' rows: upload_cols with the id first. */
static const struct ct_dl_col uploads_cols[] = {
	CT_DL_COL(R, id), CT_DL_COL(R, hostid), CT_DL_COL(R, server_state),
	CT_DL_COL(R, outcome), CT_DL_COL(R, validate_state), CT_DL_COL(R, upload_sha256),
	CT_DL_COL(R, upload_size), CT_DL_COL(R, userid), CT_DL_COL(R, jobid),
	CT_DL_COL(R, sent_round),
};

int ct_result_get_uploads(struct ct_db *db, const int64_t *ids, int n,
			  struct ct_result_row *out)
{
	memset(out, 0, (size_t)(n > 0 ? n : 0) * sizeof(*out));
	return ct_dl_by_ids(db, "SELECT id, hostid, server_state, outcome, validate_state, "
			    "upload_sha256, upload_size, userid, jobid, sent_round FROM result "
			    "WHERE id IN (", ")", ids, n, out,
			    sizeof(*out), uploads_cols, CT_DL_NCOLS(uploads_cols),
			    offsetof(struct ct_result_row, id), -1);
}

/* 1 if name `row` as the database compares it (utf8mb4_general_ci: case
 * and trailing spaces aside) is `want`. */
static int same_name(const char *row, const char *want)
{
	size_t a = strlen(row), b = strlen(want);

	while (a > 0 && row[a - 1] == ' ')
		a--;
	while (b > 0 && want[b - 1] == ' ')
		b--;
	return a == b && strncasecmp(row, want, a) == 0;
}

static const struct ct_dl_col named_cols[] = {
	CT_DL_COL(R, id), CT_DL_COL(R, workunitid), CT_DL_COL(R, name),
};

/* One statement of ct_result_ids_by_name: n <= CT_DL_IN_MAX. */
static int names_chunk(struct ct_db *db, const char *const *names, int n,
		       struct ct_result_row *out)
{
	struct ct_db_arg a[CT_DL_IN_MAX];
	struct ct_db_res *res = NULL;
	struct ct_result_row r;
	char sql[512];
	int m, rc;

	rc = ct_dl_in_list(sql, sizeof(sql), "SELECT id, workunitid, name FROM result WHERE "
			   "name IN (", ")", n, &m);
	if (rc < 0)
		return rc;
	for (int i = 0; i < m; i++)
		a[i] = ct_db_arg_s(names[i < n ? i : n - 1]);
	rc = ct_db_querya(db, &res, sql, a, (size_t)m);
	if (rc < 0)
		return rc;
	while (ct_db_next(res) > 0) {
		memset(&r, 0, sizeof(r));
		ct_dl_row(res, &r, named_cols, CT_DL_NCOLS(named_cols));
		for (int i = 0; i < n; i++)
			if (out[i].id == 0 && same_name(r.name, names[i]))
				out[i] = r;
	}
	ct_db_res_free(res);
	for (int i = 0; rc == 0 && i < n; i++) {
		if (out[i].id != 0)
			continue;
		rc = ct_result_by_name(db, names[i], &out[i]);
		rc = rc == CT_ENOTFOUND ? 0 : rc;
	}
	return rc;
}

int ct_result_ids_by_name(struct ct_db *db, const char *const *names, int n,
			  struct ct_result_row *out)
{
	int rc = 0;

	memset(out, 0, (size_t)(n > 0 ? n : 0) * sizeof(*out));
	for (int k = 0; rc == 0 && k < n; k += CT_DL_IN_MAX)
		rc = names_chunk(db, names + k, n - k < CT_DL_IN_MAX ? n - k : CT_DL_IN_MAX, out + k);
	return rc;
}

#undef R

#define T struct ct_upload_target
static const struct ct_dl_col upload_target_cols[] = {
	CT_DL_COL(T, id), CT_DL_COL(T, hostid), CT_DL_COL(T, server_state),
	CT_DL_COL(T, round_status), CT_DL_COL(T, round_idx), CT_DL_COL(T, jobid),
};
#undef T

int ct_result_upload_target(struct ct_db *db, const char *name, struct ct_upload_target *t)
{
	memset(t, 0, sizeof(*t));
	return CT_DL_ONE(db, t, upload_target_cols, "SELECT r.id, r.hostid, r.server_state, "
			 "COALESCE(rd.status, 0), w.round_idx, w.jobid FROM result r JOIN workunit "
			 "w ON w.id = r.workunitid LEFT JOIN `round` rd ON rd.id = w.roundid WHERE "
			 "r.name=?", name);
}

int ct_result_set_upload(struct ct_db *db, int64_t id, int64_t hostid, const char *sha256,
			 int64_t size, int64_t now)
{
	int rc = CT_DB_EXEC(db, "UPDATE result SET upload_sha256=?, upload_size=?, upload_time=? "
			    "WHERE id=? AND hostid=? AND server_state=?", sha256, size, now, id,
			    hostid, CT_RS_IN_PROGRESS);

	return rc < 0 ? rc : rc > 0;
}

int ct_result_count_sent_others(struct ct_db *db, int64_t wuid, int64_t except, int64_t *n)
{
	return CT_DB_QUERY_INT(db, n, "SELECT COUNT(*) FROM result WHERE workunitid=? AND "
			       "id<>? AND server_state<>?", wuid, except, CT_RS_UNSENT);
}

#define C struct ct_state_count
static const struct ct_dl_col state_count_cols[] = {
	CT_DL_COL(C, server_state), CT_DL_COL(C, outcome), CT_DL_COL(C, validate_state),
	CT_DL_COL(C, n),
};
#undef C

int ct_result_state_counts(struct ct_db *db, int64_t jobid, struct ct_state_count **rows,
			   size_t *n)
{
	return CT_DL_LIST(db, rows, n, state_count_cols, "result states", "SELECT server_state, "
			  "outcome, validate_state, COUNT(*) FROM result WHERE jobid=? GROUP BY "
			  "server_state, outcome, validate_state", jobid);
}

int ct_result_set_granted_credit(struct ct_db *db, int64_t id, double credit)
{
	int rc = CT_DB_EXEC(db, "UPDATE result SET granted_credit=? WHERE id=?", credit, id);

	return rc < 0 ? rc : 0;
}

static const struct ct_dl_col host_cols[] = {
	CT_DL_COL(struct ct_result_host_row, id), CT_DL_COL(struct ct_result_host_row, hostid),
};

int ct_result_list_valid(struct ct_db *db, int64_t wuid, struct ct_result_host_row **rows,
			 size_t *n)
{
	return CT_DL_LIST(db, rows, n, host_cols, "valid results", "SELECT id, hostid FROM "
			  "result WHERE workunitid=? AND validate_state=? LIMIT 64", wuid,
			  CT_VS_VALID);
}

#define V struct ct_result_vote_row
static const struct ct_dl_col vote_cols[] = {
	CT_DL_COL(V, id), CT_DL_COL(V, hostid), CT_DL_COL(V, name), CT_DL_COL(V, validate_state),
	CT_DL_COL(V, conforming), CT_DL_COL(V, probe_loss),
};
#undef V

int ct_result_list_votes(struct ct_db *db, int64_t wuid, int64_t canonical,
			 struct ct_result_vote_row *rows, int max, size_t *n)
{
	return CT_DL_ROWS(db, rows, (size_t)max, n, vote_cols, "SELECT id, hostid, name, "
			  "validate_state, conforming, COALESCE(probe_loss, 0) FROM result WHERE "
			  "workunitid=? AND server_state=? AND outcome=? AND (validate_state IN "
			  "(?, ?) OR id=?) ORDER BY id LIMIT ?", wuid, CT_RS_OVER, CT_RO_SUCCESS,
			  CT_VS_INIT, CT_VS_INCONCLUSIVE, canonical, max);
}

int ct_result_count_unvalidated(struct ct_db *db, int64_t wuid, int64_t *n)
{
	return CT_DB_QUERY_INT(db, n, "SELECT COUNT(*) FROM result WHERE workunitid=? AND "
			       "server_state=? AND outcome=? AND validate_state=?", wuid,
			       CT_RS_OVER, CT_RO_SUCCESS, CT_VS_INIT);
}

static const struct ct_dl_col refusal_cols[] = {
	CT_DL_COL(struct ct_result_refusal, nhosts), CT_DL_COL(struct ct_result_refusal, error),
};

int ct_result_refused_alike(struct ct_db *db, int64_t wuid, struct ct_result_refusal *g)
{
	return CT_DL_ONE(db, g, refusal_cols, "SELECT COUNT(DISTINCT hostid), "
			 "MIN(error_message) FROM result WHERE workunitid=? AND outcome=? AND "
			 "upload_sha256<>'' GROUP BY upload_sha256, error_message HAVING "
			 "COUNT(DISTINCT hostid) >= 2 LIMIT 1", wuid, CT_RO_VALIDATE_ERROR);
}
