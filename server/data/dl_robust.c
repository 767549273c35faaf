/*
 * dl_robust.c - robust_event's statements (see dl_robust.h).
 */
#include "dl_robust.h"

#include <string.h>

#include "db.h"
#include "db_args.h"
#include "dl.h"
#include "result_state.h"

int ct_robust_round_events(struct ct_db *db, int64_t jobid, int round_idx, int action,
			   int64_t *n)
{
	return CT_DB_QUERY_INT(db, n, "SELECT COUNT(*) FROM robust_event WHERE jobid=? AND "
			       "round_idx=? AND shard=0 AND action=?", jobid, round_idx, action);
}

int ct_robust_event_insert(struct ct_db *db, const struct ct_robust_event_row *e, int64_t now)
{
	int rc = CT_DB_EXEC(db, "INSERT INTO robust_event (create_time, jobid, round_idx, shard, "
			    "workunitid, resultid, hostid, action, cosine, ratio) VALUES "
			    "(?,?,?,?,?,?,?,?,?,?)", now, e->jobid, e->round_idx, e->shard, e->wuid,
			    e->resultid, e->hostid, e->action, e->cos, e->ratio);

	return rc < 0 ? rc : 0;
}

int ct_robust_wu_events(struct ct_db *db, int64_t wuid, int action, int64_t *n)
{
	return CT_DB_QUERY_INT(db, n, "SELECT COUNT(*) FROM robust_event WHERE workunitid=? AND "
			       "action=?", wuid, action);
}

#define S struct ct_robust_shard_row
static const struct ct_dl_col shard_cols[] = {
	CT_DL_COL(S, wuid), CT_DL_COL(S, resultid), CT_DL_COL(S, hostid), CT_DL_COL(S, shard),
};
#undef S

int ct_robust_shard_get(struct ct_db *db, int64_t jobid, int idx, int shard,
			struct ct_robust_shard_row *r)
{
	memset(r, 0, sizeof(*r));
	return CT_DL_ONE(db, r, shard_cols, "SELECT w.id, w.canonical_resultid, r.hostid, "
			 "w.shard FROM workunit w JOIN result r ON r.id = w.canonical_resultid "
			 "WHERE w.jobid=? AND w.round_idx=? AND w.shard=?", jobid, idx, shard);
}

int ct_robust_caught_list(struct ct_db *db, int64_t jobid, int idx,
			  struct ct_robust_shard_row *rows, int max, size_t *n)
{
	return CT_DL_ROWS(db, rows, (size_t)max, n, shard_cols, "SELECT w.id, "
			  "w.canonical_resultid, r.hostid, w.shard FROM workunit w JOIN result r "
			  "ON r.id = w.canonical_resultid WHERE w.jobid=? AND w.round_idx=? AND "
			  "w.min_quorum=1 AND EXISTS (SELECT 1 FROM result x WHERE x.hostid = "
			  "r.hostid AND x.validate_state=?) ORDER BY w.shard LIMIT ?", jobid, idx,
			  CT_VS_INVALID, max);
}
