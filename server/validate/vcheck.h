/*
 * vcheck.h - the validator's work on one result in bounded memory: the
 * upload is streamed from its file (ct_delta_reader), its statistics and
 * the hash of its decoded weights computed on the way, and two results are
 * compared by streaming both at once, so no candidate is ever held whole
 * (the one exception: the weights a probe needs, in the caller's buffer).
 * What a check found is recorded (table result_check, migration 004) so a
 * result is decoded and probed once, however many passes it takes part in.
 */
#ifndef CT_SERVER_VCHECK_H
#define CT_SERVER_VCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "quorum.h"
#include "ct_delta.h"

struct ct_db;

struct ct_vcheck {
	struct ct_delta_info info;	/* header; decoded_sha, quant_error after a scan */
	struct ct_val_stats st;		/* against the WU's base */
	double probe_loss;		/* set by the caller (0 when not probed) */
};

/* Stream the result file at path (at most cap bytes when cap > 0) for a
 * model of n weights with base weights `base`: fills out->info and
 * out->st (bit for bit what ct_val_stats gives on the decoded weights);
 * when w is not NULL also the decoded weights (n floats); w may be base
 * itself (decoded in place: the base is gone, one model in memory). Memory:
 * O(CT_DELTA_CHUNK) besides w. Errors of ct_delta_reader_open/next
 * (CT_ENOENT, CT_ETOOBIG, CT_EMISMATCH, CT_EFORMAT, CT_ECORRUPT, CT_EHASH,
 * CT_EIO), CT_ENOMEM. */
int ct_vcheck_scan(const char *path, uint64_t cap, const float *base, size_t n, float *w,
		   struct ct_vcheck *out);

/* ||a - b|| (double) of the decoded weights of the result files at pa and
 * pb, both against `base` (n weights), streaming both. Errors as
 * ct_vcheck_scan for either file. */
int ct_vcheck_distance(const char *pa, const char *pb, uint64_t cap, const float *base,
		       size_t n, double *dist);

/* The record of result `resultid`'s check, if there is one for the upload
 * the result row names: 1 and out->info.decoded_sha, out->info.quant_error,
 * out->st.update_norm, out->probe_loss set (the rest zero); 0 if none; or
 * a db error. */
int ct_vcheck_load(struct ct_db *db, int64_t resultid, struct ct_vcheck *out);

/* A twin of result `resultid`: another result of the same WU whose upload
 * has the very same bytes (same upload_sha256, the hash the server took as
 * it received it) and which passed its checks. Identical bytes against
 * the same base decode to identical weights, so its record is this
 * result's too: 1 and *out as ct_vcheck_load; 0 if none; or a db error. */
int ct_vcheck_twin(struct ct_db *db, int64_t resultid, struct ct_vcheck *out);

/* Record c for result `resultid` (its current upload), replacing an older
 * record. Returns 0 or a db error. */
int ct_vcheck_store(struct ct_db *db, int64_t resultid, const struct ct_vcheck *c);

#endif
