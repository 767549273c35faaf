/*
 * ct_avg.h - aggregation of K weight vectors into one (the "lo-fi" average
 * the assimilator takes at the end of a round).
 *
 * The mean is the default: one streaming pass over each input with the
 * running sums in registers, so it runs near memory bandwidth
 * (bench/bench_avg). The order of operations per coordinate is fixed
 * (float sum of input 0, 1, ..., K-1, then one division by K), so every
 * server computes the same bits on any host.
 * The trimmed mean and the coordinate median, more robust to a bad input
 * that passed validation, sort the K values of each coordinate and cost
 * more.
 */
#ifndef CT_AVG_H
#define CT_AVG_H

#include <stddef.h>

enum ct_avg_method {
	CT_AVG_MEAN = 0,	/* arithmetic mean */
	CT_AVG_TRIMMED = 1,	/* drop the `trim` lowest and highest, mean the rest */
	CT_AVG_MEDIAN = 2,	/* middle value (mean of the two middle ones for even K) */
};

/* The most inputs one call takes (sorting and pointer arrays are sized by
 * it). */
#define CT_AVG_MAX_INPUTS 1024

/* out[i] = aggregate over j of in[j][i], for i < n. in: k pointers to n
 * floats each (caller-owned, may not alias out unless k == 1 and method is
 * the mean). Inputs must be finite (the validator guarantees it): with NaN
 * the mean propagates it and the sorted methods give an unspecified order.
 * Returns 0; CT_EINVAL when k == 0, k > CT_AVG_MAX_INPUTS, an unknown
 * method, or 2 * trim >= k for CT_AVG_TRIMMED. */
int ct_avg(float *out, const float *const *in, size_t k, size_t n,
	   enum ct_avg_method method, size_t trim);

/* The mean without holding the K inputs at once (the assimilator decodes
 * one result at a time): copy input 0 into acc, call ct_avg_accumulate()
 * with inputs 1..K-1 in that order, then ct_avg_finish() with k. Each
 * coordinate sees the same float operations as ct_avg()'s mean, so the
 * result has the same bits. */
void ct_avg_accumulate(float *acc, const float *x, size_t n);
void ct_avg_finish(float *acc, size_t k, size_t n);

/* Parse "mean", "trimmed", "median" into *out. Returns 0 or CT_EINVAL. */
int ct_avg_parse_method(const char *s, enum ct_avg_method *out);

#endif
