/*
 * dl_purge.h - what purge (daemons/purge.c) reads and deletes: the work
 * units of finished jobs whose files are handled, each archived as lines
 * of text and then deleted with its results and their result_check rows.
 *
 * Archive lines, tab-separated, the first field the table:
 *
 *   wu     id name jobid round_idx shard canonical_resultid canonical_credit
 *          model_sha256 data_sha256 create_time
 *   result id name workunitid jobid userid hostid server_state outcome
 *          validate_state granted_credit sent_time received_time
 *          upload_sha256 upload_size elapsed_s
 *
 * each column as the database's text, one line per row, the WU's line
 * first, its results in id order.
 */
#ifndef CT_DL_PURGE_H
#define CT_DL_PURGE_H

#include <stddef.h>
#include <stdint.h>

struct ct_buf;
struct ct_db;

/* Append the archive lines of WU wuid and its results to out. Returns 0,
 * a ct_buf error (out's cap) or a db error. */
int ct_purge_archive_wu(struct ct_db *db, int64_t wuid, struct ct_buf *out);

/* Delete WU wuid (when its files are handled) with its results and their
 * checks, in the caller's transaction. Returns 0 or a db error. */
int ct_purge_delete_wu(struct ct_db *db, int64_t wuid);

/* The ids of the first `cap` WUs, by id, of jobs done, canceled or in
 * error whose last change is `age` seconds before now or older and whose
 * files are handled, into ids[0..*n). Returns 0 or a db error. */
int ct_purge_due_ids(struct ct_db *db, int64_t age, int64_t now, int64_t *ids, size_t cap,
		     size_t *n);

#endif
