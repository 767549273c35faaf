/*
 * worklimit.c - in-progress caps, daily quotas, deadlines, and which
 * errors count (see worklimit.h).
 */
#include "worklimit.h"
#include "data/dl.h"

#include <stdlib.h>

#include "ct_err.h"
#include "data/db.h"
#include "data/result_state.h"

#define DAY 86400
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

/* The host's valid results (all time), and of the last day: sent, errors
 * among them, and valid ones. */
struct host_recent {
	int64_t nvalid, sent24, err24, valid24;
};

/* host_recent's counts over the last day, in its SELECT's order. */
static const struct ct_dl_col recent_cols[] = {
	CT_DL_COL(struct host_recent, sent24), CT_DL_COL(struct host_recent, err24),
	CT_DL_COL(struct host_recent, valid24),
};

static int host_recent(struct ct_db *db, int64_t hostid, int64_t now, struct host_recent *h)
{
	struct ct_db_res *res = NULL;
	int rc;

	rc = CT_DB_QUERY(db, &res, "SELECT COUNT(*), COALESCE(SUM(outcome IN (?, ?, ?)), 0), "
			 "COALESCE(SUM(validate_state = ?), 0) FROM result "
			 "WHERE hostid=? AND sent_time > ?", CT_RO_CLIENT_ERROR,
			 CT_RO_NO_REPLY, CT_RO_VALIDATE_ERROR, CT_VS_VALID, hostid, now - DAY);
	if (rc < 0)
		return rc;
	rc = ct_dl_one(res, h, recent_cols, CT_DL_NCOLS(recent_cols));
	return rc == CT_ENOTFOUND ? 0 : rc;
}

int ct_wlim_count(struct ct_db *db, int64_t userid, int64_t hostid, struct ct_wlim_host *h)
{
	struct ct_db_res *res = NULL;
	int64_t now = ct_db_now(db);
	int rc;

	/* the last day by result_host_sent: on small tables MariaDB took
	 * result_host, every result the host ever had */
	rc = CT_DB_QUERY(db, &res, "SELECT (SELECT COUNT(*) FROM result WHERE hostid=? AND "
			 "server_state=?), hr.n, hr.e, hr.v, (SELECT COUNT(*) FROM result WHERE "
			 "userid=? AND server_state=?), (SELECT COUNT(*) FROM result WHERE userid=? "
			 "AND validate_state=? AND sent_time > ?) FROM (SELECT COUNT(*) AS n, "
			 "COALESCE(SUM(outcome IN (?, ?, ?)), 0) AS e, COALESCE(SUM(validate_state "
			 "= ?), 0) AS v FROM result FORCE INDEX (result_host_sent) WHERE hostid=? AND "
			 "sent_time > ?) hr",
			 hostid, CT_RS_IN_PROGRESS, userid, CT_RS_IN_PROGRESS,
			 userid, CT_VS_VALID, now - DAY, CT_RO_CLIENT_ERROR, CT_RO_NO_REPLY,
			 CT_RO_VALIDATE_ERROR, CT_VS_VALID, hostid, now - DAY);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) > 0) {
		h->inprog = ct_db_int(res, 0);
		h->sent24 = ct_db_int(res, 1);
		h->err24 = ct_db_int(res, 2);
		h->valid24 = ct_db_int(res, 3);
		h->acc_inprog = ct_db_int(res, 4);
		h->acc_valid24 = ct_db_int(res, 5);
		h->counted = 1;
	}
	ct_db_res_free(res);
	return h->counted ? 0 : ct_error(CT_EDB, "host counts: no row");
}

static int64_t daily_quota(const struct ct_wlim_policy *p, const struct host_recent *h)
{
	int64_t q = p->daily_quota + h->nvalid;

	if (q > p->daily_quota_max)
		q = p->daily_quota_max;
	q = h->err24 >= 62 ? 0 : q >> h->err24;
	return q < 1 ? 1 : q;
}

static int account_room(struct ct_db *db, const struct ct_wlim_policy *p, int64_t userid,
			int64_t host_cap, int64_t now, const struct ct_wlim_host *wh,
			int64_t *room)
{
	int64_t inprog = wh->acc_inprog, valid24 = wh->acc_valid24, cap;
	int rc = 0;

	if (!wh->counted)
		rc = CT_DB_QUERY_INT(db, &inprog, "SELECT COUNT(*) FROM result WHERE userid=? AND "
			     "server_state=?", userid, CT_RS_IN_PROGRESS);
	if (rc == 0 && !wh->counted)
		rc = CT_DB_QUERY_INT(db, &valid24, "SELECT COUNT(*) FROM result WHERE "
				     "userid=? AND validate_state=? AND sent_time > ?",
				     userid, CT_VS_VALID, now - DAY);
	if (rc < 0)
		return rc;
	cap = p->new_host_in_progress + valid24;
	if (cap < host_cap)
		cap = host_cap;
	*room = cap - inprog;
	return 0;
}

/* The in-progress caps from validated throughput (host, then account);
 * *r stays as it is when the project does not cap by throughput. */
static int throughput_room(struct ct_db *db, const struct ct_wlim_policy *p, int64_t userid,
			   const struct ct_wlim_host *wh, int64_t cap, const struct host_recent *h,
			   int64_t now, int64_t *r, const char **why)
{
	int64_t host_cap, acc = 0;
	int rc;

	if (p->new_host_in_progress == 0)
		return 0;
	host_cap = p->new_host_in_progress + h->valid24;
	if (host_cap > cap)
		host_cap = cap;
	rc = account_room(db, p, userid, host_cap, now, wh, &acc);
	if (rc < 0)
		return rc;
	if (host_cap - wh->inprog < *r)
		*r = host_cap - wh->inprog, *why = "host in progress";
	if (acc < *r)
		*r = acc, *why = "account in progress";
	return 0;
}

int ct_wlim_room(struct ct_db *db, const struct ct_conf *conf, int64_t userid,
		 int64_t hostid, const struct ct_wlim_host *host, int64_t cap, int *room,
		 const char **why)
{
	struct ct_wlim_policy p;
	struct host_recent h = { .nvalid = host->nvalid };
	int64_t now = ct_db_now(db), day, r = 1000000;
	int rc;

	*room = 0;
	*why = NULL;
	rc = ct_wlim_policy_load(conf, &p);
	if (rc == 0 && host->counted) {
		h.sent24 = host->sent24;
		h.err24 = host->err24;
		h.valid24 = host->valid24;
	} else if (rc == 0) {
		rc = host_recent(db, hostid, now, &h);
	}
	if (rc == 0)
		rc = throughput_room(db, &p, userid, host, cap, &h, now, &r, why);
	if (rc < 0)
		return rc;
	day = daily_quota(&p, &h) - h.sent24;
	if (day < r)
		r = day, *why = "daily quota";
	*room = r < 0 ? 0 : r > 1000000 ? 1000000 : (int)r;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A valid result's run time, the estimate's sample. */
struct elapsed_row {
	double elapsed_s;
};

static const struct ct_dl_col elapsed_cols[] = { CT_DL_COL(struct elapsed_row, elapsed_s) };

/* Median elapsed time of the job's last valid results; 0 when none. */
static int expected_seconds(struct ct_db *db, int64_t wuid, double *out)
{
	struct elapsed_row *v = NULL;
	size_t n = 0;
	int rc;

	*out = 0;
	/* newest first along result_job_valid: a few rows, however many
	 * results the job has (as a join on workunit, MariaDB walked back
	 * through all of them while few were valid) */
	rc = CT_DL_LIST(db, &v, &n, elapsed_cols, "run times", "SELECT elapsed_s FROM result "
			"FORCE INDEX (result_job_valid) WHERE jobid=(SELECT jobid FROM workunit "
			"WHERE id=?) AND validate_state=? AND elapsed_s > 0 ORDER BY id DESC "
			"LIMIT ?", wuid, CT_VS_VALID, ESTIMATE_SAMPLES);
	if (rc < 0)
		return rc;
	if (n > 0) {
		qsort(v, n, sizeof(v[0]), cmp_double);	/* the row is its one double */
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
	struct ct_db_res *res = NULL;
	double gflops = 2, flops = 0;
	int rc = conf ? ct_conf_get_double(conf, "sched.first_deadline_gflops", 2, 1e-6, 1e9,
					   &gflops) : 0;

	*secs = 0;
	if (rc == 0)
		rc = CT_DB_QUERY(db, &res, "SELECT j.steps, j.batch, j.seq, j.model_size FROM "
				 "workunit w JOIN job j ON j.id = w.jobid WHERE w.id=?", wuid);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) > 0)
		flops = 6.0 * ((double)ct_db_int(res, 3) / 4) * (double)ct_db_int(res, 0) *
			(double)ct_db_int(res, 1) * (double)ct_db_int(res, 2);
	ct_db_res_free(res);
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

int ct_wlim_unproven_errors(struct ct_db *db, int64_t wuid, int *n)
{
	int64_t v = 0;
	int rc;

	rc = CT_DB_QUERY_INT(db, &v, "SELECT COUNT(*) FROM result r JOIN host h ON "
			     "h.id = r.hostid WHERE r.workunitid=? AND r.server_state=? AND "
			     "r.outcome IN (?, ?, ?) AND h.nresults_valid = 0", wuid,
			     CT_RS_OVER, CT_RO_CLIENT_ERROR, CT_RO_NO_REPLY,
			     CT_RO_VALIDATE_ERROR);
	*n = rc < 0 ? 0 : (int)v;
	return rc < 0 ? rc : 0;
}
