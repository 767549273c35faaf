/*
 * credit.c - see credit.h and doc/credit.md.
 */
#include "credit.h"
#include "data/db.h"
#include "data/dl.h"
#include "ct_err.h"
#include "ct_gpt2.h"

#include <math.h>

double ct_credit_wu_flops(const struct ct_model_config *cfg, int seq, int batch,
			  int steps)
{
	double tokens = (double)steps * (double)batch * (double)seq;

	return tokens * ct_gpt2_flops_per_token(cfg, seq);
}

double ct_credit_from_flops(double flops)
{
	return flops / CT_CREDIT_COBBLESTONE_FLOPS;
}

void ct_credit_rac_update(double *rac, double *rac_time, double credit, double now)
{
	const double day = 86400.0;
	double dt = *rac_time > 0.0 ? now - *rac_time : 0.0;
	double w;

	if (dt < 0.0)
		dt = 0.0;
	w = exp(-dt * M_LN2 / CT_CREDIT_HALF_LIFE);
	*rac *= w;
	if (1.0 - w > 1e-6)
		*rac += (1.0 - w) * credit / (dt / day);
	else
		*rac += credit * M_LN2 / (CT_CREDIT_HALF_LIFE / day);
	if (now > *rac_time)
		*rac_time = now;
}

double ct_credit_rac_now(double rac, double rac_time, double now)
{
	double dt = now - rac_time;

	if (rac_time <= 0.0 || dt <= 0.0)
		return rac;
	return rac * exp(-dt * M_LN2 / CT_CREDIT_HALF_LIFE);
}

/* The credit totals of a user, host or team row. */
struct totals {
	double total, rac, rac_time;
};

static const struct ct_dl_col totals_cols[] = {
	CT_DL_COL(struct totals, total), CT_DL_COL(struct totals, rac),
	CT_DL_COL(struct totals, rac_time),
};

/* Whom a result's credit goes to (a credit_event row; the grant reads
 * every column but the credit). */
struct event {
	int64_t wuid, jobid, userid, hostid, teamid;
	double credit;
};

static const struct ct_dl_col event_cols[] = {
	CT_DL_COL(struct event, wuid), CT_DL_COL(struct event, jobid),
	CT_DL_COL(struct event, userid), CT_DL_COL(struct event, hostid),
	CT_DL_COL(struct event, teamid), CT_DL_COL(struct event, credit),
};

/* Lock the row of `table` (one of three literals, so the SQL stays a fixed
 * set of prepared statements), fold the credit in, write it back. */
static int credit_row(struct ct_db *db, int which, int64_t id, double credit,
		      int64_t now)
{
	static const char *const sel[] = {
		"SELECT total_credit, expavg_credit, expavg_time FROM `user` WHERE id=? FOR UPDATE",
		"SELECT total_credit, expavg_credit, expavg_time FROM host WHERE id=? FOR UPDATE",
		"SELECT total_credit, expavg_credit, expavg_time FROM team WHERE id=? FOR UPDATE",
	};
	static const char *const upd[] = {
		"UPDATE `user` SET total_credit=?, expavg_credit=?, expavg_time=? WHERE id=?",
		"UPDATE host SET total_credit=?, expavg_credit=?, expavg_time=? WHERE id=?",
		"UPDATE team SET total_credit=?, expavg_credit=?, expavg_time=? WHERE id=?",
	};
	struct ct_db_res *res = NULL;
	struct totals t;
	double total, rac, rac_time;
	int rc;

	if (id <= 0)
		return 0;
	rc = CT_DB_QUERY(db, &res, sel[which], id);
	if (rc < 0)
		return rc;
	rc = ct_dl_one(res, &t, totals_cols, CT_DL_NCOLS(totals_cols));
	if (rc == CT_ENOTFOUND)
		return 0;	/* deleted account: the event row still records it */
	if (rc < 0)
		return rc;
	total = t.total + credit;
	rac = t.rac;
	rac_time = t.rac_time;
	ct_credit_rac_update(&rac, &rac_time, credit, (double)now);
	total = total < 0.0 ? 0.0 : total;	/* a revocation (negative credit) */
	rac = rac < 0.0 ? 0.0 : rac;
	rc = CT_DB_EXEC(db, upd[which], total, rac, rac_time, id);
	return rc < 0 ? rc : 0;
}

int ct_credit_grant(struct ct_db *db, int64_t resultid, double credit, int64_t now)
{
	struct ct_db_res *res = NULL;
	struct event e;
	int rc;

	rc = CT_DB_QUERY(db, &res,
			 "SELECT r.workunitid, r.jobid, r.userid, r.hostid, u.teamid "
			 "FROM result r LEFT JOIN `user` u ON u.id = r.userid WHERE r.id=?",
			 resultid);
	if (rc < 0)
		return rc;
	rc = ct_dl_one(res, &e, event_cols, CT_DL_NCOLS(event_cols) - 1);
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "credit: no result %lld", (long long)resultid);
	if (rc < 0)
		return rc;
	/* The unique key on resultid is the once-only guard. */
	rc = CT_DB_EXEC(db, "INSERT INTO credit_event (create_time, resultid, workunitid, "
			"jobid, userid, hostid, teamid, credit) VALUES (?,?,?,?,?,?,?,?)",
			now, resultid, e.wuid, e.jobid, e.userid, e.hostid, e.teamid,
			credit);
	if (rc == CT_EDUP)
		return 0;
	if (rc < 0)
		return rc;
	rc = CT_DB_EXEC(db, "UPDATE result SET granted_credit=? WHERE id=?",
			credit, resultid);
	if (rc >= 0)
		rc = credit_row(db, 0, e.userid, credit, now);
	if (rc >= 0)
		rc = credit_row(db, 1, e.hostid, credit, now);
	if (rc >= 0)
		rc = credit_row(db, 2, e.teamid, credit, now);
	return rc < 0 ? rc : 1;
}

int ct_credit_revoke(struct ct_db *db, int64_t resultid, int64_t now)
{
	struct ct_db_res *res = NULL;
	struct event e;
	int rc;

	rc = CT_DB_QUERY(db, &res, "SELECT workunitid, jobid, userid, hostid, teamid, credit "
			 "FROM credit_event WHERE resultid=? FOR UPDATE", resultid);
	if (rc < 0)
		return rc;
	rc = ct_dl_one(res, &e, event_cols, CT_DL_NCOLS(event_cols));
	if (rc == CT_ENOTFOUND)
		return 0;	/* never credited */
	if (rc < 0)
		return rc;
	/* credit 0 marks the event revoked: once only, and the row stays */
	rc = CT_DB_EXEC(db, "UPDATE credit_event SET credit=0 WHERE resultid=? AND credit<>0",
			resultid);
	if (rc <= 0)
		return rc;
	rc = CT_DB_EXEC(db, "UPDATE result SET granted_credit=0 WHERE id=?", resultid);
	if (rc >= 0)
		rc = credit_row(db, 0, e.userid, -e.credit, now);
	if (rc >= 0)
		rc = credit_row(db, 1, e.hostid, -e.credit, now);
	if (rc >= 0)
		rc = credit_row(db, 2, e.teamid, -e.credit, now);
	return rc < 0 ? rc : 1;
}

int ct_credit_decay(struct ct_db *db, int64_t now)
{
	/* One fixed statement per table; the factor is the same
	 * exp(-dt ln2 / half-life) as ct_credit_rac_now(). */
	static const char *const sql[] = {
		"UPDATE `user` SET expavg_credit = expavg_credit * EXP(-(? - expavg_time) * ? / ?), "
		"expavg_time = ? WHERE expavg_time > 0 AND expavg_time < ? - 3600 AND expavg_credit > 0",
		"UPDATE host SET expavg_credit = expavg_credit * EXP(-(? - expavg_time) * ? / ?), "
		"expavg_time = ? WHERE expavg_time > 0 AND expavg_time < ? - 3600 AND expavg_credit > 0",
		"UPDATE team SET expavg_credit = expavg_credit * EXP(-(? - expavg_time) * ? / ?), "
		"expavg_time = ? WHERE expavg_time > 0 AND expavg_time < ? - 3600 AND expavg_credit > 0",
	};
	int total = 0;

	for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
		int rc = CT_DB_EXEC(db, sql[i], now, M_LN2, CT_CREDIT_HALF_LIFE, now, now);

		if (rc < 0)
			return rc;
		total += rc;
	}
	return total;
}

int ct_credit_decay_run_once(struct ct_server *srv, struct ct_db *db)
{
	int rc;

	(void)srv;
	rc = ct_credit_decay(db, ct_db_now(db));
	return rc < 0 ? rc : 0;
}
