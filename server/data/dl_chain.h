/*
 * dl_chain.h - the data layer of result hash chains and the state
 * requests of disputes (migration 037; doc/validation.md "Disputes
 * settled by bisection"): result_chain holds the chain a client reported
 * with a result, state_request the one open dispute of a WU, whose host
 * uploads the agreed state to /upload/<result>.state.
 */
#ifndef CT_DL_CHAIN_H
#define CT_DL_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "ct_chain.h"

struct ct_db;

/* A state request's status. */
enum ct_state_req_status {
	CT_SRQ_ASKED = 0,	/* asked of the host, not uploaded yet */
	CT_SRQ_UPLOADED = 1,	/* the state is there (upload_sha) */
	CT_SRQ_SETTLED = 2,	/* the validator decided the dispute */
	CT_SRQ_EXPIRED = 3,	/* no usable state in time: a third replica */
};

/* The suffix of a state upload's name: /upload/<result name>.state. */
#define CT_STATE_SUFFIX ".state"

/* Record the chain (links: hex, as ct_chain.h) reported with result
 * resultid; a result keeps its first chain (INSERT IGNORE). Returns 0 or
 * a db error. */
int ct_dl_chain_put(struct ct_db *db, int64_t resultid, const char *links);

/* Result resultid's chain into links (CT_CHAIN_HEX_MAX + 1 bytes): 1, or
 * 0 when it has none (links ""), or a db error. */
int ct_dl_chain_get(struct ct_db *db, int64_t resultid, char *links);

/* Result resultid won its WU's dispute: the server recomputed its link
 * `link` (0-based) from the agreed state (dispute.h). Kept with its
 * chain (result_chain.settled_link, migration 045) for the round's
 * receipt. Returns 1 if recorded, 0 if the result has no chain, or a db
 * error. */
int ct_dl_chain_settled(struct ct_db *db, int64_t resultid, int link);

/* One state request (a row of state_request, with its result's name). */
struct ct_dl_state_req {
	int64_t workunitid, resultid, hostid, other_resultid;
	int link, step, status;
	int64_t create_time, deadline, max_bytes, upload_size;
	char agreed_sha[65], upload_sha[65];
	char result_name[96];
};

/* WU wuid's state request into *q: 1, 0 when it has none, or a db error. */
int ct_dl_state_req_get(struct ct_db *db, int64_t wuid, struct ct_dl_state_req *q);

/* Open a state request (status ASKED): 1 when inserted, 0 when the WU
 * has one already (it stays), or a db error. */
int ct_dl_state_req_put(struct ct_db *db, const struct ct_dl_state_req *q);

/* Move WU wuid's request from status `from` to `to`: 1 if it moved, 0 if
 * it was not in `from`, or a db error. */
int ct_dl_state_req_move(struct ct_db *db, int64_t wuid, int from, int to);

/* Up to max requests ASKED of host hostid whose deadline is after now,
 * into a malloc'd array *out (free()), *n rows. */
int ct_dl_state_req_for_host(struct ct_db *db, int64_t hostid, int64_t now, size_t max,
			     struct ct_dl_state_req **out, size_t *n);

/* The request ASKED of hostid for the result named name: 1 with *q, 0
 * when there is none open, or a db error. */
int ct_dl_state_req_by_name(struct ct_db *db, const char *name, int64_t hostid,
			    struct ct_dl_state_req *q);

/* The state for WU wuid arrived from hostid (sha, size): ASKED ->
 * UPLOADED. 1 if it moved, 0 if the request was no longer open, or a db
 * error. */
int ct_dl_state_req_uploaded(struct ct_db *db, int64_t wuid, int64_t hostid,
			     const char *sha, int64_t size);

/* Close WU wuid's request if it is still open (ASKED or UPLOADED ->
 * SETTLED): the WU was decided otherwise. 1 if it was open, 0 if not, or
 * a db error. */
int ct_dl_state_req_close(struct ct_db *db, int64_t wuid);

/* WUs whose dispute the validator can advance at now (up to max ids): a
 * state UPLOADED, or one ASKED past its deadline. The validator claims
 * them beside those with need_validate, which the transitioner recomputes
 * from the results alone. */
int ct_dl_state_req_due(struct ct_db *db, int64_t now, int64_t *ids, size_t max, size_t *n);

#endif
