/*
 * web_svg.c - inline SVG line charts (see web_svg.h). The geometry is
 * plain: a plot area inside fixed margins, nice ticks on y, up to five
 * labels on x (round times on a time axis), a polyline and one circle per point (when there are few).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ct_err.h"
#include "tmpl.h"
#include "web_svg.h"

#define ML 62	/* left margin: y tick labels */
#define MR 14
#define MT 12
#define MB 38	/* bottom margin: x tick labels + caption */
#define MAX_DOTS 60

size_t ct_svg_ticks(double lo, double hi, double *ticks, size_t max)
{
	double span, step, mag, first;
	size_t n = 0;

	if (max == 0 || !isfinite(lo) || !isfinite(hi))
		return 0;
	if (hi < lo) {
		double t = lo;
		lo = hi;
		hi = t;
	}
	span = hi - lo;
	if (span <= 0) {
		ticks[0] = lo;
		return 1;
	}
	mag = pow(10, floor(log10(span / 4)));
	step = mag;
	if (span / step > 5) step = 2 * mag;
	if (span / step > 5) step = 5 * mag;
	if (span / step > 5) step = 10 * mag;
	first = ceil(lo / step - 1e-9) * step;
	for (double v = first; v <= hi + step * 1e-9 && n < max; v += step)
		ticks[n++] = fabs(v) < step * 1e-9 ? 0 : v;
	return n;
}

/* Steps of a time axis, in seconds: minutes to a year. */
static const double time_steps[] = {
	60, 300, 600, 900, 1800, 3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600,
	86400, 2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400, 56 * 86400,
	91 * 86400, 182 * 86400, 364 * 86400,
};

size_t ct_svg_time_ticks(double lo, double hi, double *ticks, size_t max, double *step)
{
	size_t n = 0, ns = sizeof(time_steps) / sizeof(time_steps[0]);
	double st = time_steps[ns - 1];

	*step = st;
	if (max == 0 || !isfinite(lo) || !isfinite(hi) || hi < lo)
		return 0;
	for (size_t i = 0; i < ns; i++)
		if (floor(hi / time_steps[i]) - ceil(lo / time_steps[i]) + 1 <= (double)max) {
			st = time_steps[i];
			break;
		}
	*step = st;
	for (double v = ceil(lo / st) * st; v <= hi && n < max; v += st)
		ticks[n++] = v;
	return n;
}

char *ct_svg_time_label(char *out, size_t size, double t, double step)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (size == 0)
		return out;
	if (step <= 0)
		return ct_tmpl_datetime(out, size, (long long)t);
	if (gmtime_r(&tt, &tm) == NULL) {
		snprintf(out, size, "-");
		return out;
	}
	/* a label as fine as the step, so no two ticks read the same */
	strftime(out, size, step < 86400 ? "%m-%d %H:%M" : "%Y-%m-%d", &tm);
	return out;
}

struct frame {
	double x0, x1, y0, y1;	/* data ranges */
	int w, h;		/* whole image */
};

static double px(const struct frame *f, double x)
{
	return ML + (x - f->x0) / (f->x1 - f->x0) * (f->w - ML - MR);
}

static double py(const struct frame *f, double y)
{
	return f->h - MB - (y - f->y0) / (f->y1 - f->y0) * (f->h - MT - MB);
}

static void fmt_value(char *out, size_t size, double v)
{
	double a = fabs(v);

	if (a >= 1e6)
		snprintf(out, size, "%.3gM", v / 1e6);
	else if (a >= 1e4)
		snprintf(out, size, "%.3gk", v / 1e3);
	else
		snprintf(out, size, "%.4g", v);
}

static void fmt_x(char *out, size_t size, double x, int is_time)
{
	if (is_time)	/* a point's own time, to the minute (UTC) */
		ct_svg_time_label(out, size, x, 0);
	else
		fmt_value(out, size, x);
}

/* Data ranges over the finite points; returns how many there are. */
static size_t find_ranges(const double *x, const double *y, size_t n,
			  const struct ct_svg_opts *o, struct frame *f)
{
	size_t k = 0;

	f->x0 = f->y0 = INFINITY;
	f->x1 = f->y1 = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !isfinite(y[i]))
			continue;
		k++;
		f->x0 = fmin(f->x0, x[i]);
		f->x1 = fmax(f->x1, x[i]);
		f->y0 = fmin(f->y0, y[i]);
		f->y1 = fmax(f->y1, y[i]);
	}
	if (k == 0)
		return 0;
	if (o->y_from_zero && f->y0 > 0)
		f->y0 = 0;
	if (f->x1 <= f->x0) {	/* one point: a day around it on a time axis */
		double pad = o->x_is_time ? 43200 : 1;

		f->x0 -= pad;
		f->x1 += pad;
	}
	if (f->y1 <= f->y0) {
		double pad = fabs(f->y0) > 0 ? fabs(f->y0) * 0.1 : 1;
		f->y0 -= pad;
		f->y1 += pad;
	} else {
		/* a little air so no point sits on the frame */
		double pad = (f->y1 - f->y0) * 0.06;
		if (!(o->y_from_zero && f->y0 == 0))
			f->y0 -= pad;
		f->y1 += pad;
	}
	return k;
}

static int axes(struct ct_buf *b, const struct frame *f,
		const struct ct_svg_opts *o)
{
	double t[8];
	size_t nt = ct_svg_ticks(f->y0, f->y1, t, 8);
	char lab[48];
	int rc = 0;

	for (size_t i = 0; i < nt && rc == 0; i++) {
		fmt_value(lab, sizeof(lab), t[i]);
		rc = ct_tmpl_printf(b, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" "
			"y1=\"%.1f\" y2=\"%.1f\"/><text class=\"ytick\" x=\"%d\" "
			"y=\"%.1f\" text-anchor=\"end\">%s</text>",
			ML, f->w - MR, py(f, t[i]), py(f, t[i]), ML - 6,
			py(f, t[i]) + 4, lab);
	}
	if (o->x_is_time) {
		double step;

		nt = ct_svg_time_ticks(f->x0, f->x1, t, 5, &step);
		for (size_t i = 0; i < nt && rc == 0; i++) {
			double at = px(f, t[i]);

			ct_svg_time_label(lab, sizeof(lab), t[i], step);
			/* labels near the edges align inwards so they are not cut */
			rc = ct_tmpl_printf(b, "<text class=\"xtick\" x=\"%.1f\" "
				"y=\"%d\" text-anchor=\"%s\">%s</text>", at, f->h - MB + 16,
				at - ML < 40 ? "start" : f->w - MR - at < 40 ? "end" :
				"middle", lab);
		}
	} else {
		nt = ct_svg_ticks(f->x0, f->x1, t, 8);
		for (size_t i = 0; i < nt && rc == 0; i++) {
			if (o->x_integer && t[i] != floor(t[i]))
				continue;
			fmt_value(lab, sizeof(lab), t[i]);
			rc = ct_tmpl_printf(b, "<text class=\"xtick\" x=\"%.1f\" "
				"y=\"%d\" text-anchor=\"middle\">%s</text>",
				px(f, t[i]), f->h - MB + 16, lab);
		}
	}
	if (rc == 0)
		rc = ct_tmpl_printf(b, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" "
			"y1=\"%d\" y2=\"%d\"/>", ML, f->w - MR, f->h - MB,
			f->h - MB);
	if (rc == 0 && o->xlabel != NULL)
		rc = ct_tmpl_printf(b, "<text class=\"caption\" x=\"%d\" y=\"%d\" "
			"text-anchor=\"middle\">%s</text>", (ML + f->w - MR) / 2,
			f->h - 4, o->xlabel);
	if (rc == 0 && o->ylabel != NULL)
		rc = ct_tmpl_printf(b, "<text class=\"caption\" x=\"12\" y=\"%d\" "
			"transform=\"rotate(-90 12 %d)\" text-anchor=\"middle\">%s"
			"</text>", (MT + f->h - MB) / 2, (MT + f->h - MB) / 2,
			o->ylabel);
	return rc;
}

static int plot(struct ct_buf *b, const double *x, const double *y, size_t n,
		size_t finite, const struct frame *f,
		const struct ct_svg_opts *o)
{
	int rc = ct_buf_appends(b, "<polyline class=\"line\" fill=\"none\" points=\"");

	for (size_t i = 0; i < n && rc == 0; i++)
		if (isfinite(x[i]) && isfinite(y[i]))
			rc = ct_buf_appendf(b, "%s%.1f,%.1f", i ? " " : "",
					    px(f, x[i]), py(f, y[i]));
	if (rc == 0)
		rc = ct_buf_appends(b, "\"/>");
	for (size_t i = 0; i < n && rc == 0 && finite <= MAX_DOTS; i++) {
		char xs[48], ys[48];

		if (!isfinite(x[i]) || !isfinite(y[i]))
			continue;
		fmt_x(xs, sizeof(xs), x[i], o->x_is_time);
		snprintf(ys, sizeof(ys), "%.6g", y[i]);
		rc = ct_tmpl_printf(b, "<circle class=\"dot\" cx=\"%.1f\" "
			"cy=\"%.1f\" r=\"3\"><title>%s: %s</title></circle>",
			px(f, x[i]), py(f, y[i]), xs, ys);
	}
	return rc;
}

int ct_svg_line_chart(struct ct_buf *b, const double *x, const double *y,
		      size_t n, const struct ct_svg_opts *opts)
{
	struct ct_svg_opts o = *opts;
	struct frame f;
	size_t finite;
	int rc;

	f.w = o.width > 0 ? o.width : 600;
	f.h = o.height > 0 ? o.height : 220;
	rc = ct_tmpl_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
		"class=\"chart\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
		"role=\"img\" aria-label=\"%s\"", f.w, f.h, f.w, f.h,
		o.title ? o.title : "chart");
	if (rc == 0 && o.id != NULL)
		rc = ct_tmpl_printf(b, " id=\"%s\"", o.id);
	if (rc == 0)
		rc = ct_tmpl_printf(b, "><title>%s</title>",
				    o.title ? o.title : "chart");
	if (rc < 0)
		return rc;
	finite = find_ranges(x, y, n, &o, &f);
	if (finite == 0)
		rc = ct_tmpl_printf(b, "<text class=\"empty\" x=\"%d\" y=\"%d\" "
			"text-anchor=\"middle\">no data yet</text>",
			f.w / 2, f.h / 2);
	else
		rc = axes(b, &f, &o);
	if (rc == 0 && finite > 0)
		rc = plot(b, x, y, n, finite, &f, &o);
	if (rc == 0)
		rc = ct_buf_appends(b, "</svg>");
	return rc;
}
