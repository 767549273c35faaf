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
	int status;			/* enum ct_round_status (db.h) */
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

#endif
