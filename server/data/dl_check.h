/*
 * dl_check.h - table result_check: what the validator's checks measured
 * of a result's upload (its decoded weights' hash, update norm, probe
 * loss, quantisation error), kept so that a later pass, or a replica with
 * the same upload, need not decode it again (validate/vcheck.h; the data
 * layer, dl.h). A row holds for the upload it was measured on only.
 */
#ifndef CT_DL_CHECK_H
#define CT_DL_CHECK_H

#include <stdint.h>

struct ct_db;

struct ct_check_row {
	char weights_sha256[129];	/* hex */
	double update_norm, probe_loss, quant_error;
};

/* Result resultid's row for the upload it has now into *c. Returns 0,
 * CT_ENOTFOUND or a db error. */
int ct_check_get(struct ct_db *db, int64_t resultid, struct ct_check_row *c);

/* The row of another result of the same WU with the same upload as result
 * resultid (which has one) into *c. Returns 0, CT_ENOTFOUND or a db
 * error. */
int ct_check_twin(struct ct_db *db, int64_t resultid, struct ct_check_row *c);

/* Write *c as result resultid's row for the upload it has now, measured
 * at now. Returns 0 or a db error. */
int ct_check_put(struct ct_db *db, int64_t resultid, const struct ct_check_row *c, int64_t now);

#endif
