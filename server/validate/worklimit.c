/*
 * worklimit.c - in-progress caps, daily quotas, deadlines, and which
 * errors count (see worklimit.h).
 */
#include "worklimit.h"
#include "data/dl_worklimit.h"

#include <stdlib.h>

#include "ct_err.h"
#include "data/db.h"
#include "data/result_state.h"

#define ESTIMATE_SAMPLES 32

static int get_int(const struct ct_conf *conf, const char *key, long def, long lo, long hi,
		   int *out)
{
	long v = def;
	int rc = conf ? ct_conf_get_int(conf, key, def, lo, hi, &v) : 0;

	*out = (int)v;
	return rc;
}

int ct_wlim_policy_load(const struct ct_conf *conf, struct ct_wlim_policy *p)
{
	int rc = get_int(conf, "sched.daily_quota", 32, 1, 1000000, &p->daily_quota);

	if (rc == 0)
		rc = get_int(conf, "sched.daily_quota_max", 1000, 1, 10000000,
			     &p->daily_quota_max);
	/* on by default at the project's own cap: a new host may hold what any
	 * host may, and all new hosts of one account together no more */
	if (rc == 0)
		rc = get_int(conf, "sched.max_in_progress", 4, 1, 10000, &p->new_host_in_progress);
	if (rc == 0)
		rc = get_int(conf, "sched.new_host_in_progress", p->new_host_in_progress, 0, 10000,
			     &p->new_host_in_progress);
	if (rc == 0)
		rc = get_int(conf, "sched.min_deadline", 120, 1, 86400 * 365, &p->min_deadline);
	if (rc == 0)
		rc = get_int(conf, "sched.new_host_deadline", 3600, 1, 86400 * 365,
			     &p->new_host_deadline);
	return rc;
}

void ct_wlim_counted(struct ct_wlim_host *h, const struct ct_dl_wlim_counts *k)
{
	h->inprog = k->inprog;
	h->sent24 = k->sent24;
	h->err24 = k->err24;
	h->valid24 = k->valid24;
	h->acc_inprog = k->acc_inprog;
	h->acc_valid24 = k->acc_valid24;
	h->counted = 1;
}

int ct_wlim_count(struct ct_db *db, int64_t userid, int64_t hostid, struct ct_wlim_host *h)
{
	struct ct_dl_wlim_counts k;
	int rc;

	rc = ct_dl_wlim_counts(db, userid, hostid, ct_db_now(db) - CT_WLIM_DAY, &k);
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_EDB, "host counts: no row");
	if (rc == 0)
		ct_wlim_counted(h, &k);
	return rc;
}

static int64_t daily_quota(const struct ct_wlim_policy *p, const struct ct_wlim_host *h)
{
	int64_t q = p->daily_quota + h->nvalid;

	if (q > p->daily_quota_max)
		q = p->daily_quota_max;
	q = h->err24 >= 62 ? 0 : q >> h->err24;
	return q < 1 ? 1 : q;
}

/* The account's room: its cap (new_host_in_progress + its valid results
 * of the last day, or the host's cap when that is larger) less what it
 * has in progress. */
static int64_t account_room(const struct ct_wlim_policy *p, int64_t host_cap,
			    const struct ct_wlim_host *h)
{
	int64_t cap = p->new_host_in_progress + h->acc_valid24;

	if (cap < host_cap)
		cap = host_cap;
	return cap - h->acc_inprog;
}

/* The in-progress caps from validated throughput (host, then account);
 * *r stays as it is when the project does not cap by throughput. */
static void throughput_room(const struct ct_wlim_policy *p, const struct ct_wlim_host *h,
			    int64_t cap, int64_t *r, const char **why)
{
	int64_t host_cap, acc;

	if (p->new_host_in_progress == 0)
		return;
	host_cap = p->new_host_in_progress + h->valid24;
	if (host_cap > cap)
		host_cap = cap;
	acc = account_room(p, host_cap, h);
	if (host_cap - h->inprog < *r)
		*r = host_cap - h->inprog, *why = "host in progress";
	if (acc < *r)
		*r = acc, *why = "account in progress";
}

int ct_wlim_room(const struct ct_conf *conf, const struct ct_wlim_host *h, int64_t cap,
		 int *room, const char **why)
{
	struct ct_wlim_policy p;
	int64_t day, r = 1000000;
	int rc;

	*room = 0;
	*why = NULL;
	if (!h->counted)
		return ct_error(CT_EINTERNAL, "work limits: the host was not counted");
	rc = ct_wlim_policy_load(conf, &p);
	if (rc < 0)
		return rc;
	throughput_room(&p, h, cap, &r, why);
	day = daily_quota(&p, h) - h->sent24;
	if (day < r)
		r = day, *why = "daily quota";
	*room = r < 0 ? 0 : r > 1000000 ? 1000000 : (int)r;
	return 0;
}

static int cmp_run_time(const void *a, const void *b)
{
	double x = ((const struct ct_dl_run_time *)a)->elapsed_s;
	double y = ((const struct ct_dl_run_time *)b)->elapsed_s;

	return (x > y) - (x < y);
}

/* Median elapsed time of the job's last valid results; 0 when none. */
static int expected_seconds(struct ct_db *db, int64_t wuid, double *out)
{
	struct ct_dl_run_time *v = NULL;
	size_t n = 0;
	int rc;

	*out = 0;
	rc = ct_dl_job_run_times(db, wuid, ESTIMATE_SAMPLES, &v, &n);
	if (rc < 0)
		return rc;
	if (n > 0) {
		qsort(v, n, sizeof(v[0]), cmp_run_time);
		*out = v[n / 2].elapsed_s;
	}
	free(v);
	return 0;
}

/* A WU's size in seconds at a conservative speed, before the job has any
 * measured run time: 6 x parameters x tokens FLOPs (forward and
 * backward; the parameters from the model file's float32 size, the
 * tokens steps x batch x seq) at sched.first_deadline_gflops (2 GFLOP/s,
 * a slow CPU part-time; this engine sustains ~250 on one desktop). */
static int size_seconds(struct ct_db *db, const struct ct_conf *conf, int64_t wuid,
			double *secs)
{
	struct ct_dl_wu_size z = { 0 };
	double gflops = 2, flops;
	int rc = conf ? ct_conf_get_double(conf, "sched.first_deadline_gflops", 2, 1e-6, 1e9,
					   &gflops) : 0;

	*secs = 0;
	if (rc == 0)
		rc = ct_dl_wu_size(db, wuid, &z);
	if (rc < 0)
		return rc;
	flops = 6.0 * ((double)z.model_size / 4) * (double)z.steps * (double)z.batch *
		(double)z.seq;
	*secs = flops / (gflops * 1e9);
	return 0;
}

int ct_wlim_estimate(struct ct_db *db, const struct ct_conf *conf, int64_t wuid,
		     struct ct_wlim_estimate *e)
{
	int rc;

	e->measured = e->sized = 0;
	rc = expected_seconds(db, wuid, &e->measured);
	/* nothing measured yet: from the job's own size, never a flat day */
	if (rc == 0 && e->measured <= 0)
		rc = size_seconds(db, conf, wuid, &e->sized);
	return rc;
}

int64_t ct_wlim_deadline(const struct ct_wlim_policy *p, const struct ct_wlim_estimate *e,
			 int64_t nvalid, int delay_bound, int64_t now)
{
	double secs = e->sized;

	if (e->measured > 0)
		secs = e->measured * (nvalid > 0 ? 10 : 3);
	/* nothing measured: at least new_host_deadline, what a client needs
	 * besides computing (downloads, a self-test, a throttled CPU) */
	else if (secs < p->new_host_deadline)
		secs = p->new_host_deadline;
	if (secs < p->min_deadline)
		secs = p->min_deadline;
	if (secs > delay_bound)
		secs = delay_bound;
	return now + (int64_t)secs;
}
