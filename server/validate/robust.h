/*
 * robust.h - the cross-shard check of a round's canonical updates before
 * they are averaged (doc/validation.md, "Cross-shard check").
 *
 * A quorum of colluders can make a poisoned update canonical; what it
 * cannot easily do is make that update look like the other shards'. For
 * each shard k of a round with K >= 3 shards, with u_j = w_j - base:
 *   direction  cos(u_k, mean of the other shards' u_j)
 *   size       |u_k| / median of the other shards' |u_j|
 * A shard whose cosine is below min_cos, or whose size ratio is outside
 * [1/max_ratio, max_ratio], is an outlier. (K = 2 has no majority to
 * compare with: nothing is flagged.)
 *
 * Streaming, so the assimilator never holds K updates at once: pass 1
 * feeds every shard to ct_robust_add() (sum and norms), pass 2 feeds
 * every shard again to ct_robust_score(). Memory: n floats (doubles) for
 * the sum. No database: robust_aside.h runs the check on a round
 * (ct_robust_check_round), reports the outliers (log and the job's
 * notice) and sets the worst aside.
 */
#ifndef CT_ROBUST_H
#define CT_ROBUST_H

#include <stddef.h>
#include <stdint.h>

#define CT_ROBUST_MAX_K 256

struct ct_robust {
	size_t n;		/* weights per update */
	int k;			/* shards */
	double *sum;		/* (n) sum of the updates */
	double norm[CT_ROBUST_MAX_K], dot[CT_ROBUST_MAX_K];
	double cos[CT_ROBUST_MAX_K], ratio[CT_ROBUST_MAX_K];
	int shard[CT_ROBUST_MAX_K];	/* update i's shard (ct_robust_init: i) */
};

/* Thresholds: defaults min_cos 0, max_ratio 4 (config daemons.robust_min_cos,
 * daemons.robust_max_ratio). */
struct ct_robust_limits {
	double min_cos, max_ratio;
};

/* Start a check of k (1..CT_ROBUST_MAX_K) updates of n weights. Returns 0,
 * CT_EINVAL or CT_ENOMEM; free with ct_robust_free(). */
int ct_robust_init(struct ct_robust *r, int k, size_t n);
void ct_robust_free(struct ct_robust *r);

/* Pass 1 / pass 2: shard i's weights w against the round's base (n each). */
void ct_robust_add(struct ct_robust *r, int i, const float *base, const float *w);
void ct_robust_score(struct ct_robust *r, int i, const float *base, const float *w);

/* After both passes: fills r->cos and r->ratio; returns the number of
 * outliers and sets out[i] = 1 for each (out has k entries). */
int ct_robust_verdict(struct ct_robust *r, const struct ct_robust_limits *lim, int *out);

#endif
