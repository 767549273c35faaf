/*
 * dl_result.c - the `result` table's reads (see dl_result.h): each
 * statement with its column table beside it. The results of one WU are
 * read in dl_workunit.c, beside the WU's lock that reads them too.
 */
#include <string.h>

#include "ct_err.h"
#include "db.h"
#include "db_args.h"
#include "dl.h"
#include "dl_result.h"

#define R struct ct_result_row

static const struct ct_dl_col upload_cols[] = {
	CT_DL_COL(R, hostid), CT_DL_COL(R, server_state), CT_DL_COL(R, outcome),
	CT_DL_COL(R, validate_state), CT_DL_COL(R, upload_sha256), CT_DL_COL(R, upload_size),
};

int ct_result_get_upload(struct ct_db *db, int64_t id, struct ct_result_row *r)
{
	int rc;

	memset(r, 0, sizeof(*r));
	rc = CT_DL_ONE(db, r, upload_cols, "SELECT hostid, server_state, outcome, "
		       "validate_state, upload_sha256, upload_size FROM result WHERE id=?", id);
	if (rc == 0)
		r->id = id;
	return rc;
}

static const struct ct_dl_col name_cols[] = {
	CT_DL_COL(R, id), CT_DL_COL(R, workunitid),
};

int ct_result_by_name(struct ct_db *db, const char *name, struct ct_result_row *r)
{
	memset(r, 0, sizeof(*r));
	return CT_DL_ONE(db, r, name_cols, "SELECT id, workunitid FROM result WHERE name=?",
			 name);
}

#undef R

#define R struct ct_result_row
static const struct ct_dl_col sent_cols[] = {
	CT_DL_COL(R, id), CT_DL_COL(R, sent_time), CT_DL_COL(R, received_time),
	CT_DL_COL(R, server_state), CT_DL_COL(R, outcome), CT_DL_COL(R, validate_state),
};
#undef R

int ct_result_list_sent(struct ct_db *db, int64_t wuid, int max, struct ct_result_row **rows,
			size_t *n)
{
	return CT_DL_LIST(db, rows, n, sent_cols, "sent replicas", "SELECT id, sent_time, "
			  "received_time, server_state, outcome, validate_state FROM result "
			  "WHERE workunitid=? AND server_state IN (?, ?) ORDER BY id LIMIT ?", wuid,
			  CT_RS_IN_PROGRESS, CT_RS_OVER, max);
}

int ct_result_count_sent_others(struct ct_db *db, int64_t wuid, int64_t except, int64_t *n)
{
	return CT_DB_QUERY_INT(db, n, "SELECT COUNT(*) FROM result WHERE workunitid=? AND "
			       "id<>? AND server_state<>?", wuid, except, CT_RS_UNSENT);
}

#define C struct ct_state_count
static const struct ct_dl_col state_count_cols[] = {
	CT_DL_COL(C, server_state), CT_DL_COL(C, outcome), CT_DL_COL(C, validate_state),
	CT_DL_COL(C, n),
};
#undef C

int ct_result_state_counts(struct ct_db *db, int64_t jobid, struct ct_state_count **rows,
			   size_t *n)
{
	return CT_DL_LIST(db, rows, n, state_count_cols, "result states", "SELECT server_state, "
			  "outcome, validate_state, COUNT(*) FROM result WHERE jobid=? GROUP BY "
			  "server_state, outcome, validate_state", jobid);
}
