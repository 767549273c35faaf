/*
 * web_json.h - a small streaming JSON writer on a ct_buf, for the web API
 * (/api/v1/...).
 *
 * The writer tracks nesting and inserts commas itself, so callers only say
 * what comes next:
 *
 *   struct ct_json j;
 *   ct_json_init(&j, &buf);
 *   ct_json_obj_begin(&j);
 *     ct_json_key(&j, "name"); ct_json_str(&j, name);
 *     ct_json_key(&j, "credit"); ct_json_num(&j, 12.5);
 *   ct_json_obj_end(&j);
 *   rc = ct_json_finish(&j);
 *
 * Errors are sticky: after the first failure every call is a no-op and
 * ct_json_finish() returns the first error, so callers check once. Strings
 * are escaped per RFC 8259 (quotes, backslash, control characters as \uXXXX;
 * also '<', '>' and '&' as \u003c..., so JSON is safe to embed in HTML);
 * invalid UTF-8 bytes become U+FFFD. Non-finite numbers are written as null.
 */
#ifndef CT_WEB_JSON_H
#define CT_WEB_JSON_H

#include <stddef.h>
#include "ct_buf.h"

#define CT_JSON_MAX_DEPTH 32

struct ct_json {
	struct ct_buf *out;	/* not owned */
	int depth;
	int err;		/* first error, 0 if none */
	unsigned char need_comma[CT_JSON_MAX_DEPTH + 1];
	unsigned char after_key;
};

/* Start writing into `out` (appends; the buffer is not reset). */
void ct_json_init(struct ct_json *j, struct ct_buf *out);

void ct_json_obj_begin(struct ct_json *j);
void ct_json_obj_end(struct ct_json *j);
void ct_json_arr_begin(struct ct_json *j);
void ct_json_arr_end(struct ct_json *j);

/* Object key; the next value call writes its value. */
void ct_json_key(struct ct_json *j, const char *key);

/* Values. ct_json_str(NULL) writes null. */
void ct_json_str(struct ct_json *j, const char *s);
void ct_json_strn(struct ct_json *j, const char *s, size_t n);
void ct_json_int(struct ct_json *j, long long v);
void ct_json_num(struct ct_json *j, double v);
void ct_json_bool(struct ct_json *j, int v);
void ct_json_null(struct ct_json *j);

/* Shorthands: key + value. */
void ct_json_kstr(struct ct_json *j, const char *key, const char *s);
void ct_json_kint(struct ct_json *j, const char *key, long long v);
void ct_json_knum(struct ct_json *j, const char *key, double v);

/* 0 when every call succeeded and every object/array is closed; otherwise
 * the first error (CT_ETOOBIG, CT_ENOMEM, CT_ESTATE for bad nesting). */
int ct_json_finish(struct ct_json *j);

/* Append `s` (n bytes) as a quoted, escaped JSON string to `b`. */
int ct_json_escape(struct ct_buf *b, const char *s, size_t n);

#endif
