/*
 * dl_check.c - result_check's statements (see dl_check.h), with their
 * column table beside them.
 */
#include "dl_check.h"

#include "db.h"
#include "db_args.h"
#include "dl.h"

static const struct ct_dl_col check_cols[] = {
	CT_DL_COL(struct ct_check_row, weights_sha256), CT_DL_COL(struct ct_check_row, update_norm),
	CT_DL_COL(struct ct_check_row, probe_loss), CT_DL_COL(struct ct_check_row, quant_error),
};

int ct_check_get(struct ct_db *db, int64_t resultid, struct ct_check_row *c)
{
	return CT_DL_ONE(db, c, check_cols, "SELECT c.weights_sha256, c.update_norm, "
			 "c.probe_loss, c.quant_error FROM result_check c JOIN result r ON "
			 "r.id = c.resultid WHERE c.resultid=? AND c.upload_sha256 = "
			 "r.upload_sha256", resultid);
}

int ct_check_twin(struct ct_db *db, int64_t resultid, struct ct_check_row *c)
{
	return CT_DL_ONE(db, c, check_cols, "SELECT c.weights_sha256, c.update_norm, "
			 "c.probe_loss, c.quant_error FROM result r JOIN result o ON "
			 "o.workunitid = r.workunitid AND o.id <> r.id AND o.upload_sha256 = "
			 "r.upload_sha256 JOIN result_check c ON c.resultid = o.id AND "
			 "c.upload_sha256 = o.upload_sha256 WHERE r.id=? AND r.upload_sha256 <> '' "
			 "LIMIT 1", resultid);
}

int ct_check_put(struct ct_db *db, int64_t resultid, const struct ct_check_row *c, int64_t now)
{
	int rc = CT_DB_EXEC(db, "REPLACE INTO result_check (resultid, upload_sha256, "
			    "weights_sha256, update_norm, probe_loss, quant_error, check_time) "
			    "SELECT id, upload_sha256, ?, ?, ?, ?, ? FROM result WHERE id=?",
			    c->weights_sha256, c->update_norm, c->probe_loss, c->quant_error, now,
			    resultid);

	return rc < 0 ? rc : 0;
}
