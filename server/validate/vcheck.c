/*
 * vcheck.c - streaming checks and comparisons of results (vcheck.h).
 */
#include "vcheck.h"
#include "data/db.h"
#include "data/dl.h"
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

/* A result_check row as ct_vcheck_load and ct_vcheck_twin read it. */
struct check_row {
	char weights_sha256[129];
	double update_norm, probe_loss, quant_error;
};

static const struct ct_dl_col check_cols[] = {
	CT_DL_COL(struct check_row, weights_sha256), CT_DL_COL(struct check_row, update_norm),
	CT_DL_COL(struct check_row, probe_loss), CT_DL_COL(struct check_row, quant_error),
};

/* The first row of `sql` (the result_check row of result `resultid` it
 * finds; `from` the rest after its columns) into out. Returns 1 if there
 * was a usable row, 0 if none, or a db error. */
static int read_check(struct ct_db *db, const char *from, int64_t resultid,
		      struct ct_vcheck *out)
{
	struct check_row c;
	char sql[512];
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(sql, sizeof(sql), "SELECT c.weights_sha256, c.update_norm, c.probe_loss, "
		 "c.quant_error %s", from);
	rc = CT_DL_ONE(db, &c, check_cols, sql, resultid);
	if (rc == CT_ENOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	if (ct_hex_decode(c.weights_sha256, out->info.decoded_sha, 32) != 0)
		return 0;
	out->st.update_norm = c.update_norm;
	out->probe_loss = c.probe_loss;
	out->info.quant_error = c.quant_error;
	return 1;
}

int ct_vcheck_load(struct ct_db *db, int64_t resultid, struct ct_vcheck *out)
{
	return read_check(db, "FROM result_check c JOIN result r ON r.id = c.resultid "
			  "WHERE c.resultid=? AND c.upload_sha256 = r.upload_sha256", resultid,
			  out);
}

int ct_vcheck_twin(struct ct_db *db, int64_t resultid, struct ct_vcheck *out)
{
	return read_check(db, "FROM result r JOIN result o ON o.workunitid = r.workunitid "
			  "AND o.id <> r.id AND o.upload_sha256 = r.upload_sha256 "
			  "JOIN result_check c ON c.resultid = o.id AND "
			  "c.upload_sha256 = o.upload_sha256 WHERE r.id=? AND "
			  "r.upload_sha256 <> '' LIMIT 1", resultid, out);
}

int ct_vcheck_store(struct ct_db *db, int64_t resultid, const struct ct_vcheck *c)
{
	char hex[65];
	int rc;

	ct_hex_encode(c->info.decoded_sha, 32, hex);
	rc = CT_DB_EXEC(db, "REPLACE INTO result_check (resultid, upload_sha256, weights_sha256, "
			"update_norm, probe_loss, quant_error, check_time) SELECT id, "
			"upload_sha256, ?, ?, ?, ?, ? FROM result WHERE id=?", hex,
			c->st.update_norm, c->probe_loss, c->info.quant_error, ct_db_now(db),
			resultid);
	return rc < 0 ? rc : 0;
}
