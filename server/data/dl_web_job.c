/*
 * dl_web_job.c - the jobs as the web pages and the API show them: the list
 * with progress, one job with its rounds and contributors, what it trains
 * and on what, and what a valid result of it earns (see dl_web.h).
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_chain.h"
#include "ct_err.h"
#include "db.h"
#include "dl.h"
#include "dl_web.h"
#include "job_state.h"
#include "result_state.h"
#include "wu_state.h"

/* ---- jobs ---------------------------------------------------------------- */

#define JOB_COLS "j.id, j.name, j.create_time, j.finish_time, j.status, " \
	"j.error_message, j.model_sha256, j.final_model_sha256, j.nshards, " \
	"j.nrounds, j.cur_round, j.steps, j.batch, j.seq, j.lr, " \
	"j.min_quorum, j.target_nresults, j.base_eval_loss, j.final_eval_loss, " \
	"(SELECT COALESCE(SUM(nwus), 0) FROM `round` r WHERE r.jobid = j.id), " \
	"(SELECT COALESCE(SUM(nwus_done), 0) FROM `round` r WHERE r.jobid = j.id), " \
	"j.aggregation, j.outer_method, j.outer_lr, j.outer_momentum, j.round_quorum " \
	"FROM job j "

#define J struct ct_web_job
static const struct ct_dl_col job_cols[] = {
	CT_DL_COL(J, id), CT_DL_COL(J, name), CT_DL_COL(J, create_time), CT_DL_COL(J, finish_time),
	CT_DL_COL(J, status), CT_DL_COL(J, error_message), CT_DL_COL(J, model_sha256),
	CT_DL_COL(J, final_model_sha256), CT_DL_COL(J, nshards), CT_DL_COL(J, nrounds),
	CT_DL_COL(J, cur_round), CT_DL_COL(J, steps), CT_DL_COL(J, batch), CT_DL_COL(J, seq),
	CT_DL_COL(J, lr), CT_DL_COL(J, min_quorum), CT_DL_COL(J, target_nresults),
	CT_DL_COL_NAN(J, base_eval_loss), CT_DL_COL_NAN(J, final_eval_loss), CT_DL_COL(J, nwus),
	CT_DL_COL(J, nwus_done), CT_DL_COL(J, aggregation), CT_DL_COL(J, outer_method),
	CT_DL_COL(J, outer_lr), CT_DL_COL(J, outer_momentum), CT_DL_COL(J, round_quorum),
};
#undef J

static void job_status_name(struct ct_web_job *j)
{
	snprintf(j->status_name, sizeof(j->status_name), "%s",
		 ct_job_status_name((int)j->status));
}

#define J struct ct_web_job
static const struct ct_dl_col count_cols[] = {
	CT_DL_COL(J, res_unsent), CT_DL_COL(J, res_in_progress), CT_DL_COL(J, res_valid),
	CT_DL_COL(J, res_invalid), CT_DL_COL(J, res_error), CT_DL_COL(J, credit),
};
#undef J

/* Result counts of one job by state (round_stat: no result row read). */
static int job_counts(struct ct_db *db, struct ct_web_job *j)
{
	/* the per-round counters the result triggers keep (migration 004):
	 * one row per round, whatever the number of results; an aggregate,
	 * so always one row */
	return CT_DL_ONE(db, j, count_cols, "SELECT COALESCE(SUM(n_unsent), 0), "
		"COALESCE(SUM(n_in_progress), 0), COALESCE(SUM(n_valid), 0), "
		"COALESCE(SUM(n_invalid), 0), COALESCE(SUM(n_error), 0), "
		"COALESCE(SUM(credit), 0) FROM round_stat WHERE jobid = ?", j->id);
}

int ct_web_jobs(struct ct_db *db, struct ct_web_job **jobs, size_t *n)
{
	void *rows = NULL;
	int rc;

	rc = ct_dl_query_all(db, sizeof(**jobs), job_cols, CT_DL_NCOLS(job_cols), "jobs", &rows,
			     n, "SELECT " JOB_COLS "ORDER BY j.id DESC LIMIT 500", NULL, 0);
	*jobs = rows;
	for (size_t i = 0; rc == 0 && i < *n; i++) {
		job_status_name(&(*jobs)[i]);
		rc = job_counts(db, &(*jobs)[i]);
	}
	if (rc < 0) {
		free(*jobs);
		*jobs = NULL;
		*n = 0;
	}
	return rc;
}

#define R struct ct_web_round
static const struct ct_dl_col round_cols[] = {
	CT_DL_COL(R, idx), CT_DL_COL(R, status), CT_DL_COL(R, nwus), CT_DL_COL(R, nwus_done),
	CT_DL_COL(R, create_time), CT_DL_COL(R, finish_time), CT_DL_COL(R, model_sha256),
	CT_DL_COL(R, out_model_sha256), CT_DL_COL_NAN(R, eval_loss), CT_DL_COL_NAN(R, base_eval_loss),
	CT_DL_COL(R, res_in_progress), CT_DL_COL(R, res_valid), CT_DL_COL(R, res_invalid),
	CT_DL_COL(R, eval_ntokens), CT_DL_COL(R, nfailed),
};
#undef R

static int job_rounds(struct ct_db *db, int64_t id, struct ct_web_round **out,
		      size_t *n)
{
	struct ct_web_round *r;
	void *rows = NULL;
	int rc;

	rc = CT_DL_ALL(db, sizeof(*r), round_cols, "rounds", &rows, n,
		"SELECT r.idx, r.status, r.nwus, r.nwus_done, "
		"r.create_time, r.finish_time, r.model_sha256, r.out_model_sha256, "
		"r.eval_loss, r.base_eval_loss, COALESCE(s.n_in_progress, 0), "
		"COALESCE(s.n_valid, 0), COALESCE(s.n_invalid, 0), r.eval_ntokens, "
		/* the round check's refusals (assimilator.c), one row per shard */
		"(SELECT COUNT(*) FROM robust_event e WHERE e.jobid = r.jobid AND "
		"e.round_idx = r.idx AND e.shard = 0 AND e.action = 4) "
		"FROM `round` r LEFT JOIN round_stat s ON s.roundid = r.id "
		"WHERE r.jobid = ? ORDER BY r.idx LIMIT 10000", id);
	if (rc < 0)
		return rc;
	*out = r = rows;
	for (size_t i = 0; i < *n; i++)
		snprintf(r[i].status_name, sizeof(r[i].status_name), "%s",
			 ct_round_status_name((int)r[i].status));
	return 0;
}

#define C struct ct_web_contrib
static const struct ct_dl_col contrib_cols[] = {
	CT_DL_COL(C, userid), CT_DL_COL(C, name), CT_DL_COL(C, nresults), CT_DL_COL(C, credit),
};
#undef C

static int job_contributors(struct ct_db *db, int64_t id,
			    struct ct_web_contrib **out, size_t *n)
{
	void *rows = NULL;
	int rc;

	/* the per-(job, user) counters a result trigger keeps (migration 004) */
	rc = CT_DL_ALL(db, sizeof(**out), contrib_cols, "contributors", &rows, n,
		"SELECT s.userid, COALESCE(u.name, ''), "
		"s.nvalid, s.credit FROM job_user_stat s "
		"LEFT JOIN `user` u ON u.id = s.userid "
		"WHERE s.jobid = ? AND s.nvalid > 0 "
		"ORDER BY s.credit DESC, s.userid LIMIT 50", id);
	*out = rows;
	return rc;
}

int ct_web_get_job(struct ct_db *db, int64_t id, struct ct_web_job *job,
		   struct ct_web_round **rounds, size_t *nrounds,
		   struct ct_web_contrib **contrib, size_t *ncontrib)
{
	int rc;

	*rounds = NULL;
	*contrib = NULL;
	*nrounds = *ncontrib = 0;
	memset(job, 0, sizeof(*job));
	rc = CT_DL_ONE(db, job, job_cols, "SELECT " JOB_COLS "WHERE j.id = ?", id);
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "no job %lld", (long long)id);
	if (rc < 0)
		return rc;
	job_status_name(job);
	rc = job_counts(db, job);
	if (rc == 0)
		rc = job_rounds(db, id, rounds, nrounds);
	if (rc == 0)
		rc = job_contributors(db, id, contrib, ncontrib);
	if (rc < 0) {
		free(*rounds);
		*rounds = NULL;
		*nrounds = 0;
	}
	return rc;
}

#define JI struct ct_web_job_inputs
static const struct ct_dl_col inputs_cols[] = {
	CT_DL_COL(JI, model_sha256), CT_DL_COL(JI, model_size), CT_DL_COL(JI, train_sha256),
	CT_DL_COL(JI, eval_sha256), CT_DL_COL(JI, eval_tokens), CT_DL_COL(JI, train_tokens),
	CT_DL_COL(JI, tokenizer), CT_DL_COL(JI, tokenizer_files), CT_DL_COL(JI, lora_rank),
	CT_DL_COL(JI, lora_alpha), CT_DL_COL(JI, lora_targets),
};
#undef JI

/* One row about job `id` into `row` (size bytes) by `sql` (one "?": the
 * job's id); CT_ENOTFOUND names the job. */
static int job_row(struct ct_db *db, int64_t id, void *row, size_t size,
		   const struct ct_dl_col *cols, size_t ncols, const char *sql)
{
	int rc;

	memset(row, 0, size);
	rc = ct_dl_query_one(db, row, cols, ncols, sql, CT_DB_ARGS(id));
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "no job %lld", (long long)id);
	return rc;
}

int ct_web_get_job_inputs(struct ct_db *db, int64_t id, struct ct_web_job_inputs *in)
{
	/* one row: the side tables (text, tokenizer files, LoRA) by primary key */
	return job_row(db, id, in, sizeof(*in), inputs_cols, CT_DL_NCOLS(inputs_cols),
		"SELECT j.model_sha256, j.model_size, "
		"j.train_sha256, j.eval_sha256, j.eval_tokens, "
		"(SELECT COALESCE(SUM(ntokens), 0) FROM job_shard s WHERE s.jobid = j.id), "
		"COALESCE(t.tokenizer, ''), (SELECT COALESCE(SUBSTRING(GROUP_CONCAT(f.name "
		"ORDER BY f.name SEPARATOR ', '), 1, 290), '') FROM job_tokenizer_file f "
		"WHERE f.jobid = j.id), COALESCE(l.lora_rank, 0), COALESCE(l.lora_alpha, 0), "
		"COALESCE(l.lora_targets, 0) FROM job j LEFT JOIN job_text t ON t.jobid = j.id "
		"LEFT JOIN job_lora l ON l.jobid = j.id WHERE j.id = ?");
}

#define JC struct ct_web_job_credit
static const struct ct_dl_col job_credit_cols[] = {
	CT_DL_COL(JC, nvalid), CT_DL_COL(JC, credit), CT_DL_COL(JC, model_sha256),
	CT_DL_COL(JC, seq), CT_DL_COL(JC, batch), CT_DL_COL(JC, steps),
};
#undef JC

int ct_web_get_job_credit(struct ct_db *db, int64_t id, struct ct_web_job_credit *jc)
{
	return job_row(db, id, jc, sizeof(*jc), job_credit_cols, CT_DL_NCOLS(job_credit_cols),
		"SELECT (SELECT COALESCE(SUM(n_valid), 0) "
		"FROM round_stat s WHERE s.jobid = j.id), (SELECT COALESCE(SUM(credit), 0) "
		"FROM round_stat s WHERE s.jobid = j.id), j.model_sha256, j.seq, j.batch, "
		"j.steps FROM job j WHERE j.id = ?");
}

/* ---- where tolerance replicas parted ---------------------------------------- */

struct prow {
	int64_t round, shard, steps, every;
	char wu[64], canonical[96], other[96];
	char a[CT_CHAIN_HEX_MAX + 1], b[CT_CHAIN_HEX_MAX + 1];
};

#define PR struct prow
static const struct ct_dl_col parting_cols[] = {
	CT_DL_COL(PR, round), CT_DL_COL(PR, shard), CT_DL_COL(PR, wu),
	CT_DL_COL(PR, canonical), CT_DL_COL(PR, other), CT_DL_COL(PR, steps),
	CT_DL_COL(PR, every), CT_DL_COL(PR, a), CT_DL_COL(PR, b),
};
#undef PR

int ct_web_job_partings(struct ct_db *db, int64_t jobid, struct ct_web_parting **out,
			size_t *n)
{
	struct prow *rows = NULL;
	size_t nr = 0, k = 0;
	int rc;

	*out = NULL;
	*n = 0;
	/* the validator's tolerance pairs (daemons/validator.c note_tolerance),
	 * exact uploads only: an int8 upload's chain was not checked, not even
	 * its last link (doc/validation.md), so where it parts says nothing */
	rc = CT_DL_LIST(db, &rows, &nr, parting_cols, "partings", "SELECT w.round_idx, "
		"w.shard, w.name, c.name, o.name, j.steps, j.chain_every, cc.links, oc.links "
		"FROM workunit w JOIN job j ON j.id = w.jobid JOIN result c ON c.id = "
		"w.canonical_resultid JOIN result o ON o.workunitid = w.id AND o.id <> c.id "
		"JOIN result_chain cc ON cc.resultid = c.id JOIN result_chain oc ON "
		"oc.resultid = o.id JOIN result_check ck ON ck.resultid = c.id AND "
		"ck.upload_sha256 = c.upload_sha256 AND ck.quant_error = 0 JOIN result_check ok "
		"ON ok.resultid = o.id AND ok.upload_sha256 = o.upload_sha256 AND "
		"ok.quant_error = 0 WHERE w.jobid = ? AND w.canonical_resultid <> 0 AND "
		"o.validate_state = ? AND (c.conforming = 0 OR o.conforming = 0) AND "
		"j.chain_every > 0 ORDER BY w.round_idx DESC, w.shard, o.id LIMIT ?", jobid,
		(int)CT_VS_VALID, (int64_t)CT_WEB_PARTINGS_MAX);
	if (rc == 0 && (*out = calloc(nr ? nr : 1, sizeof(**out))) == NULL)
		rc = CT_ENOMEM;
	for (size_t i = 0; rc == 0 && i < nr; i++) {
		const struct prow *p = &rows[i];
		struct ct_web_parting *q = &(*out)[k];
		int agreed, parted;

		if (ct_chain_check(p->a, (int)p->steps, (int)p->every) < 0 ||
		    ct_chain_check(p->b, (int)p->steps, (int)p->every) < 0)
			continue;	/* a chain the validator refused says nothing */
		q->round = p->round, q->shard = p->shard;
		q->steps = p->steps, q->every = p->every;
		snprintf(q->wu, sizeof(q->wu), "%s", p->wu);
		snprintf(q->canonical, sizeof(q->canonical), "%s", p->canonical);
		snprintf(q->other, sizeof(q->other), "%s", p->other);
		q->link = ct_chain_parting(p->a, p->b, (int)p->steps, (int)p->every, &agreed,
					   &parted);
		q->agreed = agreed, q->parted = parted;
		k++;
	}
	free(rows);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		return rc;
	}
	*n = k;
	return 0;
}

/* ---- samples --------------------------------------------------------------- */

#define SR struct ct_web_sample
static const struct ct_dl_col sample_cols[] = {
	CT_DL_COL(SR, round), CT_DL_COL(SR, model_sha256), CT_DL_COL(SR, text),
};
#undef SR

int ct_web_samples_open(struct ct_db *db, int64_t jobid, struct ct_web_samples *it,
			struct ct_web_sample **row)
{
	int rc;

	it->res = NULL;
	it->n = 0;
	*row = malloc(sizeof(**row));
	if (*row == NULL)
		return ct_error(CT_ENOMEM, "sample row");
	rc = CT_DB_QUERY(db, &it->res, "SELECT round_idx, model_sha256, sample_text FROM "
			 "round_sample WHERE jobid=? ORDER BY round_idx LIMIT ?",
			 jobid, CT_WEB_SAMPLES_MAX);
	if (rc == 0)
		it->n = ct_db_nrows(it->res);
	return rc;
}

int ct_web_samples_next(struct ct_web_samples *it, struct ct_web_sample *row)
{
	if (it->res == NULL || ct_db_next(it->res) <= 0)
		return 0;
	ct_dl_row(it->res, row, sample_cols, CT_DL_NCOLS(sample_cols));
	return 1;
}

void ct_web_samples_close(struct ct_web_samples *it, struct ct_web_sample *row)
{
	ct_db_res_free(it->res);
	it->res = NULL;
	free(row);
}

struct chat_row {
	char text[65536];
};

static const struct ct_dl_col chat_cols[] = { CT_DL_COL(struct chat_row, text) };

int ct_web_sample_chat(struct ct_db *db, int64_t jobid, char **text)
{
	struct chat_row *r = malloc(sizeof(*r));
	int rc;

	*text = NULL;
	if (r == NULL)
		return ct_error(CT_ENOMEM, "sample chat");
	r->text[0] = '\0';
	rc = CT_DL_ONE(db, r, chat_cols, "SELECT sample_chat FROM job_text WHERE jobid=?",
		       jobid);
	if (rc == CT_ENOTFOUND)
		rc = 0;
	if (rc == 0 && r->text[0] != '\0') {
		*text = strdup(r->text);
		if (*text == NULL)
			rc = ct_error(CT_ENOMEM, "sample chat");
	}
	free(r);
	return rc;
}
