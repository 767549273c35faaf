/*
 * dl_sched.h - the rows the scheduler RPC (server/rpc/sched.c) reads of
 * results, work units and jobs, with their statements (the data layer,
 * dl.h): the replicas a claim judges, the results a reply describes.
 * Writes of the state columns belong to result_state.h, the WU locks to
 * dl_workunit.h.
 */
#ifndef CT_DL_SCHED_H
#define CT_DL_SCHED_H

#include <stddef.h>
#include <stdint.h>

struct ct_db;

/* SQL: result row t is a live replica (in progress, or a success not
 * found invalid), the replicas the round rules count
 * (server/rpc/eligibility.h). */
#define CT_DL_LIVE(t) "(" t ".server_state = 4 OR (" t ".server_state = 5 AND " t \
	".outcome = 1 AND " t ".validate_state <> 2))"

#define CT_DL_NETLEN 48		/* a network key, eligibility.h's CT_ELIG_NETLEN */

/* What a job says of its WUs: their training settings and upload. */
struct ct_sched_job {
	int64_t steps, batch, seq, max_upload;
	int64_t wu_mem_bytes, wu_mem_ref_bytes;	/* OpenCL, C reference (eligibility.h) */
	int adaptive;			/* adaptive replication on */
	double hp[6];			/* lr, beta1, beta2, eps, weight_decay, grad_clip */
	char upload_encoding[65];
	int64_t chain_every;		/* its hash chain's interval, 0: none */
};

/* A result of a WU a claim looks at (sent or not), with what the
 * per-WU rules, the round rules and the claim need, and its job's. */
struct ct_sched_replica {
	int64_t wuid, id, userid, hostid, create_time;
	int state, live, nwus, lora;	/* live: CT_DL_LIVE; nwus: its round's WUs */
	char name[81];
	char cpid[33];			/* its host's client id ("" none) */
	char net[CT_DL_NETLEN];		/* result.sent_net */
	struct ct_sched_job job;
};

/* Every result of the WUs wuids[0..n) (1 <= n <= CT_DL_IN_MAX), read by
 * one statement (result_wu) after the caller locked the WUs: *rows
 * malloc'd (free() it; never NULL on success), *nrows of them, grouped by
 * WU. Returns 0, CT_ENOMEM or a db error (*rows NULL). */
int ct_sched_replicas(struct ct_db *db, const int64_t *wuids, int n,
		      struct ct_sched_replica **rows, size_t *nrows);

/* A result being sent, with its WU and job: what the reply says. */
struct ct_sched_sent {
	int64_t id, jobid, round, shard, seed, deadline, model_size, data_size;
	char name[81], wu_name[65];
	char model_sha256[65], data_sha256[65];
	int lora;			/* its job has LoRA parameters */
	int64_t state_at;		/* a state request's step, 0: a result (the caller's) */
	int found;			/* 0: the result is gone */
	struct ct_sched_job job;
};

/* The results ids[0..n) (any n) with their WUs and jobs into out[i] for
 * ids[i] (found 0 for one that is gone), CT_DL_IN_MAX a statement.
 * Returns 0 or a db error. */
int ct_sched_sent_read(struct ct_db *db, const int64_t *ids, int n, struct ct_sched_sent *out);

/* ---- the round rules' facts (server/rpc/eligibility.h) ------------------ */

/* An account holding live replicas of `shared` WUs of a round of which
 * the asking account holds one live too. */
struct ct_sched_partner {
	int64_t userid, shared;
};

/* What the round rules read of round roundid for account userid, in one
 * statement. With `counts`: the round's live replicas sent to network net
 * (*net_sent; 0 when net is NULL or "") and userid's replicas of it in
 * progress (*inprog). With `partners`: every such account (userid's live
 * replicas of the round by result_user_round, their WUs' other live
 * replicas by result_wu, grouped by account) into *rows, malloc'd (free()
 * it; NULL when none), *n of them. Returns 0, CT_ENOMEM or a db error. */
int ct_sched_round_read(struct ct_db *db, int64_t roundid, int64_t userid, const char *net,
			int counts, int partners, struct ct_sched_partner **rows, size_t *n,
			int64_t *net_sent, int64_t *inprog);

/* *n = distinct accounts with a host whose last RPC was at `since` or
 * later, counted up to need (host_rpc_user). Returns 0 or a db error. */
int ct_sched_active_accounts(struct ct_db *db, int64_t since, int need, int64_t *n);

/* ---- the ready-to-send cache's reads (server/rpc/feeder.c) --------------
 * One row per candidate result and sent replica of its WU (o_*: 0 and ""
 * when none); rows of one candidate are adjacent. mx, nl, sl, on every
 * row and also when there is no candidate (id 0): the highest result id
 * and job_lora's rows and sum of job ids, which say when the cache is out
 * of date wholesale. wuid 0: the candidate's WU is gone. */
struct ct_sched_feed_row {
	int64_t mx, nl, sl;
	int64_t id, wuid, jobid, roundid;
	int priority, state, nwus, lora;
	int64_t o_userid, o_hostid;
	char o_cpid[33], o_net[CT_DL_NETLEN];
};

/* Full (full 1): the first `limit` unsent results in dispatch order
 * (priority descending, then id; result_dispatch); else the first `limit`
 * results after id `after` in id order, whatever their state (PRIMARY);
 * each with its WU's sent replicas (result_wu). *rows malloc'd
 * (free() it), *n of them. Returns 0, CT_ENOMEM or a db error. */
int ct_sched_feed_read(struct ct_db *db, int full, int64_t after, int limit,
		       struct ct_sched_feed_row **rows, size_t *n);

/* A result the client says it still has, as the scheduler checks it. */
struct ct_sched_held {
	int64_t id, hostid;
	int server_state, error_mask;	/* error_mask: its WU's */
	char name[81];
};

/* The result named `name` with its WU's error_mask into *h: id, hostid,
 * server_state, error_mask. Returns 0, CT_ENOTFOUND or a db error. */
int ct_sched_held_get(struct ct_db *db, const char *name, struct ct_sched_held *h);

/* Host hostid's results in progress whose deadline is after now, in id
 * order, at most max (id, name, error_mask) into rows[0..*n). Returns 0 or
 * a db error. */
int ct_sched_in_progress(struct ct_db *db, int64_t hostid, int64_t now,
			 struct ct_sched_held *rows, int max, int *n);

/* *n = running jobs whose current round has no result unsent or in
 * progress (round_stat): a round about to turn. Returns 0 or a db error. */
int ct_sched_rounds_turning(struct ct_db *db, int64_t *n);

#endif
