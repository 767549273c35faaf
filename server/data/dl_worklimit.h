/*
 * dl_worklimit.h - what the work limits (server/validate/worklimit.h)
 * count of the result table, with their statements (the data layer,
 * dl.h): a host's and its account's results in progress and of the last
 * day, a job's run times and a WU's size.
 */
#ifndef CT_DL_WORKLIMIT_H
#define CT_DL_WORKLIMIT_H

#include <stddef.h>
#include <stdint.h>

struct ct_db;
struct ct_sched_held;

/* A host's and its account's counts: the host's results in progress, sent
 * since `since` and the errors (client error, no reply, validate error)
 * and valid ones among those; the account's in progress, and its valid
 * ones sent since `since`. */
struct ct_dl_wlim_counts {
	int64_t inprog, sent24, err24, valid24;
	int64_t acc_inprog, acc_valid24;
};

/* The counts of host hostid and account userid into *k, in one statement
 * (result_host_task, result_host_sent, result_user_task, result_user_valid).
 * Returns 0, CT_ENOTFOUND or a db error. */
int ct_dl_wlim_counts(struct ct_db *db, int64_t userid, int64_t hostid, int64_t since,
		      struct ct_dl_wlim_counts *k);

/* The account's counts only (acc_inprog, acc_valid24; the host's 0), for
 * a host added in this RPC, which has no results yet: one statement
 * (result_user_task, result_user_valid). Returns 0 or a db error. */
int ct_dl_wlim_counts_account(struct ct_db *db, int64_t userid, int64_t since,
			      struct ct_dl_wlim_counts *k);

/* The same counts, and with them in the same statement what
 * ct_sched_in_progress (dl_sched.h) reads: host hostid's results in
 * progress whose deadline is after now, in id order, at most max into
 * rows[0..*n). Returns 0, CT_ENOTFOUND or a db error. */
int ct_dl_wlim_counts_held(struct ct_db *db, int64_t userid, int64_t hostid, int64_t since,
			   int64_t now, struct ct_dl_wlim_counts *k, struct ct_sched_held *rows,
			   int max, int *n);

/* A valid result's run time, a deadline estimate's sample. */
struct ct_dl_run_time {
	double elapsed_s;
};

/* The run times (elapsed_s > 0) of the last `max` valid results of WU
 * wuid's job, newest first (result_job_valid): *v malloc'd (free() it;
 * NULL when none), *n of them. Returns 0, CT_ENOMEM or a db error. */
int ct_dl_job_run_times(struct ct_db *db, int64_t wuid, int max, struct ct_dl_run_time **v,
			size_t *n);

/* What a WU's FLOPs derive from: its job's steps, batch, seq and model
 * file's size in bytes. */
struct ct_dl_wu_size {
	int64_t steps, batch, seq, model_size;
};

/* WU wuid's sizes into *s (all 0 when the WU is gone). Returns 0 or a db
 * error. */
int ct_dl_wu_size(struct ct_db *db, int64_t wuid, struct ct_dl_wu_size *s);

#endif
