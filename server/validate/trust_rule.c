/*
 * trust_rule.c - the pure half of adaptive replication that cannot be
 * farmed (trust.h): no database, so bench_verify links it too.
 */
#include "trust.h"

int ct_trust_decide(const struct ct_trust_host *h, const struct ct_trust_limits *l,
		    int64_t now, double u)
{
	double p;

	if (h->caught || h->consecutive_valid < l->min_valid || h->nrounds < l->min_rounds ||
	    h->first_valid <= 0 || now - h->first_valid < l->min_age)
		return 0;
	p = 1.0 - 1.0 / (double)h->consecutive_valid;
	if (p > 1.0 - l->floor)
		p = 1.0 - l->floor;
	return u < p;
}
