/*
 * dl_receipt.c - see dl_receipt.h.
 */
#include "dl_receipt.h"
#include "db.h"
#include "result_state.h"
#include "wu_state.h"
#include "dl.h"
#include "lora_job.h"
#include "ct_base.h"
#include "ct_chain.h"
#include "ct_err.h"
#include "ct_lora.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rrow {
	int64_t jobid, finish_time, model_size, out_size, eval_tokens, nwus, init_size;
	int idx, steps, batch, seq, chain_every;
	double hp[6], outer_lr, outer_momentum, eval_loss;
	char model_sha[65], out_sha[65], mom_out[65], eval_sha[65], init_sha[65], encoding[17],
		aggregation[17], outer[17];
};

#define R struct rrow
static const struct ct_dl_col round_cols[] = {
	CT_DL_COL(R, jobid), CT_DL_COL(R, idx), CT_DL_COL(R, finish_time),
	CT_DL_COL(R, model_sha), CT_DL_COL(R, model_size), CT_DL_COL(R, out_sha),
	CT_DL_COL(R, out_size), CT_DL_COL(R, nwus), CT_DL_COL_NAN(R, eval_loss),
	CT_DL_COL(R, eval_tokens), CT_DL_COL(R, mom_out), CT_DL_COL(R, steps),
	CT_DL_COL(R, batch), CT_DL_COL(R, seq), CT_DL_COL(R, hp[0]), CT_DL_COL(R, hp[1]),
	CT_DL_COL(R, hp[2]), CT_DL_COL(R, hp[3]), CT_DL_COL(R, hp[4]), CT_DL_COL(R, hp[5]),
	CT_DL_COL(R, encoding), CT_DL_COL(R, aggregation), CT_DL_COL(R, outer),
	CT_DL_COL(R, outer_lr), CT_DL_COL(R, outer_momentum), CT_DL_COL(R, eval_sha),
	CT_DL_COL(R, chain_every), CT_DL_COL(R, init_sha), CT_DL_COL(R, init_size),
};
#undef R

static const char round_sql[] =
	"SELECT r.jobid, r.idx, r.finish_time, r.model_sha256, "
	"COALESCE((SELECT size FROM `file` WHERE sha256 = r.model_sha256), 0), "
	"r.out_model_sha256, COALESCE((SELECT size FROM `file` WHERE sha256 = "
	"r.out_model_sha256), 0), r.nwus, r.eval_loss, r.eval_ntokens, r.momentum_sha256, "
	"j.steps, j.batch, j.seq, j.lr, j.beta1, j.beta2, j.eps, j.weight_decay, j.grad_clip, "
	"j.upload_encoding, j.aggregation, j.outer_method, j.outer_lr, j.outer_momentum, "
	"j.eval_sha256, j.chain_every, COALESCE(r.lora_init_sha256, ''), COALESCE((SELECT size "
	"FROM `file` WHERE sha256 = r.lora_init_sha256), 0) FROM `round` r JOIN job j ON "
	"j.id = r.jobid WHERE r.id = ? AND r.status = ?";

static void copy_round(const struct rrow *w, struct ct_receipt *r)
{
	r->job = w->jobid;
	r->round = w->idx;
	r->time = w->finish_time;
	r->steps = w->steps, r->batch = w->batch, r->seq = w->seq;
	r->lr = w->hp[0], r->beta1 = w->hp[1], r->beta2 = w->hp[2];
	r->eps = w->hp[3], r->weight_decay = w->hp[4], r->grad_clip = w->hp[5];
	snprintf(r->encoding, sizeof(r->encoding), "%s", w->encoding);
	/* a LoRA round is always the exact mean of its adapters (lora_round.h) */
	snprintf(r->aggregation, sizeof(r->aggregation), "%s",
		 w->aggregation[0] && r->lora_rank == 0 ? w->aggregation : "mean");
	snprintf(r->outer, sizeof(r->outer), "%s", w->outer[0] ? w->outer : "mean");
	r->outer_lr = w->outer_lr, r->outer_momentum = w->outer_momentum;
	snprintf(r->mom_out, sizeof(r->mom_out), "%s", w->mom_out);
	snprintf(r->model_sha, sizeof(r->model_sha), "%s", w->model_sha);
	r->model_size = w->model_size;
	snprintf(r->out_sha, sizeof(r->out_sha), "%s", w->out_sha);
	r->out_size = w->out_size;
	snprintf(r->eval_sha, sizeof(r->eval_sha), "%s", w->eval_sha);
	r->eval_tokens = w->eval_tokens;
	/* a compact-base job's round >= 2 starts from the carried adapters */
	snprintf(r->lora_init_sha, sizeof(r->lora_init_sha), "%s", w->init_sha);
	r->lora_init_size = w->init_sha[0] ? w->init_size : 0;
	r->eval_loss = w->eval_loss;
	r->nwus_round = (int)w->nwus;
}

/* The momentum buffer the round's outer step read: the previous round's
 * (assimilator.c load_momentum), none in round 1 or without an outer step. */
static int mom_in(struct ct_db *db, struct ct_receipt *r)
{
	struct ct_db_res *res = NULL;
	int rc;

	if (r->round <= 1 || strcmp(r->outer, "mean") == 0)
		return 0;
	rc = CT_DB_QUERY(db, &res, "SELECT momentum_sha256 FROM `round` WHERE jobid=? AND idx=? "
			 "AND status=?", r->job, r->round - 1, (int)CT_ROUND_DONE);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) > 0)
		snprintf(r->mom_in, sizeof(r->mom_in), "%s", ct_db_str(res, 0));
	ct_db_res_free(res);
	return 0;
}

/* WU w's canonical result hash, its agreeing hosts, and whether they
 * agreed by hash. */
static int wu_results(struct ct_db *db, int64_t wuid, int64_t canonical,
		      struct ct_receipt_wu *w)
{
	struct ct_db_res *res = NULL;
	char first[65] = "";
	int rc, nrows = 0, differ = 0;

	rc = CT_DB_QUERY(db, &res, "SELECT r.id, r.hostid, COALESCE(c.weights_sha256, '') FROM "
			 "result r LEFT JOIN result_check c ON c.resultid = r.id AND "
			 "c.upload_sha256 = r.upload_sha256 WHERE r.workunitid = ? AND "
			 "r.validate_state = ? ORDER BY r.hostid, r.id", wuid, (int)CT_VS_VALID);
	if (rc < 0)
		return rc;
	while (ct_db_next(res) > 0) {
		int64_t host = ct_db_int(res, 1);
		const char *sha = ct_db_str(res, 2);

		if (ct_db_int(res, 0) == canonical)
			snprintf(w->result_sha, sizeof(w->result_sha), "%s", sha);
		if (nrows++ == 0)
			snprintf(first, sizeof(first), "%s", sha);
		differ |= sha[0] == '\0' || strcmp(first, sha) != 0;
		if (host > 0 && w->nhosts < CT_RECEIPT_MAX_HOSTS &&
		    (w->nhosts == 0 || w->hosts[w->nhosts - 1] != host))
			w->hosts[w->nhosts++] = host;
	}
	ct_db_res_free(res);
	w->tolerance = differ;
	return 0;
}

struct crow {
	int64_t id;
	int settled_link;
	double quant_error;
	char links[CT_CHAIN_HEX_MAX + 1];
};

#define C struct crow
static const struct ct_dl_col chain_cols[] = {
	CT_DL_COL(C, id), CT_DL_COL(C, links), CT_DL_COL(C, settled_link),
	CT_DL_COL(C, quant_error),
};
#undef C

/* The canonical result's chain, when the receipt can state it: well
 * formed for the job's interval, and vouched for beyond the host that
 * reported it (a host alone could make up the links before its last
 * one, which is all the validator checks; a receipt must not state what
 * nobody else vouches for):
 *  - another valid replica reported the same chain, or
 *  - the canonical won a dispute settled by bisection (settled_link:
 *    its links before that one are the loser's too, that one the server
 *    recomputed, its last is its result's hash), or
 *  - the WU agreed by tolerance, where replicas' chains part by nature
 *    and the canonical's own is stated for a verifier to see where its
 *    run parts from it, but only for an exact (lossless) upload: an int8
 *    upload's last link is not its hash (doc/validation.md), so nothing
 *    of its chain was checked at all.
 * keep stores the chain's text and gives its hash. */
static int wu_chain(struct ct_db *db, int64_t wuid, int64_t canonical, const struct ct_receipt *r,
		    int every, const struct ct_dl_receipt_chain_sink *keep, struct ct_receipt_wu *w)
{
	struct crow *rows = NULL;
	const struct crow *mine = NULL;
	size_t n = 0;
	int rc, vouched = 0;

	if (every <= 0 || keep == NULL)
		return 0;
	/* no check row reads as lossy: said nothing of, stated by a vouch only */
	rc = CT_DL_LIST(db, &rows, &n, chain_cols, "chains", "SELECT r.id, c.links, "
			"c.settled_link, COALESCE(k.quant_error, 1) FROM result r JOIN "
			"result_chain c ON c.resultid = r.id LEFT JOIN result_check k ON "
			"k.resultid = r.id AND k.upload_sha256 = r.upload_sha256 WHERE "
			"r.workunitid = ? AND r.validate_state = ? ORDER BY r.id LIMIT 16", wuid,
			(int)CT_VS_VALID);
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (rows[i].id == canonical && ct_chain_check(rows[i].links, r->steps, every) == 0)
			mine = &rows[i];
	for (size_t i = 0; rc == 0 && mine != NULL && i < n; i++)
		vouched |= rows[i].id != canonical && strcmp(rows[i].links, mine->links) == 0;
	if (mine != NULL)
		vouched |= mine->settled_link >= 0 || (w->tolerance && mine->quant_error == 0.0);
	if (rc == 0 && mine != NULL && vouched) {
		rc = keep->fn(keep->arg, r->job, mine->links, w->chain_sha);
		if (rc == 0)
			w->chain_every = every;
	}
	free(rows);
	return rc;
}

struct wrow {
	int64_t id, seed, data_size, canonical;
	int shard;
	char data_sha[65];
};

#define W struct wrow
static const struct ct_dl_col wu_cols[] = {
	CT_DL_COL(W, id), CT_DL_COL(W, shard), CT_DL_COL(W, seed), CT_DL_COL(W, data_sha),
	CT_DL_COL(W, data_size), CT_DL_COL(W, canonical),
};
#undef W

static int wus(struct ct_db *db, int64_t roundid, int every,
	       const struct ct_dl_receipt_chain_sink *keep, struct ct_receipt *r)
{
	struct wrow *rows = NULL;
	size_t n = 0;
	int rc;

	/* the WUs in the aggregate: canonical, assimilated, not abandoned */
	rc = CT_DL_LIST(db, &rows, &n, wu_cols, "work units", "SELECT id, shard, seed, "
			"data_sha256, data_size, canonical_resultid FROM workunit WHERE roundid=? "
			"AND canonical_resultid <> 0 AND error_mask = 0 AND assimilate_state = ? "
			"ORDER BY shard", roundid, (int)CT_AS_DONE);
	if (rc == 0 && n > (size_t)r->nwus_round)
		rc = ct_error(CT_ESTATE, "round %lld: %zu work units in of %d",
			      (long long)roundid, n, r->nwus_round);
	if (rc == 0 && (r->wus = calloc(n ? n : 1, sizeof(*r->wus))) == NULL)
		rc = CT_ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct ct_receipt_wu *w = &r->wus[i];

		w->shard = rows[i].shard;
		w->seed = (uint64_t)rows[i].seed;
		snprintf(w->data_sha, sizeof(w->data_sha), "%s", rows[i].data_sha);
		w->data_size = rows[i].data_size;
		rc = wu_results(db, rows[i].id, rows[i].canonical, w);
		if (rc == 0)
			rc = wu_chain(db, rows[i].id, rows[i].canonical, r, every, keep, w);
		r->nwus = (int)i + 1;
	}
	free(rows);
	return rc;
}

int ct_dl_receipt_round(struct ct_db *db, int64_t roundid,
			const struct ct_dl_receipt_chain_sink *keep, struct ct_receipt *r)
{
	struct ct_lora_spec spec;
	struct rrow w;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&w, 0, sizeof(w));
	rc = CT_DL_ONE(db, &w, round_cols, round_sql, roundid, (int)CT_ROUND_DONE);
	if (rc == 0)
		rc = ct_lora_job_get(db, w.jobid, &spec);
	if (rc < 0)
		return rc;
	if (spec.rank > 0) {
		r->lora_rank = spec.rank;
		r->lora_alpha = spec.alpha;
		ct_lora_targets_str(spec.targets, r->lora_targets, sizeof(r->lora_targets));
	}
	snprintf(r->base_format, sizeof(r->base_format), "%s", ct_base_fmt_name(spec.base_fmt));
	copy_round(&w, r);
	if (r->nwus_round > CT_RECEIPT_MAX_WUS)
		return ct_error(CT_ETOOBIG, "round %lld: %d work units (receipts hold %d)",
				(long long)roundid, r->nwus_round, CT_RECEIPT_MAX_WUS);
	rc = mom_in(db, r);
	if (rc == 0)
		rc = wus(db, roundid, w.chain_every, keep, r);
	return rc;
}

int ct_dl_receipt_pending(struct ct_db *db, int64_t nshare, int64_t k, int64_t *ids,
			  size_t max, size_t *n)
{
	/* only rounds whose previous receipt exists: a round that cannot get
	 * one holds up its own job's later rounds, never another job's */
	return CT_DL_IDS(db, ids, max, n, "SELECT r.id FROM `round` r LEFT JOIN round_receipt x "
			 "ON x.roundid = r.id WHERE r.status = ? AND x.roundid IS NULL AND "
			 "MOD(r.jobid, ?) = ? AND (r.idx = 1 OR EXISTS (SELECT 1 FROM round_receipt p "
			 "WHERE p.jobid = r.jobid AND p.idx = r.idx - 1)) ORDER BY r.jobid, r.idx",
			 (int)CT_ROUND_DONE, nshare, k);
}

int ct_dl_receipt_get(struct ct_db *db, int64_t jobid, int idx, char *sha, int64_t *size)
{
	struct ct_db_res *res = NULL;
	int rc;

	rc = CT_DB_QUERY(db, &res, "SELECT sha256, size FROM round_receipt WHERE jobid=? AND "
			 "idx=?", jobid, idx);
	if (rc < 0)
		return rc;
	rc = 0;
	if (ct_db_next(res) > 0) {
		snprintf(sha, 65, "%s", ct_db_str(res, 0));
		*size = ct_db_int(res, 1);
		rc = 1;
	}
	ct_db_res_free(res);
	return rc;
}

int ct_dl_receipt_put(struct ct_db *db, int64_t roundid, int64_t jobid, int idx,
		      const char *sha, int64_t size, int64_t now)
{
	int rc = CT_DB_EXEC(db, "INSERT IGNORE INTO round_receipt (roundid, jobid, idx, sha256, "
			    "size, create_time) VALUES (?, ?, ?, ?, ?, ?)", roundid, jobid, idx,
			    sha, size, now);

	return rc < 0 ? rc : rc > 0;
}

#define L struct ct_dl_receipt_row
static const struct ct_dl_col list_cols[] = {
	CT_DL_COL(L, idx), CT_DL_COL(L, sha), CT_DL_COL(L, size), CT_DL_COL(L, create_time),
};
#undef L

int ct_dl_receipt_list(struct ct_db *db, int64_t jobid, struct ct_dl_receipt_row **rows,
		       size_t *n)
{
	return CT_DL_LIST(db, rows, n, list_cols, "receipts", "SELECT idx, sha256, size, "
			  "create_time FROM round_receipt WHERE jobid=? ORDER BY idx LIMIT 100000",
			  jobid);
}

int ct_dl_receipt_count(struct ct_db *db, int64_t *n)
{
	struct ct_db_res *res = NULL;
	int rc = CT_DB_QUERY(db, &res, "SELECT COUNT(*) FROM round_receipt WHERE roundid > ?",
			     (int64_t)0);

	if (rc < 0)
		return rc;
	*n = ct_db_next(res) > 0 ? ct_db_int(res, 0) : 0;
	ct_db_res_free(res);
	return 0;
}
