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
 * Replicas of one round apart (doc/validation.md, "A round no small group
 * can capture"): pairwise per WU is not enough, since host A may take one
 * replica of every WU of a round and host B, on another network, the
 * other replica of each. So, per round,
 *   - two accounts share at most `sched.max_shared_per_round` WUs
 *     (default 1; 0 = off): N colluding accounts hold both replicas of at
 *     most max_shared x N(N-1)/2 WUs of a round;
 *   - one network holds at most `sched.max_net_share` (0.25) of the
 *     round's nominal replicas (its WUs x quorum, rounded up);
 *   - one account holds at most `sched.max_account_share` (0.25) of them
 *     in progress at once (a hoarder stalls a bounded part of a round).
 * Only live replicas count (in progress, or a success not found invalid):
 * a failed one can never be half of a capture.
 * Too few volunteers for these rules (a project of 2): a replica that
 * has waited unsent for `sched.placement_grace` seconds (600), or any
 * replica while fewer distinct accounts than the rules need
 * (ct_elig_accounts_needed()) made an RPC in that time, is placed under
 * the per-WU rules only.
 *
 * Memory: a host that reports its work memory (host/work_mem, the bytes
 * its compute device offers: device memory, or RAM for the C reference)
 * never gets a replica of a WU whose job needs more on that backend
 * (host/work_backend; ct_elig_mem_need): job.wu_mem_bytes
 * (ct_wu_mem_bytes, what the OpenCL engine allocates) for "opencl",
 * job.wu_mem_ref_bytes (ct_ref_wu_bytes, the C reference, which keeps
 * every layer's activations) for "cpu", the larger of the two when the
 * client names no backend (an older one) or one this server does not
 * know. A job from before wu_mem_ref_bytes (0) holds "cpu" to
 * wu_mem_bytes; a host that says no work_mem, or a job from before both
 * columns (0), is not held to it.
 *
 * Threads: every function is reentrant; the db calls run on the caller's
 * connection (inside the caller's transaction, after it locked the WU).
 */
#ifndef CT_ELIGIBILITY_H
#define CT_ELIGIBILITY_H

#include <stdint.h>

#include "ct_conf.h"
#include "data/dl_sched.h"

#define CT_ELIG_NETLEN CT_DL_NETLEN	/* 48 */

struct ct_db;

/* SQL: result row t is a live replica (eligibility.c's comment: in
 * progress, or a success not found invalid), the replicas the round rules
 * count. */
#define CT_ELIG_LIVE(t) CT_DL_LIVE(t)

struct ct_elig_policy {
	int separate_networks;	/* [sched.separate_networks], default 1 */
	int separate_loopback;	/* [sched.separate_loopback], default 0 */
	int max_shared;		/* [sched.max_shared_per_round], default 1, 0 = off */
	double max_net_share;	/* [sched.max_net_share], default 0.25, 0 = off */
	double max_account_share;	/* [sched.max_account_share], default 0.25, 0 = off */
	int grace;		/* [sched.placement_grace] seconds, default 600 */
};

/* What the round rules look at, for one host and one candidate replica
 * (the claim fills them from ct_elig_round_facts and its rows; the rule
 * itself is pure). */
struct ct_elig_round {
	int nwus, quorum;	/* the round's WUs, the WU's min_quorum */
	int shared;		/* most WUs of the round the asking account shares
				 * with one account holding a replica of this WU */
	int net_sent;		/* replicas of the round sent to the host's network */
	int has_net;		/* the host has a network key */
	int account_inprog;	/* the account's replicas of the round in progress */
	int waited;		/* seconds the candidate has waited unsent */
	int active;		/* distinct accounts that asked within the grace */
};

/* The backend a host's work memory is for (host/work_backend). */
enum ct_elig_backend {
	CT_ELIG_BACKEND_ANY,		/* not said, or not known here */
	CT_ELIG_BACKEND_CPU,		/* "cpu": the C reference, in RAM */
	CT_ELIG_BACKEND_OPENCL		/* "opencl": an OpenCL device */
};

/* Who asks for work: the account, the host, its client id and network,
 * and the memory its compute device offers a WU. */
struct ct_elig_host {
	int64_t userid, hostid;
	const char *cpid;		/* the client's host_cpid, borrowed */
	char net[CT_ELIG_NETLEN];	/* ct_elig_net_key(), "" = none */
	int64_t work_mem;		/* host/work_mem bytes; 0 = not said */
	enum ct_elig_backend work_backend;	/* what work_mem is for */
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

/* Whether host memory `have` (0: not said) holds a WU needing `need`
 * bytes (0: not known): 1 or 0. Pure. */
int ct_elig_mem_rule(int64_t need, int64_t have);

/* The bytes a WU of job j needs on backend b (see "Memory" above): the
 * job's OpenCL bound, its C reference bound (the OpenCL one where the job
 * has none), or the larger. 0: not known. Pure. */
int64_t ct_elig_mem_need(const struct ct_sched_job *j, enum ct_elig_backend b);

/* The backend a host/work_backend value names: "cpu", "opencl", else
 * CT_ELIG_BACKEND_ANY (NULL or "" too). Pure. */
enum ct_elig_backend ct_elig_backend_parse(const char *name);

/* The fewest distinct accounts for which the round rules can place a
 * round of nwus WUs of quorum replicas each: enough pairs for
 * max_shared each (m N(N-1)/2 >= nwus q(q-1)/2) and enough accounts and
 * networks for the shares (1/share). 1 when every rule is off. */
int ct_elig_accounts_needed(const struct ct_elig_policy *p, int nwus, int quorum);

/* The per-replica cap of a share (max_net_share, max_account_share) of a
 * round: ceil(share x nwus x quorum), at least 1; 0 when the share is
 * off. */
int ct_elig_share_cap(double share, int nwus, int quorum);

/* The round rules (pure): 1 if the replica may go, 0 if not (*why is
 * "shared", "network share" or "account share", static). A refusal is
 * lifted when r->waited >= p->grace or r->active is below
 * ct_elig_accounts_needed() ("too few volunteers"). */
int ct_elig_round_rule(const struct ct_elig_policy *p, const struct ct_elig_round *r,
		       const char **why);

/* The per-WU rule against one replica already sent to (userid, hostid,
 * client id cpid, network net): NULL when h may hold another replica of
 * the same WU, else the rule it breaks ("account", "host", "network";
 * static). Pure: the claim (sched.c) applies it to the database's rows,
 * the scheduler's ready-to-send cache (feeder.h) to what it holds. */
const char *ct_elig_replica_rule(const struct ct_elig_host *h, int64_t userid, int64_t hostid,
				 const char *cpid, const char *net);

/* ---- the round rules for several claims at once ----------------------------
 * A scheduler request that claims several replicas reads what the round
 * rules need once per round (ct_elig_round_facts, inside the claim's
 * transaction, after it locked the WUs), applies ct_elig_round_rule() to
 * each candidate in memory, and counts each replica it claims in the facts
 * (ct_elig_round_add, net_sent, account_inprog) before the next: the same
 * decisions as reading the facts afresh before each claim, in fewer
 * statements. */
struct ct_elig_partner {
	int64_t userid;
	int shared;	/* WUs of the round both accounts hold a live replica of */
};

struct ct_elig_round_facts {
	int64_t roundid;
	int net_sent;		/* live replicas of the round on h's network */
	int account_inprog;	/* h's account's replicas of the round in progress */
	struct ct_elig_partner *partner;	/* sorted by userid, owned */
	size_t npartners;
};

/* Read the facts of round roundid for h under policy p into f (zeroed
 * first; free with ct_elig_round_facts_free, also after a failure).
 * Returns 0, CT_ENOMEM or CT_EDB. */
int ct_elig_round_facts(struct ct_db *db, const struct ct_elig_policy *p, int64_t roundid,
			const struct ct_elig_host *h, struct ct_elig_round_facts *f);

/* WUs of the round h's account shares with account userid (0: none). */
int ct_elig_round_shared(const struct ct_elig_round_facts *f, int64_t userid);

/* One more WU shared with account userid (h's account just took a replica
 * of a WU that userid holds live). Returns 0 or CT_ENOMEM. */
int ct_elig_round_add(struct ct_elig_round_facts *f, int64_t userid);

void ct_elig_round_facts_free(struct ct_elig_round_facts *f);

/* *out = distinct accounts that made an RPC within p->grace, counted up to
 * need (what lifts a round rule's refusal). Returns 0 or CT_EDB. */
int ct_elig_active_accounts(struct ct_db *db, const struct ct_elig_policy *p, int need,
			    int *out);

#endif
