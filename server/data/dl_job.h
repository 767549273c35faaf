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
	int status;			/* enum ct_job_status (db.h) */
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

/* Job `id`'s status (a plain read: no lock) into *status. Returns 0,
 * CT_ENOTFOUND or a db error. */
int ct_job_status(struct ct_db *db, int64_t id, int *status);

#endif
