/*
 * web_json.c - the streaming JSON writer of the web API (see web_json.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "web_json.h"

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if invalid
 * (overlong forms, surrogates and values past U+10FFFF are invalid). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
	else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
	else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
	else return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

int ct_json_escape(struct ct_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, start = 0;
	int rc;

	rc = ct_buf_append(b, "\"", 1);
	while (rc == 0 && i < n) {
		unsigned char c = u[i];
		char esc[8];
		size_t len = utf8_len(u + i, n - i);

		if (len > 1) {
			i += len;
			continue;
		}
		if (len == 1 && c >= 0x20 && c != '"' && c != '\\' &&
		    c != '<' && c != '>' && c != '&') {
			i++;
			continue;
		}
		rc = ct_buf_append(b, s + start, i - start);
		if (rc < 0)
			break;
		if (len == 0)
			snprintf(esc, sizeof(esc), "\\ufffd");
		else if (c == '"' || c == '\\')
			snprintf(esc, sizeof(esc), "\\%c", c);
		else if (c == '\n')
			snprintf(esc, sizeof(esc), "\\n");
		else if (c == '\t')
			snprintf(esc, sizeof(esc), "\\t");
		else if (c == '\r')
			snprintf(esc, sizeof(esc), "\\r");
		else
			snprintf(esc, sizeof(esc), "\\u%04x", c);
		rc = ct_buf_appends(b, esc);
		i++;
		start = i;
	}
	if (rc == 0)
		rc = ct_buf_append(b, s + start, n - start);
	if (rc == 0)
		rc = ct_buf_append(b, "\"", 1);
	return rc;
}

void ct_json_init(struct ct_json *j, struct ct_buf *out)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
}

/* Separator before a value (or key) at the current depth. */
static int pre_value(struct ct_json *j)
{
	if (j->err)
		return -1;
	if (j->after_key) {
		j->after_key = 0;
		return 0;
	}
	if (j->need_comma[j->depth]) {
		int rc = ct_buf_append(j->out, ",", 1);
		if (rc < 0) {
			j->err = rc;
			return -1;
		}
	}
	j->need_comma[j->depth] = 1;
	return 0;
}

static void put(struct ct_json *j, const char *s)
{
	int rc = ct_buf_appends(j->out, s);

	if (rc < 0 && !j->err)
		j->err = rc;
}

static void open_(struct ct_json *j, const char *c)
{
	if (pre_value(j) < 0)
		return;
	if (j->depth >= CT_JSON_MAX_DEPTH) {
		j->err = ct_error(CT_ESTATE, "json: nesting deeper than %d",
				  CT_JSON_MAX_DEPTH);
		return;
	}
	put(j, c);
	j->depth++;
	j->need_comma[j->depth] = 0;
}

static void close_(struct ct_json *j, const char *c)
{
	if (j->err)
		return;
	if (j->depth == 0 || j->after_key) {
		j->err = ct_error(CT_ESTATE, "json: unbalanced %s", c);
		return;
	}
	j->depth--;
	put(j, c);
}

void ct_json_obj_begin(struct ct_json *j) { open_(j, "{"); }
void ct_json_obj_end(struct ct_json *j) { close_(j, "}"); }
void ct_json_arr_begin(struct ct_json *j) { open_(j, "["); }
void ct_json_arr_end(struct ct_json *j) { close_(j, "]"); }

void ct_json_key(struct ct_json *j, const char *key)
{
	int rc;

	if (j->after_key && !j->err)
		j->err = ct_error(CT_ESTATE, "json: key after key");
	if (pre_value(j) < 0)
		return;
	rc = ct_json_escape(j->out, key, strlen(key));
	if (rc == 0)
		rc = ct_buf_append(j->out, ":", 1);
	if (rc < 0)
		j->err = rc;
	j->after_key = 1;
}

void ct_json_strn(struct ct_json *j, const char *s, size_t n)
{
	int rc;

	if (pre_value(j) < 0)
		return;
	rc = ct_json_escape(j->out, s, n);
	if (rc < 0)
		j->err = rc;
}

void ct_json_str(struct ct_json *j, const char *s)
{
	if (s == NULL)
		ct_json_null(j);
	else
		ct_json_strn(j, s, strlen(s));
}

void ct_json_int(struct ct_json *j, long long v)
{
	char tmp[32];

	if (pre_value(j) < 0)
		return;
	snprintf(tmp, sizeof(tmp), "%lld", v);
	put(j, tmp);
}

void ct_json_num(struct ct_json *j, double v)
{
	char tmp[40];

	if (pre_value(j) < 0)
		return;
	if (!isfinite(v)) {
		put(j, "null");
		return;
	}
	/* %.17g round-trips a double; shorter when exact (12.5, 3). */
	snprintf(tmp, sizeof(tmp), "%.15g", v);
	if (strtod(tmp, NULL) != v)
		snprintf(tmp, sizeof(tmp), "%.17g", v);
	put(j, tmp);
}

void ct_json_bool(struct ct_json *j, int v)
{
	if (pre_value(j) == 0)
		put(j, v ? "true" : "false");
}

void ct_json_null(struct ct_json *j)
{
	if (pre_value(j) == 0)
		put(j, "null");
}

void ct_json_kstr(struct ct_json *j, const char *key, const char *s)
{
	ct_json_key(j, key);
	ct_json_str(j, s);
}

void ct_json_kint(struct ct_json *j, const char *key, long long v)
{
	ct_json_key(j, key);
	ct_json_int(j, v);
}

void ct_json_knum(struct ct_json *j, const char *key, double v)
{
	ct_json_key(j, key);
	ct_json_num(j, v);
}

int ct_json_finish(struct ct_json *j)
{
	if (j->err)
		return j->err;
	if (j->depth != 0 || j->after_key)
		return ct_error(CT_ESTATE, "json: %d unclosed level(s)", j->depth);
	return 0;
}
