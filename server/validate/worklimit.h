/*
 * worklimit.h - how much work a host may hold, for how long, and whose
 * errors count against a work unit (doc/validation.md, "Errors and
 * hoarding"). Everything is derived from the result and host rows the
 * other modules already keep, so there is no counter to drift:
 *
 *   proven host   a host with at least one valid result (host.nresults_valid)
 *   in progress   with sched.new_host_in_progress = N (default: the
 *                 project's sched.max_in_progress, 4; 0 turns the caps
 *                 off, leaving only max_in_progress): per host at most
 *                 min(max_in_progress (or the host's own), N + the host's
 *                 valid results of the last 24 h); per account at most
 *                 N + the account's valid results of the last 24 h, or
 *                 the host's cap when that is larger
 *   daily quota   results sent to a host in the last 24 h stay below
 *                 min(daily_quota_max, daily_quota + nresults_valid),
 *                 halved for each error (client error, no reply, refused
 *                 upload) among them, at least 1
 *   deadline      from the WU's expected compute time (the median elapsed
 *                 time of the job's last 32 valid results): proven hosts
 *                 10x, new hosts 3x, at least sched.min_deadline, at most
 *                 the WU's delay_bound; with no estimate yet a new host
 *                 gets sched.new_host_deadline, a proven one delay_bound
 *   errors        errors of hosts that never returned a valid result do
 *                 not count towards a WU's max_error_results (nor its
 *                 max_total_results): free accounts cannot fail a job
 *
 * Config keys ([sched]): daily_quota (32), daily_quota_max (1000),
 * new_host_in_progress (max_in_progress; 0 = off), min_deadline (120 s), new_host_deadline
 * (3600 s). Threads: reentrant; db calls on the caller's connection.
 */
#ifndef CT_WORKLIMIT_H
#define CT_WORKLIMIT_H

#include <stdint.h>

#include "ct_conf.h"

struct ct_db;
struct ct_dl_wlim_counts;

/* The last day, as the quota and the throughput caps count it. */
#define CT_WLIM_DAY 86400

struct ct_wlim_policy {
	int daily_quota, daily_quota_max, new_host_in_progress;
	int min_deadline, new_host_deadline;
};

/* The policy from conf (NULL: defaults). Returns 0 or CT_ECONFIG. */
int ct_wlim_policy_load(const struct ct_conf *conf, struct ct_wlim_policy *p);

/* What the scheduler read of the host once per request. */
struct ct_wlim_host {
	int64_t nvalid;		/* host.nresults_valid */
	int64_t inprog;		/* its results in progress now */
	/* ct_wlim_count's (counted = 1): the host's results sent in the last
	 * 24 h, errors and valid ones among them; the account's in progress
	 * and valid ones sent in the last 24 h */
	int counted;
	int64_t sent24, err24, valid24, acc_inprog, acc_valid24;
};

/* Every count ct_wlim_room needs of host hostid and account userid, and
 * h->inprog, in one statement (data/dl_worklimit.h, since CT_WLIM_DAY
 * ago); sets h->counted. Returns 0 or CT_EDB. */
int ct_wlim_count(struct ct_db *db, int64_t userid, int64_t hostid, struct ct_wlim_host *h);

/* The counts *k (read since CT_WLIM_DAY ago, as ct_wlim_count does, by a
 * caller that read them with other rows) into *h; sets h->counted. */
void ct_wlim_counted(struct ct_wlim_host *h, const struct ct_dl_wlim_counts *k);

/* How many more results the host counted in *h (h->counted) may take now
 * (*room >= 0), given the project's in-progress cap `cap` for the host
 * (the host's max_in_progress or sched.max_in_progress). *why names the
 * limit that bound it ("host in progress", "account in progress", "daily
 * quota"; static) or NULL. Pure. Returns 0, CT_ECONFIG, or CT_EINTERNAL
 * when h was not counted. */
int ct_wlim_room(const struct ct_conf *conf, const struct ct_wlim_host *h, int64_t cap,
		 int *room, const char **why);

/* A job's expected compute time for one WU, what deadlines derive from:
 * measured, the median run time of its last valid results (0: none yet),
 * and sized, a WU's FLOPs at sched.first_deadline_gflops. */
struct ct_wlim_estimate {
	double measured, sized;
};

/* The estimate for WU wuid's job. Returns 0 or CT_EDB / CT_ECONFIG. */
int ct_wlim_estimate(struct ct_db *db, const struct ct_conf *conf, int64_t wuid,
		     struct ct_wlim_estimate *e);

/* The report deadline of a result sent at `now` to a host with nvalid
 * valid results, whose WU allows delay_bound seconds and whose job has
 * estimate *e: 10x (a proven host) or 3x (a new one) the measured time;
 * before there is one, the sized time, at least sched.new_host_deadline
 * for any host; within [sched.min_deadline, delay_bound].
 * Pure. */
int64_t ct_wlim_deadline(const struct ct_wlim_policy *p, const struct ct_wlim_estimate *e,
			 int64_t nvalid, int delay_bound, int64_t now);

#endif
