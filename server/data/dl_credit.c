/*
 * dl_credit.c - the credit columns' and credit_event's statements (see
 * dl_credit.h), with their column tables beside them.
 */
#include "dl_credit.h"

#include <math.h>

#include "db.h"
#include "db_args.h"
#include "dl.h"

/* One fixed statement per owner table, so the SQL stays a fixed set of
 * prepared statements; indexed by enum ct_credit_owner. */
static const char *const totals_sel[] = {
	"SELECT total_credit, expavg_credit, expavg_time FROM `user` WHERE id=? FOR UPDATE",
	"SELECT total_credit, expavg_credit, expavg_time FROM host WHERE id=? FOR UPDATE",
	"SELECT total_credit, expavg_credit, expavg_time FROM team WHERE id=? FOR UPDATE",
};

static const char *const totals_upd[] = {
	"UPDATE `user` SET total_credit=?, expavg_credit=?, expavg_time=? WHERE id=?",
	"UPDATE host SET total_credit=?, expavg_credit=?, expavg_time=? WHERE id=?",
	"UPDATE team SET total_credit=?, expavg_credit=?, expavg_time=? WHERE id=?",
};

static const char *const totals_decay[] = {
	"UPDATE `user` SET expavg_credit = expavg_credit * EXP(-(? - expavg_time) * ? / ?), "
	"expavg_time = ? WHERE expavg_time > 0 AND expavg_time < ? - 3600 AND expavg_credit > 0",
	"UPDATE host SET expavg_credit = expavg_credit * EXP(-(? - expavg_time) * ? / ?), "
	"expavg_time = ? WHERE expavg_time > 0 AND expavg_time < ? - 3600 AND expavg_credit > 0",
	"UPDATE team SET expavg_credit = expavg_credit * EXP(-(? - expavg_time) * ? / ?), "
	"expavg_time = ? WHERE expavg_time > 0 AND expavg_time < ? - 3600 AND expavg_credit > 0",
};

static const struct ct_dl_col totals_cols[] = {
	CT_DL_COL(struct ct_credit_totals, total), CT_DL_COL(struct ct_credit_totals, rac),
	CT_DL_COL(struct ct_credit_totals, rac_time),
};

int ct_credit_totals_lock(struct ct_db *db, enum ct_credit_owner owner, int64_t id,
			  struct ct_credit_totals *t)
{
	return CT_DL_ONE(db, t, totals_cols, totals_sel[owner], id);
}

int ct_credit_totals_set(struct ct_db *db, enum ct_credit_owner owner, int64_t id,
			 const struct ct_credit_totals *t)
{
	int rc = CT_DB_EXEC(db, totals_upd[owner], t->total, t->rac, t->rac_time, id);

	return rc < 0 ? rc : 0;
}

int ct_credit_totals_decay(struct ct_db *db, enum ct_credit_owner owner, int64_t now,
			   double half_life)
{
	return CT_DB_EXEC(db, totals_decay[owner], now, M_LN2, half_life, now, now);
}

#define E struct ct_credit_event_row
static const struct ct_dl_col event_cols[] = {
	CT_DL_COL(E, wuid), CT_DL_COL(E, jobid), CT_DL_COL(E, userid), CT_DL_COL(E, hostid),
	CT_DL_COL(E, teamid), CT_DL_COL(E, credit),
};
#undef E

/* event_cols without the credit: a result's owners. */
static const struct ct_dl_col owner_cols[] = {
	CT_DL_COL(struct ct_credit_event_row, wuid), CT_DL_COL(struct ct_credit_event_row, jobid),
	CT_DL_COL(struct ct_credit_event_row, userid),
	CT_DL_COL(struct ct_credit_event_row, hostid),
	CT_DL_COL(struct ct_credit_event_row, teamid),
};

int ct_credit_result_owner(struct ct_db *db, int64_t resultid, struct ct_credit_event_row *e)
{
	e->credit = 0.0;
	return CT_DL_ONE(db, e, owner_cols, "SELECT r.workunitid, r.jobid, r.userid, r.hostid, "
			 "u.teamid FROM result r LEFT JOIN `user` u ON u.id = r.userid WHERE "
			 "r.id=?", resultid);
}

int ct_credit_event_insert(struct ct_db *db, int64_t resultid, const struct ct_credit_event_row *e,
			   int64_t now)
{
	int rc = CT_DB_EXEC(db, "INSERT INTO credit_event (create_time, resultid, workunitid, "
			    "jobid, userid, hostid, teamid, credit) VALUES (?,?,?,?,?,?,?,?)",
			    now, resultid, e->wuid, e->jobid, e->userid, e->hostid, e->teamid,
			    e->credit);

	return rc < 0 ? rc : 0;
}

int ct_credit_event_lock(struct ct_db *db, int64_t resultid, struct ct_credit_event_row *e)
{
	return CT_DL_ONE(db, e, event_cols, "SELECT workunitid, jobid, userid, hostid, teamid, "
			 "credit FROM credit_event WHERE resultid=? FOR UPDATE", resultid);
}

int ct_credit_event_revoke(struct ct_db *db, int64_t resultid)
{
	return CT_DB_EXEC(db, "UPDATE credit_event SET credit=0 WHERE resultid=? AND credit<>0",
			  resultid);
}
