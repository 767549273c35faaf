/*
 * dl_job.h - the `job` table's row and its named reads (the data layer,
 * dl.h). Writes of job.status belong to job_state.h; the work generator
 * inserts jobs (wg.h).
 *
 * Strings are copied into members sized to their columns (utf8mb4: four
 * bytes a character), so a row owns nothing.
 */
#ifndef CT_DL_JOB_H
#define CT_DL_JOB_H

#include <stddef.h>
#include <stdint.h>

struct ct_db;

struct ct_job_row {
	int64_t id;
	char name[4 * 128 + 1];
	int status;			/* enum ct_job_status (job_state.h) */
	int cur_round, nrounds, nshards;
	int steps, batch, seq;
	double lr;
	int min_quorum, target_nresults;
	int probe_tokens;		/* 0: the default (ct_val_probe_tokens) */
	int64_t eval_tokens;		/* 0: the default (ct_seval_job_tokens) */
	char aggregation[17];		/* mean, trimmed or median */
	char outer_method[17];		/* mean, sgd or nesterov (ct_outer.h) */
	double outer_lr, outer_momentum;
	double round_quorum;		/* 1: a round waits for every WU */
	int round_timeout;		/* s after opening before it may close early */
	char model_sha256[65], final_model_sha256[65];	/* "" until done */
	char error_message[4 * 255 + 1];
	double final_eval_loss;		/* NAN while there is none */
};

/* Job `id` into *j. Returns 0, CT_ENOTFOUND, or a db error. */
int ct_job_get(struct ct_db *db, int64_t id, struct ct_job_row *j);

/* Every job, oldest first, into a malloc'd array *jobs (free() it; NULL
 * when there are none) of *n rows. Returns 0, CT_ENOMEM or a db error. */
int ct_job_list(struct ct_db *db, struct ct_job_row **jobs, size_t *n);

/* A new job's row, as the work generator fills it (wg.c: its defaults
 * applied). Strings are borrowed. */
struct ct_job_new {
	const char *name, *model_sha256, *train_sha256, *eval_sha256;
	const char *upload_encoding, *aggregation;
	int64_t now, model_size, max_upload_bytes, seed, eval_tokens, probe_tokens;
	int nshards, nrounds, steps, batch, seq;
	double lr, beta1, beta2, eps, weight_decay, grad_clip, tolerance, loss_margin;
	int min_quorum, target_nresults, max_error_results, max_total_results;
	int max_success_results, delay_bound, adaptive_replication;
};

/* Insert job j, RUNNING, into *id. Returns 0 or a db error. */
int ct_job_insert(struct ct_db *db, const struct ct_job_new *j, int64_t *id);

/* A job's settings after its insert, each written once at submit: the
 * outer optimizer (ct_outer.h's name, lr, momentum), when a round may close
 * early (round_quorum, round_timeout), what one WU needs in memory
 * on OpenCL and on the C reference (wu_mem_bytes, wu_mem_ref_bytes:
 * eligibility.h) with the steps between its hash chain's
 * links (chain_every, ct_chain.h). Return 0 or a db error. */
int ct_job_set_outer(struct ct_db *db, int64_t id, const char *method, double lr,
		     double momentum);
int ct_job_set_round_close(struct ct_db *db, int64_t id, double quorum, int timeout);
int ct_job_set_wu_needs(struct ct_db *db, int64_t id, int64_t bytes, int64_t ref_bytes,
			int chain_every);

/* Round idx of job id is open: cur_round is at least idx, update_time now.
 * Returns 0 or a db error. */
int ct_job_set_cur_round(struct ct_db *db, int64_t id, int idx, int64_t now);

/* Job id's base loss, unless it has one; its update_time. Return 0 or a
 * db error. */
int ct_job_set_base_loss(struct ct_db *db, int64_t id, double loss);
int ct_job_touch(struct ct_db *db, int64_t id, int64_t now);

/* Job id's loss_margin (how far a round's average may raise the eval loss)
 * into *margin. Returns 0, CT_ENOTFOUND or a db error. */
int ct_job_loss_margin(struct ct_db *db, int64_t id, double *margin);

/* What opening a round copies from its job into each WU. */
struct ct_job_policy {
	int status, nshards, nrounds, target_nresults, min_quorum, max_error_results;
	int max_total_results, max_success_results, delay_bound;
	int64_t seed;
};

/* Lock job id's row for the calling transaction and read its policy into
 * *p. Returns 0, CT_ENOTFOUND (saying so) or a db error. */
int ct_job_lock_policy(struct ct_db *db, int64_t id, struct ct_job_policy *p);

/* One token shard of a job (table job_shard): its file and size. */
struct ct_job_shard_row {
	char sha256[65];
	int64_t size, ntokens;
};

/* Record shard k of job jobid; read it back. Return 0, CT_ENOTFOUND (get:
 * saying so) or a db error. */
int ct_job_shard_put(struct ct_db *db, int64_t jobid, int k, const struct ct_job_shard_row *r);
int ct_job_shard_get(struct ct_db *db, int64_t jobid, int k, struct ct_job_shard_row *r);

/* Job `id`'s status (a plain read: no lock) into *status. Returns 0,
 * CT_ENOTFOUND or a db error. */
int ct_job_status(struct ct_db *db, int64_t id, int *status);

/* The model job id exports: round `round`'s average (round > 0) or the
 * job's final model (0) into sha (65 bytes; "" while there is none).
 * Returns 0 or a db error. */
int ct_job_model(struct ct_db *db, int64_t id, int round, char sha[65]);

/* A notice on running job id's page (job.error_message, shown by the job
 * page and `job show`): ct_job_notice_first writes msg when the job has
 * none yet; ct_job_notice_prepend puts msg before the one there is (the
 * whole cut to the column's 255 characters). Return 1, 0 (the job is not
 * running, or has a notice: nothing written) or a db error. */
int ct_job_notice_first(struct ct_db *db, int64_t id, const char *msg);
int ct_job_notice_prepend(struct ct_db *db, int64_t id, const char *msg);

#endif
