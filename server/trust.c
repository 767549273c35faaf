/*
 * trust.c - adaptive replication that cannot be farmed (see trust.h).
 */
#include "trust.h"

#include "ct_conf.h"
#include "ct_err.h"
#include "ct_log.h"
#include "db.h"

int ct_trust_limits_get(const struct ct_conf *conf, struct ct_trust_limits *l)
{
	int rc = 0;

	l->min_valid = 10;
	l->min_rounds = 5;
	l->min_age = 86400;
	l->floor = 0.1;
	if (conf == NULL)
		return 0;
	rc = ct_conf_get_int(conf, "sched.trust_min_valid", 10, 1, 1000000, &l->min_valid);
	if (rc == 0)
		rc = ct_conf_get_int(conf, "sched.trust_min_rounds", 5, 1, 1000000,
				     &l->min_rounds);
	if (rc == 0)
		rc = ct_conf_get_int(conf, "sched.trust_min_age", 86400, 0, 100L * 86400,
				     &l->min_age);
	if (rc == 0)
		rc = ct_conf_get_double(conf, "sched.spot_check_floor", 0.1, 0.01, 1.0,
					&l->floor);
	return rc;
}

static int host_record(struct ct_db *db, int64_t hostid, struct ct_trust_host *h)
{
	struct ct_db_res *res = NULL;
	int64_t bad = 0;
	int rc;

	rc = ct_db_query(db, &res, "SELECT COUNT(DISTINCT w.roundid), COALESCE(MIN(r.received_time), "
			 "0) FROM result r JOIN workunit w ON w.id = r.workunitid WHERE "
			 "r.hostid=? AND r.validate_state=?", "li", hostid, CT_VS_VALID);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) > 0) {
		h->nrounds = ct_db_int(res, 0);
		h->first_valid = ct_db_int(res, 1);
	}
	ct_db_res_free(res);
	rc = ct_db_query_int(db, &bad, "SELECT COUNT(*) FROM result WHERE hostid=? AND "
			     "validate_state=? LIMIT 1", "li", hostid, CT_VS_INVALID);
	h->caught = bad > 0;
	return rc < 0 ? rc : 0;
}

int ct_trust_allow(const struct ct_conf *conf, struct ct_db *db, int64_t hostid,
		   int64_t wuid, int consecutive_valid, double u)
{
	struct ct_trust_limits l;
	struct ct_trust_host h = { .consecutive_valid = consecutive_valid };
	int64_t nshards = 0, mine = 0;
	int rc;

	rc = ct_trust_limits_get(conf, &l);
	if (rc < 0 || consecutive_valid < l.min_valid)
		return rc;
	rc = host_record(db, hostid, &h);
	if (rc < 0 || !ct_trust_decide(&h, &l, ct_db_now(db), u))
		return rc;
	rc = ct_db_query_int(db, &nshards, "SELECT j.nshards FROM workunit w JOIN job j ON "
			     "j.id = w.jobid WHERE w.id=?", "l", wuid);
	if (rc < 0 || nshards < 3)
		return rc;
	/* at most one unreplicated WU of a round per host */
	rc = ct_db_query_int(db, &mine, "SELECT COUNT(*) FROM result r JOIN workunit w ON "
			     "w.id = r.workunitid JOIN workunit x ON x.roundid = w.roundid "
			     "WHERE x.id=? AND r.hostid=? AND w.min_quorum=1", "ll", wuid, hostid);
	if (rc < 0 || mine > 0)
		return rc;
	return 1;
}

int ct_trust_note(struct ct_db *db, int64_t wuid, int64_t hostid)
{
	struct ct_db_res *res = NULL;
	int rc;

	rc = ct_db_query(db, &res, "SELECT name FROM workunit WHERE id=?", "l", wuid);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) > 0)
		ct_log_info("scheduler: work unit %s goes to host %lld alone (trusted)",
			    ct_db_str(res, 0), (long long)hostid);
	ct_db_res_free(res);
	return 0;
}
