/*
 * dl_round.c - the `round` table's reads (see dl_round.h).
 */
#include "ct_err.h"
#include "db.h"
#include "db_args.h"
#include "dl.h"
#include "dl_round.h"

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
