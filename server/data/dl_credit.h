/*
 * dl_credit.h - the credit columns of `user`, `host` and `team` (total,
 * recent average and its time) and the table credit_event, one row a
 * credited result (the data layer, dl.h). The grant, the revocation and
 * the decay's formula are validate/credit.c's; this file holds their SQL.
 */
#ifndef CT_DL_CREDIT_H
#define CT_DL_CREDIT_H

#include <stdint.h>

struct ct_db;

/* Whose credit: the three tables that keep a total and a RAC. */
enum ct_credit_owner { CT_CREDIT_USER, CT_CREDIT_HOST, CT_CREDIT_TEAM };

/* A user's, host's or team's credit: total, RAC (cobblestones a day) and
 * the RAC's unix time (0: never). */
struct ct_credit_totals {
	double total, rac, rac_time;
};

/* Lock row id of owner's table (FOR UPDATE, in the caller's transaction)
 * and read its credit into *t. Returns 0, CT_ENOTFOUND or a db error. */
int ct_credit_totals_lock(struct ct_db *db, enum ct_credit_owner owner, int64_t id,
			  struct ct_credit_totals *t);

/* Write *t as row id's credit. Returns 0 or a db error. */
int ct_credit_totals_set(struct ct_db *db, enum ct_credit_owner owner, int64_t id,
			 const struct ct_credit_totals *t);

/* Decay the RAC of every row of owner's table whose expavg_time is more
 * than an hour before now: RAC * exp(-(now - expavg_time) * ln2 /
 * half_life), expavg_time = now. Returns the rows changed or a db error. */
int ct_credit_totals_decay(struct ct_db *db, enum ct_credit_owner owner, int64_t now,
			   double half_life);

/* Whom a result's credit goes to, and how much it got (a credit_event
 * row). */
struct ct_credit_event_row {
	int64_t wuid, jobid, userid, hostid, teamid;
	double credit;
};

/* The WU, job, user, host and the user's team (0 when none) of result
 * resultid into *e (credit 0). Returns 0, CT_ENOTFOUND or a db error. */
int ct_credit_result_owner(struct ct_db *db, int64_t resultid, struct ct_credit_event_row *e);

/* Record that result resultid got e->credit at now. Returns 0, CT_EDUP
 * (it was credited already: resultid is unique) or a db error. */
int ct_credit_event_insert(struct ct_db *db, int64_t resultid, const struct ct_credit_event_row *e,
			   int64_t now);

/* Lock result resultid's credit_event row and read it into *e. Returns 0,
 * CT_ENOTFOUND (never credited) or a db error. */
int ct_credit_event_lock(struct ct_db *db, int64_t resultid, struct ct_credit_event_row *e);

/* Mark result resultid's event revoked (its credit 0; the row stays).
 * Returns 1, 0 when it was revoked already, or a db error. */
int ct_credit_event_revoke(struct ct_db *db, int64_t resultid);

#endif
