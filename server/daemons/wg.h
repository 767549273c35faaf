/*
 * wg.h - the work generator: turns a submitted job into stored inputs and
 * rounds of work units.
 *
 * Job submission (ct_wg_submit) stores the base model, the training tokens
 * and the evaluation tokens in the content-addressed store, splits the
 * training tokens into K contiguous shards (each its own llm.c token file,
 * stored too), inserts the job and opens round 1. The assimilator opens each
 * following round with ct_wg_open_round() from the averaged model.
 *
 * Round r, shard k becomes WU "j<job>-r<r>-s<k>" with seed
 * s(r,k) = splitmix64(job.seed ^ (r << 32) ^ k) & INT64_MAX and
 * job.target_nresults results named "<wu>-<n>" in state UNSENT.
 */
#ifndef CT_WG_H
#define CT_WG_H

#include <stdint.h>

#include "ct_lora.h"

struct ct_server;
struct ct_db;

/* What `ctune-server job submit` takes. Zero/NULL fields get defaults
 * (documented in doc/operator.md). */
struct ct_job_spec {
	const char *name;
	const char *model_path, *train_path, *eval_path;
	int shards, rounds, steps, batch, seq;
	double lr, beta1, beta2, eps, weight_decay, grad_clip;
	int64_t seed;
	int quorum, replicas;		/* min_quorum, target_nresults */
	int max_error_results, max_total_results;
	int delay_bound;		/* seconds */
	double tolerance, loss_margin;
	int adaptive;			/* -1: default (on) */
	const char *upload_encoding;	/* "lossless" (default) or "int8" */
	int64_t eval_tokens;		/* round evaluation size, 0 = default (eval.h) */
	const char *aggregation;	/* "mean" (default), "trimmed" or "median" (ct_avg) */
	/* the outer optimizer (ct_outer.h): "mean" (NULL: default) takes the
	 * aggregate as it is; "sgd"/"nesterov" step on it with outer_lr (0:
	 * 0.7) and outer_momentum (< 0: 0.9) */
	const char *outer;
	double outer_lr, outer_momentum;
	/* a round closes once this fraction of its WUs is done (0: 1.0, all)
	 * and round_timeout seconds have passed since it opened; the rest are
	 * abandoned. Not for LoRA jobs yet. */
	double round_quorum;
	int round_timeout;
	int64_t probe_tokens;		/* validator's probe size, 0 = default (ct_val_probe_tokens) */
	/* LoRA: rank 0 trains every weight; rank > 0 trains adapters (alpha
	 * 0: alpha = rank; targets 0: all four). lora_job.h */
	struct ct_lora_spec lora;
};

/* Submit a job: validate the spec and the input files (checkpoint header
 * and size, token files, every token in the model's vocabulary, enough
 * tokens for K shards of at least B*T+1 tokens and for evaluation), store
 * the files, insert the job and open round 1. *jobid_out gets the new id.
 * Returns 0 or CT_EINVAL / CT_EFORMAT / CT_EMISMATCH (token outside the
 * vocabulary; the detail says which input is wrong), file or db errors.
 * A failed check stores nothing. */
int ct_wg_submit(struct ct_server *srv, struct ct_db *db,
		 const struct ct_job_spec *spec, int64_t *jobid_out);

/* Open round `round_idx` (1-based) of job `jobid` from the model with hash
 * model_sha256 (already in the store): insert the `round` row, its K WUs
 * and their results, and set job.cur_round, in one transaction. Idempotent:
 * if the round exists already, returns 0 and changes nothing (so an
 * assimilator that crashed after calling it can call it again). Returns
 * CT_ENOTFOUND (no such job / model not in store), CT_ESTATE (job not
 * running), CT_ERANGE (round_idx > job.nrounds) or a db error. */
int ct_wg_open_round(struct ct_server *srv, struct ct_db *db, int64_t jobid,
		     int round_idx, const char *model_sha256);

/* ct_wg_open_round, and the round's WUs start their adapters from the
 * adapter file lora_init (a hash of the store, ct_lora_file.h; NULL: from
 * ct_lora_init of the seed): a compact-base LoRA job's round r+1 from
 * round r's mean adapters (doc/workunit.md §13). The scheduler names the
 * file as each WU's "lora_init" input (lora_job.h). CT_ENOTFOUND also
 * when lora_init is not in the store. */
int ct_wg_open_round_from(struct ct_server *srv, struct ct_db *db, int64_t jobid,
			  int round_idx, const char *model_sha256, const char *lora_init);

/* The seed of WU (round_idx, shard) of a job with seed job_seed. The WUs
 * of a LoRA job's round all get shard 0's (their adapters start alike). */
int64_t ct_wg_wu_seed(int64_t job_seed, int round_idx, int shard);

#endif
