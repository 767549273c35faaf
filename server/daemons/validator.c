/*
 * validator.c - the daemon that decides which results of a work unit are
 * right (role "validator"; DESIGN.md "Verification", daemons.h).
 *
 * For a WU with need_validate = 1 it decodes every result that may take
 * part (new successes, inconclusive ones, the canonical one), checks each
 * new one on its own first (decodes against the WU's base model, right
 * shape, finite, a non-zero update that AdamW could have produced in the
 * WU's steps and below the project's relative cap, probe loss on a fixed
 * slice of the job's eval tokens no worse than the base's + the job's
 * margin), then runs the quorum: equal weights hashes agree; otherwise,
 * unless both devices claim conformance, the relative distance of the
 * updates and the probe losses must be within the job's tolerance.
 *
 * A LoRA job's results are adapter files: the quorum and the step bound
 * work on the adapters, the other checks and the probe on the base merged
 * with them (lora_round.h).
 *
 * A result's hash chain, when its job has one, must end in its hash
 * (false_chain otherwise); two sane replicas that differ by hash are
 * bisected by their chains (validate/dispute.h) before any third replica
 * is asked for.
 *
 * The expensive part (decoding, probes) runs outside any transaction; the
 * outcome is applied in one short transaction that locks the WU row,
 * re-checks that no other validator decided it meanwhile, and changes
 * each result only from the state it was read in (conditional UPDATEs), so
 * validators may run in several processes: the loser of a race changes
 * nothing. Credit is granted in that same transaction (credit.h), at most
 * once per result. The checks and the quorum themselves are pure functions
 * in quorum.c; doc/validation.md explains them.
 */
#include "validate/credit.h"
#include "validate/bisect.h"
#include "validate/dispute.h"
#include "data/dl_chain.h"
#include "data/dl_host.h"
#include "ct_base.h"
#include "daemons.h"
#include "daemon_pass.h"
#include "data/db.h"
#include "data/dl_result.h"
#include "data/dl_workunit.h"
#include "data/job_state.h"
#include "data/result_state.h"
#include "eval.h"
#include "instance.h"
#include "validate/vcheck.h"
#include "validate/lora_round.h"
#include "data/server.h"
#include "data/wu_state.h"
#include "ct_delta.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_time.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VAL_BATCH 8		/* WUs per run_once */
#define VAL_MAX_CANDS CT_VAL_MAX_CANDS	/* results of one WU considered per pass */

/* ---- one WU: loading ------------------------------------------------------- */

struct vres {
	int64_t id, hostid;
	char name[96];
	int state, conforming, reason;
	int sane;		/* passed its checks (now or in an earlier pass) */
	float *w;		/* LoRA jobs only: the decoded adapters (small) */
	struct ct_val_stats st;
	double probe, quant_error;
	unsigned char sha[32];
	int new_state;
};

struct vwu {
	struct ct_server *srv;
	struct ct_db *db;
	struct ct_wu_check_row j;	/* the WU and its job */
	struct ct_val_bound bound;	/* the job's training settings */
	struct ct_gpt2 base;	/* params NULL when not loaded yet or dropped */
	int base_dirty;		/* base.params hold a result's weights (decoded in place) */
	struct ct_tokens eval;
	int have_eval;
	double base_probe, credit, flops, max_ratio;
	double margin_rel;	/* [daemons.loss_margin_rel]: see ct_val_margin() */
	double t_load, t_decode, t_probe;	/* seconds, for the log line */
	size_t nr;
	struct vres r[VAL_MAX_CANDS];
	int canonical_idx;	/* index in r of the canonical result, -1 none */
	int hold;		/* a dispute waits for a state: no new replica */
	int settled_link;	/* the canonical won a dispute at this link, -1 none */
	/* What results are a delta of: the base's weights, or for a LoRA job
	 * the WU's initial adapters (lora_round.h). */
	struct ct_lora_val lora;
	const float *ref;
	size_t n;
};

static int load_job(struct ct_db *db, int64_t wuid, struct vwu *v)
{
	struct ct_wu_check_row *j = &v->j;
	int rc;

	rc = ct_wu_check_get(db, wuid, j);
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "validator: WU %lld or its job is gone",
				(long long)wuid);
	if (rc < 0)
		return rc;
	v->bound = (struct ct_val_bound){ .steps = j->steps, .lr = j->lr, .beta1 = j->beta1,
					  .beta2 = j->beta2, .weight_decay = j->weight_decay };
	return 0;
}

/* The results that take part: successes not yet decided, and the
 * canonical one. */
static int load_results(struct ct_db *db, struct vwu *v)
{
	struct ct_result_vote_row rows[VAL_MAX_CANDS];
	size_t n = 0;
	int rc;

	rc = ct_result_list_votes(db, v->j.wuid, v->j.canonical, rows, VAL_MAX_CANDS, &n);
	if (rc < 0)
		return rc;
	v->canonical_idx = -1;
	v->settled_link = -1;
	for (size_t i = 0; i < n && v->nr < VAL_MAX_CANDS; i++) {
		struct vres *r = &v->r[v->nr];

		*r = (struct vres){ .id = rows[i].id, .hostid = rows[i].hostid,
				    .state = rows[i].validate_state,
				    .conforming = rows[i].conforming != 0,
				    .probe = rows[i].probe_loss };
		memcpy(r->name, rows[i].name, sizeof(r->name));
		r->new_state = r->state;
		if (r->id == v->j.canonical)
			v->canonical_idx = (int)v->nr;
		v->nr++;
	}
	return 0;
}

static void base_drop(struct vwu *v)
{
	free(v->base.params);
	v->base.params = NULL;	/* cfg and lay stay */
	v->base_dirty = 0;
}

/* The round's base weights, (re)loaded when a step needs them. A result
 * a probe needs is decoded into the base's own array (in place), so the
 * validator holds one model of its own at a time, and the evaluation
 * backend's copy while a probe runs: two, whatever the quorum. */
static int base_need(struct vwu *v)
{
	char path[4096];
	int rc;

	double t0 = ct_time_mono_s();

	if (v->base.params != NULL && !v->base_dirty)
		return 0;
	base_drop(v);
	rc = ct_server_download_path(v->srv, v->j.model_sha, path, sizeof(path));
	if (rc == 0)
		rc = ct_seval_model_load(path, &v->base);
	v->t_load += ct_time_mono_s() - t0;
	return rc;
}

/* Base model, credit, eval tokens. */
static int load_inputs(struct vwu *v)
{
	char path[4096];
	int rc;

	/* the shape now; the weights when a step needs them (base_need) */
	rc = ct_server_download_path(v->srv, v->j.model_sha, path, sizeof(path));
	if (rc == 0)
		rc = ct_base_read_config(path, &v->base.cfg, NULL);
	if (rc < 0)
		return rc;
	ct_gpt2_layout(&v->base.cfg, &v->base.lay);
	v->flops = ct_credit_wu_flops(&v->base.cfg, v->j.seq, v->j.batch, v->bound.steps);
	v->credit = ct_credit_from_flops(v->flops);
	rc = ct_server_download_path(v->srv, v->j.eval_sha, path, sizeof(path));
	if (rc == 0)
		rc = ct_tokens_load(path, &v->eval);
	if (rc < 0)
		return rc;
	v->have_eval = 1;
	return 0;
}

static int probe(struct vwu *v, float *w, double *loss);

/* The probe loss results are held to: that of the model the JOB started
 * from, not of this round's start. In later rounds one shard's honest WU,
 * trained from the average, can be worse on held-out text than that
 * average (it fits its own shard), so holding it to the round's start
 * rejected honest work (seen in the demo's 4th round); a result worse
 * than where the whole job began is garbage whatever the round. */
static int probe_reference_compute(struct vwu *v)
{
	struct ct_gpt2 jm = { 0 };
	const char *sha = v->j.job_model_sha[0] != '\0' ? v->j.job_model_sha : v->j.model_sha;
	double t0 = ct_time_mono_s();
	char path[4096];
	int rc;

	/* the base is dropped meanwhile: this model + the backend's copy */
	base_drop(v);
	rc = ct_server_download_path(v->srv, sha, path, sizeof(path));
	if (rc == 0)
		rc = ct_seval_model_load(path, &jm);
	v->t_load += ct_time_mono_s() - t0;
	if (rc == 0 && memcmp(&jm.cfg, &v->base.cfg, sizeof(jm.cfg)) != 0)
		rc = ct_error(CT_EMISMATCH, "validator: job model and round model differ in shape");
	if (rc == 0)
		rc = probe(v, jm.params, &v->base_probe);
	ct_gpt2_free(&jm);
	return rc;
}

/* The reference is the same for every WU of a job (same model, eval
 * slice, T, B and probe size): remember the last one computed on this
 * thread rather than load the job's model and run the probe per WU. */
static int probe_reference(struct vwu *v)
{
	static _Thread_local struct {
		char key[256];
		double loss;
	} last;
	char key[sizeof(last.key)];
	int rc;

	/* the job's model, not the round's: computed once per job, not
	 * once per round (it loaded a model and ran a probe each round) */
	snprintf(key, sizeof(key), "%s %s %d %d %d",
		 v->j.job_model_sha[0] != '\0' ? v->j.job_model_sha : v->j.model_sha,
		 v->j.eval_sha, v->j.probe_tokens, v->j.seq, v->j.batch);
	if (last.key[0] != '\0' && strcmp(key, last.key) == 0) {
		v->base_probe = last.loss;
		return 0;
	}
	rc = probe_reference_compute(v);
	if (rc == 0) {
		memcpy(last.key, key, sizeof(key));
		last.loss = v->base_probe;
	}
	return rc;
}

/* Probe loss of weights w (the base's layout) on the job's fixed slice.
 * w is used up (its weights move to the evaluation device, eval.h): every
 * caller frees it or, for the base's array, has marked it dirty. */
static int probe(struct vwu *v, float *w, double *loss)
{
	struct ct_gpt2 m = v->base;	/* a view: same config, other weights */
	int want = ct_val_probe_tokens(v->bound.steps, v->j.batch, v->j.seq, v->j.probe_tokens);
	int T = v->j.seq > 0 ? v->j.seq : 1;
	float l = NAN;
	int rc;

	/* about `want` tokens: sequences of the job's T, batches of at most
	 * the job's B (and what the eval file holds), whole batches, >= 1;
	 * on the server's evaluation device (eval.h) */
	double t0 = ct_time_mono_s();

	m.params = w;
	rc = ct_seval_loss_handover(v->srv, &m, &v->eval, v->j.batch, T, want, &l, NULL,
				    &(int){ 0 });
	*loss = l;
	v->t_probe += ct_time_mono_s() - t0;
	return rc;
}

/* ---- one WU: checks --------------------------------------------------------- */

/* Stream r's upload: statistics and the hash of its weights; the weights
 * themselves into v->base.params when w_out (a probe needs them; the
 * base is reloaded when needed again). */
/* A LoRA result: adapters (v->lora.n floats, small) into r->w, with
 * their statistics against the WU's initial adapters. */
static int decode_lora(struct vwu *v, struct vres *r, struct ct_delta_info *info)
{
	struct ct_mmap map = { 0 };
	char path[4096];
	int rc;

	if (r->w != NULL)
		return 0;
	rc = ct_server_upload_path(v->srv, r->name, path, sizeof(path));
	if (rc == 0)
		rc = ct_file_map(path, &map);
	if (rc < 0)
		return rc;
	if (v->j.max_upload > 0 && map.len > (uint64_t)v->j.max_upload) {
		rc = ct_error(CT_ETOOBIG, "%s: upload over the job's cap", r->name);
		goto out;
	}
	r->w = malloc(v->lora.n * sizeof(float));
	if (r->w == NULL) {
		rc = CT_ENOMEM;
		goto out;
	}
	rc = ct_lora_val_decode(&v->lora, &v->base.cfg, map.addr, map.len, r->w, info);
	if (rc == 0) {
		memcpy(r->sha, info->decoded_sha, 32);
		r->quant_error = info->quant_error;
		ct_val_stats(v->lora.init, r->w, v->lora.n, &r->st);
	} else {
		free(r->w);
		r->w = NULL;
	}
out:
	ct_file_unmap(&map);
	return rc;
}

static int decode_result(struct vwu *v, struct vres *r, int w_out, struct ct_delta_info *info)
{
	size_t n = v->base.lay.total;
	struct ct_vcheck c;
	char path[4096];
	double t0;
	int rc;

	if (v->lora.spec.rank > 0)
		return decode_lora(v, r, info);

	rc = base_need(v);
	if (rc == 0)
		rc = ct_server_upload_path(v->srv, r->name, path, sizeof(path));
	if (rc < 0)
		return rc;
	if (w_out)
		v->base_dirty = 1;	/* even when the decode fails half way */
	t0 = ct_time_mono_s();
	rc = ct_vcheck_scan(path, v->j.max_upload > 0 ? (uint64_t)v->j.max_upload : 0,
			    v->base.params, n, w_out ? v->base.params : NULL, &c);
	v->t_decode += ct_time_mono_s() - t0;
	if (rc == CT_ETOOBIG)
		ct_log_info("validator: %s: upload over the job's cap", r->name);
	*info = c.info;
	if (rc == 0) {
		memcpy(r->sha, c.info.decoded_sha, 32);
		r->quant_error = c.info.quant_error;
		r->st = c.st;
	}
	return rc;
}

static int same_model(const struct ct_delta_info *info, const struct ct_model_config *c)
{
	const struct ct_delta_model *m = &info->model;

	return m->max_seq_len == (uint32_t)c->maxT && m->vocab_size == (uint32_t)c->V &&
	       m->padded_vocab_size == (uint32_t)c->Vp && m->num_layers == (uint32_t)c->L &&
	       m->num_heads == (uint32_t)c->NH && m->channels == (uint32_t)c->C;
}

/* Remember what the check found, so the result is not decoded again. */
static int record_check(struct vwu *v, struct vres *r)
{
	struct ct_vcheck c;

	memset(&c, 0, sizeof(c));
	memcpy(c.info.decoded_sha, r->sha, 32);
	c.info.quant_error = r->quant_error;
	c.st.update_norm = r->st.update_norm;
	c.probe_loss = r->probe;
	return ct_vcheck_store(v->db, r->id, &c);
}

/* What a stored check found, copied into r. */
static void take_check(struct vres *r, const struct ct_vcheck *c)
{
	memcpy(r->sha, c->info.decoded_sha, 32);
	r->quant_error = c->info.quant_error;
	r->st.update_norm = c->st.update_norm;
	r->probe = c->probe_loss;
}

/* A result checked in an earlier pass: its record, or (none: checked
 * before records were kept) a streaming pass for its hash and norm; the
 * probe loss is the one stored on the result. */
static int recall_check(struct vwu *v, struct vres *r)
{
	struct ct_delta_info info;
	struct ct_vcheck c;
	int rc;

	rc = ct_vcheck_load(v->db, r->id, &c);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		take_check(r, &c);
		return 0;
	}
	return decode_result(v, r, 0, &info);
}

/* A result with the very same weights passed its checks already (an
 * exact replica, the usual case with conforming devices): its probe loss
 * is this one's too, so the probe runs once per distinct result. */
static int probe_known(struct vwu *v, struct vres *r)
{
	for (size_t i = 0; i < v->nr; i++) {
		const struct vres *o = &v->r[i];

		if (o != r && o->sane && o->quant_error == 0.0 && r->quant_error == 0.0 &&
		    memcmp(o->sha, r->sha, 32) == 0) {
			r->probe = o->probe;
			return 1;
		}
	}
	return 0;
}

/* The chain reported with an exact result, if any, must end in its hash
 * (validate/bisect.h): a chain that lies about the host's own result is
 * refused with the result. A lossy upload's hash is not the trained
 * floats' one, so its chain can be neither checked nor bisected
 * (doc/validation.md, "int8 uploads' chains"). */
static int check_chain(struct vwu *v, struct vres *r)
{
	static _Thread_local char chain[CT_CHAIN_HEX_MAX + 1];
	int rc;

	if (v->j.chain_every <= 0 || r->quant_error != 0.0)
		return 0;
	rc = ct_dl_chain_get(v->db, r->id, chain);
	if (rc <= 0)
		return rc;
	if (!ct_bisect_chain_true(chain, v->bound.steps, v->j.chain_every, r->sha))
		r->reason = CT_VAL_FALSE_CHAIN;
	else
		ct_log_info("validator: %s: hash chain of %d links ends in its result's hash",
			    r->name, ct_chain_nlinks(v->bound.steps, v->j.chain_every));
	return 0;
}

/* r failed a check of its own (r->reason). */
static int refuse(struct vres *r)
{
	ct_log_info("validator: %s rejected: %s", r->name, ct_val_reason_name(r->reason));
	r->new_state = CT_VS_INVALID;
	return 0;
}

/* All checks a new result must pass on its own; sets r->reason. Returns
 * < 0 only for failures of the server itself (memory, probe machinery). */
static int check_new(struct vwu *v, struct vres *r)
{
	struct ct_delta_info info;
	struct ct_vcheck twin;
	unsigned char want[32];
	float *merged = NULL;
	int rc;

	/* an exact copy of an upload that passed: same verdict, no decode */
	rc = ct_vcheck_twin(v->db, r->id, &twin);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		take_check(r, &twin);
		rc = check_chain(v, r);
		if (rc < 0 || r->reason != CT_VAL_OK)
			return rc < 0 ? rc : refuse(r);
		r->sane = 1;
		return record_check(v, r);
	}

	rc = decode_result(v, r, v->have_eval, &info);
	if (rc == CT_ENOMEM)
		return rc;
	if (rc == CT_EMISMATCH) {
		r->reason = CT_VAL_WRONG_SHAPE;
	} else if (rc < 0) {
		r->reason = CT_VAL_UNREADABLE;
		ct_log_info("validator: %s: %s", r->name, ct_errmsg(rc));
	} else if (ct_hex_decode(v->j.model_sha, want, 32) < 0 ||
		   memcmp(want, info.base_sha, 32) != 0) {
		r->reason = CT_VAL_WRONG_BASE;
	} else if (!same_model(&info, &v->base.cfg)) {
		r->reason = CT_VAL_WRONG_SHAPE;
	} else {
		r->reason = ct_val_sanity(&r->st, &v->bound,
					  v->lora.spec.rank > 0 ? 0.0 : v->max_ratio);
	}
	if (r->reason == CT_VAL_OK && v->lora.spec.rank > 0) {
		rc = base_need(v);
		if (rc == 0)
			rc = ct_lora_val_merged(&v->lora, &v->base, r->w, v->max_ratio, &merged,
						&r->reason);
		if (rc < 0)
			return rc;
	}
	if (r->reason == CT_VAL_OK && v->have_eval) {
		if (merged != NULL || !probe_known(v, r))
			rc = probe(v, merged != NULL ? merged : v->base.params, &r->probe);
		if (rc < 0) {
			free(merged);
			return rc;
		}
		if (!ct_val_loss_ok(r->probe, v->base_probe,
				    ct_val_margin(v->j.loss_margin, v->margin_rel, v->base_probe)))
			r->reason = CT_VAL_LOSS;
	}
	free(merged);
	if (r->reason == CT_VAL_OK) {
		rc = check_chain(v, r);
		if (rc < 0)
			return rc;
	}
	if (r->reason != CT_VAL_OK)
		return refuse(r);
	r->sane = 1;
	return record_check(v, r);
}

/* The canonical result's upload is gone (the WU was assimilated and its
 * files deleted): results still arriving can no longer be compared. */
static int too_late(struct vwu *v, struct vres *canon, int why)
{
	ct_log_info("validator: %s: canonical %s unreadable (%s): late results too late",
		    v->j.wu_name, canon->name, ct_errmsg(why));
	for (size_t i = 0; i < v->nr; i++) {
		v->r[i].sane = 0;
		free(v->r[i].w);
		v->r[i].w = NULL;
		if (v->r[i].state == CT_VS_INIT)
			v->r[i].new_state = CT_VS_TOO_LATE;
	}
	v->canonical_idx = -1;
	return 0;
}

/* Distance of two candidates' weights, streamed from their uploads. */
struct dist_ctx {
	struct vwu *v;
	size_t *map;
};

static int cand_dist(void *arg, size_t i, size_t j, double *dist)
{
	struct dist_ctx *d = arg;
	struct vwu *v = d->v;
	char pa[4096], pb[4096];
	int rc;

	if (v->lora.spec.rank > 0) {	/* adapters: small, decoded on demand */
		struct vres *a = &v->r[d->map[i]], *b = &v->r[d->map[j]];
		struct ct_delta_info info;
		double sum = 0.0;

		rc = decode_lora(v, a, &info);
		if (rc == 0)
			rc = decode_lora(v, b, &info);
		for (size_t k = 0; rc == 0 && k < v->lora.n; k++) {
			double x = (double)a->w[k] - (double)b->w[k];

			sum += x * x;
		}
		if (rc == 0)
			*dist = sqrt(sum);
		return rc;
	}
	rc = base_need(v);
	if (rc == 0)
		rc = ct_server_upload_path(v->srv, v->r[d->map[i]].name, pa, sizeof(pa));
	if (rc == 0)
		rc = ct_server_upload_path(v->srv, v->r[d->map[j]].name, pb, sizeof(pb));
	if (rc == 0)
		rc = ct_vcheck_distance(pa, pb, 0, v->base.params, v->base.lay.total, dist);
	return rc;
}

/* The WU's hyperparameters as the scheduler sent them (the client's
 * ct_task_hparams reads the same values). */
static void wu_hparams(const struct vwu *v, struct ct_wu_hparams *hp)
{
	ct_wu_hparams_default(hp);
	hp->steps = v->bound.steps;
	hp->B = v->j.batch;
	hp->T = v->j.seq;
	hp->lr = (float)v->bound.lr;
	hp->beta1 = (float)v->bound.beta1;
	hp->beta2 = (float)v->bound.beta2;
	hp->eps = (float)v->j.eps;
	hp->weight_decay = (float)v->bound.weight_decay;
	hp->grad_clip = (float)v->j.grad_clip;
	hp->lora = v->lora.spec;
	hp->lora_seed = v->lora.seed;
}

/* The dispute of results idx[0] and idx[1] (validate/dispute.h); *link
 * as ct_dispute_run's. */
static int dispute_of(struct vwu *v, const size_t idx[2], int *out, int *link)
{
	struct ct_dispute_wu w = { .wuid = v->j.wuid, .wu_name = v->j.wu_name,
				   .model_sha = v->j.model_sha, .data_sha = v->j.data_sha,
				   .every = v->j.chain_every, .device = ct_seval_device(v->srv),
				   .lora_init = v->lora.carried ? v->lora.init : NULL };

	wu_hparams(v, &w.hp);
	for (int k = 0; k < 2; k++) {
		const struct vres *r = &v->r[idx[k]];

		w.r[k] = (struct ct_dispute_res){ .id = r->id, .hostid = r->hostid,
						  .name = r->name, .exact = r->quant_error == 0.0,
						  .conforming = r->conforming };
		memcpy(w.r[k].sha, r->sha, 32);
	}
	return ct_dispute_run(v->srv, v->db, &w, out, link);
}

/* Results newly valid beside the canonical one by tolerance (a device
 * that does not conform): their chains say where the runs parted (the
 * log); nothing is decided by them. */
static int note_tolerance(struct vwu *v)
{
	size_t idx[2] = { (size_t)v->canonical_idx, 0 };
	int rc = 0, out, link;

	for (size_t i = 0; rc == 0 && v->j.chain_every > 0 && i < v->nr; i++) {
		const struct vres *r = &v->r[i];

		idx[1] = i;
		if ((int)i != v->canonical_idx && r->state == CT_VS_INIT &&
		    r->new_state == CT_VS_VALID &&
		    memcmp(r->sha, v->r[v->canonical_idx].sha, 32) != 0 &&
		    !(r->conforming && v->r[v->canonical_idx].conforming))
			rc = dispute_of(v, idx, &out, &link);
	}
	return rc;
}

/* No quorum, and exactly two sane results still in play that differ by
 * hash: bisect their chains (validate/dispute.h) rather than wait for a
 * third replica. */
static int dispute(struct vwu *v)
{
	size_t idx[2], n = 0;
	int rc, out, link;

	for (size_t i = 0; i < v->nr; i++)
		if (v->r[i].sane && v->r[i].new_state == CT_VS_INCONCLUSIVE && n++ < 2)
			idx[n - 1] = i;
	if (n != 2 || v->j.chain_every <= 0 ||
	    memcmp(v->r[idx[0]].sha, v->r[idx[1]].sha, 32) == 0)
		return 0;
	rc = dispute_of(v, idx, &out, &link);
	if (rc < 0)
		return rc;
	if (out == CT_DISPUTE_WAIT)
		v->hold = 1;
	if (out == CT_DISPUTE_FIRST || out == CT_DISPUTE_SECOND) {
		int win = out == CT_DISPUTE_SECOND;

		v->r[idx[win]].new_state = CT_VS_VALID;
		v->r[idx[!win]].new_state = CT_VS_INVALID;
		v->canonical_idx = (int)idx[win];
		v->settled_link = link;
	}
	if (out == CT_DISPUTE_FIRST_FALSE || out == CT_DISPUTE_SECOND_FALSE)
		v->r[idx[out == CT_DISPUTE_SECOND_FALSE]].new_state = CT_VS_INVALID;
	return 0;
}

/* Check new results, recall the others, run the quorum: hashes first,
 * uploads streamed only for pairs that need a distance. */
static int evaluate(struct vwu *v)
{
	struct ct_val_cand c[VAL_MAX_CANDS];
	size_t map[VAL_MAX_CANDS], nc = 0;
	struct dist_ctx dc = { v, map };
	int rc, best;

	/* results checked before first: new replicas of them skip the probe */
	for (size_t k = 0; k < 2 * v->nr; k++) {
		struct vres *r = &v->r[k % v->nr];

		if ((r->state == CT_VS_INIT) != (k >= v->nr))
			continue;
		if (r->state == CT_VS_INIT) {
			rc = check_new(v, r);
			if (rc < 0)
				return rc;
		} else {
			/* passed before: what it was is recorded */
			rc = recall_check(v, r);
			if (rc == CT_ENOMEM || rc == CT_EDB)
				return rc;
			if (rc == 0)
				r->sane = 1;
			else if (r->state == CT_VS_VALID)
				return too_late(v, r, rc);	/* decides nothing else */
			else
				r->new_state = CT_VS_INVALID, r->reason = CT_VAL_UNREADABLE;
		}
		if (!r->sane)
			continue;
		memset(&c[nc], 0, sizeof(c[nc]));
		c[nc].id = r->id;
		c[nc].state = r->state;
		c[nc].conforming = r->conforming;
		memcpy(c[nc].sha, r->sha, 32);
		c[nc].update_norm = r->st.update_norm;
		c[nc].probe_loss = r->probe;
		c[nc].quant_error = r->quant_error;
		map[nc++] = k % v->nr;
	}
	rc = ct_val_decide_fn(c, nc, v->j.min_quorum, v->j.tolerance, cand_dist, &dc, &best);
	if (rc < 0 && v->canonical_idx >= 0 && rc != CT_ENOMEM && rc != CT_EDB)
		return too_late(v, &v->r[v->canonical_idx], rc);
	if (rc < 0)
		return rc;
	for (size_t k = 0; k < nc; k++)
		v->r[map[k]].new_state = c[k].new_state;
	v->canonical_idx = best >= 0 ? (int)map[best] : -1;
	return best >= 0 ? note_tolerance(v) : dispute(v);
}

/* ---- one WU: applying the outcome -------------------------------------------- */

/* Host bookkeeping for adaptive replication and statistics. */
static int host_account(struct ct_db *db, int64_t hostid, int state)
{
	if (hostid <= 0)
		return 0;
	if (state == CT_VS_VALID)
		return ct_host_count_valid(db, hostid);
	if (state == CT_VS_INVALID)
		return ct_host_count_invalid(db, hostid);
	return 0;
}

/* Move one result from the state it was read in to its new state; 1 if
 * this transaction made the change. */
static int apply_result(struct ct_db *db, struct vwu *v, struct vres *r, int64_t now)
{
	char msg[128];
	int rc;

	if (r->new_state == r->state && r->state != CT_VS_INIT)
		return 0;
	if (r->reason != CT_VAL_OK) {
		if (r->reason == CT_VAL_LOSS)	/* say by how much: the operator may
						 * have to change the margin */
			snprintf(msg, sizeof(msg), "validator: probe_loss %.4f > %.4f + %.4f",
				 r->probe, v->base_probe, ct_val_margin(v->j.loss_margin,
				 v->margin_rel, v->base_probe));
		else
			snprintf(msg, sizeof(msg), "validator: %s",
				 ct_val_reason_name(r->reason));
		rc = ct_res_move(db, r->id, ct_res_validated(r->state), CT_RES_VALIDATE_ERROR,
				 &(struct ct_res_change){ .now = now, .error_message = msg });
	} else {
		rc = ct_res_move(db, r->id, ct_res_validated(r->state),
				 ct_res_validated(r->new_state),
				 &(struct ct_res_change){ .now = now, .has_probe = r->sane,
							  .probe_loss = r->probe,
							  .update_norm = r->st.update_norm });
	}
	if (rc <= 0)
		return rc;
	rc = host_account(db, r->hostid, r->new_state);
	if (rc >= 0 && r->new_state == CT_VS_VALID)
		rc = ct_credit_grant(db, r->id, v->credit, now);
	return rc < 0 ? rc : 1;
}

static int apply_wu(struct ct_db *db, struct vwu *v, int64_t now)
{
	int64_t nsane = 0, waiting = 0;
	int rc;

	for (size_t i = 0; i < v->nr; i++)
		nsane += v->r[i].new_state == CT_VS_INCONCLUSIVE;
	if (v->j.canonical == 0 && v->canonical_idx >= 0) {
		/* OPEN -> READY by the WU's state owner (the row is locked and
		 * unchanged since the decision: states_unchanged) */
		rc = ct_wu_move(db, v->j.wuid, CT_WU_OPEN, CT_WU_READY,
				&(struct ct_wu_change){ .now = now,
							.resultid = v->r[v->canonical_idx].id,
							.credit = v->credit, .flops = v->flops });
		if (rc < 0)
			return rc;
		ct_log_info("validator: %s: canonical result %s", v->j.wu_name,
			    v->r[v->canonical_idx].name);
		/* for the receipt (data/dl_receipt.h): which link the server
		 * vouches for itself */
		if (v->settled_link >= 0)
			rc = ct_dl_chain_settled(db, v->r[v->canonical_idx].id, v->settled_link);
		if (rc < 0)
			return rc;
	} else if (v->j.canonical == 0 && nsane > 0 && !v->hold) {
		/* disagreement: one more replica than the results that may
		 * still agree (the transitioner creates it, within the caps) */
		rc = ct_wu_raise_target(db, v->j.wuid, nsane + 1);
		if (rc < 0)
			return rc;
		if (rc > 0)
			ct_log_info("validator: %s: no agreement among %lld results, one more "
				    "replica", v->j.wu_name, (long long)nsane);
	}
	rc = ct_result_count_unvalidated(db, v->j.wuid, &waiting);
	if (rc < 0)
		return rc;
	rc = ct_wu_need_validate(db, v->j.wuid, waiting > 0, now);
	return rc < 0 ? rc : 0;
}

/* 1 if every result this pass read still has the validate_state it was
 * read in (rs: the WU's results as ct_wu_lock read them, locked). Another
 * validator may have moved one meanwhile: deciding on the stale states
 * would leave that result stuck where the other one put it. */
static int states_unchanged(const struct vwu *v, const struct ct_result_row *rs, size_t n)
{
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < v->nr; i++)
			if (v->r[i].id == rs[k].id && v->r[i].state != rs[k].validate_state)
				return 0;
	return 1;
}

static int apply_txn(struct ct_db *db, void *arg)
{
	struct vwu *v = arg;
	int64_t now = ct_db_now(db);
	struct ct_result_row *rs = NULL;
	struct ct_workunit_row w;
	size_t nrs = 0;
	int rc, changed = 0, same;

	rc = ct_wu_lock(db, v->j.wuid, &w, &rs, &nrs);
	if (rc < 0)
		return rc;
	same = states_unchanged(v, rs, nrs);
	free(rs);
	if (w.canonical_resultid != v->j.canonical || w.error_mask != 0)
		return 0;	/* another validator decided it, or it failed, meanwhile
				 * (the next pass drops a failed one) */
	if (!same) {	/* changed under us: decide again on what is there now */
		rc = ct_wu_need_validate(db, v->j.wuid, 1, -1);
		return rc < 0 ? rc : 0;
	}
	for (size_t i = 0; i < v->nr; i++) {
		rc = apply_result(db, v, &v->r[i], now);
		if (rc < 0)
			return rc;
		changed += rc;
	}
	rc = apply_wu(db, v, now);
	return rc < 0 ? rc : changed;
}

/* ---- the daemon ------------------------------------------------------------------ */

static void vwu_free(struct vwu *v)
{
	for (size_t i = 0; i < v->nr; i++)
		free(v->r[i].w);
	ct_gpt2_free(&v->base);
	ct_tokens_free(&v->eval);
	ct_lora_val_close(&v->lora);
	free(v);
}

/* What results are a delta of, and for a LoRA job its credit. */
static int lora_setup(struct ct_db *db, struct vwu *v)
{
	int rc = ct_lora_val_open(v->srv, db, v->j.jobid, v->j.wuid, &v->base.cfg, &v->lora);
	int lora = v->lora.spec.rank > 0;

	v->ref = lora ? v->lora.init : v->base.params;
	v->n = lora ? v->lora.n : v->base.lay.total;
	if (rc == 0 && lora) {
		v->flops = ct_lora_wu_flops(&v->base.cfg, &v->lora.spec, v->j.seq, v->j.batch,
					    v->bound.steps);
		v->credit = ct_credit_from_flops(v->flops);
	}
	return rc;
}

/* The job stopped or the WU failed: nothing to validate any more. */
static int drop_wu(struct ct_db *db, int64_t wuid)
{
	int rc = ct_wu_need_validate(db, wuid, 0, -1);

	return rc < 0 ? rc : 0;
}

/* Validate one WU. Returns 1 if something was decided, 0 if not, < 0 on
 * errors of the server (the WU stays flagged and is retried). */
static int validate_wu(struct ct_server *srv, struct ct_db *db, int64_t wuid)
{
	struct vwu *v = calloc(1, sizeof(*v));
	double t0 = ct_time_mono_s();
	int rc, held = 0;

	if (v == NULL)
		return CT_ENOMEM;
	v->srv = srv;
	v->db = db;
	rc = ct_conf_get_double(srv->conf, "daemons.max_update_ratio", 1.0, 0.0, 1e9,
				&v->max_ratio);
	if (rc == 0)
		rc = ct_conf_get_double(srv->conf, "daemons.loss_margin_rel", 0.2, 0.0, 100.0,
					&v->margin_rel);
	if (rc == 0)
		rc = load_job(db, wuid, v);
	if (rc < 0)
		goto out;
	if (v->j.job_status != CT_JOB_RUNNING || v->j.error_mask != 0) {
		rc = ct_dispute_close(srv, db, wuid);
		if (rc == 0)
			rc = drop_wu(db, wuid);
		goto out;
	}
	ct_seval_hold();	/* the assimilator's models are not in memory meanwhile */
	held = 1;
	rc = load_results(db, v);
	if (rc == 0)
		rc = load_inputs(v);
	if (rc == 0)
		rc = lora_setup(db, v);
	if (rc == 0)
		rc = probe_reference(v);	/* drops the base while it runs */
	if (rc == CT_ERANGE) {
		ct_log_warn("validator: %s: eval tokens too short for a probe; probe skipped",
			    v->j.wu_name);
		v->have_eval = 0;
		rc = 0;
	}
	if (rc == 0)
		rc = evaluate(v);
	if (rc == 0 && v->canonical_idx >= 0 && !v->hold)	/* decided: no dispute left */
		rc = ct_dispute_close(srv, db, wuid);
	if (rc == 0)
		rc = ct_db_txn(db, apply_txn, v);
	if (rc > 0)	/* bench/bench_job.sh reads this line */
		ct_log_info("validator: %s: %zu result(s) in %.2f s (models read %.2f s, "
			    "decode %.2f s, probes %.2f s)", v->j.wu_name, v->nr,
			    ct_time_mono_s() - t0, v->t_load, v->t_decode, v->t_probe);
out:
	vwu_free(v);
	if (held)
		ct_seval_release();
	return rc < 0 ? rc : (rc > 0);
}

/* WUs of this instance's share whose dispute can move (dl_chain.h: a
 * state uploaded, or asked and past its deadline), after the n ids
 * already in ids. */
static int claim_disputes(struct ct_db *db, int64_t *ids, size_t cap, size_t *n,
			 int64_t nshare, int64_t k)
{
	int64_t late[VAL_BATCH];
	size_t nl = 0;
	int rc = ct_dl_state_req_due(db, ct_db_now(db), late, VAL_BATCH, &nl);

	for (size_t i = 0; rc == 0 && i < nl && *n < cap; i++) {
		int dup = 0;

		for (size_t j = 0; j < *n; j++)
			dup |= ids[j] == late[i];
		if (!dup && late[i] % nshare == k)
			ids[(*n)++] = late[i];
	}
	return rc;
}

/* The WUs with successes to validate, of this instance's share. */
static int claim_to_validate(struct ct_server *srv, struct ct_db *db, int64_t *ids,
			     size_t cap, size_t *n, void *arg)
{
	int64_t nshare, k;
	int rc;

	(void)srv;
	(void)arg;
	rc = ct_instance_share(db, &nshare, &k);	/* this instance's WUs (instance.h) */
	if (rc < 0)
		return rc;
	rc = ct_wu_validate_ids(db, nshare, k, ids, cap, n);
	if (rc == 0 && *n < cap)	/* disputes with a state, or past its deadline */
		rc = claim_disputes(db, ids, cap, n, nshare, k);
	return rc;
}

static int validate_item(struct ct_server *srv, struct ct_db *db, int64_t wuid, void *arg)
{
	(void)arg;
	return validate_wu(srv, db, wuid);
}

static struct ct_pass_backoff validator_backoff = CT_PASS_BACKOFF_INIT;

int ct_validator_run_once(struct ct_server *srv, struct ct_db *db)
{
	static const struct ct_pass pass = {
		.name = "validator", .batch = VAL_BATCH, .claim = claim_to_validate,
		.handle = validate_item, .backoff = &validator_backoff,
	};

	return ct_pass_run(srv, db, &pass, NULL);
}
