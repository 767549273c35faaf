/*
 * dl_round.c - the `round` table's reads (see dl_round.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ct_err.h"
#include "db.h"
#include "db_args.h"
#include "dl.h"
#include "dl_round.h"
#include "wu_state.h"

#define R struct ct_round_row
static const struct ct_dl_col round_cols[] = {
	CT_DL_COL(R, idx), CT_DL_COL(R, status), CT_DL_COL(R, nwus), CT_DL_COL(R, nwus_done),
	CT_DL_COL_NAN(R, base_eval_loss), CT_DL_COL_NAN(R, eval_loss),
	CT_DL_COL(R, model_sha256), CT_DL_COL(R, out_model_sha256), CT_DL_COL(R, finish_time),
};
#undef R

int ct_round_list(struct ct_db *db, int64_t jobid, struct ct_round_row **rounds,
		  size_t *n)
{
	return CT_DL_LIST(db, rounds, n, round_cols, "rounds", "SELECT idx, status, nwus, "
			  "nwus_done, base_eval_loss, eval_loss, model_sha256, out_model_sha256, "
			  "finish_time FROM `round` WHERE jobid=? ORDER BY idx", jobid);
}

struct round_model {
	int64_t idx;
	char sha[65];
};

static const struct ct_dl_col round_model_cols[] = {
	CT_DL_COL(struct round_model, idx), CT_DL_COL(struct round_model, sha),
};

int ct_round_model_find(struct ct_db *db, int64_t jobid, int64_t *idx, char sha[65])
{
	struct round_model m;
	int rc;

	if (*idx == 0)
		rc = CT_DL_ONE(db, &m, round_model_cols, "SELECT 0, model_sha256 FROM job "
			       "WHERE id=?", jobid);
	else if (*idx > 0)
		rc = CT_DL_ONE(db, &m, round_model_cols, "SELECT idx, out_model_sha256 FROM "
			       "`round` WHERE jobid=? AND idx=? AND out_model_sha256<>''", jobid,
			       *idx);
	else
		rc = CT_DL_ONE(db, &m, round_model_cols, "SELECT idx, out_model_sha256 FROM "
			       "`round` WHERE jobid=? AND out_model_sha256<>'' ORDER BY idx DESC "
			       "LIMIT 1", jobid);
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "job %" PRId64 " has no model for %s", jobid,
				*idx < 0 ? "any averaged round yet (try --round 0)" : "that round");
	if (rc == 0) {
		*idx = m.idx;
		memcpy(sha, m.sha, 65);
	}
	return rc;
}

int ct_round_set_eval_ntokens(struct ct_db *db, int64_t roundid, int64_t ntokens)
{
	int rc = CT_DB_EXEC(db, "UPDATE `round` SET eval_ntokens=? WHERE id=?", ntokens,
			    roundid);

	return rc < 0 ? rc : 0;
}

int ct_round_find(struct ct_db *db, int64_t jobid, int idx, int64_t *id)
{
	return CT_DB_QUERY_INT(db, id, "SELECT id FROM `round` WHERE jobid=? AND idx=?", jobid,
			       idx);
}

int ct_round_insert(struct ct_db *db, int64_t jobid, int idx, const char *sha, int nwus,
		    int64_t now, int64_t *id)
{
	int rc = CT_DB_EXEC(db, "INSERT INTO `round` (jobid, idx, create_time, status, "
			    "model_sha256, nwus) VALUES (?, ?, ?, ?, ?, ?)", jobid, idx, now,
			    CT_ROUND_OPEN, sha, nwus);

	if (rc < 0)
		return rc;
	*id = ct_db_last_id(db);
	return 0;
}
