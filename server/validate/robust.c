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
