/*
 * dl_result.h - the `result` table's row and its named reads (the data
 * layer, dl.h). Writes of the state columns belong to result_state.h.
 *
 * Each read fills the members its comment names and zeroes the rest.
 */
#ifndef CT_DL_RESULT_H
#define CT_DL_RESULT_H

#include <stddef.h>
#include <stdint.h>

struct ct_db;

struct ct_result_row {
	int64_t id, workunitid, hostid;
	char name[81];
	int server_state, outcome, validate_state;	/* result_state.h's codes */
	int64_t report_deadline, sent_time, received_time;
	char upload_sha256[65];		/* "" until an upload arrived */
	int64_t upload_size;
	int64_t userid, jobid, sent_round;	/* ct_result_get_uploads only */
	int host_unproven;			/* ct_result_list_wus only */
};

/* Result `id`: hostid, state columns, upload_sha256, upload_size. Returns
 * 0, CT_ENOTFOUND or a db error. */
int ct_result_get_upload(struct ct_db *db, int64_t id, struct ct_result_row *r);

/* The result named `name`: id, workunitid. Returns 0, CT_ENOTFOUND or a db
 * error. */
int ct_result_by_name(struct ct_db *db, const char *name, struct ct_result_row *r);

/* The results named names[0..n) (any n; CT_DL_IN_MAX names a
 * statement): out[i] gets id and workunitid of names[i] (0, 0 when there
 * is none). A name matches as the database compares names
 * (utf8mb4_general_ci: case and trailing spaces aside); one the batch
 * does not match is looked up on its own. Returns 0 or a db error. */
int ct_result_ids_by_name(struct ct_db *db, const char *const *names, int n,
			  struct ct_result_row *out);

/* Results ids[0..n) (any n): out[i] gets hostid, the state columns,
 * upload_sha256 and upload_size of result ids[i], its owners and round
 * (userid, jobid, sent_round), and id = ids[i] (all zero
 * when there is none). Returns 0 or a db error. */
int ct_result_get_uploads(struct ct_db *db, const int64_t *ids, int n,
			  struct ct_result_row *out);

/* The result an upload names, checked before the upload is taken: its
 * host and state, and its round's status, index and job. */
struct ct_upload_target {
	int64_t id, hostid;
	int server_state, round_status;		/* round_status 0: no round row */
	int64_t round_idx, jobid;
};

/* The result named `name` as struct ct_upload_target. Returns 0,
 * CT_ENOTFOUND or a db error. */
int ct_result_upload_target(struct ct_db *db, const char *name, struct ct_upload_target *t);

/* Result id's upload (its hash, size and time) when it is in progress on
 * host hostid. Returns 1, 0 (not so: nothing written) or a db error. */
int ct_result_set_upload(struct ct_db *db, int64_t id, int64_t hostid, const char *sha256,
			 int64_t size, int64_t now);

/* Every result of the WUs wuids[0..n) (1..CT_DL_IN_MAX of them), in
 * (workunitid, id) order: id, workunitid, name, hostid, state columns,
 * report_deadline, sent_time, received_time, and host_unproven (its host
 * exists and never returned a valid result: nresults_valid 0). *rows is
 * malloc'd (free() it; NULL when there are none), *nrows its length.
 * Returns 0, CT_ENOMEM or a db error. */
int ct_result_list_wus(struct ct_db *db, const int64_t *wuids, int n,
		       struct ct_result_row **rows, size_t *nrows);

/* How many results of WU `wuid` other than `except` were sent (are not
 * unsent) into *n. Returns 0 or a db error. */
int ct_result_count_sent_others(struct ct_db *db, int64_t wuid, int64_t except, int64_t *n);

/* How many of a job's results are in one state. */
struct ct_state_count {
	int server_state, outcome, validate_state;
	int64_t n;
};

/* Job jobid's results counted by state into a malloc'd *rows (free() it;
 * NULL when none) of *n. Returns 0, CT_ENOMEM or a db error. */
int ct_result_state_counts(struct ct_db *db, int64_t jobid, struct ct_state_count **rows,
			   size_t *n);

/* Record result id's granted credit (credit.h). Returns 0 or a db error. */
int ct_result_set_granted_credit(struct ct_db *db, int64_t id, double credit);

/* A result and its host. */
struct ct_result_host_row {
	int64_t id, hostid;
};

/* The first 64 valid results of WU wuid into a malloc'd *rows (free() it;
 * NULL when none) of *n. Returns 0, CT_ENOMEM or a db error. */
int ct_result_list_valid(struct ct_db *db, int64_t wuid, struct ct_result_host_row **rows,
			 size_t *n);

/* A result that takes part in a WU's quorum, as the validator reads it. */
struct ct_result_vote_row {
	int64_t id, hostid;
	char name[96];
	int validate_state, conforming;
	double probe_loss;	/* 0 when there is none */
};

/* WU wuid's over successes that are not decided yet (validate_state INIT
 * or INCONCLUSIVE) and its canonical result `canonical`, in id order, into
 * rows[0..*n) (at most max). Returns 0 or a db error. */
int ct_result_list_votes(struct ct_db *db, int64_t wuid, int64_t canonical,
			 struct ct_result_vote_row *rows, int max, size_t *n);

/* How many of WU wuid's over successes wait for the validator
 * (validate_state INIT) into *n. Returns 0 or a db error. */
int ct_result_count_unvalidated(struct ct_db *db, int64_t wuid, int64_t *n);

/* Uploads of one WU, bit-identical, refused alike by a check: from how
 * many hosts, and why. */
struct ct_result_refusal {
	int64_t nhosts;
	char error[256];
};

/* The first group of WU wuid's results refused by the validator
 * (VALIDATE_ERROR) with the same upload and the same error from two hosts
 * or more into *g. Returns 0, CT_ENOTFOUND (none) or a db error. */
int ct_result_refused_alike(struct ct_db *db, int64_t wuid, struct ct_result_refusal *g);

#endif
