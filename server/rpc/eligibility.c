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
#include "data/dl_sched.h"
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

int ct_elig_mem_rule(int64_t need, int64_t have)
{
	return need <= 0 || have <= 0 || need <= have;
}

int64_t ct_elig_mem_need(const struct ct_sched_job *j, enum ct_elig_backend b)
{
	if (b == CT_ELIG_BACKEND_OPENCL)
		return j->wu_mem_bytes;
	if (b == CT_ELIG_BACKEND_CPU && j->wu_mem_ref_bytes > 0)
		return j->wu_mem_ref_bytes;
	return j->wu_mem_bytes > j->wu_mem_ref_bytes ? j->wu_mem_bytes : j->wu_mem_ref_bytes;
}

enum ct_elig_backend ct_elig_backend_parse(const char *name)
{
	if (name && strcmp(name, "cpu") == 0)
		return CT_ELIG_BACKEND_CPU;
	if (name && strcmp(name, "opencl") == 0)
		return CT_ELIG_BACKEND_OPENCL;
	return CT_ELIG_BACKEND_ANY;
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

/* ---- the round rules for a batch of claims -------------------------------- */

static int cmp_partner(const void *a, const void *b)
{
	const struct ct_elig_partner *x = a, *y = b;

	return (x->userid > y->userid) - (x->userid < y->userid);
}

/* A count clamped to an int. */
static int clamp(int64_t v)
{
	return v > 1000000000 ? 1000000000 : v < 0 ? 0 : (int)v;
}

int ct_elig_round_facts(struct ct_db *db, const struct ct_elig_policy *p, int64_t roundid,
			const struct ct_elig_host *h, struct ct_elig_round_facts *f)
{
	struct ct_sched_partner *rows = NULL;
	int64_t net = 0, inprog = 0;
	size_t n = 0;
	int rc;

	memset(f, 0, sizeof(*f));
	f->roundid = roundid;
	/* f->partner: every account holding a live replica of a WU of the
	 * round that h's account holds live, with how many such WUs; the
	 * counts when a rule reads them (without a network key of its own the
	 * host's replicas count for no network) */
	rc = ct_sched_round_read(db, roundid, h->userid, p->max_net_share > 0 ? h->net : NULL,
				 p->max_account_share > 0 || (h->net[0] && p->max_net_share > 0),
				 p->max_shared > 0, &rows, &n, &net, &inprog);
	if (rc < 0)
		return rc;
	f->partner = calloc(n ? n : 1, sizeof(*f->partner));
	if (f->partner == NULL) {
		free(rows);
		return CT_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		f->partner[f->npartners++] = (struct ct_elig_partner){ .userid = rows[i].userid,
			.shared = clamp(rows[i].shared) };
	free(rows);
	qsort(f->partner, f->npartners, sizeof(*f->partner), cmp_partner);
	f->net_sent = clamp(net);
	f->account_inprog = clamp(inprog);
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
	int rc = ct_sched_active_accounts(db, ct_db_now(db) - p->grace, need, &v);

	*out = clamp(v);
	return rc;
}
