/*
 * dl_status.c - the status counts (see dl_status.h).
 */
#include "dl_status.h"

#include "db.h"
#include "job_state.h"
#include "result_state.h"
#include "wu_state.h"

int ct_status_counts(struct ct_db *db, int64_t n[CT_STATUS_NCOUNTS])
{
	static const int rs[3] = { CT_RS_UNSENT, CT_RS_IN_PROGRESS, CT_RS_OVER };
	int rc = ct_db_query_inta(db, &n[0], "SELECT COUNT(*) FROM `user`", NULL, 0);

	if (rc == 0)
		rc = ct_db_query_inta(db, &n[1], "SELECT COUNT(*) FROM host", NULL, 0);
	if (rc == 0)
		rc = CT_DB_QUERY_INT(db, &n[2], "SELECT COUNT(*) FROM job WHERE status=?",
				     CT_JOB_RUNNING);
	for (int k = 0; rc == 0 && k < 3; k++)
		rc = CT_DB_QUERY_INT(db, &n[3 + k], "SELECT COUNT(*) FROM result WHERE "
				     "server_state=?", rs[k]);
	if (rc == 0)
		rc = ct_db_query_inta(db, &n[6], "SELECT COUNT(*) FROM workunit WHERE "
				      "need_validate=1", NULL, 0);
	if (rc == 0)
		rc = CT_DB_QUERY_INT(db, &n[7], "SELECT COUNT(*) FROM workunit WHERE "
				     "assimilate_state=?", CT_AS_READY);
	return rc;
}
