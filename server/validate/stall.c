/*
 * stall.c - notice of bit-identical replicas refused by a check (see
 * stall.h).
 */
#include "stall.h"

#include <stdio.h>

#include "ct_err.h"
#include "ct_log.h"
#include "ct_utf8.h"
#include "data/dl_job.h"
#include "data/dl_result.h"

int ct_stall_check(struct ct_db *db, int64_t jobid, int64_t wuid, const char *wu_name)
{
	struct ct_result_refusal g = { 0 };
	char msg[512];
	int64_t n = 0;
	int rc;

	rc = ct_result_refused_alike(db, wuid, &g);
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
	rc = ct_job_notice_first(db, jobid, msg);
	if (rc > 0)
		ct_log_warn("job %lld: %s", (long long)jobid, msg);
	return rc < 0 ? rc : rc > 0;
}
