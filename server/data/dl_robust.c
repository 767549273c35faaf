/*
 * dl_robust.c - robust_event's statements (see dl_robust.h).
 */
#include "dl_robust.h"

#include "db.h"

int ct_robust_round_events(struct ct_db *db, int64_t jobid, int round_idx, int action,
			   int64_t *n)
{
	return CT_DB_QUERY_INT(db, n, "SELECT COUNT(*) FROM robust_event WHERE jobid=? AND "
			       "round_idx=? AND shard=0 AND action=?", jobid, round_idx, action);
}
