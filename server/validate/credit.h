/*
 * credit.h - credit for validated work (doc/credit.md has the formulas and
 * why they are these).
 *
 * Credit is derived from the work unit alone: the training FLOPs of the WU
 * (tokens x FLOPs per token of the model, forward + backward) in
 * cobblestones (432 GFLOP each). Users, hosts and teams keep a total and a
 * recent average credit (RAC) with a 7-day half-life. The validator grants
 * it with ct_credit_grant() inside the transaction that marks a result
 * valid; a result is credited at most once (credit_event.resultid is
 * unique).
 */
#ifndef CT_CREDIT_H
#define CT_CREDIT_H

#include <stdint.h>

struct ct_db;
struct ct_model_config;

/* FLOPs in one cobblestone: 1/200 of a GFLOPS-day. */
#define CT_CREDIT_COBBLESTONE_FLOPS 432e9
/* RAC half-life in seconds. */
#define CT_CREDIT_HALF_LIFE (7.0 * 86400.0)

/* FLOPs of a WU of `steps` steps of `batch` x `seq` tokens on a model of
 * config cfg (the server's copy of the base model, never the client's
 * claim): tokens x ct_gpt2_flops_per_token(cfg, seq). */
double ct_credit_wu_flops(const struct ct_model_config *cfg, int seq, int batch,
			  int steps);

/* Cobblestones for `flops` FLOPs. */
double ct_credit_from_flops(double flops);

/* Fold `credit` granted at unix time `now` into a RAC pair (*rac in
 * cobblestones per day, *rac_time its unix time; 0 = never): the old value
 * decays by exp(-dt ln2 / half-life), the credit is added as a rate over
 * dt, with the dt -> 0 limit credit * ln2 / 7 days when dt is tiny (or
 * for the first grant). *rac_time becomes now (or stays, if the clock went
 * backwards by dt < 0: then dt counts as 0). */
void ct_credit_rac_update(double *rac, double *rac_time, double credit, double now);

/* A stored RAC decayed to `now` (what pages show). */
double ct_credit_rac_now(double rac, double rac_time, double now);

/* Grant `credit` to result `resultid` at time `now`, inside the caller's
 * transaction: a credit_event row, result.granted_credit, and total credit
 * + RAC of the result's user, host and the user's team (rows locked in
 * that order). Returns 1 if granted, 0 if this result had been credited
 * already (nothing changed), CT_ENOTFOUND (no such result), or a db error
 * (the caller rolls back). */
int ct_credit_grant(struct ct_db *db, int64_t resultid, double credit, int64_t now);

/* Take back the credit granted to result `resultid` (the cross-shard
 * check set it aside: server/validate/robust_aside.c), inside the caller's
 * transaction: its credit_event row keeps the result but its credit
 * becomes 0, result.granted_credit 0, and the amount is subtracted from
 * the user's, host's and team's totals and RAC (never below 0). Returns 1
 * if revoked, 0 if there was nothing to revoke (never credited, or
 * revoked already), or a db error. */
int ct_credit_revoke(struct ct_db *db, int64_t resultid, int64_t now);

/* Decay the stored recent average credit of every user, host and team
 * whose expavg_time is more than an hour before `now` to its value at
 * `now` (ct_credit_rac_now's formula, evaluated by the database), and set
 * expavg_time = now. Without it an account that stops computing would keep
 * its RAC on the leaderboards forever (BOINC runs update_stats for this).
 * Returns the number of rows changed, or a negative CT_E* code. */
int ct_credit_decay(struct ct_db *db, int64_t now);

struct ct_server;
/* The "credit_decay" role: ct_credit_decay() at the current time. Returns
 * 0 (idle: the next pass is due in an hour) or a negative code. */
int ct_credit_decay_run_once(struct ct_server *srv, struct ct_db *db);

#endif
