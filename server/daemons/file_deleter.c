/*
 * file_deleter.c - the daemon that frees disk space (role "file_deleter").
 *
 * What goes, each a grace period after it was last needed:
 *   - result uploads the transitioner marked deletable (file_delete_state
 *     READY: their WU is decided and assimilated, no replica is out), grace
 *     (daemons.upload_grace, default 0) counted from the result's last
 *     activity (sent, received, uploaded); canonical ones stay with
 *     daemons.keep_canonical;
 *   - token shards of jobs that ended (done, canceled, error), when no WU
 *     or job still running refers to the same bytes (the store is shared
 *     by content), grace (daemons.file_grace) counted from the job's last
 *     update.
 * What stays: every model in the store (each round's base and average,
 * the final model: `keep` = 1, and a job's base model), the training and
 * eval token files, anything a running job uses.
 *
 * Each deletion unlinks first and then moves the row from its state with
 * a conditional UPDATE: a crash in between repeats an unlink that finds
 * nothing (fine), two deleters race harmlessly.
 */
#include "daemons.h"
#include "data/db.h"
#include "data/dl_files.h"
#include "data/server.h"
#include "data/wu_state.h"
#include "ct_err.h"
#include "ct_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DELETE_BATCH 200

/* unlink, counting a missing file as deleted. 0, or CT_E* (logged). */
static int remove_path(const char *path)
{
	if (unlink(path) == 0 || errno == ENOENT)
		return 0;
	return ct_error_errno("file deleter: %s", path);
}

/* What differs between deleting uploads and deleting shards once the rows
 * are chosen: where a row's file lives, and how the row moves on. */
struct fd_kind {
	int (*path)(const struct ct_server *srv, const char *name, char *out,
		    size_t cap);
	int (*move)(struct ct_db *db, int64_t id, int state);	/* dl_files.h */
};

static const struct fd_kind upload_kind = { ct_server_upload_path, ct_fd_upload_move };
static const struct fd_kind shard_kind = { ct_server_download_path, ct_fd_shard_move };

/* Unlink the file of each of rows[0..n) and move the row to DONE (ERROR
 * if the unlink failed). Frees rows. Returns the rows moved, or a negative
 * CT_E* code from the database. */
static int delete_rows(struct ct_server *srv, struct ct_db *db, struct ct_fd_row *rows,
		       size_t n, const struct fd_kind *k)
{
	char path[4096];
	int rc = 0, done = 0;

	for (size_t i = 0; rc >= 0 && i < n && !ct_server_stopping(srv); i++) {
		int state = CT_FD_DONE;

		rc = k->path(srv, rows[i].name, path, sizeof(path));
		if (rc == 0)
			rc = remove_path(path);
		if (rc < 0) {
			ct_log_warn("%s", ct_errmsg(rc));
			state = CT_FD_ERROR;
		}
		rc = k->move(db, rows[i].id, state);
		if (rc >= 0)
			done += rc;
	}
	free(rows);
	return rc < 0 ? rc : done;
}

/* Uploads go as soon as their round is averaged (the transitioner marks
 * them READY then), daemons.upload_grace seconds after the result's last
 * activity (default 0: a 124M result is ~0.3 GB, and the averaged model
 * of the round is kept); daemons.keep_canonical = yes keeps each WU's
 * canonical upload (its row stays READY). */
static int delete_uploads(struct ct_server *srv, struct ct_db *db, int64_t now)
{
	struct ct_fd_row *rows = NULL;
	size_t n = 0;
	long grace = 0;
	int keep = 0, rc;

	rc = ct_conf_get_int(srv->conf, "daemons.upload_grace", 0, 0, 365 * 86400, &grace);
	if (rc == 0)
		rc = ct_conf_get_bool(srv->conf, "daemons.keep_canonical", 0, &keep);
	if (rc < 0)
		return rc;
	rc = ct_fd_uploads_due(db, grace, now, keep, DELETE_BATCH, &rows, &n);
	if (rc < 0)
		return rc;
	return delete_rows(srv, db, rows, n, &upload_kind);
}

static int delete_shards(struct ct_server *srv, struct ct_db *db, int64_t now)
{
	struct ct_fd_row *rows = NULL;
	size_t n = 0;
	int rc = ct_fd_shards_due(db, srv->file_grace, now, DELETE_BATCH, &rows, &n);

	if (rc < 0)
		return rc;
	return delete_rows(srv, db, rows, n, &shard_kind);
}

int ct_file_deleter_run_once(struct ct_server *srv, struct ct_db *db)
{
	int64_t now = ct_db_now(db);
	int n1, n2, rc;

	n1 = delete_uploads(srv, db, now);
	if (n1 < 0)
		return n1;
	n2 = delete_shards(srv, db, now);
	if (n2 < 0)
		return n2;
	/* WUs whose uploads are handled: their own inputs are per-job shards
	 * (above) and kept models, so the WU row only records it */
	rc = ct_wu_files_done(db);
	if (rc < 0)
		return rc;
	if (n1 + n2 > 0)
		ct_log_info("file deleter: %d upload(s), %d shard(s) removed", n1, n2);
	return n1 + n2;
}
