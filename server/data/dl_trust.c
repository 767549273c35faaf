/*
 * dl_trust.c - adaptive replication's reads (see dl_trust.h), with their
 * column tables beside them.
 */
#include "dl_trust.h"

#include <string.h>

#include "ct_err.h"
#include "db.h"
#include "db_args.h"
#include "dl.h"
#include "result_state.h"

static const struct ct_dl_col record_cols[] = {
	CT_DL_COL(struct ct_trust_record, nrounds),
	CT_DL_COL(struct ct_trust_record, first_valid),
};

int ct_trust_record_get(struct ct_db *db, int64_t hostid, struct ct_trust_record *r)
{
	int rc;

	memset(r, 0, sizeof(*r));
	rc = CT_DL_ONE(db, r, record_cols, "SELECT COUNT(DISTINCT w.roundid), "
		       "COALESCE(MIN(r.received_time), 0) FROM result r JOIN workunit w ON "
		       "w.id = r.workunitid WHERE r.hostid=? AND r.validate_state=?", hostid,
		       CT_VS_VALID);
	if (rc < 0 && rc != CT_ENOTFOUND)
		return rc;
	return CT_DB_QUERY_INT(db, &r->ninvalid, "SELECT COUNT(*) FROM result WHERE hostid=? "
			       "AND validate_state=? LIMIT 1", hostid, CT_VS_INVALID);
}

int ct_trust_wu_nshards(struct ct_db *db, int64_t wuid, int64_t *n)
{
	return CT_DB_QUERY_INT(db, n, "SELECT j.nshards FROM workunit w JOIN job j ON "
			       "j.id = w.jobid WHERE w.id=?", wuid);
}

int ct_trust_round_alone(struct ct_db *db, int64_t wuid, int64_t hostid, int64_t *n)
{
	return CT_DB_QUERY_INT(db, n, "SELECT COUNT(*) FROM result r JOIN workunit w ON "
			       "w.id = r.workunitid JOIN workunit x ON x.roundid = w.roundid "
			       "WHERE x.id=? AND r.hostid=? AND w.min_quorum=1", wuid, hostid);
}
