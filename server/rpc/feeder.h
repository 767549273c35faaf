/*
 * feeder.h - the scheduler's ready-to-send cache (BOINC's
 * feeder idea, kept inside the server process): a bounded set of unsent
 * results in dispatch order (priority descending, then id), each with the
 * placement facts of its WU that do not change (job, round, the round's
 * size, LoRA or not) and the replicas of the WU already sent (account,
 * host, client id, network). A scheduler request takes its candidates
 * from here instead of scanning the result table, skips in memory those
 * the per-WU rules refuse it (ct_elig_replica_rule), and claims the
 * chosen rows in one transaction (sched.c), where the database, not this
 * cache, decides: the WU rows are locked and the rules are checked again
 * against the rows, and each result is claimed by one UPDATE guarded by
 * its unsent state, so several server instances (each with a cache of its
 * own) never hand out one replica twice and a stale cache only costs a
 * skipped candidate.
 *
 * Refill: each request first looks for results created since the cache
 * last looked (by id, a bounded primary-key range: results become unsent
 * only when inserted, result_state.c) and merges them in dispatch order
 * (while the cache holds half its slots free or more, or the database
 * more unsent work than the cache, at most every CT_FEED_LOOK_S seconds:
 * a busy server looks once for many requests);
 * every full_s seconds (sched.feeder_full_s, CT_FEED_FULL_S by default),
 * or when fewer than a quarter of the slots
 * are free while the database has more unsent work than the cache holds,
 * one request reads the first CT_FEED_SLOTS unsent results afresh. One
 * request at a time refills (the others use what is there).
 *
 * Threads: every function may be called from any thread (one mutex; the
 * database work of a refill runs outside it, on the caller's connection).
 */
#ifndef CT_FEEDER_H
#define CT_FEEDER_H

#include <stdint.h>

#include "data/db.h"
#include "eligibility.h"
#include "validate/worklimit.h"

#define CT_FEED_SLOTS 512
#define CT_FEED_HOLDERS 8
#define CT_FEED_FULL_S 2.0
#define CT_FEED_LOOK_S 0.05

/* A replica of the WU already sent: whom the per-WU rules keep apart. */
struct ct_feed_holder {
	int64_t userid, hostid;
	char cpid[33];
	char net[CT_ELIG_NETLEN];
};

/* A ready-to-send result and what placement needs of its WU. */
struct ct_feed_cand {
	int64_t resultid, wuid, jobid, roundid;
	int priority, nwus, lora;
	int nheld;		/* holders known (at most CT_FEED_HOLDERS) */
	int held_more;		/* 1: the WU has more sent replicas than held */
	struct ct_feed_holder held[CT_FEED_HOLDERS];
};

/* What became of a taken candidate (ct_feeder_done). */
enum ct_feed_outcome {
	CT_FEED_KEEP,		/* not for this host: back to the others */
	CT_FEED_CLAIMED,	/* sent to this host */
	CT_FEED_GONE,		/* no longer unsent, or its WU canceled */
};

struct ct_feeder;

/* A new, empty cache into *out, read afresh every full_s seconds (free
 * with ct_feeder_free; NULL is harmless). Returns 0 or CT_ENOMEM (*out
 * NULL). */
int ct_feeder_new(struct ct_feeder **out, double full_s);
void ct_feeder_free(struct ct_feeder *f);

/* Refill when due (see above, on db, outside any transaction), then take
 * up to max candidates (at most 64) that host h may take as far as the
 * cache knows: of different WUs, full-weight only unless lora, none whose
 * result id is in skip[0..nskip), chosen from the first max*4+8 such in
 * dispatch order from a random start (concurrent servers collide less).
 * They are leased to the caller (no other request gets them) until
 * ct_feeder_done. Copies them into out, their count into *n. Returns 0, or
 * CT_EDB / CT_ENOMEM from a refill (*n 0). */
int ct_feeder_take(struct ct_feeder *f, struct ct_db *db, const struct ct_elig_host *h,
		   int lora, const int64_t *skip, int nskip, struct ct_feed_cand *out, int max,
		   int *n);

/* End the lease of cands[0..n) with outcome[i] each (enum ct_feed_outcome):
 * CLAIMED and GONE leave the cache; a CLAIMED one makes h a holder of the
 * other replicas of its WU; KEEP ones are free again. */
void ct_feeder_done(struct ct_feeder *f, const struct ct_feed_cand *cands, const int *outcome,
		    int n, const struct ct_elig_host *h);

/* ---- deadline estimates ------------------------------------------------
 * A job's deadline estimate (worklimit.h: its last valid run times, or its
 * size) changes with its validations, slowly; the requests of a busy
 * server share it for up to CT_FEED_EST_S seconds instead of asking the
 * database each (a result sent meanwhile has a deadline from an estimate
 * that old). A full read that finds the cache out of date wholesale
 * forgets them too. */
#define CT_FEED_EST_S 2.0

/* Job jobid's estimate into *e if one at most CT_FEED_EST_S old is
 * kept: 1, else 0 (also for f NULL, where the put does nothing). */
int ct_feeder_estimate(struct ct_feeder *f, int64_t jobid, struct ct_wlim_estimate *e);
/* Keep job jobid's estimate e, read now. */
void ct_feeder_estimate_put(struct ct_feeder *f, int64_t jobid, const struct ct_wlim_estimate *e);

#endif
