/*
 * dl_robust.h - table robust_event: what the robust checks did to a
 * round's results (set aside, accepted after retries, a round whose
 * average failed), written by validate/robust_aside.c, read back to count
 * retries and shown on the job page. Its action codes are robust_aside.h's.
 */
#ifndef CT_DL_ROBUST_H
#define CT_DL_ROBUST_H

#include <stddef.h>
#include <stdint.h>

struct ct_db;

/* How many events of `action` job jobid's round round_idx recorded for
 * the whole round (shard 0 rows) into *n. Returns 0 or a db error. */
int ct_robust_round_events(struct ct_db *db, int64_t jobid, int round_idx, int action,
			   int64_t *n);

/* One event (an action of robust_aside.h) about shard `shard` of round
 * round_idx of job jobid: its WU, canonical result and that result's
 * host; cos and ratio the scores that decided it (a failed round: the
 * base's and the average's eval loss). */
struct ct_robust_event_row {
	int64_t jobid, wuid, resultid, hostid;
	int round_idx, shard, action;
	double cos, ratio;
};

/* Record *e at now. Returns 0 or a db error. */
int ct_robust_event_insert(struct ct_db *db, const struct ct_robust_event_row *e, int64_t now);

/* How many events of `action` WU wuid has into *n. Returns 0 or a db
 * error. */
int ct_robust_wu_events(struct ct_db *db, int64_t wuid, int action, int64_t *n);

/* A shard of a round with its canonical result: the WU, the result, its
 * host. */
struct ct_robust_shard_row {
	int64_t wuid, resultid, hostid;
	int shard;
};

/* Shard `shard` of round idx of job jobid, when it has a canonical
 * result, into *r. Returns 0, CT_ENOTFOUND (no canonical result) or a db
 * error. */
int ct_robust_shard_get(struct ct_db *db, int64_t jobid, int idx, int shard,
			struct ct_robust_shard_row *r);

/* The unreplicated (min_quorum 1) shards of round idx of job jobid whose
 * canonical result's host has an invalid result (caught by a spot-check
 * or a set-aside since), in shard order, into rows[0..*n) (at most max).
 * Returns 0 or a db error. */
int ct_robust_caught_list(struct ct_db *db, int64_t jobid, int idx,
			  struct ct_robust_shard_row *rows, int max, size_t *n);

#endif
