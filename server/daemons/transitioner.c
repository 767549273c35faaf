/*
 * transitioner.c - the daemon that moves work units along (role
 * "transitioner"; see daemons.h for the contract with the other roles).
 *
 * It handles WUs whose transition_time has come, each in its own
 * transaction that locks the WU row first (workunit -> result lock order)
 * and re-checks transition_time under the lock, so several transitioners
 * never handle one WU at once and a crash at any point leaves a state the
 * next pass finishes. Per WU:
 *   - in-progress results past their deadline -> over / no_reply;
 *   - counts of unsent, in progress, successes, errors;
 *   - early re-issue: a replica in progress for longer than
 *     sched.reissue_factor (3) x the time its WU's fastest done replica
 *     took (at least sched.reissue_min, 1800 s) counts as lost for the
 *     count below, so a new replica goes out while the old one may still
 *     report (a hoarder stalls a WU that long, not until its deadline);
 *   - without a canonical result: caps (max_error_results,
 *     max_success_results, max_total_results) flag the WU in error_mask,
 *     and its round and job as errored; otherwise new unsent results are
 *     created until target_nresults may still succeed; successes waiting
 *     for the validator set need_validate;
 *   - once the WU is decided (canonical or error): unsent results are not
 *     needed any more; the assimilator is told (assimilate_state READY);
 *     after assimilation and when no result is out, the WU's and its
 *     results' files become deletable;
 *   - transition_time becomes the earliest deadline still out.
 *
 * Also ct_adaptive_apply(), the database half of adaptive replication
 * (the decision itself is in quorum.c).
 */
#include "daemons.h"
#include "daemon_pass.h"
#include "data/db.h"
#include "data/dl_files.h"
#include "data/dl_host.h"
#include "data/dl_job.h"
#include "data/dl_result.h"
#include "data/job_state.h"
#include "data/result_state.h"
#include "instance.h"
#include "data/server.h"
#include "validate/stall.h"
#include "validate/worklimit.h"
#include "data/dl_workunit.h"
#include "data/wu_state.h"
#include "ct_conf.h"
#include "ct_err.h"
#include "ct_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRANSITION_BATCH 100
#define NEW_RESULTS_MAX 16	/* per WU and pass, whatever the caps say */
#define EARLY_SENT_MAX 64	/* replicas early_reissue looks at */

/* One WU as the transitioner sees it (read under its row lock). */
struct twu {
	int64_t id, jobid, roundid, canonical, min_deadline;
	char name[72];
	int target, max_err, max_total, max_success, error_mask;
	int assimilate_state, file_delete_state, need_validate, job_status;
	/* counts over its results */
	int nunsent, ninprog, nsuccess, nviable, nerror, ntotal, nwaiting;
	int maxidx;
	int nstale;	/* in progress, overdue beside a done replica */
	struct ct_result_row *rows;	/* its results, in id order, as moved here */
	size_t nrows;
};

int ct_adaptive_apply(struct ct_db *db, int64_t wuid, int64_t resultid)
{
	int64_t others = 0;
	int rc;

	rc = ct_result_count_sent_others(db, wuid, resultid, &others);
	if (rc < 0)
		return rc;
	if (others > 0)
		return 0;
	rc = ct_wu_set_single(db, wuid);
	if (rc < 0)
		return rc;
	rc = ct_res_drop_unsent_wu(db, wuid, resultid);
	return rc < 0 ? rc : 1;
}

/* Lock and read the WU; 0 with w->id = 0 when it is not due any more. */
static int load_wu(struct ct_db *db, int64_t wuid, int64_t now, struct twu *w)
{
	struct ct_workunit_row u;
	int rc;

	memset(w, 0, sizeof(*w));
	rc = ct_wu_lock(db, wuid, &u, NULL, NULL);
	if (rc == CT_ENOTFOUND || (rc == 0 && u.transition_time > now))
		return 0;	/* gone, or not due any more */
	if (rc < 0)
		return rc;
	w->id = u.id;
	w->jobid = u.jobid;
	w->roundid = u.roundid;
	w->canonical = u.canonical_resultid;
	snprintf(w->name, sizeof(w->name), "%s", u.name);
	w->target = u.target_nresults;
	w->max_err = u.max_error_results;
	w->max_total = u.max_total_results;
	w->max_success = u.max_success_results;
	w->error_mask = u.error_mask;
	w->assimilate_state = u.assimilate_state;
	w->file_delete_state = u.file_delete_state;
	w->need_validate = u.need_validate;
	/* a plain read: the job row is not locked here (cancel locks job
	 * then WUs; this must not take them in the other order) */
	rc = ct_job_status(db, w->jobid, &w->job_status);
	return rc == CT_ENOTFOUND ? 0 : rc;
}

/* Index n of a result named "<wu>-<n>", or -1. */
static int result_index(const char *wuname, const char *name)
{
	size_t l = strlen(wuname);
	int n = 0;

	if (strncmp(name, wuname, l) != 0 || name[l] != '-' || name[l + 1] == '\0')
		return -1;
	for (const char *p = name + l + 1; *p; p++) {
		if (*p < '0' || *p > '9' || n > 100000)
			return -1;
		n = n * 10 + (*p - '0');
	}
	return n;
}

/* Read the WU's results into w->rows, time out overdue ones and count
 * the rest. */
static int scan_results(struct ct_db *db, struct twu *w, int64_t now)
{
	int rc;

	w->min_deadline = CT_TRANSITION_NEVER;
	w->maxidx = -1;
	rc = ct_result_list_wu(db, w->id, &w->rows, &w->nrows);
	for (size_t i = 0; rc >= 0 && i < w->nrows; i++) {
		struct ct_result_row *r = &w->rows[i];
		int64_t deadline = r->report_deadline;
		int ss = r->server_state, oc = r->outcome, vs = r->validate_state;
		int idx = result_index(w->name, r->name);

		w->ntotal++;
		w->maxidx = idx > w->maxidx ? idx : w->maxidx;
		if (ss == CT_RS_IN_PROGRESS && deadline < now) {
			rc = ct_res_move(db, r->id, CT_RES_IN_PROGRESS, CT_RES_NO_REPLY,
					 &(struct ct_res_change){ .now = now });
			if (rc > 0)
				rc = ct_host_count_error(db, r->hostid);
			if (rc < 0)
				break;
			ct_log_info("transitioner: result %s timed out", r->name);
			ss = r->server_state = CT_RS_OVER;
			oc = r->outcome = CT_RO_NO_REPLY;
		}
		if (ss == CT_RS_UNSENT) {
			w->nunsent++;
		} else if (ss == CT_RS_IN_PROGRESS) {
			w->ninprog++;
			w->min_deadline = deadline < w->min_deadline ? deadline : w->min_deadline;
		} else if (oc == CT_RO_SUCCESS) {
			w->nsuccess++;
			w->nviable += vs != CT_VS_INVALID;
			w->nwaiting += vs == CT_VS_INIT;
		} else if (oc == CT_RO_CLIENT_ERROR || oc == CT_RO_NO_REPLY ||
			   oc == CT_RO_VALIDATE_ERROR) {
			w->nerror++;
		}
	}
	return rc < 0 ? rc : 0;
}

/* The early re-issue's limit for a WU whose fastest done replica took
 * `fastest` seconds from send to report. */
static int64_t reissue_after(const struct ct_conf *conf, int64_t fastest)
{
	double factor = 3;
	long min = 1800;	/* a throttled or paused honest host is not rushed */

	if (conf) {	/* a bad value keeps the default */
		ct_conf_get_double(conf, "sched.reissue_factor", 3, 0, 1e6, &factor);
		ct_conf_get_int(conf, "sched.reissue_min", 1800, 1, 86400 * 365, &min);
	}
	if (factor <= 0)
		return CT_TRANSITION_NEVER;	/* off */
	return fastest * factor > min ? (int64_t)(fastest * factor) : min;
}

/* Replicas in progress that sit unreported while a replica of the same WU
 * is done: past reissue_after() they count as lost (w->nstale, out of
 * w->ninprog), so handle_open sends a new one; the WU is woken when the
 * next one becomes overdue. The first 64 replicas sent are looked at
 * (w->rows, as scan_results left them: no statement of its own). */
static void early_reissue(const struct ct_conf *conf, struct twu *w, int64_t now)
{
	const struct ct_result_row *v[EARLY_SENT_MAX];
	int64_t fastest = -1, limit;
	size_t n = 0;

	if (w->canonical != 0 || w->error_mask != 0 || w->ninprog == 0 || w->nviable == 0)
		return;
	for (size_t i = 0; i < w->nrows && n < EARLY_SENT_MAX; i++)
		if (w->rows[i].server_state == CT_RS_IN_PROGRESS ||
		    w->rows[i].server_state == CT_RS_OVER)
			v[n++] = &w->rows[i];
	for (size_t i = 0; i < n; i++)
		if (v[i]->server_state == CT_RS_OVER && v[i]->outcome == CT_RO_SUCCESS &&
		    v[i]->validate_state != CT_VS_INVALID &&
		    (fastest < 0 || v[i]->received_time - v[i]->sent_time < fastest))
			fastest = v[i]->received_time - v[i]->sent_time;
	limit = reissue_after(conf, fastest < 1 ? 1 : fastest);
	if (limit == CT_TRANSITION_NEVER)
		fastest = -1;	/* off */
	for (size_t i = 0; fastest >= 0 && i < n; i++) {
		if (v[i]->server_state != CT_RS_IN_PROGRESS)
			continue;
		if (now - v[i]->sent_time < limit) {
			if (v[i]->sent_time + limit < w->min_deadline)
				w->min_deadline = v[i]->sent_time + limit;
			continue;
		}
		w->nstale++;
	}
	w->ninprog -= w->nstale;
	if (w->nstale > 0 && w->nunsent + w->ninprog + w->nviable < w->target)
		ct_log_info("transitioner: %s: %d replica(s) unreported after %lld s while one "
			    "took %lld s: re-issued early", w->name, w->nstale, (long long)limit,
			    (long long)fastest);
}

/* Insert `k` new unsent results of the WU. */
static int create_results(struct ct_db *db, struct twu *w, int k, int64_t now)
{
	char name[96];
	int rc = 0;

	for (int i = 0; i < k; i++) {
		for (int tries = 0; tries < 4; tries++) {
			w->maxidx++;
			snprintf(name, sizeof(name), "%s-%d", w->name, w->maxidx);
			rc = ct_res_create(db, w->id, w->jobid, name, now);
			if (rc != CT_EDUP)
				break;
		}
		if (rc < 0)
			return rc;
		w->nunsent++;
		w->ntotal++;
	}
	if (k > 0)
		ct_log_info("transitioner: %s: %d new result(s)", w->name, k);
	return 0;
}

/* Flag the WU as failed and tell its round and job why. */
static int flag_error(struct ct_db *db, struct twu *w, int bit, const char *why)
{
	char msg[200];
	int rc;

	w->error_mask |= bit;
	if (bit == CT_WU_ERR_CANCELED)
		return 0;	/* the job was stopped by someone else */
	snprintf(msg, sizeof(msg), "work unit %s: %s", w->name, why);
	ct_log_warn("transitioner: %s", msg);
	rc = ct_round_move(db, w->roundid, CT_ROUND_OPEN, CT_ROUND_ERROR,
			   &(struct ct_round_change){ .now = ct_db_now(db) });
	if (rc >= 0)
		rc = ct_job_move(db, w->jobid, CT_JOB_RUNNING, CT_JOB_ERROR,
				 &(struct ct_job_change){ .now = ct_db_now(db), .msg = msg });
	/* the job's other open WUs stop too (their next pass sees the job) */
	if (rc >= 0)
		rc = ct_wu_wake_job(db, w->jobid, w->id, ct_db_now(db));
	return rc < 0 ? rc : 0;
}

/* A WU still looking for its canonical result: caps, new results. */
static int handle_open(struct ct_db *db, struct twu *w, int64_t now)
{
	int need;

	if (w->job_status != CT_JOB_RUNNING)
		return flag_error(db, w, CT_WU_ERR_CANCELED, "job not running");
	if (w->nerror > w->max_err)
		return flag_error(db, w, CT_WU_ERR_TOO_MANY_ERRORS, "too many errors");
	if (w->nsuccess > w->max_success)
		return flag_error(db, w, CT_WU_ERR_TOO_MANY_SUCCESS,
				  "too many successful results without agreement");
	need = w->target - (w->nunsent + w->ninprog + w->nviable);
	if (need <= 0)
		return 0;
	if (w->ntotal + need > w->max_total)
		return flag_error(db, w, CT_WU_ERR_TOO_MANY_TOTAL, "too many results");
	if (need > NEW_RESULTS_MAX)
		need = NEW_RESULTS_MAX;
	return create_results(db, w, need, now);
}

/* A decided WU (canonical or error): retire the rest, hand over, clean up. */
static int handle_decided(struct ct_db *db, struct twu *w)
{
	int rc;

	rc = ct_res_drop_unsent_wu(db, w->id, 0);
	if (rc < 0)
		return rc;
	w->nunsent = 0;
	if (w->assimilate_state == CT_AS_INIT)
		w->assimilate_state = CT_AS_READY;
	if (w->assimilate_state != CT_AS_DONE || w->ninprog > 0 ||
	    (w->nwaiting > 0 && w->error_mask == 0))
		return 0;
	/* Nothing can change any more: uploads and inputs may go. */
	rc = ct_fd_ready_wu(db, w->id);
	if (rc >= 0 && w->file_delete_state == CT_FD_INIT)
		w->file_delete_state = CT_FD_READY;
	return rc < 0 ? rc : 0;
}

/* Errors of hosts that never returned a valid result do not count towards
 * the WU's caps: free accounts reporting errors cannot fail a job. */
static int discount_unproven(struct ct_db *db, struct twu *w)
{
	int n = 0, rc;

	if (w->canonical != 0 || w->error_mask != 0 || w->nerror == 0)
		return 0;
	rc = ct_wlim_unproven_errors(db, w->id, &n);
	w->nerror -= n;
	w->ntotal -= n;
	return rc;
}

/* What a transition_one transaction gets. */
struct transition_arg {
	int64_t wuid;
	const struct ct_conf *conf;
};

static int transition_one(struct ct_db *db, void *arg)
{
	const struct transition_arg *ta = arg;
	int64_t wuid = ta->wuid, now = ct_db_now(db);
	enum ct_wu_state from;
	struct twu w;
	int rc, fd_from;

	rc = load_wu(db, wuid, now, &w);
	if (rc < 0 || w.id == 0)
		return rc;
	from = ct_wu_state_of(w.canonical, w.error_mask, w.assimilate_state);
	fd_from = w.file_delete_state;
	rc = scan_results(db, &w, now);
	if (rc == 0 && w.canonical == 0 && w.error_mask == 0 && w.nerror > 1)
		rc = ct_stall_check(db, w.jobid, w.id, w.name);
	if (rc >= 0)
		rc = discount_unproven(db, &w);
	if (rc >= 0)
		early_reissue(ta->conf, &w, now);
	free(w.rows);
	if (rc < 0)
		return rc;
	if (w.canonical == 0 && w.error_mask == 0) {
		rc = handle_open(db, &w, now);
		if (rc < 0)
			return rc;
	}
	if (w.canonical != 0 || w.error_mask != 0)
		rc = handle_decided(db, &w);
	if (rc < 0)
		return rc;
	/* successes to validate: before the decision, or late ones after it */
	w.need_validate = w.nwaiting > 0 && w.error_mask == 0 ? 1 : 0;
	rc = ct_wu_store_pass(db, w.id, from, fd_from, &(struct ct_wu_pass){
		.canonical = w.canonical, .transition_time = w.min_deadline,
		.error_mask = w.error_mask, .need_validate = w.need_validate,
		.assimilate_state = w.assimilate_state, .file_delete_state = w.file_delete_state });
	return rc < 0 ? rc : 1;
}

/* The WUs due, oldest transition_time first, of this instance's share. */
static int claim_due(struct ct_server *srv, struct ct_db *db, int64_t *ids, size_t cap,
		     size_t *n, void *arg)
{
	int64_t nshare, k;
	int rc;

	(void)srv;
	(void)arg;
	rc = ct_instance_share(db, &nshare, &k);	/* this instance's WUs (instance.h) */
	if (rc < 0)
		return rc;
	return ct_wu_due_ids(db, ct_db_now(db), nshare, k, ids, cap, n);
}

static int transition_wu(struct ct_server *srv, struct ct_db *db, int64_t wuid, void *arg)
{
	struct transition_arg ta = { .wuid = wuid, .conf = srv->conf };

	(void)arg;
	return ct_db_txn(db, transition_one, &ta);
}

static struct ct_pass_backoff transition_backoff = CT_PASS_BACKOFF_INIT;

int ct_transitioner_run_once(struct ct_server *srv, struct ct_db *db)
{
	static const struct ct_pass pass = {
		.name = "transitioner", .batch = TRANSITION_BATCH, .claim = claim_due,
		.handle = transition_wu, .backoff = &transition_backoff,
	};

	return ct_pass_run(srv, db, &pass, NULL);
}
