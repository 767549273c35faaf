/*
 * state_edge.h - a lifecycle's allowed moves as a table of (from, to)
 * pairs of state codes, and the look-up every owner of a state column
 * checks a move with (wu_state.h; job_state.h and result_state.h keep
 * tables of their own type).
 */
#ifndef CT_STATE_EDGE_H
#define CT_STATE_EDGE_H

#include <stddef.h>

struct ct_state_edge {
	int from, to;
};

/* 1 if (from, to) is one of t[0..n). */
static inline int ct_state_edge_allowed(const struct ct_state_edge *t, size_t n, int from,
					int to)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].from == from && t[i].to == to)
			return 1;
	return 0;
}

#endif
