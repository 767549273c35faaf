/*
 * ct_outer.h - the outer optimizer of a round (DiLoCo's idea): the round's
 * aggregate is not taken as the next model as it is; the difference
 * between the round's start model and the aggregate is a pseudo-gradient,
 * and an SGD step with (Nesterov) momentum on it gives the next model.
 *
 * Per coordinate i, with theta the round's start model, a the aggregate
 * (ct_avg, or a LoRA round's merged model), m the momentum buffer the
 * previous round left (absent in a job's first round) and every operation
 * one float32 operation rounded to nearest (no fused multiply-add), in
 * this order (doc/workunit.md, "The outer step"):
 *
 *   d  = theta - a
 *   m' = d                          first round (no buffer yet)
 *   m' = mu * m + d                 later rounds: (mu * m) rounded, then + d
 *   g  = d + mu * m'                nesterov: (mu * m') rounded, then d +
 *   g  = m'                         sgd
 *   theta' = theta - lr * g         (lr * g) rounded, then theta -
 *
 * which is torch.optim.SGD(lr, momentum=mu, nesterov=...) stepping on the
 * gradient d with dampening 0. "mean" is no outer step at all: theta' = a,
 * the aggregate's own bits (not theta - (theta - a), which rounds).
 */
#ifndef CT_OUTER_H
#define CT_OUTER_H

#include <stddef.h>

enum ct_outer_method {
	CT_OUTER_MEAN = 0,	/* the aggregate is the next model */
	CT_OUTER_SGD = 1,	/* SGD with momentum on the pseudo-gradient */
	CT_OUTER_NESTEROV = 2,	/* the same with Nesterov's correction */
};

struct ct_outer {
	enum ct_outer_method method;
	float lr;		/* outer learning rate, > 0 */
	float momentum;		/* mu, in [0, 1) */
};

/* Parse "mean", "sgd" or "nesterov". Returns 0 or CT_EINVAL. */
int ct_outer_parse(const char *s, enum ct_outer_method *out);
/* The method's name ("mean", "sgd", "nesterov"). */
const char *ct_outer_name(enum ct_outer_method m);
/* Checks lr (finite, > 0, <= 10) and momentum (finite, 0 <= mu < 1).
 * Returns 0 or CT_EINVAL (with a message naming the value). */
int ct_outer_check(const struct ct_outer *o);

/* One outer step over n coordinates: theta (the round's start model) is
 * read, agg holds the aggregate on entry and theta' on return; mom holds
 * the previous round's buffer on entry when have_mom, and the new buffer
 * on return (n floats; it is written whatever have_mom says). For
 * CT_OUTER_MEAN nothing is read or written. */
void ct_outer_step(const struct ct_outer *o, const float *theta, float *agg, float *mom,
		   int have_mom, size_t n);

#endif
