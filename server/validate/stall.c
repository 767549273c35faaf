/*
 * stall.c - notice of bit-identical replicas refused by a check (see
 * stall.h).
 */
#include "stall.h"

#include <stdio.h>

#include "ct_err.h"
#include "ct_log.h"
#include "ct_utf8.h"
#include "data/db.h"
#include "data/dl.h"

/* A group of bit-identical uploads refused alike: how many hosts, why. */
struct stall_row {
	int64_t nhosts;
	char error[256];
};

static const struct ct_dl_col stall_cols[] = {
	CT_DL_COL(struct stall_row, nhosts), CT_DL_COL(struct stall_row, error),
};

int ct_stall_check(struct ct_db *db, int64_t jobid, int64_t wuid, const char *wu_name)
{
	struct stall_row g = { 0 };
	char msg[512];
	int64_t n = 0;
	int rc;

	rc = CT_DL_ONE(db, &g, stall_cols, "SELECT COUNT(DISTINCT hostid), MIN(error_message) "
		       "FROM result WHERE workunitid=? AND outcome=? AND upload_sha256<>'' "
		       "GROUP BY upload_sha256, error_message HAVING COUNT(DISTINCT hostid) >= 2 "
		       "LIMIT 1", wuid, CT_RO_VALIDATE_ERROR);
	if (rc < 0 && rc != CT_ENOTFOUND)
		return rc;
	if (rc == 0) {
		n = g.nhosts;
		snprintf(msg, sizeof(msg), "work unit %s: %lld replicas from different "
			 "computers agree bit for bit but were refused (%s): honest work "
			 "fails this check; change the job's limits (--loss-margin) or the "
			 "project's", wu_name, (long long)n, g.error);
		ct_utf8_fit(msg, 255);	/* job.error_message */
	}
	if (n < 2)
		return 0;
	rc = CT_DB_EXEC(db, "UPDATE job SET error_message=? WHERE id=? AND status=? AND "
			"error_message=''", msg, jobid, CT_JOB_RUNNING);
	if (rc > 0)
		ct_log_warn("job %lld: %s", (long long)jobid, msg);
	return rc < 0 ? rc : rc > 0;
}
