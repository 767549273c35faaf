/*
 * credit.c - see credit.h and doc/credit.md.
 */
#include "credit.h"
#include "data/db.h"
#include "data/dl_credit.h"
#include "data/dl_result.h"
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

/* Lock owner's row id, fold the credit in, write it back. */
static int credit_row(struct ct_db *db, enum ct_credit_owner owner, int64_t id, double credit,
		      int64_t now)
{
	struct ct_credit_totals t;
	int rc;

	if (id <= 0)
		return 0;
	rc = ct_credit_totals_lock(db, owner, id, &t);
	if (rc == CT_ENOTFOUND)
		return 0;	/* deleted account: the event row still records it */
	if (rc < 0)
		return rc;
	t.total += credit;
	ct_credit_rac_update(&t.rac, &t.rac_time, credit, (double)now);
	t.total = t.total < 0.0 ? 0.0 : t.total;	/* a revocation (negative credit) */
	t.rac = t.rac < 0.0 ? 0.0 : t.rac;
	return ct_credit_totals_set(db, owner, id, &t);
}

/* The credit of e's user, host and team by `credit`, in that order. */
static int credit_owners(struct ct_db *db, const struct ct_credit_event_row *e, double credit,
			 int64_t now)
{
	int rc = credit_row(db, CT_CREDIT_USER, e->userid, credit, now);

	if (rc >= 0)
		rc = credit_row(db, CT_CREDIT_HOST, e->hostid, credit, now);
	if (rc >= 0)
		rc = credit_row(db, CT_CREDIT_TEAM, e->teamid, credit, now);
	return rc;
}

int ct_credit_grant(struct ct_db *db, int64_t resultid, double credit, int64_t now)
{
	struct ct_credit_event_row e;
	int rc;

	rc = ct_credit_result_owner(db, resultid, &e);
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "credit: no result %lld", (long long)resultid);
	if (rc < 0)
		return rc;
	e.credit = credit;
	/* The unique key on resultid is the once-only guard. */
	rc = ct_credit_event_insert(db, resultid, &e, now);
	if (rc == CT_EDUP)
		return 0;
	if (rc < 0)
		return rc;
	rc = ct_result_set_granted_credit(db, resultid, credit);
	if (rc >= 0)
		rc = credit_owners(db, &e, credit, now);
	return rc < 0 ? rc : 1;
}

int ct_credit_revoke(struct ct_db *db, int64_t resultid, int64_t now)
{
	struct ct_credit_event_row e;
	int rc;

	rc = ct_credit_event_lock(db, resultid, &e);
	if (rc == CT_ENOTFOUND)
		return 0;	/* never credited */
	if (rc < 0)
		return rc;
	/* credit 0 marks the event revoked: once only, and the row stays */
	rc = ct_credit_event_revoke(db, resultid);
	if (rc <= 0)
		return rc;
	rc = ct_result_set_granted_credit(db, resultid, 0.0);
	if (rc >= 0)
		rc = credit_owners(db, &e, -e.credit, now);
	return rc < 0 ? rc : 1;
}

int ct_credit_decay(struct ct_db *db, int64_t now)
{
	/* the same exp(-dt ln2 / half-life) as ct_credit_rac_now(), per table */
	static const enum ct_credit_owner owners[] = {
		CT_CREDIT_USER, CT_CREDIT_HOST, CT_CREDIT_TEAM,
	};
	int total = 0;

	for (size_t i = 0; i < sizeof(owners) / sizeof(owners[0]); i++) {
		int rc = ct_credit_totals_decay(db, owners[i], now, CT_CREDIT_HALF_LIFE);

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
