/*
 * dl_receipt.h - the data layer of round receipts (doc/receipts.md): the
 * facts of a closed round that its receipt states, read from the rounds,
 * work units, results and checks, and the round_receipt table (migration
 * 031) that names each round's receipt file in the store. Rows are
 * inserted once and never updated.
 */
#ifndef CT_DL_RECEIPT_H
#define CT_DL_RECEIPT_H

#include <stddef.h>
#include <stdint.h>

#include "ct_receipt.h"

struct ct_db;

/* Where the chains a receipt states go: fn stores links (a chain's wire
 * form, checked) of a WU of job jobid and writes its SHA-256 into sha
 * (65 bytes); 0 or an error, which fails the receipt. */
struct ct_dl_receipt_chain_sink {
	int (*fn)(void *arg, int64_t jobid, const char *links, char *sha);
	void *arg;
};

/* Round `roundid` (status done) as a receipt without key, prev and
 * signature: r is zeroed first, r->wus malloc'd (ct_receipt_free). Each
 * WU's canonical chain that the receipt can state (ct_dl_receipt.c
 * wu_chain: well formed, and vouched for by a second valid replica or
 * by the server's own recomputation in a dispute settled by bisection,
 * or, for an exact upload, agreed by tolerance) goes to keep first; keep
 * NULL states none. CT_ENOTFOUND when the round is not done; CT_ETOOBIG over
 * the receipt's caps; or a db error. */
int ct_dl_receipt_round(struct ct_db *db, int64_t roundid,
			const struct ct_dl_receipt_chain_sink *keep, struct ct_receipt *r);

/* Up to max done rounds with no receipt yet whose previous round has one
 * (or that are round 1), by job then round index, into ids[0..*n), of this
 * instance's share (MOD(jobid, nshare) = k). */
int ct_dl_receipt_pending(struct ct_db *db, int64_t nshare, int64_t k, int64_t *ids,
			  size_t max, size_t *n);

/* The receipt of round idx of job jobid: 1 with sha (65 bytes) and *size,
 * 0 when there is none, or a db error. */
int ct_dl_receipt_get(struct ct_db *db, int64_t jobid, int idx, char *sha, int64_t *size);

/* Record round roundid's receipt (INSERT IGNORE: a row that exists stays
 * as it is). Returns 1 when inserted, 0 when there was one, or a db error. */
int ct_dl_receipt_put(struct ct_db *db, int64_t roundid, int64_t jobid, int idx,
		      const char *sha, int64_t size, int64_t now);

/* How many receipts the project has signed, into *n. */
int ct_dl_receipt_count(struct ct_db *db, int64_t *n);

/* One row of a job's receipts. */
struct ct_dl_receipt_row {
	int64_t idx, size, create_time;
	char sha[65];
};

/* Job jobid's receipts by round, at most 100000 (malloc'd into *rows; the
 * caller frees). */
int ct_dl_receipt_list(struct ct_db *db, int64_t jobid, struct ct_dl_receipt_row **rows,
		       size_t *n);

#endif
