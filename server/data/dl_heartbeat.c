/*
 * dl_heartbeat.c - role_heartbeat's statements (see dl_heartbeat.h).
 */
#include "dl_heartbeat.h"

#include "db.h"
#include "dl.h"

int ct_beat_put(struct ct_db *db, const char *role, const struct ct_beat_id *id, int64_t now,
		int64_t nruns, int64_t nitems, const char *err)
{
	int rc = CT_DB_EXEC(db, "INSERT INTO role_heartbeat (role, instance, start_time, "
			    "beat_time, nruns, nitems, last_error, host, pid) VALUES (?, ?, ?, ?, "
			    "?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE start_time=IF(pid=VALUES(pid) "
			    "AND host=VALUES(host), start_time, VALUES(start_time)), "
			    "last_error=IF(pid=VALUES(pid) AND host=VALUES(host) AND "
			    "VALUES(last_error)='', last_error, VALUES(last_error)), "
			    "beat_time=VALUES(beat_time), nruns=VALUES(nruns), "
			    "nitems=VALUES(nitems), host=VALUES(host), pid=VALUES(pid)",
			    role, id->instance, now, now, nruns, nitems, err ? err : "", id->host,
			    id->pid);

	return rc < 0 ? rc : 0;
}

int ct_beat_clear_stale(struct ct_db *db, const struct ct_beat_id *id)
{
	int rc = CT_DB_EXEC(db, "DELETE FROM role_heartbeat WHERE instance=? AND (pid<>? OR "
			    "host<>?)", id->instance, id->pid, id->host);

	return rc < 0 ? rc : 0;
}

int ct_beat_forget(struct ct_db *db, const char *role, const struct ct_beat_id *id)
{
	int rc = CT_DB_EXEC(db, "DELETE FROM role_heartbeat WHERE role=? AND instance=? AND "
			    "pid=?", role, id->instance, id->pid);

	return rc < 0 ? rc : 0;
}

int ct_beat_count(struct ct_db *db, const char *role, const struct ct_beat_id *id,
		  int64_t since, int64_t *live, int64_t *below)
{
	int rc = CT_DB_QUERY_INT(db, live, "SELECT COUNT(*) FROM role_heartbeat WHERE role=? "
				 "AND beat_time>=? AND instance<>?", role, since, id->instance);

	if (rc == 0)
		rc = CT_DB_QUERY_INT(db, below, "SELECT COUNT(*) FROM role_heartbeat WHERE "
				     "role=? AND beat_time>=? AND instance<?", role, since,
				     id->instance);
	return rc < 0 ? rc : 0;
}

#define B struct ct_beat_row
static const struct ct_dl_col beat_cols[] = {
	CT_DL_COL(B, role), CT_DL_COL(B, instance), CT_DL_COL(B, beat_time), CT_DL_COL(B, nitems),
	CT_DL_COL(B, last_error), CT_DL_COL(B, host), CT_DL_COL(B, pid),
};
#undef B

int ct_beat_list(struct ct_db *db, struct ct_beat_row **rows, size_t *n)
{
	return ct_dl_query_list(db, sizeof(**rows), rows, n, beat_cols, CT_DL_NCOLS(beat_cols),
				"roles", "SELECT role, instance, beat_time, nitems, last_error, "
				"host, pid FROM role_heartbeat ORDER BY instance, role", NULL, 0);
}
