/*
 * eligibility.h - which host may take a replica of a work unit
 * (doc/validation.md, "Replicas apart").
 *
 * Replication only helps when the replicas of a WU are computed by
 * independent parties; one person can open several free accounts, so the
 * scheduler keeps the replicas of a WU apart by
 *   - account: never two replicas to one account (always);
 *   - host: never two to one host, nor to two hosts with the same client
 *     id (host_cpid) under different accounts (always);
 *   - network: never two to the same IPv4 /24 or IPv6 /48 (an IPv4-mapped
 *     IPv6 address counts as IPv4), recorded per result at send time
 *     (result.sent_net). On by default; a project whose volunteers share
 *     a NAT turns it off with `sched.separate_networks = 0`.
 * Loopback addresses (127/8, ::1) have no network identity by default
 * (on one machine, or behind a local reverse proxy, every client has the
 * same address): `sched.separate_loopback = 1` treats them as real
 * addresses, which lets the tests play volunteers on different networks
 * from 127.x.y.z.
 *
 * Threads: every function is reentrant; the db calls run on the caller's
 * connection (inside the caller's transaction, after it locked the WU).
 */
#ifndef CT_ELIGIBILITY_H
#define CT_ELIGIBILITY_H

#include <stdint.h>

#include "ct_conf.h"
#include "db.h"

#define CT_ELIG_NETLEN 48

struct ct_elig_policy {
	int separate_networks;	/* [sched.separate_networks], default 1 */
	int separate_loopback;	/* [sched.separate_loopback], default 0 */
};

/* Who asks for work: the account, the host, its client id and network. */
struct ct_elig_host {
	int64_t userid, hostid;
	const char *cpid;		/* the client's host_cpid, borrowed */
	char net[CT_ELIG_NETLEN];	/* ct_elig_net_key(), "" = none */
};

/* The project's policy from its config (conf may be NULL: defaults).
 * Returns 0, or CT_ECONFIG for a value that is not a boolean. */
int ct_elig_policy_load(const struct ct_conf *conf, struct ct_elig_policy *p);

/* The network key of a peer address (numeric IPv4 or IPv6, as the HTTP
 * front end gives it) into out: "4:a.b.c" (/24) or "6:hhhh:hhhh:hhhh"
 * (/48, lowercase hex). "" when the policy separates no networks, the
 * address does not parse, or it is loopback and the policy exempts it. */
void ct_elig_net_key(const char *ip, const struct ct_elig_policy *p,
		     char out[CT_ELIG_NETLEN]);

/* Fill h for one scheduler request: the policy from conf (may be NULL),
 * the network key of ip. cpid is borrowed and must outlive h. Returns 0
 * or CT_ECONFIG. */
int ct_elig_host_init(struct ct_elig_host *h, const struct ct_conf *conf, int64_t userid,
		      int64_t hostid, const char *cpid, const char *ip);

/* Whether h may take a replica of WU wuid, given every result of it that
 * was ever sent. Returns 1 (eligible), 0 (not: *why names the rule,
 * "account", "host" or "network"; a static string), or CT_EDB. */
int ct_elig_check(struct ct_db *db, int64_t wuid, const struct ct_elig_host *h,
		  const char **why);

/* Record where result resultid was sent (its network key), for later
 * checks of its WU. Returns 0 or CT_EDB. */
int ct_elig_record(struct ct_db *db, int64_t resultid, const struct ct_elig_host *h);

#endif
