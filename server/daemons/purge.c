/*
 * purge.c - the role that keeps the database the size of the work in
 * flight (role "purge"; BOINC's db_purge plays this part): work units of
 * finished jobs (done, canceled, error), once their files are handled
 * (file_delete_state DONE) and daemons.purge_age seconds (default 7 days)
 * after the job's last change, are written to an archive file and deleted
 * with their results and result_check rows.
 *
 * What stays: jobs, rounds and their per-round counters (round_stat: no
 * trigger runs on DELETE, so a round's counts are its history), credit
 * events, users, hosts, teams, files. The job page reads rounds and
 * counters, never results, so it shows a purged job as before.
 *
 * The archive is <project>/archive/purge-YYYY-MM.tsv, appended to and
 * fsync'd before the rows are deleted: one line per row, tab-separated,
 * the first field the table ("wu" or "result"; fields below). A crash
 * between the two archives those rows again on the next pass (the ids
 * tell duplicates apart); never loses them.
 *
 *   wu     id name jobid round_idx shard canonical_resultid canonical_credit
 *          model_sha256 data_sha256 create_time
 *   result id name workunitid jobid userid hostid server_state outcome
 *          validate_state granted_credit sent_time received_time
 *          upload_sha256 upload_size elapsed_s
 */
#include "daemons.h"
#include "daemon_pass.h"
#include "data/db.h"
#include "data/dl_purge.h"
#include "data/server.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PURGE_BATCH 100
#define ARCHIVE_MAX ((size_t)64 << 20)	/* one batch's lines */

/* Append the batch's lines to this month's archive file and fsync it. */
static int archive_write(struct ct_server *srv, const struct ct_buf *lines)
{
	char dir[4096], path[4200], name[64];
	time_t now = (time_t)ct_server_now(srv);	/* the server clock's month */
	struct tm tm;
	int fd, rc;

	gmtime_r(&now, &tm);
	strftime(name, sizeof(name), "purge-%Y-%m.tsv", &tm);
	rc = ct_path_join(dir, sizeof(dir), srv->dir, "archive");
	if (rc == 0)
		rc = ct_mkdir_p(dir, 0700);
	if (rc == 0)
		rc = ct_path_join(path, sizeof(path), dir, name);
	if (rc < 0)
		return rc;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return ct_error_errno("purge: %s", path);
	if (ct_fd_write_all(fd, lines->data, lines->len) < 0)
		rc = ct_error_errno("purge: %s", path);
	if (rc == 0 && fsync(fd) < 0)
		rc = ct_error_errno("purge: fsync %s", path);
	close(fd);
	return rc;
}

static int delete_txn(struct ct_db *db, void *arg)
{
	const int64_t *ids = arg;
	int rc = 0;

	for (int64_t i = 1; rc == 0 && i <= ids[0]; i++)
		rc = ct_purge_delete_wu(db, ids[i]);
	return rc;
}

/* One pass's archive lines and the WUs they hold (ids[0]: how many, as
 * delete_txn reads it). */
struct purge_batch {
	struct ct_buf lines;
	long age;
	int64_t ids[PURGE_BATCH + 1];
};

/* WUs of jobs finished `age` seconds ago whose files are gone. */
static int claim_finished(struct ct_server *srv, struct ct_db *db, int64_t *ids, size_t cap,
			  size_t *n, void *arg)
{
	const struct purge_batch *b = arg;

	(void)srv;
	return ct_purge_due_ids(db, b->age, ct_db_now(db), ids, cap, n);
}

/* Archive one WU's rows; a WU that fails leaves no lines behind. */
static int archive_item(struct ct_server *srv, struct ct_db *db, int64_t wuid, void *arg)
{
	struct purge_batch *b = arg;
	size_t mark = b->lines.len;
	int rc;

	(void)srv;
	rc = ct_purge_archive_wu(db, wuid, &b->lines);
	if (rc < 0) {
		b->lines.len = mark;	/* drop its partial lines */
		if (b->lines.data != NULL)
			b->lines.data[mark] = '\0';
		return rc;
	}
	b->ids[++b->ids[0]] = wuid;
	return 1;
}

static struct ct_pass_backoff purge_backoff = CT_PASS_BACKOFF_INIT;

int ct_purge_run_once(struct ct_server *srv, struct ct_db *db)
{
	static const struct ct_pass pass = {
		.name = "purge: WU", .batch = PURGE_BATCH, .claim = claim_finished,
		.handle = archive_item, .backoff = &purge_backoff,
	};
	struct purge_batch *b = calloc(1, sizeof(*b));
	int rc;

	if (b == NULL)
		return ct_error(CT_ENOMEM, "purge: batch");
	ct_buf_init(&b->lines, ARCHIVE_MAX);
	b->age = 7 * 86400;
	rc = ct_conf_get_int(srv->conf, "daemons.purge_age", 7 * 86400, 0, 100L * 365 * 86400,
			     &b->age);
	if (rc == 0)
		rc = ct_pass_run(srv, db, &pass, b);
	if (rc > 0)
		rc = archive_write(srv, &b->lines);
	if (rc == 0 && b->ids[0] > 0)
		rc = ct_db_txn(db, delete_txn, b->ids);
	if (rc == 0 && b->ids[0] > 0)
		ct_log_info("purge: %lld work unit(s) of finished jobs archived and deleted",
			    (long long)b->ids[0]);
	if (rc == 0)
		rc = (int)b->ids[0];
	ct_buf_free(&b->lines);
	free(b);
	return rc;
}
