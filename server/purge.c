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
#include "db.h"
#include "roles.h"
#include "server.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PURGE_BATCH 100
#define ARCHIVE_MAX ((size_t)64 << 20)	/* one batch's lines */

static int archive_wu(struct ct_db *db, int64_t wuid, struct ct_buf *out)
{
	struct ct_db_res *res = NULL;
	int rc;

	rc = ct_db_query(db, &res, "SELECT id, name, jobid, round_idx, shard, "
			 "canonical_resultid, canonical_credit, model_sha256, data_sha256, "
			 "create_time FROM workunit WHERE id=?", "l", wuid);
	if (rc < 0)
		return rc;
	while (rc == 0 && ct_db_next(res) > 0)
		rc = ct_buf_appendf(out, "wu\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
				    ct_db_str(res, 0), ct_db_str(res, 1), ct_db_str(res, 2),
				    ct_db_str(res, 3), ct_db_str(res, 4), ct_db_str(res, 5),
				    ct_db_str(res, 6), ct_db_str(res, 7), ct_db_str(res, 8),
				    ct_db_str(res, 9));
	ct_db_res_free(res);
	if (rc < 0)
		return rc;
	rc = ct_db_query(db, &res, "SELECT id, name, workunitid, jobid, userid, hostid, "
			 "server_state, outcome, validate_state, granted_credit, sent_time, "
			 "received_time, upload_sha256, upload_size, elapsed_s FROM result "
			 "WHERE workunitid=? ORDER BY id", "l", wuid);
	if (rc < 0)
		return rc;
	while (rc == 0 && ct_db_next(res) > 0) {
		rc = ct_buf_appendf(out, "result");
		for (int c = 0; rc == 0 && c < 15; c++)
			rc = ct_buf_appendf(out, "\t%s", ct_db_str(res, c));
		if (rc == 0)
			rc = ct_buf_appendf(out, "\n");
	}
	ct_db_res_free(res);
	return rc;
}

/* Append the batch's lines to this month's archive file and fsync it. */
static int archive_write(struct ct_server *srv, const struct ct_buf *lines)
{
	char dir[4096], path[4200], name[64];
	time_t now = (time_t)ct_server_now(srv);	/* the server clock's month */
	struct tm tm;
	size_t off = 0;
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
	while (off < lines->len) {
		ssize_t w = write(fd, lines->data + off, lines->len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = ct_error_errno("purge: %s", path);
			break;
		}
		off += (size_t)w;
	}
	if (rc == 0 && fsync(fd) < 0)
		rc = ct_error_errno("purge: fsync %s", path);
	close(fd);
	return rc;
}

static int delete_txn(struct ct_db *db, void *arg)
{
	const int64_t *ids = arg;
	int rc = 0;

	for (int64_t i = 1; rc >= 0 && i <= ids[0]; i++) {
		rc = ct_db_exec(db, "DELETE c FROM result_check c JOIN result r ON "
				"r.id = c.resultid WHERE r.workunitid=?", "l", ids[i]);
		if (rc >= 0)
			rc = ct_db_exec(db, "DELETE FROM result WHERE workunitid=?", "l", ids[i]);
		if (rc >= 0)
			rc = ct_db_exec(db, "DELETE FROM workunit WHERE id=? AND "
					"file_delete_state=?", "li", ids[i], CT_FD_DONE);
	}
	return rc < 0 ? rc : 0;
}

int ct_purge_run_once(struct ct_server *srv, struct ct_db *db)
{
	struct ct_buf lines = CT_BUF_INIT(ARCHIVE_MAX);
	struct ct_db_res *res = NULL;
	int64_t ids[PURGE_BATCH + 1];
	long age = 7 * 86400;
	int rc;

	ids[0] = 0;
	rc = ct_conf_get_int(srv->conf, "daemons.purge_age", 7 * 86400, 0, 100L * 365 * 86400,
			     &age);
	if (rc < 0)
		return rc;
	rc = ct_db_query(db, &res, "SELECT w.id FROM workunit w JOIN job j ON j.id = w.jobid "
			 "WHERE j.status IN (?, ?, ?) AND w.file_delete_state=? AND "
			 "GREATEST(j.finish_time, j.update_time) + ? <= ? ORDER BY w.id LIMIT ?",
			 "iiiilli", CT_JOB_DONE, CT_JOB_CANCELED, CT_JOB_ERROR, CT_FD_DONE,
			 (int64_t)age, ct_db_now(db), PURGE_BATCH);
	if (rc < 0)
		return rc;
	while (ids[0] < PURGE_BATCH && ct_db_next(res) > 0)
		ids[++ids[0]] = ct_db_int(res, 0);
	ct_db_res_free(res);
	for (int64_t i = 1; rc == 0 && i <= ids[0]; i++)
		rc = archive_wu(db, ids[i], &lines);
	if (rc == 0 && ids[0] > 0)
		rc = archive_write(srv, &lines);
	if (rc == 0 && ids[0] > 0)
		rc = ct_db_txn(db, delete_txn, ids);
	ct_buf_free(&lines);
	if (rc < 0)
		return rc;
	if (ids[0] > 0)
		ct_log_info("purge: %lld work unit(s) of finished jobs archived and deleted",
			    (long long)ids[0]);
	return (int)ids[0];
}
