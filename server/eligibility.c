/*
 * eligibility.c - replicas of a work unit kept apart by account, host and
 * network (see eligibility.h and doc/validation.md).
 */
#include "eligibility.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "ct_err.h"
#include "dl.h"

int ct_elig_policy_load(const struct ct_conf *conf, struct ct_elig_policy *p)
{
	int rc;

	p->separate_networks = 1;
	p->separate_loopback = 0;
	if (conf == NULL)
		return 0;
	rc = ct_conf_get_bool(conf, "sched.separate_networks", 1, &p->separate_networks);
	if (rc == 0)
		rc = ct_conf_get_bool(conf, "sched.separate_loopback", 0, &p->separate_loopback);
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

int ct_elig_check(struct ct_db *db, int64_t wuid, const struct ct_elig_host *h,
		  const char **why)
{
	struct ct_db_res *res = NULL;
	struct replica r;
	int rc, ok = 1;

	*why = NULL;
	/* every replica ever sent (unsent ones have no host); a host row
	 * that is gone still leaves the result's own userid and network */
	rc = ct_db_query(db, &res, "SELECT r.userid, r.hostid, COALESCE(h.host_cpid, ''), "
			 "r.sent_net FROM result r LEFT JOIN host h ON h.id = r.hostid "
			 "WHERE r.workunitid=? AND r.hostid <> 0", "l", wuid);
	if (rc < 0)
		return rc;
	while (ok && ct_db_next(res) > 0) {
		ct_dl_row(res, &r, replica_cols, CT_DL_NCOLS(replica_cols));
		if (r.userid == h->userid) {
			*why = "account";
			ok = 0;
		} else if (r.hostid == h->hostid ||
			   (h->cpid && h->cpid[0] && strcmp(r.cpid, h->cpid) == 0)) {
			*why = "host";
			ok = 0;
		} else if (h->net[0] && strcmp(r.net, h->net) == 0) {
			*why = "network";
			ok = 0;
		}
	}
	ct_db_res_free(res);
	return ok;
}

int ct_elig_record(struct ct_db *db, int64_t resultid, const struct ct_elig_host *h)
{
	int rc;

	if (h->net[0] == '\0')
		return 0;
	rc = ct_db_exec(db, "UPDATE result SET sent_net=? WHERE id=?", "sl", h->net, resultid);
	return rc < 0 ? rc : 0;
}
