/*
 * web_svg.h - small inline SVG line charts for the web pages: the eval-loss
 * curve of a job over its rounds, and the credit history of a user, team or
 * host over time. No JavaScript: each point carries a <title> that browsers
 * show on hover, and the chart has an aria-label for screen readers.
 */
#ifndef CT_WEB_SVG_H
#define CT_WEB_SVG_H

#include <stddef.h>
#include "ct_buf.h"

struct ct_svg_opts {
	int width, height;	/* pixels; 0 picks 600 x 220 */
	const char *title;	/* aria-label and <title>; escaped */
	const char *id;		/* element id (escaped) or NULL */
	const char *xlabel;	/* axis captions (escaped) or NULL */
	const char *ylabel;
	int x_is_time;		/* x values are UNIX times: label as dates */
	int y_from_zero;	/* start the y axis at 0 (credit), not at min */
	int x_integer;		/* x values are counts (rounds): integer ticks */
};

/* Append an <svg> element plotting the points (x[i], y[i]), i < n, joined by
 * a polyline in the order given. Points with a non-finite coordinate are
 * skipped; with no finite point the chart says "no data yet". Returns 0 or a
 * CT_E* code from the buffer. */
int ct_svg_line_chart(struct ct_buf *b, const double *x, const double *y,
		      size_t n, const struct ct_svg_opts *opts);

/* Pick "nice" axis ticks (1, 2, 5 x 10^k steps) covering [lo, hi]: writes
 * at most `max` tick values into `ticks` and returns how many. */
size_t ct_svg_ticks(double lo, double hi, double *ticks, size_t max);

/* Ticks of a time axis over [lo, hi] (UNIX times): whole multiples (UTC)
 * of the smallest step from a minute to a year that gives at most `max`;
 * writes them into `ticks`, the step into *step, and returns how many. */
size_t ct_svg_time_ticks(double lo, double hi, double *ticks, size_t max, double *step);

/* A time tick's label, as fine as `step` (seconds): "12-01 06:00" below a
 * day, "2026-12-01" from a day up, "2026-12-01 06:00" for a step of 0 (a
 * point's own time); UTC. Returns `out`. */
char *ct_svg_time_label(char *out, size_t size, double t, double step);

#endif
