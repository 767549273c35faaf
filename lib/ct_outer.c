/*
 * ct_outer.c - the outer optimizer's step (ct_outer.h). The project builds
 * with -ffp-contract=off: each expression below is the float32 operations
 * it spells, in that order, on every compiler and CPU.
 */
#include "ct_outer.h"
#include "ct_err.h"

#include <math.h>
#include <string.h>

static const char *const names[] = { "mean", "sgd", "nesterov" };

int ct_outer_parse(const char *s, enum ct_outer_method *out)
{
	for (int i = 0; i < 3; i++)
		if (s != NULL && strcmp(s, names[i]) == 0) {
			*out = (enum ct_outer_method)i;
			return 0;
		}
	return CT_EINVAL;
}

const char *ct_outer_name(enum ct_outer_method m)
{
	return (unsigned)m < 3 ? names[m] : "?";
}

int ct_outer_check(const struct ct_outer *o)
{
	if (o->method == CT_OUTER_MEAN)
		return 0;
	if ((unsigned)o->method > CT_OUTER_NESTEROV)
		return ct_error(CT_EINVAL, "outer optimizer %d unknown", (int)o->method);
	if (!isfinite(o->lr) || o->lr <= 0.0f || o->lr > 10.0f)
		return ct_error(CT_EINVAL, "outer learning rate %g: want 0 < lr <= 10", o->lr);
	if (!isfinite(o->momentum) || o->momentum < 0.0f || o->momentum >= 1.0f)
		return ct_error(CT_EINVAL, "outer momentum %g: want 0 <= momentum < 1",
				o->momentum);
	return 0;
}

void ct_outer_step(const struct ct_outer *o, const float *theta, float *agg, float *mom,
		   int have_mom, size_t n)
{
	const float mu = o->momentum, lr = o->lr;
	const int nesterov = o->method == CT_OUTER_NESTEROV;

	if (o->method == CT_OUTER_MEAN)
		return;
	for (size_t i = 0; i < n; i++) {
		float d = theta[i] - agg[i];
		float m = d;
		float g;

		if (have_mom) {
			float t = mu * mom[i];

			m = t + d;
		}
		mom[i] = m;
		if (nesterov) {
			float t = mu * m;

			g = d + t;
		} else {
			g = m;
		}
		{
			float s = lr * g;

			agg[i] = theta[i] - s;
		}
	}
}
