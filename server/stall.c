/*
 * stall.c - notice of bit-identical replicas refused by a check (see
 * stall.h).
 */
#include "stall.h"

#include <stdio.h>

#include "ct_log.h"
#include "ct_utf8.h"

int ct_stall_check(struct ct_db *db, int64_t jobid, int64_t wuid, const char *wu_name)
{
	struct ct_db_res *res = NULL;
	char msg[512];
	int64_t n = 0;
	int rc;

	rc = ct_db_query(db, &res, "SELECT COUNT(DISTINCT hostid), MIN(error_message) FROM "
			 "result WHERE workunitid=? AND outcome=? AND upload_sha256<>'' "
			 "GROUP BY upload_sha256, error_message HAVING COUNT(DISTINCT hostid) >= 2 "
			 "LIMIT 1", "li", wuid, CT_RO_VALIDATE_ERROR);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) > 0) {
		n = ct_db_int(res, 0);
		snprintf(msg, sizeof(msg), "work unit %s: %lld replicas from different "
			 "computers agree bit for bit but were refused (%s): honest work "
			 "fails this check; change the job's limits (--loss-margin) or the "
			 "project's", wu_name, (long long)n, ct_db_str(res, 1));
		ct_utf8_fit(msg, 255);	/* job.error_message */
	}
	ct_db_res_free(res);
	if (n < 2)
		return 0;
	rc = ct_db_exec(db, "UPDATE job SET error_message=? WHERE id=? AND status=? AND "
			"error_message=''", "sli", msg, jobid, CT_JOB_RUNNING);
	if (rc > 0)
		ct_log_warn("job %lld: %s", (long long)jobid, msg);
	return rc < 0 ? rc : rc > 0;
}
