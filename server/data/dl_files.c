/*
 * dl_files.c - the file deleter's statements (see dl_files.h).
 */
#include "dl_files.h"

#include "db.h"
#include "dl.h"
#include "job_state.h"
#include "wu_state.h"

static const struct ct_dl_col fd_cols[] = {
	CT_DL_COL(struct ct_fd_row, id), CT_DL_COL(struct ct_fd_row, name),
};

int ct_fd_uploads_due(struct ct_db *db, int64_t grace, int64_t now, int keep_canonical,
		      int max, struct ct_fd_row **rows, size_t *n)
{
	return CT_DL_LIST(db, rows, n, fd_cols, "uploads", "SELECT id, name FROM result "
			  "WHERE file_delete_state=? AND GREATEST(sent_time, received_time, "
			  "upload_time) + ? <= ? AND (?=0 OR NOT EXISTS (SELECT 1 FROM workunit w "
			  "WHERE w.id = result.workunitid AND w.canonical_resultid = result.id)) "
			  "LIMIT ?", CT_FD_READY, grace, now, keep_canonical, max);
}

int ct_fd_shards_due(struct ct_db *db, int64_t grace, int64_t now, int max,
		     struct ct_fd_row **rows, size_t *n)
{
	return CT_DL_LIST(db, rows, n, fd_cols, "shards",
			  "SELECT f.id, f.sha256 FROM `file` f JOIN job j ON j.id = f.jobid "
			  "WHERE f.kind='shard' AND f.keep=0 AND f.file_delete_state=? "
			  "AND j.status<>? AND GREATEST(j.finish_time, j.update_time) + ? <= ? "
			  "AND NOT EXISTS (SELECT 1 FROM workunit w JOIN job j2 ON j2.id = w.jobid "
			  "  WHERE j2.status=? AND w.data_sha256 = f.sha256) "
			  "AND NOT EXISTS (SELECT 1 FROM job j3 WHERE j3.status=? AND "
			  "  (j3.train_sha256 = f.sha256 OR j3.eval_sha256 = f.sha256 OR "
			  "   j3.model_sha256 = f.sha256)) LIMIT ?",
			  CT_FD_INIT, CT_JOB_RUNNING, grace, now, CT_JOB_RUNNING, CT_JOB_RUNNING,
			  max);
}

int ct_fd_upload_move(struct ct_db *db, int64_t id, int state)
{
	return CT_DB_EXEC(db, "UPDATE result SET file_delete_state=? WHERE id=? AND "
			  "file_delete_state=?", state, id, CT_FD_READY);
}

int ct_fd_shard_move(struct ct_db *db, int64_t id, int state)
{
	return CT_DB_EXEC(db, "UPDATE `file` SET file_delete_state=? WHERE id=? AND "
			  "file_delete_state=?", state, id, CT_FD_INIT);
}

int ct_fd_ready_wu(struct ct_db *db, int64_t wuid)
{
	return CT_DB_EXEC(db, "UPDATE result SET file_delete_state=? WHERE workunitid=? "
			  "AND file_delete_state=?", CT_FD_READY, wuid, CT_FD_INIT);
}
