/*
 * tmpl.c - safe-by-default HTML emitters and the tiny template engine (see
 * tmpl.h). ct_tmpl_printf() walks the format itself so that it knows which
 * arguments are strings (escaped) and hands each number conversion to
 * snprintf with its own one-conversion format.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ct_err.h"
#include "tmpl.h"

int ct_tmpl_escapen(struct ct_buf *b, const char *s, size_t n)
{
	size_t i, start = 0;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		const char *ent;

		switch (s[i]) {
		case '&': ent = "&amp;"; break;
		case '<': ent = "&lt;"; break;
		case '>': ent = "&gt;"; break;
		case '"': ent = "&quot;"; break;
		case '\'': ent = "&#39;"; break;
		case '\0': ent = ""; break;
		default: continue;
		}
		rc = ct_buf_append(b, s + start, i - start);
		if (rc == 0)
			rc = ct_buf_appends(b, ent);
		start = i + 1;
	}
	if (rc == 0)
		rc = ct_buf_append(b, s + start, n - start);
	return rc;
}

int ct_tmpl_escape(struct ct_buf *b, const char *s)
{
	if (s == NULL)
		return 0;
	return ct_tmpl_escapen(b, s, strlen(s));
}

int ct_tmpl_urlencode(struct ct_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	int rc = 0;

	for (; s != NULL && *s != '\0' && rc == 0; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[3];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~') {
			rc = ct_buf_append(b, s, 1);
			continue;
		}
		esc[0] = '%';
		esc[1] = hex[c >> 4];
		esc[2] = hex[c & 15];
		rc = ct_buf_append(b, esc, 3);
	}
	return rc;
}

/* Length modifiers of one conversion, enough to pull the right type. */
enum len_mod { LM_NONE, LM_HH, LM_H, LM_L, LM_LL, LM_Z, LM_J, LM_T, LM_BIGL };

/* Format one numeric conversion `spec` (e.g. "%-08.3lld") with its argument
 * from `ap` into `b`. */
static int emit_number(struct ct_buf *b, const char *spec, char conv,
		       enum len_mod lm, int nstar, int star[2], va_list *ap)
{
	char tmp[512];
	int n;

#define CT_FMT_(T) do { T v_ = va_arg(*ap, T); \
	n = nstar == 2 ? snprintf(tmp, sizeof(tmp), spec, star[0], star[1], v_) : \
	    nstar == 1 ? snprintf(tmp, sizeof(tmp), spec, star[0], v_) : \
	    snprintf(tmp, sizeof(tmp), spec, v_); } while (0)
	switch (conv) {
	case 'd': case 'i': case 'c':
		if (lm == LM_L) CT_FMT_(long);
		else if (lm == LM_LL) CT_FMT_(long long);
		else if (lm == LM_Z) CT_FMT_(ssize_t);
		else if (lm == LM_J) CT_FMT_(intmax_t);
		else if (lm == LM_T) CT_FMT_(ptrdiff_t);
		else CT_FMT_(int);
		break;
	case 'u': case 'x': case 'X': case 'o':
		if (lm == LM_L) CT_FMT_(unsigned long);
		else if (lm == LM_LL) CT_FMT_(unsigned long long);
		else if (lm == LM_Z) CT_FMT_(size_t);
		else if (lm == LM_J) CT_FMT_(uintmax_t);
		else if (lm == LM_T) CT_FMT_(ptrdiff_t);
		else CT_FMT_(unsigned);
		break;
	case 'e': case 'E': case 'f': case 'F': case 'g': case 'G':
		if (lm == LM_BIGL) CT_FMT_(long double);
		else CT_FMT_(double);
		break;
	case 'p':
		CT_FMT_(void *);
		break;
	default:
		return ct_error(CT_EINVAL, "tmpl: bad conversion %%%c", conv);
	}
#undef CT_FMT_
	if (n < 0)
		return ct_error(CT_EINVAL, "tmpl: cannot format %s", spec);
	if ((size_t)n >= sizeof(tmp))
		return ct_error(CT_ETOOBIG, "tmpl: number wider than %zu", sizeof(tmp));
	return ct_buf_append(b, tmp, (size_t)n);
}

/* Parse the conversion at fmt[0] == '%' into `spec`, consume its '*'
 * arguments into star[], and return the pointer past it (NULL: bad). */
static const char *parse_spec(const char *fmt, char *spec, size_t size,
			      char *conv, enum len_mod *lm, int *nstar,
			      int star[2], va_list *ap)
{
	const char *p = fmt + 1;
	size_t n;

	*nstar = 0;
	*lm = LM_NONE;
	while (*p != '\0' && strchr("-+ #0", *p) != NULL)
		p++;
	for (int part = 0; part < 2; part++) {
		if (part == 1) {
			if (*p != '.')
				break;
			p++;
		}
		if (*p == '*') {
			star[(*nstar)++] = va_arg(*ap, int);
			p++;
		} else {
			while (*p >= '0' && *p <= '9')
				p++;
		}
	}
	if (p[0] == 'h' && p[1] == 'h') { *lm = LM_HH; p += 2; }
	else if (p[0] == 'l' && p[1] == 'l') { *lm = LM_LL; p += 2; }
	else if (*p == 'h') { *lm = LM_H; p++; }
	else if (*p == 'l') { *lm = LM_L; p++; }
	else if (*p == 'z') { *lm = LM_Z; p++; }
	else if (*p == 'j') { *lm = LM_J; p++; }
	else if (*p == 't') { *lm = LM_T; p++; }
	else if (*p == 'L') { *lm = LM_BIGL; p++; }
	if (*p == '\0' || strchr("diuxXoceEfFgGps%", *p) == NULL)
		return NULL;
	*conv = *p++;
	n = (size_t)(p - fmt);
	if (n >= size)
		return NULL;
	memcpy(spec, fmt, n);
	spec[n] = '\0';
	return p;
}

static int tmpl_vprintf(struct ct_buf *b, const char *fmt, va_list *ap)
{
	const char *p = fmt;
	int rc = 0;

	while (*p != '\0' && rc == 0) {
		const char *pct = strchr(p, '%');
		char spec[64], conv;
		enum len_mod lm;
		int nstar, star[2];

		if (pct == NULL)
			return ct_buf_appends(b, p);
		rc = ct_buf_append(b, p, (size_t)(pct - p));
		if (rc < 0)
			break;
		p = parse_spec(pct, spec, sizeof(spec), &conv, &lm, &nstar,
			       star, ap);
		if (p == NULL)
			return ct_error(CT_EINVAL, "tmpl: bad format near '%.10s'", pct);
		if (conv == '%')
			rc = ct_buf_append(b, "%", 1);
		else if (conv == 's')
			rc = ct_tmpl_escape(b, va_arg(*ap, const char *));
		else
			rc = emit_number(b, spec, conv, lm, nstar, star, ap);
	}
	return rc;
}

int ct_tmpl_printf(struct ct_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = tmpl_vprintf(b, fmt, &ap);
	va_end(ap);
	return rc;
}

static const char *find_var(const struct ct_tmpl_var *vars, size_t nvars,
			    const char *name, size_t len)
{
	for (size_t i = 0; i < nvars; i++)
		if (strlen(vars[i].name) == len &&
		    memcmp(vars[i].name, name, len) == 0)
			return vars[i].value ? vars[i].value : "";
	return "";
}

int ct_tmpl_render(struct ct_buf *b, const char *tmpl,
		   const struct ct_tmpl_var *vars, size_t nvars)
{
	const char *p = tmpl;
	int rc = 0;

	while (rc == 0) {
		const char *open = strstr(p, "{{"), *close, *name, *end;
		int raw = 0;

		if (open == NULL)
			return ct_buf_appends(b, p);
		close = strstr(open + 2, "}}");
		if (close == NULL)
			return ct_buf_appends(b, p);
		rc = ct_buf_append(b, p, (size_t)(open - p));
		if (rc < 0)
			break;
		name = open + 2;
		while (name < close && (*name == ' ' || *name == '\t'))
			name++;
		if (name < close && *name == '&') {
			raw = 1;
			name++;
			while (name < close && (*name == ' ' || *name == '\t'))
				name++;
		}
		end = close;
		while (end > name && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		{
			const char *v = find_var(vars, nvars, name,
						 (size_t)(end - name));
			rc = raw ? ct_buf_appends(b, v) : ct_tmpl_escape(b, v);
		}
		p = close + 2;
	}
	return rc;
}

char *ct_tmpl_credit(char *out, size_t size, double credit)
{
	char digits[64], *o = out;
	int n, i;

	if (size == 0)
		return out;
	if (credit < 0)
		credit = 0;
	if (credit > 0 && credit < 0.01) {
		snprintf(out, size, "%.2g", credit);	/* tiny jobs: 6e-07 */
		return out;
	}
	if (credit < 100) {
		snprintf(out, size, "%.2f", credit);
		return out;
	}
	n = snprintf(digits, sizeof(digits), "%.0f", credit);
	if (n < 0 || (size_t)n >= sizeof(digits)) {
		snprintf(out, size, "%g", credit);
		return out;
	}
	for (i = 0; i < n && (size_t)(o - out) + 2 < size; i++) {
		*o++ = digits[i];
		if ((n - i - 1) % 3 == 0 && i != n - 1)
			*o++ = ',';
	}
	*o = '\0';
	return out;
}

/* strftime of t (UTC) in `fmt`, or "-" for t <= 0. */
static char *utc_time(char *out, size_t size, long long t, const char *fmt)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (size == 0)
		return out;
	if (t <= 0 || gmtime_r(&tt, &tm) == NULL) {
		snprintf(out, size, "-");
		return out;
	}
	strftime(out, size, fmt, &tm);
	return out;
}

char *ct_tmpl_date(char *out, size_t size, long long t)
{
	return utc_time(out, size, t, "%Y-%m-%d");
}

char *ct_tmpl_datetime(char *out, size_t size, long long t)
{
	return utc_time(out, size, t, "%Y-%m-%d %H:%M");
}

char *ct_tmpl_flops(char *out, size_t size, double flops)
{
	static const char *const unit[] = { "", "k", "M", "G", "T", "P", "E" };
	size_t u = 0;

	if (size == 0)
		return out;
	if (!(flops > 0)) {
		snprintf(out, size, "0 FLOPS");
		return out;
	}
	/* 999.5 would print as "1e+03" at three digits: step up first */
	while (flops >= 999.5 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		flops /= 1000;
		u++;
	}
	snprintf(out, size, "%.3g %sFLOPS", flops, unit[u]);
	return out;
}
