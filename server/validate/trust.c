/*
 * trust.c - adaptive replication that cannot be farmed (see trust.h).
 */
#include "trust.h"

#include "ct_conf.h"
#include "ct_err.h"
#include "ct_log.h"
#include "data/db.h"
#include "data/dl.h"

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

/* host_record's first SELECT. */
static const struct ct_dl_col record_cols[] = {
	CT_DL_COL(struct ct_trust_host, nrounds), CT_DL_COL(struct ct_trust_host, first_valid),
};

static int host_record(struct ct_db *db, int64_t hostid, struct ct_trust_host *h)
{
	int64_t bad = 0;
	int rc;

	rc = CT_DL_ONE(db, h, record_cols, "SELECT COUNT(DISTINCT w.roundid), "
		       "COALESCE(MIN(r.received_time), 0) FROM result r JOIN workunit w ON "
		       "w.id = r.workunitid WHERE r.hostid=? AND r.validate_state=?", hostid,
		       CT_VS_VALID);
	if (rc < 0 && rc != CT_ENOTFOUND)
		return rc;
	rc = CT_DB_QUERY_INT(db, &bad, "SELECT COUNT(*) FROM result WHERE hostid=? AND "
			     "validate_state=? LIMIT 1", hostid, CT_VS_INVALID);
	h->caught = bad > 0;
	return rc < 0 ? rc : 0;
}

/* Says in the debug log why a host with a run of valid results gets WU
 * wuid replicated (the tests read it when a trust scenario fails). */
static int not_alone(int64_t hostid, int64_t wuid, const char *why, const struct ct_trust_host *h,
		     double u)
{
	ct_log_debug("trust: host %lld: WU %lld replicated (%s; %d valid in a row, %lld rounds, "
		     "caught %d, draw %.3f)", (long long)hostid, (long long)wuid, why,
		     h->consecutive_valid, (long long)h->nrounds, h->caught, u);
	return 0;
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
	if (rc < 0)
		return rc;
	if (!ct_trust_decide(&h, &l, ct_db_now(db), u))
		return not_alone(hostid, wuid, "trust", &h, u);
	rc = CT_DB_QUERY_INT(db, &nshards, "SELECT j.nshards FROM workunit w JOIN job j ON "
			     "j.id = w.jobid WHERE w.id=?", wuid);
	if (rc < 0)
		return rc;
	if (nshards < 3)
		return not_alone(hostid, wuid, "fewer than 3 shards", &h, u);
	/* at most one unreplicated WU of a round per host */
	rc = CT_DB_QUERY_INT(db, &mine, "SELECT COUNT(*) FROM result r JOIN workunit w ON "
			     "w.id = r.workunitid JOIN workunit x ON x.roundid = w.roundid "
			     "WHERE x.id=? AND r.hostid=? AND w.min_quorum=1", wuid, hostid);
	if (rc < 0)
		return rc;
	if (mine > 0)
		return not_alone(hostid, wuid, "one of the round alone already", &h, u);
	return 1;
}

/* The one column ct_trust_note reads. */
struct wu_name {
	char name[72];
};

static const struct ct_dl_col wu_name_cols[] = { CT_DL_COL(struct wu_name, name) };

int ct_trust_note(struct ct_db *db, int64_t wuid, int64_t hostid)
{
	struct wu_name w;
	int rc;

	rc = CT_DL_ONE(db, &w, wu_name_cols, "SELECT name FROM workunit WHERE id=?", wuid);
	if (rc == 0)
		ct_log_info("scheduler: work unit %s goes to host %lld alone (trusted)", w.name,
			    (long long)hostid);
	return rc == CT_ENOTFOUND ? 0 : rc;
}
