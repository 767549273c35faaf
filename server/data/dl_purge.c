/*
 * dl_purge.c - purge's statements (see dl_purge.h).
 */
#include "dl_purge.h"

#include <stddef.h>
#include <stdlib.h>

#include "ct_buf.h"
#include "db.h"
#include "dl.h"
#include "job_state.h"
#include "wu_state.h"

/* An archived row: each column as the database's text, as it is written
 * to the archive. */
#define ARCH_MAXCOLS 15
#define ARCH_FIELD 256
struct arch_row {
	char f[ARCH_MAXCOLS][ARCH_FIELD];
};

#define ARCH_COL(i) { .type = CT_DL_STR, .off = offsetof(struct arch_row, f[i]), \
		      .cap = ARCH_FIELD }
static const struct ct_dl_col arch_cols[ARCH_MAXCOLS] = {
	ARCH_COL(0), ARCH_COL(1), ARCH_COL(2), ARCH_COL(3), ARCH_COL(4), ARCH_COL(5),
	ARCH_COL(6), ARCH_COL(7), ARCH_COL(8), ARCH_COL(9), ARCH_COL(10), ARCH_COL(11),
	ARCH_COL(12), ARCH_COL(13), ARCH_COL(14),
};

/* One archive line per row of `sql` (its ncols columns; one parameter, the
 * WU's id): `kind` and the columns, tab-separated. */
static int archive_rows(struct ct_db *db, const char *kind, size_t ncols, const char *sql,
			int64_t wuid, struct ct_buf *out)
{
	struct arch_row *rows = NULL;
	size_t n = 0;
	int rc;

	rc = ct_dl_query_list(db, sizeof(*rows), &rows, &n, arch_cols, ncols, kind, sql,
			      CT_DB_ARGS(wuid));
	for (size_t i = 0; rc == 0 && i < n; i++) {
		rc = ct_buf_appendf(out, "%s", kind);
		for (size_t c = 0; rc == 0 && c < ncols; c++)
			rc = ct_buf_appendf(out, "\t%s", rows[i].f[c]);
		if (rc == 0)
			rc = ct_buf_appendf(out, "\n");
	}
	free(rows);
	return rc;
}

int ct_purge_archive_wu(struct ct_db *db, int64_t wuid, struct ct_buf *out)
{
	int rc;

	rc = archive_rows(db, "wu", 10, "SELECT id, name, jobid, round_idx, shard, "
			  "canonical_resultid, canonical_credit, model_sha256, data_sha256, "
			  "create_time FROM workunit WHERE id=?", wuid, out);
	if (rc == 0)
		rc = archive_rows(db, "result", 15, "SELECT id, name, workunitid, jobid, userid, "
				  "hostid, server_state, outcome, validate_state, granted_credit, "
				  "sent_time, received_time, upload_sha256, upload_size, elapsed_s "
				  "FROM result WHERE workunitid=? ORDER BY id", wuid, out);
	return rc;
}

int ct_purge_delete_wu(struct ct_db *db, int64_t wuid)
{
	int rc = CT_DB_EXEC(db, "DELETE c FROM result_check c JOIN result r ON r.id = "
			    "c.resultid WHERE r.workunitid=?", wuid);

	if (rc >= 0)
		rc = CT_DB_EXEC(db, "DELETE FROM result WHERE workunitid=?", wuid);
	if (rc >= 0)
		rc = CT_DB_EXEC(db, "DELETE FROM workunit WHERE id=? AND file_delete_state=?",
				wuid, CT_FD_DONE);
	return rc < 0 ? rc : 0;
}

int ct_purge_due_ids(struct ct_db *db, int64_t age, int64_t now, int64_t *ids, size_t cap,
		     size_t *n)
{
	return CT_DL_IDS(db, ids, cap, n, "SELECT w.id FROM workunit w JOIN job j ON j.id = "
			 "w.jobid WHERE j.status IN (?, ?, ?) AND w.file_delete_state=? AND "
			 "GREATEST(j.finish_time, j.update_time) + ? <= ? ORDER BY w.id LIMIT ?",
			 CT_JOB_DONE, CT_JOB_CANCELED, CT_JOB_ERROR, CT_FD_DONE, age, now,
			 (int64_t)cap);
}
