/*
 * tmpl.h - safe-by-default HTML emitters and a tiny template engine for the
 * web pages of ctune-server.
 *
 * Everything a user or peer controls (names, URLs, countries, job names)
 * reaches a page only through these functions, which escape it for HTML text
 * and attribute context alike (& < > " ' become entities). Markup the server
 * builds itself is appended raw with ct_buf_append*(): the rule is that raw
 * appends never take a string from the database or the request.
 *
 *   ct_tmpl_printf(b, "<td><a href=\"/user/%lld\">%s</a></td>", id, name);
 *
 * ct_tmpl_printf() takes printf's format and checks it with the compiler,
 * but every %s argument is HTML-escaped (numbers cannot need escaping).
 * ct_tmpl_render() fills a template: "{{name}}" is replaced by the escaped
 * value of variable `name`, "{{&name}}" by its raw value (only for markup
 * built by the server), unknown names by nothing.
 */
#ifndef CT_TMPL_H
#define CT_TMPL_H

#include <stddef.h>
#include "ct_buf.h"

/* Append `s` (NUL-terminated; NULL appends nothing) HTML-escaped for text
 * and for quoted attribute values. Returns 0 or CT_ETOOBIG/CT_ENOMEM (then
 * the buffer may hold part of the escaped text). */
int ct_tmpl_escape(struct ct_buf *b, const char *s);

/* Same for `n` bytes of `s` (embedded NULs are dropped). */
int ct_tmpl_escapen(struct ct_buf *b, const char *s, size_t n);

/* Append `s` percent-encoded for a URL query value or path segment: every
 * byte outside [A-Za-z0-9-._~] becomes %XX. Returns 0 or a CT_E* code. */
int ct_tmpl_urlencode(struct ct_buf *b, const char *s);

/* printf into `b` with every %s argument HTML-escaped (NULL prints as "").
 * Supports the flags, width, precision ('*' too) and length modifiers of
 * C11 printf for d i u x X o c e E f F g G p s and %%; %n is refused.
 * Returns 0, CT_EINVAL for a bad format, or CT_ETOOBIG/CT_ENOMEM. */
int ct_tmpl_printf(struct ct_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One template variable: `value` NULL is rendered as "". Neither string is
 * copied or owned. */
struct ct_tmpl_var {
	const char *name;
	const char *value;
};

/* Render `tmpl` into `b`, substituting "{{name}}" (escaped) and "{{&name}}"
 * (raw) from `vars[0..nvars)`. Whitespace inside the braces is ignored; a
 * "{{" without a closing "}}" is copied as text. Returns 0 or a CT_E* code
 * from the buffer. */
int ct_tmpl_render(struct ct_buf *b, const char *tmpl,
		   const struct ct_tmpl_var *vars, size_t nvars);

/* Format a credit value for people: two decimals below 100, whole numbers
 * with thousands separated by commas above ("1,234,567", "12.34"), two
 * significant digits below 0.01 ("6e-07"), "0.00" for zero.
 * Writes at most `size` bytes (NUL included) into `out`; returns `out`. */
char *ct_tmpl_credit(char *out, size_t size, double credit);

/* Format a UNIX time as "2026-11-22" (UTC) into `out` (>= 11 bytes);
 * 0 or negative gives "-". Returns `out`. */
char *ct_tmpl_date(char *out, size_t size, long long t);

/* Format a UNIX time as "2026-11-22 14:05" (UTC); 0 or negative gives
 * "-". Returns `out`. */
char *ct_tmpl_datetime(char *out, size_t size, long long t);

/* Format a speed in floating-point operations per second with three
 * significant digits and the unit that keeps the number between 1 and
 * 1000: "38.1 MFLOPS", "1.25 GFLOPS", "3.81 TFLOPS" (kFLOPS to EFLOPS;
 * zero and negatives give "0 FLOPS"). Returns `out`. */
char *ct_tmpl_flops(char *out, size_t size, double flops);

#endif
