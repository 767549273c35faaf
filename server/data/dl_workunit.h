/*
 * dl_workunit.h - the `workunit` table's row and the one function that
 * locks a work unit (the data layer, dl.h). Writes of the state columns
 * belong to wu_state.h.
 */
#ifndef CT_DL_WORKUNIT_H
#define CT_DL_WORKUNIT_H

#include <stddef.h>
#include <stdint.h>

struct ct_db;
struct ct_result_row;

struct ct_workunit_row {
	int64_t id, jobid, roundid, canonical_resultid;
	char name[65];
	int target_nresults, max_error_results, max_total_results, max_success_results;
	int error_mask, assimilate_state, file_delete_state, need_validate;
	int64_t transition_time;
};

/* Lock work unit `wuid` for the calling transaction (SELECT ... FOR
 * UPDATE) and read every member of *w; with rs non-NULL, then lock its
 * results too and read them into *rs (malloc'd, free() it; NULL when there
 * are none; *n rows, in id order: id, name, hostid, the state columns,
 * report_deadline, sent_time, received_time).
 * The rows are taken in lock_order.h's order: the WU, then its results.
 * Every transaction that locks a WU does it here. Returns 0, CT_ENOTFOUND
 * (no such WU; nothing is read), CT_ENOMEM or a db error (CT_EAGAIN: a
 * deadlock, retry the transaction). */
int ct_wu_lock(struct ct_db *db, int64_t wuid, struct ct_workunit_row *w, struct ct_result_row **rs,
	       size_t *n);

/* Lock the work units ids[0..n) (ascending, distinct, any n) for the
 * calling transaction, in id order (CT_DL_IN_MAX a statement), and read
 * WU ids[i]'s members into rows[i] as ct_wu_lock does (all zero when there
 * is no such WU), without their results: the transitioner's passes over
 * several WUs. Returns 0 or a db error (CT_EAGAIN: retry the transaction). */
int ct_wu_lock_rows(struct ct_db *db, const int64_t *ids, int n, struct ct_workunit_row *rows);

/* A work unit as the scheduler reads it under its lock: what its rules,
 * the claim and the reply need (every member from the row). */
struct ct_wu_sched_row {
	int64_t id, jobid, roundid, round_idx, shard, seed, model_size, data_size;
	int error_mask, delay_bound, min_quorum;
	char name[65], model_sha256[65], data_sha256[65];
};

/* Lock the work units ids[0..n) (ascending, distinct, any n) for the
 * calling transaction, in id order (CT_DL_IN_MAX a statement), without
 * their results: the scheduler's claim and reports of several WUs, which
 * then change results of these WUs only (lock_order.h). With rows
 * non-NULL, WU ids[i]'s row goes to rows[i] (all zero when there is no
 * such WU). Returns 0 or a db error (CT_EAGAIN: retry the transaction). */
int ct_wu_lock_ids(struct ct_db *db, const int64_t *ids, int n, struct ct_wu_sched_row *rows);

/* A new work unit's row, as opening a round fills it (wg.c). Strings are
 * borrowed. */
struct ct_wu_new {
	const char *name, *model_sha256, *data_sha256;
	int64_t now, jobid, roundid, seed, model_size, data_size, data_tokens;
	int round_idx, shard, target_nresults, min_quorum, max_error_results;
	int max_total_results, max_success_results, delay_bound;
};

/* Insert WU w (due for the transitioner at w->now) into *id. Returns 0 or
 * a db error. */
int ct_wu_insert(struct ct_db *db, const struct ct_wu_new *w, int64_t *id);

/* A WU's canonical result handed to the assimilator: its shard and the
 * result's name. */
struct ct_canonical_row {
	int shard;
	char name[96];
};

/* The canonical results of round roundid's WUs ready to assimilate, in
 * shard order, into a malloc'd *rows (free() it; NULL when none) of *n.
 * Returns 0, CT_ENOMEM or a db error. */
int ct_wu_canonicals(struct ct_db *db, int64_t roundid, struct ct_canonical_row **rows,
		     size_t *n);

/* Adaptive replication's decision for WU wuid: one replica is enough
 * (min_quorum and target_nresults 1). Returns 0 or a db error. */
int ct_wu_set_single(struct ct_db *db, int64_t wuid);

/* Make every undecided, error-free WU of job jobid but `except` due for
 * the transitioner at `now`. Returns 0 or a db error. */
int ct_wu_wake_job(struct ct_db *db, int64_t jobid, int64_t except, int64_t now);

/* The ids of the first `cap` WUs due at `now` (transition_time <= now),
 * oldest transition_time first, of the share k of nshare (id mod nshare =
 * k: one instance's) into ids[0..*n). Returns 0 or a db error. */
int ct_wu_due_ids(struct ct_db *db, int64_t now, int64_t nshare, int64_t k, int64_t *ids,
		  size_t cap, size_t *n);

/* How many of job jobid's WUs have a canonical result, per round. */
struct ct_round_count {
	int round_idx;
	int64_t n;
};

/* Those counts into a malloc'd *rows (free() it; NULL when none) of *n,
 * rounds without any left out. Returns 0, CT_ENOMEM or a db error. */
int ct_wu_done_by_round(struct ct_db *db, int64_t jobid, struct ct_round_count **rows,
			size_t *n);

/* WU wuid's name into name (72 bytes). Returns 0, CT_ENOTFOUND or a db
 * error. */
int ct_wu_get_name(struct ct_db *db, int64_t wuid, char name[72]);

/* WU wuid's seed (a LoRA job's adapters start from it) into *seed.
 * Returns 0, CT_ENOTFOUND or a db error. */
int ct_wu_seed(struct ct_db *db, int64_t wuid, int64_t *seed);

/* How many distinct seeds the WUs of round roundid have into *nseeds, the
 * smallest into *seed (0 when the round has no WU; both unchanged on
 * error). Returns 0 or a db error. */
int ct_wu_round_seeds(struct ct_db *db, int64_t roundid, int64_t *nseeds, int64_t *seed);

/* A shard's canonical result with its WU's seed (a LoRA round's merge). */
struct ct_seeded_canonical_row {
	int64_t shard, seed;
	char name[256];
};

/* The canonical results of round roundid's WUs, whatever their
 * assimilate_state, in shard order, into a malloc'd *rows (free() it; NULL
 * when none) of *n. Returns 0, CT_ENOMEM or a db error. */
int ct_wu_seeded_canonicals(struct ct_db *db, int64_t roundid,
			    struct ct_seeded_canonical_row **rows, size_t *n);

/* A WU with what the validator checks its results by: its job's state,
 * limits and training settings. */
struct ct_wu_check_row {
	int64_t wuid, jobid, canonical;		/* canonical: 0 while none */
	int job_status, error_mask, min_quorum;
	char wu_name[72], model_sha[65], eval_sha[65];
	double tolerance, loss_margin;
	int probe_tokens, batch, seq;
	int64_t max_upload;
	int steps;
	double lr, beta1, beta2, weight_decay;
	char job_model_sha[65];			/* the job's base model */
	double eps, grad_clip;
	char data_sha[65];
	int chain_every;
};

/* WU wuid with its job into *w. Returns 0, CT_ENOTFOUND (no such WU, or
 * its job is gone) or a db error. */
int ct_wu_check_get(struct ct_db *db, int64_t wuid, struct ct_wu_check_row *w);

/* A quorum's disagreement: WU wuid's target_nresults raised to n (never
 * lowered). Returns 1, 0 (it was n or more already) or a db error. */
int ct_wu_raise_target(struct ct_db *db, int64_t wuid, int64_t n);

/* The ids of the first `cap` WUs with need_validate = 1, in id order, of
 * the share k of nshare (as ct_wu_due_ids) into ids[0..*n). Returns 0 or
 * a db error. */
int ct_wu_validate_ids(struct ct_db *db, int64_t nshare, int64_t k, int64_t *ids, size_t cap,
		       size_t *n);

#endif
