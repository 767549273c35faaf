/*
 * robust.c - direction and size of each shard's update against the
 * others' (see robust.h).
 */
#include "robust.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_conf.h"
#include "ct_err.h"
#include "ct_log.h"
#include "data/db.h"
#include "robust_aside.h"

int ct_robust_init(struct ct_robust *r, int k, size_t n)
{
	memset(r, 0, sizeof(*r));
	if (k < 1 || k > CT_ROBUST_MAX_K || n == 0)
		return ct_error(CT_EINVAL, "robust check: %d updates of %zu", k, n);
	r->sum = calloc(n, sizeof(double));
	if (r->sum == NULL)
		return CT_ENOMEM;
	r->n = n;
	r->k = k;
	for (int i = 0; i < k; i++)
		r->shard[i] = i;
	return 0;
}

void ct_robust_free(struct ct_robust *r)
{
	free(r->sum);
	r->sum = NULL;
}

void ct_robust_add(struct ct_robust *r, int i, const float *base, const float *w)
{
	double s = 0.0;

	for (size_t j = 0; j < r->n; j++) {
		double u = (double)w[j] - (double)base[j];

		r->sum[j] += u;
		s += u * u;
	}
	r->norm[i] = sqrt(s);
}

void ct_robust_score(struct ct_robust *r, int i, const float *base, const float *w)
{
	double d = 0.0;

	/* u_i . (sum - u_i): the dot product with the other shards' sum */
	for (size_t j = 0; j < r->n; j++) {
		double u = (double)w[j] - (double)base[j];

		d += u * (r->sum[j] - u);
	}
	r->dot[i] = d;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* |sum - u_i| from |sum|^2 = sum_j |u_j|^2 + 2 sum_{j<l} u_j.u_l: with
 * S2 = |sum|^2, |sum - u_i|^2 = S2 - 2 u_i.sum + |u_i|^2
 *                            = S2 - 2 (dot_i + |u_i|^2) + |u_i|^2. */
static double others_norm(const struct ct_robust *r, int i, double s2)
{
	double v = s2 - 2.0 * (r->dot[i] + r->norm[i] * r->norm[i]) + r->norm[i] * r->norm[i];

	return v > 0.0 ? sqrt(v) : 0.0;
}

int ct_robust_verdict(struct ct_robust *r, const struct ct_robust_limits *lim, int *out)
{
	double s2 = 0.0, others[CT_ROBUST_MAX_K];
	int nout = 0;

	for (size_t j = 0; j < r->n; j++)
		s2 += r->sum[j] * r->sum[j];
	for (int i = 0; i < r->k; i++) {
		double on = others_norm(r, i, s2), med;
		int m = 0;

		for (int j = 0; j < r->k; j++)
			if (j != i)
				others[m++] = r->norm[j];
		qsort(others, (size_t)m, sizeof(double), cmp_double);
		med = m == 0 ? 0.0 : m % 2 ? others[m / 2] : 0.5 * (others[m / 2 - 1] + others[m / 2]);
		r->cos[i] = r->norm[i] > 0.0 && on > 0.0 ? r->dot[i] / (r->norm[i] * on) : 0.0;
		r->ratio[i] = med > 0.0 ? r->norm[i] / med : 1.0;
		out[i] = r->k >= 3 && (r->cos[i] < lim->min_cos || r->ratio[i] > lim->max_ratio ||
				       r->ratio[i] < 1.0 / lim->max_ratio);
		nout += out[i];
	}
	return nout;
}

static int report(struct ct_db *db, int64_t jobid, int idx, const struct ct_robust *r,
		  const int *out)
{
	char msg[256];
	int rc = 0;

	for (int i = 0; rc >= 0 && i < r->k; i++) {
		if (!out[i])
			continue;
		snprintf(msg, sizeof(msg), "round %d, shard %d: its update is unlike the other "
			 "shards' (cosine %.3f with their mean, %.3gx their median size): "
			 "possible poisoning, or a shard unlike the others", idx, r->shard[i], r->cos[i],
			 r->ratio[i]);
		ct_log_warn("assimilator: job %lld: %s", (long long)jobid, msg);
		rc = CT_DB_EXEC(db, "UPDATE job SET error_message=? WHERE id=? AND status=? AND "
				"error_message=''", msg, jobid, CT_JOB_RUNNING);
	}
	return rc < 0 ? rc : 0;
}

int ct_robust_check_round(const struct ct_conf *conf, struct ct_db *db, int64_t jobid,
			  int idx, int k, size_t n, const float *base,
			  ct_robust_load_fn load, void *ctx, const int *shards)
{
	struct ct_robust_limits lim = { .min_cos = 0.0, .max_ratio = 4.0 };
	struct ct_robust r;
	int out[CT_ROBUST_MAX_K], nout = 0, rc;
	float *w;

	rc = ct_robust_aside_caught(db, jobid, idx);
	if (rc != 0 || k < 3 || k > CT_ROBUST_MAX_K)
		return rc;
	rc = conf ? ct_conf_get_double(conf, "daemons.robust_min_cos", 0.0, -1.0, 1.0,
				       &lim.min_cos) : 0;
	if (rc == 0 && conf)
		rc = ct_conf_get_double(conf, "daemons.robust_max_ratio", 4.0, 1.0, 1e6,
					&lim.max_ratio);
	if (rc < 0)
		return rc;
	w = malloc(n * sizeof(float));
	if (w == NULL)
		return CT_ENOMEM;
	rc = ct_robust_init(&r, k, n);
	for (int i = 0; rc == 0 && shards != NULL && i < k; i++)
		r.shard[i] = shards[i];
	for (int i = 0; rc == 0 && i < k; i++) {
		rc = load(ctx, i, w);
		if (rc == 0)
			ct_robust_add(&r, i, base, w);
	}
	for (int i = 0; rc == 0 && i < k; i++) {
		rc = load(ctx, i, w);
		if (rc == 0)
			ct_robust_score(&r, i, base, w);
	}
	if (rc == 0) {
		double cmin = 2.0, rlo = 1e300, rhi = 0.0;

		nout = ct_robust_verdict(&r, &lim, out);
		for (int i = 0; i < k; i++) {
			cmin = r.cos[i] < cmin ? r.cos[i] : cmin;
			rlo = r.ratio[i] < rlo ? r.ratio[i] : rlo;
			rhi = r.ratio[i] > rhi ? r.ratio[i] : rhi;
		}
		ct_log_info("assimilator: job %lld round %d: cross-shard check of %d: lowest "
			    "cosine %.3f, sizes %.3g..%.3gx the others' median, %d outlier(s)",
			    (long long)jobid, idx, k, cmin, rlo, rhi, nout);
	}
	if (rc == 0 && nout > 0)
		rc = report(db, jobid, idx, &r, out);
	if (rc == 0 && nout > 0)
		rc = ct_robust_aside_outlier(conf, db, jobid, idx, &r, out);
	ct_robust_free(&r);
	free(w);
	return rc;
}
