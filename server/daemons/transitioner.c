/*
 * transitioner.c - the daemon that moves work units along (role
 * "transitioner"; see daemons.h for the contract with the other roles).
 *
 * It handles WUs whose transition_time has come, up to 32 a transaction
 * (TRANSITION_GROUP: their rows locked by one statement, their results and
 * their hosts' standing read by another, one commit), which locks the WU
 * rows first (workunit -> result lock order) and re-checks transition_time
 * under the lock, so several transitioners never handle one WU at once and
 * a crash at any point leaves a state the next pass finishes; a group that
 * fails is done again a WU a transaction (daemon_pass.h), so one bad WU
 * is backed off alone. Per WU:
 *   - in-progress results past their deadline -> over / no_reply;
 *   - counts of unsent, in progress, successes, errors;
 *   - early re-issue: a replica in progress for longer than
 *     sched.reissue_factor (3) x the time its WU's fastest done replica
 *     took (at least sched.reissue_min, 1800 s) counts as lost for the
 *     count below, so a new replica goes out while the old one may still
 *     report (a hoarder stalls a WU that long, not until its deadline);
 *   - without a canonical result: caps (max_error_results,
 *     max_success_results, max_total_results) flag the WU in error_mask,
 *     and its round and job as errored (the group's later WUs of that
 *     job see it stopped); otherwise new unsent results are created until
 *     target_nresults may still succeed (the group's together, at its
 *     end: one INSERT a dozen, the round's counter row written once and
 *     last, so an RPC's send waits on it for the least time); successes
 *     waiting for the validator set need_validate;
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
#include "data/dl.h"
#include "data/dl_files.h"
#include "data/dl_host.h"
#include "data/dl_job.h"
#include "data/dl_result.h"
#include "data/job_state.h"
#include "data/result_state.h"
#include "instance.h"
#include "data/server.h"
#include "validate/stall.h"
#include "data/dl_workunit.h"
#include "data/wu_state.h"
#include "ct_conf.h"
#include "ct_err.h"
#include "ct_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRANSITION_BATCH 100
#define TRANSITION_GROUP CT_DL_IN_MAX	/* WUs a transaction: one IN list */
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
	int nrefused;	/* refused by a check (validate errors) */
	int nunproven;	/* errors of hosts that never returned a valid result */
	int maxidx;
	int nstale;	/* in progress, overdue beside a done replica */
	struct tgroup *g;	/* its group */
	struct ct_result_row *rows;	/* its results, in id order, as moved here */
	size_t nrows;
};

/* A new result a group inserts at its end: WU, job, round, the WU's name
 * and the result's index (its name: "<wu>-<idx>"). */
struct tnew {
	int64_t wuid, jobid, roundid;
	char wuname[72], name[96];
	int idx;
};

/* What a group shares: the jobs' statuses it read (or stopped), so each
 * is read once, and the new results of its WUs. */
struct tgroup {
	struct {
		int64_t id;
		int status;
	} job[TRANSITION_GROUP];
	size_t njobs;
	struct tnew *fresh;
	size_t nfresh, cap;
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

/* WU u (locked) into w with its results rows[0..n) and its job's status:
 * a plain read, once a group (the job row is not locked here: cancel locks
 * job then WUs; this must not take them in the other order; a job gone
 * reads as status 0, not running). */
static int load_wu(struct ct_db *db, const struct ct_workunit_row *u,
		   struct ct_result_row *rows, size_t n, struct tgroup *g, struct twu *w)
{
	int rc;

	memset(w, 0, sizeof(*w));
	w->id = u->id;
	w->jobid = u->jobid;
	w->roundid = u->roundid;
	w->canonical = u->canonical_resultid;
	snprintf(w->name, sizeof(w->name), "%s", u->name);
	w->target = u->target_nresults;
	w->max_err = u->max_error_results;
	w->max_total = u->max_total_results;
	w->max_success = u->max_success_results;
	w->error_mask = u->error_mask;
	w->assimilate_state = u->assimilate_state;
	w->file_delete_state = u->file_delete_state;
	w->need_validate = u->need_validate;
	w->rows = rows;
	w->nrows = n;
	w->g = g;
	for (size_t i = 0; i < g->njobs; i++)
		if (g->job[i].id == w->jobid) {
			w->job_status = g->job[i].status;
			return 0;
		}
	rc = ct_job_status(db, w->jobid, &w->job_status);
	if (rc < 0 && rc != CT_ENOTFOUND)
		return rc;
	g->job[g->njobs].id = w->jobid;
	g->job[g->njobs++].status = w->job_status;
	return 0;
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

/* Time out the WU's overdue results (w->rows) and count them all. */
static int scan_results(struct ct_db *db, struct twu *w, int64_t now)
{
	int rc = 0;

	w->min_deadline = CT_TRANSITION_NEVER;
	w->maxidx = -1;
	for (size_t i = 0; i < w->nrows; i++) {
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
			w->nunproven += r->host_unproven;
			w->nrefused += oc == CT_RO_VALIDATE_ERROR;
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

/* `k` new unsent results of the WU, inserted at the group's end
 * (insert_fresh). */
static int create_results(struct twu *w, int k)
{
	struct tgroup *g = w->g;

	if (g->nfresh + (size_t)k > g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;
		struct tnew *p;

		while (cap < g->nfresh + (size_t)k)
			cap *= 2;
		p = realloc(g->fresh, cap * sizeof(*p));
		if (p == NULL)
			return ct_error(CT_ENOMEM, "transitioner: %zu new results", cap);
		g->fresh = p;
		g->cap = cap;
	}
	for (int i = 0; i < k; i++) {
		struct tnew *t = &g->fresh[g->nfresh++];

		t->wuid = w->id;
		t->jobid = w->jobid;
		t->roundid = w->roundid;
		snprintf(t->wuname, sizeof(t->wuname), "%s", w->name);
		t->idx = ++w->maxidx;
		snprintf(t->name, sizeof(t->name), "%s-%d", w->name, t->idx);
		w->nunsent++;
		w->ntotal++;
	}
	if (k > 0)
		ct_log_info("transitioner: %s: %d new result(s)", w->name, k);
	return 0;
}

/* Insert the group's new results: together (ct_res_create_many); from a
 * name that is taken on, one by one, each WU's next names tried in turn
 * (a name may be taken by a row of no WU). */
static int insert_fresh(struct ct_db *db, struct tgroup *g, int64_t now)
{
	struct ct_res_new *v;
	int done = 0, shift = 0, rc;

	if (g->nfresh == 0)
		return 0;
	v = calloc(g->nfresh, sizeof(*v));
	if (v == NULL)
		return ct_error(CT_ENOMEM, "transitioner: %zu new results", g->nfresh);
	for (size_t i = 0; i < g->nfresh; i++)
		v[i] = (struct ct_res_new){ .wuid = g->fresh[i].wuid, .jobid = g->fresh[i].jobid,
					    .roundid = g->fresh[i].roundid,
					    .name = g->fresh[i].name };
	rc = ct_res_create_many(db, v, (int)g->nfresh, now, &done);
	free(v);
	if (rc != CT_EDUP)
		return rc;
	rc = 0;
	for (size_t i = (size_t)done; rc >= 0 && i < g->nfresh; i++) {
		struct tnew *t = &g->fresh[i];

		if (i == (size_t)done || t->wuid != g->fresh[i - 1].wuid)
			shift = 0;	/* a WU's later names move on with it */
		for (int tries = 0; tries < 4; tries++) {
			snprintf(t->name, sizeof(t->name), "%s-%d", t->wuname, t->idx + shift);
			rc = ct_res_create(db, t->wuid, t->jobid, t->name, now);
			if (rc != CT_EDUP)
				break;
			shift++;
		}
	}
	return rc < 0 ? rc : 0;
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
	for (size_t k = 0; k < w->g->njobs; k++)
		if (w->g->job[k].id == w->jobid)	/* the group's later WUs see it */
			w->g->job[k].status = CT_JOB_ERROR;
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
static int handle_open(struct ct_db *db, struct twu *w)
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
	return create_results(w, need);
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
static void discount_unproven(struct twu *w)
{
	if (w->canonical != 0 || w->error_mask != 0)
		return;
	w->nerror -= w->nunproven;
	w->ntotal -= w->nunproven;
}

/* One WU, locked and loaded: everything above, then its row stored.
 * Returns 1, or a db error. */
static int transition_one(struct ct_db *db, const struct ct_conf *conf, struct twu *w,
			  int64_t now)
{
	enum ct_wu_state from = ct_wu_state_of(w->canonical, w->error_mask, w->assimilate_state);
	int rc, fd_from = w->file_delete_state;

	rc = scan_results(db, w, now);
	/* bit-identical replicas refused: two validate errors at least */
	if (rc == 0 && w->canonical == 0 && w->error_mask == 0 && w->nrefused > 1)
		rc = ct_stall_check(db, w->jobid, w->id, w->name);
	if (rc < 0)
		return rc;
	discount_unproven(w);
	early_reissue(conf, w, now);
	if (w->canonical == 0 && w->error_mask == 0) {
		rc = handle_open(db, w);
		if (rc < 0)
			return rc;
	}
	if (w->canonical != 0 || w->error_mask != 0)
		rc = handle_decided(db, w);
	if (rc < 0)
		return rc;
	/* successes to validate: before the decision, or late ones after it */
	w->need_validate = w->nwaiting > 0 && w->error_mask == 0 ? 1 : 0;
	rc = ct_wu_store_pass(db, w->id, from, fd_from, &(struct ct_wu_pass){
		.canonical = w->canonical, .transition_time = w->min_deadline,
		.error_mask = w->error_mask, .need_validate = w->need_validate,
		.assimilate_state = w->assimilate_state, .file_delete_state = w->file_delete_state });
	return rc < 0 ? rc : 1;
}

/* What a transition_group transaction gets: WU ids, ascending. */
struct transition_arg {
	const int64_t *ids;
	size_t n;
	const struct ct_conf *conf;
};

/* Lock the WUs, read the results of those still due, and handle each:
 * the WUs handled, or a db error (the transaction is rolled back). */
static int transition_group(struct ct_db *db, void *arg)
{
	const struct transition_arg *ta = arg;
	struct ct_workunit_row u[TRANSITION_GROUP];
	struct ct_result_row *rows = NULL;
	int64_t due[TRANSITION_GROUP], now = ct_db_now(db);
	struct tgroup g = { .njobs = 0 };
	size_t ndue = 0, nrows = 0, r = 0;
	int rc, done = 0;

	rc = ct_wu_lock_rows(db, ta->ids, (int)ta->n, u);
	for (size_t i = 0; rc >= 0 && i < ta->n; i++)
		if (u[i].id != 0 && u[i].transition_time <= now) {	/* still there and due */
			u[ndue] = u[i];
			due[ndue++] = u[i].id;
		}
	if (rc >= 0 && ndue > 0)
		rc = ct_result_list_wus(db, due, (int)ndue, &rows, &nrows);
	for (size_t i = 0; rc >= 0 && i < ndue; i++) {
		size_t first;
		struct twu w;

		while (r < nrows && rows[r].workunitid < u[i].id)
			r++;
		for (first = r; r < nrows && rows[r].workunitid == u[i].id; r++)
			;
		rc = load_wu(db, &u[i], rows + first, r - first, &g, &w);
		if (rc >= 0)
			rc = transition_one(db, ta->conf, &w, now);
		done += rc > 0;
	}
	if (rc >= 0)
		rc = insert_fresh(db, &g, now);	/* last: the round's counter row */
	free(g.fresh);
	free(rows);
	return rc < 0 ? rc : done;
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
	struct transition_arg ta = { .ids = &wuid, .n = 1, .conf = srv->conf };

	(void)arg;
	return ct_db_txn(db, transition_group, &ta);
}

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int transition_wus(struct ct_server *srv, struct ct_db *db, const int64_t *ids,
			  size_t n, void *arg)
{
	int64_t sorted[TRANSITION_GROUP];
	struct transition_arg ta = { .ids = sorted, .n = n, .conf = srv->conf };

	(void)arg;
	if (n > TRANSITION_GROUP)
		return ct_error(CT_EINTERNAL, "transitioner: a group of %zu WUs", n);
	memcpy(sorted, ids, n * sizeof(*ids));
	qsort(sorted, n, sizeof(*sorted), cmp_id);	/* lock_order.h */
	return ct_db_txn(db, transition_group, &ta);
}

static struct ct_pass_backoff transition_backoff = CT_PASS_BACKOFF_INIT;

int ct_transitioner_run_once(struct ct_server *srv, struct ct_db *db)
{
	static const struct ct_pass pass = {
		.name = "transitioner", .batch = TRANSITION_BATCH, .claim = claim_due,
		.handle = transition_wu, .handle_many = transition_wus,
		.group = TRANSITION_GROUP, .backoff = &transition_backoff,
	};

	return ct_pass_run(srv, db, &pass, NULL);
}
