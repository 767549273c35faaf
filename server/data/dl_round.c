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
#include "job_state.h"
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

#define O struct ct_round_open_row
static const struct ct_dl_col open_cols[] = {
	CT_DL_COL(O, id), CT_DL_COL(O, jobid), CT_DL_COL(O, idx), CT_DL_COL(O, nwus),
	CT_DL_COL(O, model_sha), CT_DL_COL(O, nrounds), CT_DL_COL(O, job_status),
	CT_DL_COL(O, batch), CT_DL_COL(O, seq), CT_DL_COL(O, eval_sha),
	CT_DL_COL(O, aggregation), CT_DL_COL(O, base_loss), CT_DL_COL(O, has_base_loss),
	CT_DL_COL(O, outer_method), CT_DL_COL(O, outer_lr), CT_DL_COL(O, outer_momentum),
	CT_DL_COL(O, lora_init_sha),
};
#undef O

int ct_round_get_open(struct ct_db *db, int64_t roundid, struct ct_round_open_row *r)
{
	return CT_DL_ONE(db, r, open_cols, "SELECT r.id, r.jobid, r.idx, r.nwus, "
			 "r.model_sha256, j.nrounds, j.status, j.batch, j.seq, j.eval_sha256, "
			 "j.aggregation, r.base_eval_loss, r.base_eval_loss IS NOT NULL, "
			 "j.outer_method, j.outer_lr, j.outer_momentum, r.lora_init_sha256 "
			 "FROM `round` r JOIN job j "
			 "ON j.id = r.jobid WHERE r.id=? AND r.status=?", roundid, CT_ROUND_OPEN);
}

int ct_round_out_loss(struct ct_db *db, int64_t jobid, int idx, const char *sha,
		      double *loss)
{
	return CT_DB_QUERY_DOUBLE(db, loss, "SELECT eval_loss FROM `round` WHERE jobid=? AND "
				  "idx=? AND eval_loss IS NOT NULL AND out_model_sha256=?", jobid,
				  idx, sha);
}

/* A file of the store a round names (momentum_sha256, lora_init_sha256). */
struct sha_row {
	char sha[65];
};

static const struct ct_dl_col sha_cols[] = { CT_DL_COL(struct sha_row, sha) };

int ct_round_momentum(struct ct_db *db, int64_t jobid, int idx, char sha[65])
{
	struct sha_row m;
	int rc = CT_DL_ONE(db, &m, sha_cols, "SELECT momentum_sha256 FROM `round` WHERE "
			   "jobid=? AND idx=? AND status=?", jobid, idx, CT_ROUND_DONE);

	sha[0] = '\0';
	if (rc == 0)
		memcpy(sha, m.sha, 65);
	return rc == CT_ENOTFOUND ? 0 : rc;
}

int ct_round_set_momentum(struct ct_db *db, int64_t id, const char *sha)
{
	int rc = CT_DB_EXEC(db, "UPDATE `round` SET momentum_sha256=? WHERE id=?", sha, id);

	return rc < 0 ? rc : 0;
}

/* The one-column answer of a lora_init query into sha ("" on none). */
static int lora_init_answer(int rc, const struct sha_row *m, char sha[65])
{
	sha[0] = '\0';
	if (rc == 0)
		memcpy(sha, m->sha, 65);
	return rc;
}

int ct_round_lora_init(struct ct_db *db, int64_t jobid, int idx, char sha[65])
{
	struct sha_row m;
	int rc = CT_DL_ONE(db, &m, sha_cols, "SELECT lora_init_sha256 FROM `round` WHERE "
			   "jobid=? AND idx=?", jobid, idx);

	return lora_init_answer(rc, &m, sha);
}

int ct_round_lora_init_id(struct ct_db *db, int64_t roundid, char sha[65])
{
	struct sha_row m;
	int rc = CT_DL_ONE(db, &m, sha_cols, "SELECT lora_init_sha256 FROM `round` WHERE id=?",
			   roundid);

	return lora_init_answer(rc, &m, sha);
}

int ct_round_lora_init_wu(struct ct_db *db, int64_t wuid, char sha[65])
{
	struct sha_row m;
	int rc = CT_DL_ONE(db, &m, sha_cols, "SELECT r.lora_init_sha256 FROM workunit w JOIN "
			   "`round` r ON r.id = w.roundid WHERE w.id=?", wuid);

	return lora_init_answer(rc, &m, sha);
}

int ct_round_set_lora_init(struct ct_db *db, int64_t id, const char *sha)
{
	int rc = CT_DB_EXEC(db, "UPDATE `round` SET lora_init_sha256=? WHERE id=?", sha, id);

	return rc < 0 ? rc : 0;
}

int ct_round_eval_loss(struct ct_db *db, int64_t jobid, int idx, double *loss)
{
	return CT_DB_QUERY_DOUBLE(db, loss, "SELECT eval_loss FROM `round` WHERE jobid=? AND "
				  "idx=? AND eval_loss IS NOT NULL", jobid, idx);
}

int ct_round_set_base_loss(struct ct_db *db, int64_t id, double loss)
{
	int rc = CT_DB_EXEC(db, "UPDATE `round` SET base_eval_loss=? WHERE id=? AND "
			    "base_eval_loss IS NULL AND status=?", loss, id, CT_ROUND_OPEN);

	return rc < 0 ? rc : 0;
}

int ct_round_next_base_loss(struct ct_db *db, int64_t nshare, int64_t k, int64_t *id)
{
	int rc = CT_DB_QUERY_INT(db, id, "SELECT r.id FROM `round` r JOIN job j ON j.id = "
				 "r.jobid WHERE r.status=? AND r.idx=1 AND r.base_eval_loss IS NULL "
				 "AND j.status=? AND MOD(r.id, ?)=? ORDER BY r.id LIMIT 1",
				 CT_ROUND_OPEN, CT_JOB_RUNNING, nshare, k);

	if (rc == CT_ENOTFOUND)
		*id = 0;
	return rc == CT_ENOTFOUND ? 0 : rc;
}

int ct_round_ready_ids(struct ct_db *db, int64_t now, int64_t nshare, int64_t k, int64_t *ids,
		       size_t cap, size_t *n)
{
	return CT_DL_IDS(db, ids, cap, n,
			 "SELECT r.id FROM `round` r JOIN job j ON j.id = r.jobid WHERE "
			 "r.status=? AND MOD(r.id, ?)=? AND (NOT EXISTS (SELECT 1 FROM workunit w "
			 "WHERE w.roundid = r.id AND (w.canonical_resultid = 0 OR "
			 "w.assimilate_state <> ?)) OR (j.round_quorum < 1 AND r.create_time + "
			 "j.round_timeout <= ? AND (SELECT COUNT(*) FROM workunit w WHERE "
			 "w.roundid = r.id AND w.canonical_resultid <> 0 AND w.assimilate_state = ?) "
			 ">= GREATEST(1, CEIL(j.round_quorum * r.nwus - 1e-9)))) ORDER BY r.id "
			 "LIMIT ?", (int)CT_ROUND_OPEN, nshare, k, (int)CT_AS_READY, now,
			 (int)CT_AS_READY, (int64_t)cap);
}
