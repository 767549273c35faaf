/*
 * trust.c - adaptive replication that cannot be farmed (see trust.h).
 */
#include "trust.h"

#include "ct_conf.h"
#include "ct_err.h"
#include "ct_log.h"
#include "data/db.h"
#include "data/dl_trust.h"
#include "data/dl_workunit.h"

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
	struct ct_trust_record r;
	int rc;

	rc = ct_trust_record_get(db, hostid, &r);
	if (rc < 0)
		return rc;
	h->nrounds = r.nrounds;
	h->first_valid = r.first_valid;
	h->caught = r.ninvalid > 0;
	return 0;
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
	rc = ct_trust_wu_nshards(db, wuid, &nshards);
	if (rc < 0)
		return rc;
	if (nshards < 3)
		return not_alone(hostid, wuid, "fewer than 3 shards", &h, u);
	/* at most one unreplicated WU of a round per host */
	rc = ct_trust_round_alone(db, wuid, hostid, &mine);
	if (rc < 0)
		return rc;
	if (mine > 0)
		return not_alone(hostid, wuid, "one of the round alone already", &h, u);
	return 1;
}

int ct_trust_note(struct ct_db *db, int64_t wuid, int64_t hostid)
{
	char name[72];
	int rc;

	rc = ct_wu_get_name(db, wuid, name);
	if (rc == 0)
		ct_log_info("scheduler: work unit %s goes to host %lld alone (trusted)", name,
			    (long long)hostid);
	return rc == CT_ENOTFOUND ? 0 : rc;
}
