/*
 * dl_trust.h - what adaptive replication reads of a host's record and of
 * a WU's round (validate/trust.h decides from it; the data layer, dl.h).
 */
#ifndef CT_DL_TRUST_H
#define CT_DL_TRUST_H

#include <stdint.h>

struct ct_db;

/* A host's record of valid and invalid results. */
struct ct_trust_record {
	int64_t nrounds;	/* distinct rounds with a valid result */
	int64_t first_valid;	/* received_time of its first valid result; 0: none */
	int64_t ninvalid;	/* its invalid results */
};

/* Host hostid's record into *r. Returns 0 or a db error. */
int ct_trust_record_get(struct ct_db *db, int64_t hostid, struct ct_trust_record *r);

/* The number of shards of WU wuid's job into *n. Returns 0, CT_ENOTFOUND
 * or a db error. */
int ct_trust_wu_nshards(struct ct_db *db, int64_t wuid, int64_t *n);

/* How many results host hostid has of unreplicated (min_quorum 1) WUs of
 * WU wuid's round into *n. Returns 0 or a db error. */
int ct_trust_round_alone(struct ct_db *db, int64_t wuid, int64_t hostid, int64_t *n);

#endif
