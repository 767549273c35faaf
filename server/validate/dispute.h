/*
 * dispute.h - the validator's side of a dispute between two replicas
 * (bisect.h has the rule; doc/validation.md "Disputes settled by
 * bisection"): read both results' chains, decide, ask a host for the
 * agreed state through the scheduler reply (dl_chain.h's state_request),
 * wait for it until its deadline, check it, recompute the segment and
 * say which result stands.
 *
 * Called by daemons/validator.c for a WU whose two sane candidates differ
 * by hash, outside any transaction; it writes only the state_request row
 * (INSERT IGNORE and conditional moves, so validators racing on a WU
 * leave one request). The caller applies the outcome to the results.
 */
#ifndef CT_DISPUTE_H
#define CT_DISPUTE_H

#include <stdint.h>

#include "ct_engine.h"

struct ct_server;
struct ct_db;

/* One replica in a dispute. Borrowed. */
struct ct_dispute_res {
	int64_t id, hostid;
	const char *name;
	unsigned char sha[32];		/* its hash (decoded trained floats) */
	int exact;			/* lossless: sha is the trained floats' hash */
	int conforming;
};

/* The WU of a dispute. Borrowed. */
struct ct_dispute_wu {
	int64_t wuid;
	const char *wu_name;
	const char *model_sha, *data_sha;	/* its inputs in the store */
	int every;				/* the job's chain interval, 0: none */
	struct ct_wu_hparams hp;		/* as the scheduler sent them */
	const float *lora_init;			/* its round's carried initial adapters
						 * (ct_lora_val), NULL: the seed's */
	const char *device;			/* where segments are recomputed: the
						 * server's evaluation device */
	struct ct_dispute_res r[2];
};

enum ct_dispute_outcome {
	CT_DISPUTE_NONE = 0,	/* bisection says nothing: more replicas, as before */
	CT_DISPUTE_WAIT,	/* a state is asked for: no new replica meanwhile */
	CT_DISPUTE_FIRST,	/* r[0] computed the WU: r[0] valid, r[1] invalid */
	CT_DISPUTE_SECOND,	/* r[1] valid, r[0] invalid */
	CT_DISPUTE_FIRST_FALSE,	/* r[0] lied (its chain or its state): r[0]
				 * invalid, r[1] waits for another replica */
	CT_DISPUTE_SECOND_FALSE,
};

/* Settle (or advance) the dispute between w->r[0] and w->r[1]: *out one
 * of the outcomes above; *link the link the server recomputed and found
 * the winner's for CT_DISPUTE_FIRST and _SECOND, -1 otherwise. Config:
 * daemons.state_deadline (seconds a host has to upload a state, default
 * 900). Returns 0, or a failure of the server (db, memory); a bad upload
 * is the host's, not an error. */
int ct_dispute_run(struct ct_server *srv, struct ct_db *db, const struct ct_dispute_wu *w,
		   int *out, int *link);

/* The WU was decided without its open dispute (a quorum of other
 * replicas, the job stopped): close the request and remove its state
 * upload, if any. Returns 0 or a db error. */
int ct_dispute_close(struct ct_server *srv, struct ct_db *db, int64_t wuid);

#endif
