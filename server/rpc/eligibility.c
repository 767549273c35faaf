/*
 * eligibility.c - replicas of a work unit kept apart by account, host and
 * network, and the replicas of a round by the round rules (see
 * eligibility.h and doc/validation.md).
 */
#include "eligibility.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "data/db.h"
#include "data/dl.h"
#include "data/result_state.h"

int ct_elig_policy_load(const struct ct_conf *conf, struct ct_elig_policy *p)
{
	int rc;

	long shared = 1, grace = 600;

	*p = (struct ct_elig_policy){ .separate_networks = 1, .max_shared = 1,
				      .max_net_share = 0.25, .max_account_share = 0.25,
				      .grace = 600 };
	if (conf == NULL)
		return 0;
	rc = ct_conf_get_bool(conf, "sched.separate_networks", 1, &p->separate_networks);
	if (rc == 0)
		rc = ct_conf_get_bool(conf, "sched.separate_loopback", 0, &p->separate_loopback);
	if (rc == 0)
		rc = ct_conf_get_int(conf, "sched.max_shared_per_round", 1, 0, 1000000, &shared);
	if (rc == 0)
		rc = ct_conf_get_double(conf, "sched.max_net_share", 0.25, 0, 1, &p->max_net_share);
	if (rc == 0)
		rc = ct_conf_get_double(conf, "sched.max_account_share", 0.25, 0, 1,
					&p->max_account_share);
	if (rc == 0)
		rc = ct_conf_get_int(conf, "sched.placement_grace", 600, 0, 86400 * 365, &grace);
	p->max_shared = (int)shared;
	p->grace = (int)grace;
	return rc;
}

static void key4(const unsigned char *a, const struct ct_elig_policy *p, char *out)
{
	if (a[0] == 127 && !p->separate_loopback)
		return;
	snprintf(out, CT_ELIG_NETLEN, "4:%u.%u.%u", a[0], a[1], a[2]);
}

void ct_elig_net_key(const char *ip, const struct ct_elig_policy *p,
		     char out[CT_ELIG_NETLEN])
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const unsigned char loop6[16] = { [15] = 1 };
	unsigned char a[16];

	out[0] = '\0';
	if (!p->separate_networks || ip == NULL)
		return;
	if (inet_pton(AF_INET, ip, a) == 1) {
		key4(a, p, out);
		return;
	}
	if (inet_pton(AF_INET6, ip, a) != 1)
		return;
	if (memcmp(a, mapped, sizeof(mapped)) == 0) {
		key4(a + 12, p, out);
		return;
	}
	if (memcmp(a, loop6, 16) == 0 && !p->separate_loopback)
		return;
	snprintf(out, CT_ELIG_NETLEN, "6:%02x%02x:%02x%02x:%02x%02x",
		 a[0], a[1], a[2], a[3], a[4], a[5]);
}

int ct_elig_host_init(struct ct_elig_host *h, const struct ct_conf *conf, int64_t userid,
		      int64_t hostid, const char *cpid, const char *ip)
{
	struct ct_elig_policy p;
	int rc = ct_elig_policy_load(conf, &p);

	h->userid = userid;
	h->hostid = hostid;
	h->cpid = cpid;
	h->work_mem = 0;	/* the caller sets what the request said */
	ct_elig_net_key(ip, &p, h->net);
	return rc;
}

/* A replica already sent: whose it was (ct_elig_check's SELECT, in order). */
struct replica {
	int64_t userid, hostid;
	char cpid[4 * 32 + 1], net[4 * 48 + 1];
};

static const struct ct_dl_col replica_cols[] = {
	CT_DL_COL(struct replica, userid), CT_DL_COL(struct replica, hostid),
	CT_DL_COL(struct replica, cpid), CT_DL_COL(struct replica, net),
};

int ct_elig_mem_rule(int64_t need, int64_t have)
{
	return need <= 0 || have <= 0 || need <= have;
}

const char *ct_elig_replica_rule(const struct ct_elig_host *h, int64_t userid, int64_t hostid,
				 const char *cpid, const char *net)
{
	if (userid == h->userid)
		return "account";
	if (hostid == h->hostid || (h->cpid && h->cpid[0] && cpid && strcmp(cpid, h->cpid) == 0))
		return "host";
	if (h->net[0] && net && strcmp(net, h->net) == 0)
		return "network";
	return NULL;
}

int ct_elig_check(struct ct_db *db, int64_t wuid, const struct ct_elig_host *h,
		  const char **why)
{
	struct ct_db_res *res = NULL;
	struct replica r;
	int rc, ok = 1;

	*why = NULL;
	if (h->work_mem > 0) {
		int64_t need = 0;

		rc = CT_DB_QUERY_INT(db, &need, "SELECT j.wu_mem_bytes FROM workunit w JOIN job j "
				     "ON j.id = w.jobid WHERE w.id=?", wuid);
		if (rc < 0)
			return rc;
		if (!ct_elig_mem_rule(need, h->work_mem)) {
			*why = "memory";
			return 0;
		}
	}
	/* every replica ever sent (unsent ones have no host); a host row
	 * that is gone still leaves the result's own userid and network */
	rc = CT_DB_QUERY(db, &res, "SELECT r.userid, r.hostid, COALESCE(h.host_cpid, ''), "
			 "r.sent_net FROM result r LEFT JOIN host h ON h.id = r.hostid "
			 "WHERE r.workunitid=? AND r.hostid <> 0", wuid);
	if (rc < 0)
		return rc;
	while (ok && ct_db_next(res) > 0) {
		ct_dl_row(res, &r, replica_cols, CT_DL_NCOLS(replica_cols));
		*why = ct_elig_replica_rule(h, r.userid, r.hostid, r.cpid, r.net);
		ok = *why == NULL;
	}
	ct_db_res_free(res);
	return ok;
}

/* ---- the round rules ----------------------------------------------------- */

int ct_elig_share_cap(double share, int nwus, int quorum)
{
	double c;

	if (share <= 0 || share >= 1)
		return 0;
	c = ceil(share * nwus * quorum - 1e-9);
	return c < 1 ? 1 : c > 1e9 ? 1000000000 : (int)c;
}

/* 1/share accounts (networks) hold a round at a share's cap exactly. */
static int for_share(double share)
{
	return share > 0 && share < 1 ? (int)ceil(1 / share - 1e-9) : 0;
}

int ct_elig_accounts_needed(const struct ct_elig_policy *p, int nwus, int quorum)
{
	int n = quorum > 1 ? quorum : 1, pairs_n = 0;

	if (p->max_shared > 0 && quorum > 1) {
		/* every WU uses q(q-1)/2 account pairs, each pair max_shared WUs */
		double pairs = (double)nwus * quorum * (quorum - 1) / 2;

		pairs_n = quorum;
		while (pairs_n < 100000 &&
		       (double)p->max_shared * pairs_n * (pairs_n - 1) / 2 < pairs)
			pairs_n++;
	}
	/* one more than an exact fit of the pairs and of the network share:
	 * with no slack the first-come order leaves replicas that no account
	 * may take (4 hosts on 4 networks, each holding 2 of a 4-shard round,
	 * one of them only 1, and its WU's second replica left) */
	if (pairs_n > 0 && pairs_n + 1 > n)
		n = pairs_n + 1;
	if (for_share(p->max_net_share) > 0 && for_share(p->max_net_share) + 1 > n)
		n = for_share(p->max_net_share) + 1;
	if (for_share(p->max_account_share) > n)	/* in progress only: no dead end */
		n = for_share(p->max_account_share);
	return n;
}

/* The rule a replica would break, or NULL. */
static const char *round_refusal(const struct ct_elig_policy *p, const struct ct_elig_round *r)
{
	int net = ct_elig_share_cap(p->max_net_share, r->nwus, r->quorum);
	int acc = ct_elig_share_cap(p->max_account_share, r->nwus, r->quorum);

	if (p->max_shared > 0 && r->shared >= p->max_shared)
		return "shared";
	if (r->has_net && net > 0 && r->net_sent >= net)
		return "network share";
	if (acc > 0 && r->account_inprog >= acc)
		return "account share";
	return NULL;
}

int ct_elig_round_rule(const struct ct_elig_policy *p, const struct ct_elig_round *r,
		       const char **why)
{
	*why = r->nwus < 1 ? NULL : round_refusal(p, r);	/* no round: no rules */
	if (*why == NULL)
		return 1;
	/* too few volunteers for the rules: the per-WU rules only */
	if (r->waited >= p->grace ||
	    r->active < ct_elig_accounts_needed(p, r->nwus, r->quorum)) {
		*why = NULL;
		return 1;
	}
	return 0;
}

/* A replica that may still count towards its WU's quorum: in progress,
 * or a success not found invalid. Failed ones (errors, no reply, invalid,
 * set aside) can never be half of a capture, so the round rules do not
 * count them (and a WU set aside can go to its colluders' neighbours). */
#define LIVE(t) CT_ELIG_LIVE(t)

/* The most WUs of round roundid that account userid shares with any one
 * account holding a live replica of WU wuid: my replicas of the round (a
 * few, by result_user_round), their WUs' other replicas (result_wu_user),
 * and whether that account holds one of wuid (result_wu_user). */
static int shared_most(struct ct_db *db, int64_t wuid, int64_t roundid, int64_t userid,
		       int *out)
{
	struct ct_db_res *res = NULL;
	int rc;

	*out = 0;
	/* in this order (STRAIGHT_JOIN) and by these indexes: from c first,
	 * MariaDB could walk every result of a holder's account, and on b it
	 * chose a range over every sent result (result_host_sent) */
	rc = CT_DB_QUERY(db, &res, "SELECT STRAIGHT_JOIN COUNT(*) AS n FROM result a "
			 "FORCE INDEX (result_user_round) JOIN result b FORCE INDEX "
			 "(result_wu_user) ON b.workunitid = a.workunitid AND b.userid <> a.userid "
			 "AND " LIVE("b") " JOIN result c FORCE INDEX (result_wu_user) ON "
			 "c.workunitid = ? AND c.userid = b.userid AND " LIVE("c") " WHERE "
			 "a.userid = ? AND a.sent_round = ? AND " LIVE("a") " GROUP BY b.userid "
			 "ORDER BY n DESC LIMIT 1", wuid, userid, roundid);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) > 0)
		*out = (int)ct_db_int(res, 0);
	ct_db_res_free(res);
	return 0;
}

/* *out = a count (column 0) of one row, clamped to an int. */
static int clamp_count(int rc, int64_t v, int *out)
{
	*out = v > 1000000000 ? 1000000000 : (int)v;
	return rc == CT_ENOTFOUND ? 0 : rc;
}

/* The facts that lift a refusal: how long the replica waited, how many
 * accounts asked within the grace (counted up to what the rules need). */
static int relax_facts(struct ct_db *db, const struct ct_elig_policy *p, int64_t resultid,
		       struct ct_elig_round *r)
{
	int64_t now = ct_db_now(db), created = now;
	int rc;

	rc = CT_DB_QUERY_INT(db, &created, "SELECT create_time FROM result WHERE id=?",
			     resultid);
	if (rc < 0)
		return rc;
	clamp_count(0, now - created, &r->waited);
	return ct_elig_active_accounts(db, p, ct_elig_accounts_needed(p, r->nwus, r->quorum),
				       &r->active);
}

int ct_elig_check_round(struct ct_db *db, const struct ct_conf *conf, int64_t wuid,
			int64_t resultid, int64_t roundid, int quorum,
			const struct ct_elig_host *h, const char **why)
{
	struct ct_elig_policy p;
	struct ct_elig_round r = { .quorum = quorum, .has_net = h->net[0] != '\0' };
	int64_t v = 0;
	int rc;

	*why = NULL;
	rc = ct_elig_policy_load(conf, &p);
	if (rc == 0)
		rc = CT_DB_QUERY_INT(db, &v, "SELECT nwus FROM `round` WHERE id=?", roundid);
	if (rc == 0 || rc == CT_ENOTFOUND)
		rc = clamp_count(rc, v, &r.nwus);
	if (rc == 0 && p.max_shared > 0)
		rc = shared_most(db, wuid, roundid, h->userid, &r.shared);
	if (rc == 0 && r.has_net && p.max_net_share > 0) {
		rc = CT_DB_QUERY_INT(db, &v, "SELECT COUNT(*) FROM result r FORCE INDEX "
				     "(result_round_net) WHERE r.sent_round=? AND r.sent_net=? AND "
				     LIVE("r"), roundid, h->net);
		rc = clamp_count(rc, v, &r.net_sent);
	}
	if (rc == 0 && p.max_account_share > 0) {
		rc = CT_DB_QUERY_INT(db, &v, "SELECT COUNT(*) FROM result FORCE INDEX "
				     "(result_user_round) WHERE userid=? AND sent_round=? AND "
				     "server_state=?", h->userid, roundid, CT_RS_IN_PROGRESS);
		rc = clamp_count(rc, v, &r.account_inprog);
	}
	if (rc == 0 && round_refusal(&p, &r) != NULL)
		rc = relax_facts(db, &p, resultid, &r);
	if (rc < 0)
		return rc;
	return ct_elig_round_rule(&p, &r, why);
}

/* ---- the round rules for a batch of claims -------------------------------- */

static int cmp_partner(const void *a, const void *b)
{
	const struct ct_elig_partner *x = a, *y = b;

	return (x->userid > y->userid) - (x->userid < y->userid);
}

/* f->partner: every account holding a live replica of a WU of the round
 * that h's account holds live, with how many such WUs (shared_most's a
 * and b, grouped by b's account instead of probed per candidate). */
static int round_partners(struct ct_db *db, int64_t roundid, const struct ct_elig_host *h,
			  struct ct_elig_round_facts *f)
{
	struct ct_db_res *res = NULL;
	size_t n;
	int rc;

	rc = CT_DB_QUERY(db, &res, "SELECT STRAIGHT_JOIN b.userid, COUNT(*) FROM result a "
			 "FORCE INDEX (result_user_round) JOIN result b FORCE INDEX "
			 "(result_wu_user) ON b.workunitid = a.workunitid AND b.userid <> a.userid "
			 "AND " LIVE("b") " WHERE a.userid = ? AND a.sent_round = ? AND " LIVE("a")
			 " GROUP BY b.userid", h->userid, roundid);
	if (rc < 0)
		return rc;
	n = ct_db_nrows(res);
	f->partner = calloc(n ? n : 1, sizeof(*f->partner));
	if (f->partner == NULL) {
		ct_db_res_free(res);
		return CT_ENOMEM;
	}
	while (ct_db_next(res) > 0 && f->npartners < n) {
		f->partner[f->npartners].userid = ct_db_int(res, 0);
		clamp_count(0, ct_db_int(res, 1), &f->partner[f->npartners].shared);
		f->npartners++;
	}
	ct_db_res_free(res);
	qsort(f->partner, f->npartners, sizeof(*f->partner), cmp_partner);
	return 0;
}

int ct_elig_round_facts(struct ct_db *db, const struct ct_elig_policy *p, int64_t roundid,
			const struct ct_elig_host *h, struct ct_elig_round_facts *f)
{
	struct ct_db_res *res = NULL;
	int rc = 0;

	memset(f, 0, sizeof(*f));
	f->roundid = roundid;
	if (p->max_shared > 0)
		rc = round_partners(db, roundid, h, f);
	if (rc < 0 || (p->max_account_share <= 0 && (!h->net[0] || p->max_net_share <= 0)))
		return rc;
	/* both counts in one statement; without a network key of its own the
	 * host's replicas count for no network (sent_net '' is every replica
	 * sent from a loopback address: never counted as one network) */
	if (h->net[0] && p->max_net_share > 0)
		rc = CT_DB_QUERY(db, &res, "SELECT (SELECT COUNT(*) FROM result r FORCE INDEX "
				 "(result_round_net) WHERE r.sent_round=? AND r.sent_net=? AND "
				 LIVE("r") "), (SELECT COUNT(*) FROM result FORCE INDEX "
				 "(result_user_round) WHERE userid=? AND sent_round=? AND "
				 "server_state=?)", roundid, h->net, h->userid, roundid,
				 CT_RS_IN_PROGRESS);
	else
		rc = CT_DB_QUERY(db, &res, "SELECT 0, COUNT(*) FROM result FORCE INDEX "
				 "(result_user_round) WHERE userid=? AND sent_round=? AND "
				 "server_state=?", h->userid, roundid, CT_RS_IN_PROGRESS);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) > 0) {
		clamp_count(0, ct_db_int(res, 0), &f->net_sent);
		clamp_count(0, ct_db_int(res, 1), &f->account_inprog);
	}
	ct_db_res_free(res);
	return 0;
}

int ct_elig_round_shared(const struct ct_elig_round_facts *f, int64_t userid)
{
	struct ct_elig_partner key = { .userid = userid }, *hit;

	if (f->npartners == 0)
		return 0;
	hit = bsearch(&key, f->partner, f->npartners, sizeof(*f->partner), cmp_partner);
	return hit ? hit->shared : 0;
}

int ct_elig_round_add(struct ct_elig_round_facts *f, int64_t userid)
{
	struct ct_elig_partner key = { .userid = userid }, *hit = NULL, *p;

	if (f->npartners > 0)
		hit = bsearch(&key, f->partner, f->npartners, sizeof(*f->partner), cmp_partner);
	if (hit) {
		hit->shared++;
		return 0;
	}
	p = realloc(f->partner, (f->npartners + 1) * sizeof(*p));
	if (p == NULL)
		return CT_ENOMEM;
	f->partner = p;
	p[f->npartners++] = (struct ct_elig_partner){ .userid = userid, .shared = 1 };
	qsort(p, f->npartners, sizeof(*p), cmp_partner);
	return 0;
}

void ct_elig_round_facts_free(struct ct_elig_round_facts *f)
{
	free(f->partner);
	memset(f, 0, sizeof(*f));
}

int ct_elig_active_accounts(struct ct_db *db, const struct ct_elig_policy *p, int need,
			    int *out)
{
	int64_t v = 0;
	int rc;

	rc = CT_DB_QUERY_INT(db, &v, "SELECT COUNT(*) FROM (SELECT DISTINCT userid FROM host "
			     "FORCE INDEX (host_rpc_user) WHERE rpc_time >= ? LIMIT ?) t",
			     ct_db_now(db) - p->grace, need);
	return clamp_count(rc, v, out);
}
