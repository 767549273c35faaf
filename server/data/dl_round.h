/*
 * dl_round.h - the `round` table's row and its named reads (the data
 * layer, dl.h). A round is opened by the work generator (wg.h) and closed
 * by the assimilator, the transitioner (error) or a cancel; its status is
 * written by wu_state.h only.
 */
#ifndef CT_DL_ROUND_H
#define CT_DL_ROUND_H

#include <stddef.h>
#include <stdint.h>

struct ct_db;

struct ct_round_row {
	int idx;			/* 1-based */
	int status;			/* enum ct_round_status (wu_state.h) */
	int nwus, nwus_done;
	double base_eval_loss, eval_loss;	/* NAN while there is none */
	char model_sha256[65], out_model_sha256[65];	/* out: "" until averaged */
	int64_t finish_time;		/* 0 while open, and after an error */
};

/* Every round of job `jobid`, oldest first, into a malloc'd array *rounds
 * (free() it; NULL when there are none) of *n rows. Returns 0, CT_ENOMEM or
 * a db error. */
int ct_round_list(struct ct_db *db, int64_t jobid, struct ct_round_row **rounds,
		  size_t *n);

/* The model of round *idx of job jobid (0: the job's base; -1: the newest
 * averaged round, whose index goes into *idx) into sha (65 bytes).
 * Returns 0, CT_ENOTFOUND (saying which is missing) or a db error. */
int ct_round_model_find(struct ct_db *db, int64_t jobid, int64_t *idx, char sha[65]);

/* Record how many evaluation tokens round roundid's losses read. Returns 0
 * or a db error. */
int ct_round_set_eval_ntokens(struct ct_db *db, int64_t roundid, int64_t ntokens);

/* Round idx of job jobid's id into *id. Returns 0, CT_ENOTFOUND or a db
 * error. */
int ct_round_find(struct ct_db *db, int64_t jobid, int idx, int64_t *id);

/* Open round idx of job jobid from model sha with nwus WUs (status OPEN,
 * created now) into *id. Returns 0 or a db error (CT_EDUP: it exists). */
int ct_round_insert(struct ct_db *db, int64_t jobid, int idx, const char *sha, int nwus,
		    int64_t now, int64_t *id);

/* An open round with what averaging it needs of its job (the assimilator,
 * in its SELECT's order). */
struct ct_round_open_row {
	int64_t id, jobid;
	int idx, nwus;
	char model_sha[65];	/* the round's base */
	int nrounds, job_status, batch, seq;
	char eval_sha[65], aggregation[17];	/* the job's eval tokens, its rule */
	double base_loss;	/* the base's eval loss when has_base_loss */
	int has_base_loss;
	char outer_method[17];	/* ct_outer.h */
	double outer_lr, outer_momentum;
	char lora_init_sha[65];	/* the adapters its WUs start from; "" none */
};

/* Round roundid, when it is OPEN, with its job's settings into *r.
 * Returns 0, CT_ENOTFOUND (no such round, or not open) or a db error. */
int ct_round_get_open(struct ct_db *db, int64_t roundid, struct ct_round_open_row *r);

/* The eval loss of round idx of job jobid, when its average is model sha
 * and was evaluated, into *loss. Returns 0, CT_ENOTFOUND or a db error. */
int ct_round_out_loss(struct ct_db *db, int64_t jobid, int idx, const char *sha,
		      double *loss);

/* The outer optimizer's momentum file of done round idx of job jobid into
 * sha (65 bytes; "" when it has none or is not done). Returns 0 or a db
 * error. Set it on round id with ct_round_set_momentum. */
int ct_round_momentum(struct ct_db *db, int64_t jobid, int idx, char sha[65]);
int ct_round_set_momentum(struct ct_db *db, int64_t id, const char *sha);

/* The adapter file (engine/ct_lora_file.h) that the WUs of round idx of
 * job jobid start from, into sha (65 bytes; "" when they start from
 * ct_lora_init: every round but a compact-base LoRA job's round >= 2;
 * doc/workunit.md §13). Returns 0, CT_ENOTFOUND (no such round) or a db
 * error. Set on round id, in the transaction that opens it, with
 * ct_round_set_lora_init. */
int ct_round_lora_init(struct ct_db *db, int64_t jobid, int idx, char sha[65]);
/* The same for round roundid, and for the round of WU wuid. */
int ct_round_lora_init_id(struct ct_db *db, int64_t roundid, char sha[65]);
int ct_round_lora_init_wu(struct ct_db *db, int64_t wuid, char sha[65]);
int ct_round_set_lora_init(struct ct_db *db, int64_t id, const char *sha);

/* The eval loss of round idx of job jobid, once evaluated, into *loss.
 * Returns 0, CT_ENOTFOUND or a db error. */
int ct_round_eval_loss(struct ct_db *db, int64_t jobid, int idx, double *loss);

/* Record open round id's base loss unless it has one. Returns 0 or a db
 * error. */
int ct_round_set_base_loss(struct ct_db *db, int64_t id, double loss);

/* The first open round 1 of a running job, of the share k of nshare (id
 * mod nshare = k), whose base loss is not known, into *id (0: none).
 * Returns 0 or a db error. */
int ct_round_next_base_loss(struct ct_db *db, int64_t nshare, int64_t k, int64_t *id);

/* The ids of the first `cap` open rounds of the share k of nshare ready to
 * average at `now`: every WU has its canonical result handed over, or
 * (job.round_quorum < 1) round_timeout seconds after the round opened at
 * least ceil(round_quorum * nwus) of them (at least one) have. Into
 * ids[0..*n), by id. Returns 0 or a db error. */
int ct_round_ready_ids(struct ct_db *db, int64_t now, int64_t nshare, int64_t k, int64_t *ids,
		       size_t cap, size_t *n);

#endif
