/*
 * dl_robust.h - table robust_event: what the robust checks did to a
 * round's results (set aside, accepted after retries, a round whose
 * average failed), written by validate/robust_aside.c, read back to count
 * retries and shown on the job page. Its action codes are robust_aside.h's.
 */
#ifndef CT_DL_ROBUST_H
#define CT_DL_ROBUST_H

#include <stdint.h>

struct ct_db;

/* How many events of `action` job jobid's round round_idx recorded for
 * the whole round (shard 0 rows) into *n. Returns 0 or a db error. */
int ct_robust_round_events(struct ct_db *db, int64_t jobid, int round_idx, int action,
			   int64_t *n);

#endif
