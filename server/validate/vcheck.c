/*
 * vcheck.c - streaming checks and comparisons of results (vcheck.h).
 */
#include "vcheck.h"
#include "data/db.h"
#include "data/dl_check.h"
#include "ct_err.h"
#include "ct_hash.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Running sums of ct_val_stats, in its order (so the same doubles). */
struct acc {
	double bn, un, um, bm;
	int finite;
};

static void acc_add(struct acc *a, const float *base, const float *w, size_t m)
{
	for (size_t i = 0; i < m; i++) {
		double b = base[i], d = (double)w[i] - b;

		a->finite &= isfinite(w[i]) != 0;
		a->bn += b * b;
		a->un += d * d;
		a->um = fabs(d) > a->um ? fabs(d) : a->um;
		a->bm = fabs(b) > a->bm ? fabs(b) : a->bm;
	}
}

int ct_vcheck_scan(const char *path, uint64_t cap, const float *base, size_t n, float *w,
		   struct ct_vcheck *out)
{
	struct ct_delta_reader *rd = NULL;
	struct acc a = { .finite = 1 };
	float *chunk = NULL;
	size_t first = 0, m = 0, next = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	/* a chunk buffer: the output when w is NULL, a copy of the base's
	 * chunk when decoding in place (w == base) */
	if (w == NULL || w == base) {
		chunk = malloc(CT_DELTA_CHUNK * sizeof(float));
		if (chunk == NULL)
			return CT_ENOMEM;
	}
	rc = ct_delta_reader_open(path, cap, n, &rd);
	while (rc >= 0) {
		/* chunks come in order: the next one starts where this ended */
		size_t k = n - next < CT_DELTA_CHUNK ? n - next : CT_DELTA_CHUNK;
		const float *b = base + next;
		float *dst = w != NULL ? w + next : chunk;

		if (w != NULL && w == base && k > 0) {
			memcpy(chunk, b, k * sizeof(float));
			b = chunk;
		}
		rc = ct_delta_reader_next(rd, b, dst, &first, &m);
		if (rc <= 0)
			break;
		acc_add(&a, b, dst, m);
		next = first + m;
	}
	if (rc == 0) {
		out->info = *ct_delta_reader_info(rd);
		out->st.base_norm = sqrt(a.bn);
		out->st.update_norm = sqrt(a.un);
		out->st.update_max = a.um;
		out->st.base_max = a.bm;
		out->st.finite = a.finite;
	}
	ct_delta_reader_close(rd);
	free(chunk);
	return rc;
}

int ct_vcheck_distance(const char *pa, const char *pb, uint64_t cap, const float *base,
		       size_t n, double *dist)
{
	struct ct_delta_reader *ra = NULL, *rb = NULL;
	float *ca = malloc(2 * CT_DELTA_CHUNK * sizeof(float)), *cb;
	size_t fa, ma, fb, mb, next = 0;
	double sum = 0.0;
	int rc, rcb;

	if (ca == NULL)
		return CT_ENOMEM;
	cb = ca + CT_DELTA_CHUNK;
	rc = ct_delta_reader_open(pa, cap, n, &ra);
	if (rc == 0)
		rc = ct_delta_reader_open(pb, cap, n, &rb);
	while (rc >= 0) {
		rc = ct_delta_reader_next(ra, base + next, ca, &fa, &ma);
		rcb = ct_delta_reader_next(rb, base + next, cb, &fb, &mb);
		if (rc >= 0 && rcb < 0)
			rc = rcb;
		if (rc <= 0)
			break;
		if (rcb != 1 || fa != fb || ma != mb) {
			rc = ct_error(CT_EINTERNAL, "vcheck: readers out of step");
			break;
		}
		for (size_t i = 0; i < ma; i++) {
			double d = (double)ca[i] - (double)cb[i];

			sum += d * d;
		}
		next = fa + ma;
	}
	if (rc == 0)
		*dist = sqrt(sum);
	ct_delta_reader_close(ra);
	ct_delta_reader_close(rb);
	free(ca);
	return rc;
}

/* A result_check row (rc 0 from ct_check_get or ct_check_twin) into out.
 * Returns 1 if there was a usable row, 0 if none, or a db error. */
static int read_check(int rc, const struct ct_check_row *c, struct ct_vcheck *out)
{
	memset(out, 0, sizeof(*out));
	if (rc == CT_ENOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	if (ct_hex_decode(c->weights_sha256, out->info.decoded_sha, 32) != 0)
		return 0;
	out->st.update_norm = c->update_norm;
	out->probe_loss = c->probe_loss;
	out->info.quant_error = c->quant_error;
	return 1;
}

int ct_vcheck_load(struct ct_db *db, int64_t resultid, struct ct_vcheck *out)
{
	struct ct_check_row c;

	return read_check(ct_check_get(db, resultid, &c), &c, out);
}

int ct_vcheck_twin(struct ct_db *db, int64_t resultid, struct ct_vcheck *out)
{
	struct ct_check_row c;

	return read_check(ct_check_twin(db, resultid, &c), &c, out);
}

int ct_vcheck_store(struct ct_db *db, int64_t resultid, const struct ct_vcheck *c)
{
	struct ct_check_row row = { .update_norm = c->st.update_norm,
				    .probe_loss = c->probe_loss,
				    .quant_error = c->info.quant_error };

	ct_hex_encode(c->info.decoded_sha, 32, row.weights_sha256);
	return ct_check_put(db, resultid, &row, ct_db_now(db));
}
