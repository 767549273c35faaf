/*
 * quorum.c - the pure decisions of the daemons (daemons.h): the validator's
 * sanity checks and quorum, and adaptive replication. No database, no
 * files: the daemons feed them, the tests call them directly.
 */
#include "daemons.h"
#include "db.h"
#include "ct_err.h"

#include <math.h>
#include <string.h>

int ct_adaptive_decide(int consecutive_valid, double u)
{
	if (consecutive_valid < 10)
		return 0;
	return u < 1.0 - 1.0 / (double)consecutive_valid;
}

/* ---- pure checks ---------------------------------------------------------- */

const char *ct_val_reason_name(int reason)
{
	static const char *const names[] = {
		[CT_VAL_OK] = "ok",
		[CT_VAL_UNREADABLE] = "unreadable",
		[CT_VAL_WRONG_BASE] = "wrong_base",
		[CT_VAL_WRONG_SHAPE] = "wrong_shape",
		[CT_VAL_NONFINITE] = "nonfinite",
		[CT_VAL_NO_UPDATE] = "no_update",
		[CT_VAL_TOO_LARGE] = "update_too_large",
		[CT_VAL_LOSS] = "probe_loss",
	};

	if (reason < 0 || (size_t)reason >= sizeof(names) / sizeof(names[0]))
		return "?";
	return names[reason];
}

double ct_val_adam_bound(const struct ct_val_bound *b, double pmax)
{
	double r = b->beta1 * b->beta1 / b->beta2, total = 0.0;
	double p1 = 1.0, p2 = 1.0, pr = 1.0;	/* beta1^t, beta2^t, r^t */

	if (!(r < 1.0) || b->beta1 < 0.0 || b->beta1 >= 1.0 || b->beta2 <= 0.0 ||
	    b->beta2 >= 1.0 || b->steps < 0 || !(b->lr >= 0.0))
		return INFINITY;
	for (int t = 1; t <= b->steps; t++) {
		double u;

		p1 *= b->beta1, p2 *= b->beta2, pr *= r;
		u = (1.0 - b->beta1) * sqrt(1.0 - p2) / ((1.0 - p1) * sqrt(1.0 - b->beta2)) *
		    sqrt((1.0 - pr) / (1.0 - r));
		/* the weight may have grown by `total` so far: decay acts on it */
		total += b->lr * (u + fabs(b->weight_decay) * (pmax + total));
	}
	/* 1% slack, and float rounding of each step's p - u */
	return 1.01 * total + (double)b->steps * (pmax + total) * 2.4e-7 + 1e-30;
}

void ct_val_stats(const float *base, const float *w, size_t n, struct ct_val_stats *st)
{
	double bn = 0.0, un = 0.0, um = 0.0, bm = 0.0;
	int finite = 1;

	for (size_t i = 0; i < n; i++) {
		double b = base[i], d = (double)w[i] - b;

		finite &= isfinite(w[i]) != 0;
		bn += b * b;
		un += d * d;
		um = fabs(d) > um ? fabs(d) : um;
		bm = fabs(b) > bm ? fabs(b) : bm;
	}
	st->base_norm = sqrt(bn);
	st->update_norm = sqrt(un);
	st->update_max = um;
	st->base_max = bm;
	st->finite = finite;
}

int ct_val_sanity(const struct ct_val_stats *st, const struct ct_val_bound *b,
		  double max_ratio)
{
	if (!st->finite)
		return CT_VAL_NONFINITE;
	if (st->update_norm == 0.0)
		return CT_VAL_NO_UPDATE;
	if (st->update_max > ct_val_adam_bound(b, st->base_max))
		return CT_VAL_TOO_LARGE;
	if (max_ratio > 0.0 && st->update_norm > max_ratio * st->base_norm)
		return CT_VAL_TOO_LARGE;
	return CT_VAL_OK;
}

int ct_eval_batch(int batch, int seq, uint64_t ntokens)
{
	uint64_t fit;

	if (batch < 1 || seq < 1 || ntokens < 2)
		return 1;
	fit = (ntokens - 1) / (uint64_t)seq;
	if (fit < 1)
		return 1;
	return fit < (uint64_t)batch ? (int)fit : batch;
}

int ct_val_loss_ok(double loss, double base_loss, double margin)
{
	return isfinite(loss) && loss <= base_loss + margin;
}

double ct_val_margin(double margin, double rel, double base_loss)
{
	double r = rel * base_loss;

	return isfinite(r) && r > margin ? r : margin;
}

/* The tolerance test of two candidates whose weights are dist apart: the
 * distance within tolerance of the larger update (plus both quantisation
 * errors) and the probe losses within tolerance of the larger one. */
static int close_enough(const struct ct_val_cand *a, const struct ct_val_cand *b, double dist,
			double tolerance)
{
	double denom, lmax;

	denom = a->update_norm > b->update_norm ? a->update_norm : b->update_norm;
	if (!(dist <= tolerance * denom + a->quant_error + b->quant_error))
		return 0;
	lmax = fabs(a->probe_loss) > fabs(b->probe_loss) ? fabs(a->probe_loss)
							 : fabs(b->probe_loss);
	return fabs(a->probe_loss - b->probe_loss) <= tolerance * lmax + 1e-7;
}

int ct_val_agree(const struct ct_val_cand *a, const struct ct_val_cand *b,
		 size_t n, double tolerance)
{
	double dist = 0.0;

	if (memcmp(a->sha, b->sha, 32) == 0)
		return 1;
	if (a->conforming && b->conforming && a->quant_error == 0.0 && b->quant_error == 0.0)
		return 0;	/* conforming devices must match bit for bit */
	for (size_t i = 0; i < n; i++) {
		double d = (double)a->w[i] - (double)b->w[i];

		dist += d * d;
	}
	return close_enough(a, b, sqrt(dist), tolerance);
}

int ct_val_decide(struct ct_val_cand *c, size_t nc, size_t n, int min_quorum,
		  double tolerance)
{
	int best = -1, best_count = 0, decided = 0;

	for (size_t i = 0; i < nc; i++) {
		if (c[i].state == CT_VS_VALID) {
			best = (int)i;
			best_count = min_quorum;	/* decided earlier */
			decided = 1;
			break;
		}
	}
	for (size_t i = 0; !decided && i < nc; i++) {
		int count = 1;

		for (size_t j = 0; j < nc; j++)
			if (j != i)
				count += ct_val_agree(&c[i], &c[j], n, tolerance);
		if (count > best_count) {
			best = (int)i;
			best_count = count;
		}
	}
	if (best < 0 || best_count < min_quorum) {
		for (size_t i = 0; i < nc; i++)
			c[i].new_state = CT_VS_INCONCLUSIVE;
		return -1;
	}
	for (size_t i = 0; i < nc; i++) {
		if ((int)i == best)
			c[i].new_state = CT_VS_VALID;
		else
			c[i].new_state = ct_val_agree(&c[best], &c[i], n, tolerance)
						 ? CT_VS_VALID : CT_VS_INVALID;
	}
	return best;
}


/* ---- quorum with weights the caller streams ------------------------------- */

/* ct_val_agree, the distance asked of dist() only when the hashes differ
 * and a tolerance applies. 1 / 0, or dist()'s error. */
static int agree_fn(const struct ct_val_cand *c, size_t i, size_t j, double tolerance,
		    ct_val_dist_fn dist, void *ctx, double *memo)
{
	const struct ct_val_cand *a = &c[i], *b = &c[j];
	double d;
	int rc;

	if (memcmp(a->sha, b->sha, 32) == 0)
		return 1;
	if (a->conforming && b->conforming && a->quant_error == 0.0 && b->quant_error == 0.0)
		return 0;	/* conforming devices must match bit for bit */
	if (!(memo[0] >= 0.0)) {
		rc = dist(ctx, i, j, &d);
		if (rc < 0)
			return rc;
		memo[0] = d;
	}
	return close_enough(a, b, memo[0], tolerance);
}

int ct_val_decide_fn(struct ct_val_cand *c, size_t nc, int min_quorum, double tolerance,
		     ct_val_dist_fn dist, void *ctx, int *best_out)
{
	double memo[CT_VAL_MAX_CANDS][CT_VAL_MAX_CANDS];
	int best = -1, best_count = 0, decided = 0, rc;

	*best_out = -1;
	if (nc > CT_VAL_MAX_CANDS)
		return CT_EINVAL;
	for (size_t i = 0; i < nc; i++)
		for (size_t j = 0; j < nc; j++)
			memo[i][j] = -1.0;
	for (size_t i = 0; i < nc && !decided; i++) {
		if (c[i].state == CT_VS_VALID) {
			best = (int)i;
			best_count = min_quorum;	/* decided earlier */
			decided = 1;
		}
	}
	for (size_t i = 0; !decided && i < nc; i++) {
		int count = 1;

		for (size_t j = 0; j < nc; j++) {
			if (j == i)
				continue;
			rc = agree_fn(c, i < j ? i : j, i < j ? j : i, tolerance, dist, ctx,
				      &memo[i < j ? i : j][i < j ? j : i]);
			if (rc < 0)
				return rc;
			count += rc;
		}
		if (count > best_count) {
			best = (int)i;
			best_count = count;
		}
	}
	if (best < 0 || best_count < min_quorum) {
		for (size_t i = 0; i < nc; i++)
			c[i].new_state = CT_VS_INCONCLUSIVE;
		return 0;
	}
	for (size_t i = 0; i < nc; i++) {
		size_t lo = (size_t)best < i ? (size_t)best : i, hi = (size_t)best < i ? i : (size_t)best;

		if ((int)i == best) {
			c[i].new_state = CT_VS_VALID;
			continue;
		}
		rc = agree_fn(c, lo, hi, tolerance, dist, ctx, &memo[lo][hi]);
		if (rc < 0)
			return rc;
		c[i].new_state = rc ? CT_VS_VALID : CT_VS_INVALID;
	}
	*best_out = best;
	return 0;
}
