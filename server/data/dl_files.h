/*
 * dl_files.h - what the file deleter deletes, and the one writer of the
 * file_delete_state of results and of `file` rows (a WU's own is
 * wu_state.h's): a result's upload becomes deletable (INIT -> READY) when
 * the transitioner finds its WU decided with nothing left to change, and
 * the deleter moves it on (READY -> DONE or ERROR) after the unlink; a
 * shard's `file` row goes INIT -> DONE or ERROR the same way. Each move is
 * one UPDATE guarded by the old state, so two deleters race harmlessly.
 */
#ifndef CT_DL_FILES_H
#define CT_DL_FILES_H

#include <stddef.h>
#include <stdint.h>

struct ct_db;

/* A row whose file may go: the row's id and its file's name (a result's
 * name, or a stored file's hash). */
struct ct_fd_row {
	int64_t id;
	char name[256];
};

/* Up to max result uploads marked READY whose last activity (sent,
 * received, uploaded) is grace seconds before now or older; keep_canonical:
 * not the canonical result of its WU. Into a malloc'd *rows (free() it;
 * NULL when none) of *n. Returns 0, CT_ENOMEM or a db error. */
int ct_fd_uploads_due(struct ct_db *db, int64_t grace, int64_t now, int keep_canonical,
		      int max, struct ct_fd_row **rows, size_t *n);

/* Up to max token shards (`file` rows of kind 'shard', not kept, INIT) of
 * jobs that are not running and were last updated grace seconds before now
 * or earlier, whose bytes no running job's WU, training, evaluation or
 * model file shares; as ct_fd_uploads_due. */
int ct_fd_shards_due(struct ct_db *db, int64_t grace, int64_t now, int max,
		     struct ct_fd_row **rows, size_t *n);

/* Move result id's upload from READY, or `file` row id from INIT, to state
 * (CT_FD_DONE or CT_FD_ERROR). Returns 1 when it moved, 0 when it was not
 * in that state any more, or a db error. */
int ct_fd_upload_move(struct ct_db *db, int64_t id, int state);
int ct_fd_shard_move(struct ct_db *db, int64_t id, int state);

/* Mark every upload of WU wuid that is still INIT deletable (READY).
 * Returns the rows moved, or a db error. */
int ct_fd_ready_wu(struct ct_db *db, int64_t wuid);

#endif
