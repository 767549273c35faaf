/*
 * trust.h - which host may get a WU without replication: adaptive
 * replication that cannot be farmed (doc/validation.md, "Adaptive
 * replication").
 *
 * BOINC's rule (ct_adaptive_decide: 10 valid results in a row, then
 * unreplicated with probability 1 - 1/n) lets a host earn trust in a few
 * minutes and then cheat. Here a host is trusted only when
 *   - its valid results in a row n >= sched.trust_min_valid (10),
 *   - its valid results span >= sched.trust_min_rounds distinct rounds (5),
 *   - its first valid result is >= sched.trust_min_age seconds old (86,400),
 *   - it was never caught: no result of it is invalid (a quorum it lost,
 *     a check it failed, a result the cross-shard check set aside);
 * and then a WU goes unreplicated with probability
 * min(1 - 1/n, 1 - sched.spot_check_floor) (floor 0.1): at least one WU in
 * ten is still replicated, and the host cannot tell which (the spot-check).
 * Only WUs of rounds of >= 3 shards (so the cross-shard check covers the
 * result), and at most one unreplicated WU per host per round (a host
 * cannot hold the majority of a round unchecked).
 */
#ifndef CT_TRUST_H
#define CT_TRUST_H

#include <stdint.h>

struct ct_conf;
struct ct_db;

struct ct_trust_limits {
	long min_valid, min_rounds, min_age;
	double floor;			/* spot-check rate, 0..1 */
};

/* A host's record, derived from its result rows. */
struct ct_trust_host {
	int consecutive_valid;
	int64_t nrounds;		/* distinct rounds with a valid result */
	int64_t first_valid;		/* received_time of its first valid result */
	int caught;			/* any invalid result */
};

/* The limits from conf (NULL: defaults). 0 or a CT_E* code. */
int ct_trust_limits_get(const struct ct_conf *conf, struct ct_trust_limits *l);

/* Pure: 1 when host h, at time now, gets the WU unreplicated for the
 * uniform draw u in [0, 1). */
int ct_trust_decide(const struct ct_trust_host *h, const struct ct_trust_limits *l,
		    int64_t now, double u);

/* At dispatch, inside the scheduler's transaction: may WU wuid go to host
 * hostid (consecutive_valid as read) unreplicated, for the draw u? Reads
 * the host's record, the WU's round size and the host's unreplicated WUs
 * of that round. Returns 1 (yes), 0 (replicate) or a CT_E* code. */
int ct_trust_allow(const struct ct_conf *conf, struct ct_db *db, int64_t hostid,
		   int64_t wuid, int consecutive_valid, double u);

/* Log that WU wuid went to host hostid unreplicated (info). 0 or a db
 * error. */
int ct_trust_note(struct ct_db *db, int64_t wuid, int64_t hostid);

#endif
