/*
 * ct_jread.c - the strict JSON reader of ct_jread.h: one recursive-descent
 * pass (depth capped) that validates the text and records each value as a
 * node (type, source span, first child, next sibling, child count).
 * Strings are checked (escapes, UTF-8, no control characters) during the
 * pass and unescaped only when asked for.
 */
#include "config.h"
#include "ct_jread.h"
#include "ct_err.h"
#include "ct_hash.h"
#include "ct_unicode.h"
#include "ct_utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct node {
	uint32_t off, len;	/* source span (strings: inside the quotes) */
	int32_t next;		/* next sibling, -1 none */
	int32_t count;		/* children (keys for objects) */
	uint8_t type;
	uint8_t escaped;	/* string holds a backslash */
};

struct ct_jread {
	const char *s;
	size_t n, i;
	struct node *v;
	int nv, cap, max;
};

static int bad(const struct ct_jread *j, const char *what)
{
	return ct_error(CT_EFORMAT, "JSON: %s at byte %zu", what, j->i);
}

static void skip_ws(struct ct_jread *j)
{
	while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\n' ||
			       j->s[j->i] == '\r' || j->s[j->i] == '\t'))
		j->i++;
}

static int new_node(struct ct_jread *j, enum ct_jread_type t, int *id)
{
	if (j->nv >= j->max)
		return ct_error(CT_ETOOBIG, "JSON: more than %d values", j->max);
	if (j->nv == j->cap) {
		int cap = j->cap ? (j->cap > j->max / 2 ? j->max : j->cap * 2) : 1024;
		struct node *v = realloc(j->v, (size_t)cap * sizeof(*v));

		if (v == NULL)
			return CT_ENOMEM;
		j->v = v;
		j->cap = cap;
	}
	*id = j->nv++;
	memset(&j->v[*id], 0, sizeof(j->v[*id]));
	j->v[*id].type = (uint8_t)t;
	j->v[*id].next = -1;
	j->v[*id].off = (uint32_t)j->i;
	return 0;
}

/* Four hex digits at s[0..4) into *v; -1 when not. */
static int hex4(const char *s, size_t avail, uint32_t *v)
{
	char hex[5];
	unsigned char b[2];

	*v = 0;
	if (avail < 4)
		return -1;
	memcpy(hex, s, 4);
	hex[4] = '\0';
	if (ct_hex_decode(hex, b, 2) < 0)
		return -1;
	*v = (uint32_t)b[0] << 8 | b[1];
	return 0;
}

/* Decode the escape at s[0] == '\\' (avail bytes left): *cp and the bytes
 * it takes; 0 when malformed (bad letter, bad hex, lone surrogate). */
static size_t unescape(const char *s, size_t avail, uint32_t *cp)
{
	static const char in[] = "\"\\/bfnrt", out[] = "\"\\/\b\f\n\r\t";
	const char *e;
	uint32_t lo;

	if (avail < 2)
		return 0;
	if (s[1] != 'u') {
		e = strchr(in, s[1]);
		if (e == NULL || s[1] == '\0')
			return 0;
		*cp = (unsigned char)out[e - in];
		return 2;
	}
	if (hex4(s + 2, avail - 2, cp) < 0)
		return 0;
	if (*cp >= 0xDC00 && *cp <= 0xDFFF)
		return 0;
	if (*cp < 0xD800 || *cp > 0xDBFF)
		return 6;
	if (avail < 12 || s[6] != '\\' || s[7] != 'u' || hex4(s + 8, avail - 8, &lo) < 0 ||
	    lo < 0xDC00 || lo > 0xDFFF)
		return 0;
	*cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
	return 12;
}

static int parse_string(struct ct_jread *j, int *id)
{
	int rc;

	j->i++;	/* the opening quote */
	rc = new_node(j, CT_JREAD_STRING, id);
	if (rc < 0)
		return rc;
	while (j->i < j->n && j->s[j->i] != '"') {
		unsigned char c = (unsigned char)j->s[j->i];
		size_t len;
		uint32_t cp;

		if (c == '\\') {
			len = unescape(j->s + j->i, j->n - j->i, &cp);
			j->v[*id].escaped = 1;
		} else if (c < 0x20) {
			len = 0;
		} else {
			len = ct_utf8_char_len(j->s + j->i, j->n - j->i);
		}
		if (len == 0)
			return bad(j, c == '\\' ? "bad escape" : "bad character in a string");
		j->i += len;
	}
	if (j->i >= j->n)
		return bad(j, "unterminated string");
	j->v[*id].len = (uint32_t)(j->i - j->v[*id].off);
	j->i++;
	return 0;
}

static size_t digits(const struct ct_jread *j, size_t i)
{
	while (i < j->n && j->s[i] >= '0' && j->s[i] <= '9')
		i++;
	return i;
}

static int parse_number(struct ct_jread *j, int *id)
{
	size_t i = j->i, k;
	int rc = new_node(j, CT_JREAD_NUMBER, id);

	if (rc < 0)
		return rc;
	if (i < j->n && j->s[i] == '-')
		i++;
	if (i < j->n && j->s[i] == '0')
		k = i + 1;
	else if ((k = digits(j, i)) == i)
		return bad(j, "bad number");
	i = k;
	if (i < j->n && j->s[i] == '.') {
		if ((k = digits(j, i + 1)) == i + 1)
			return bad(j, "bad fraction");
		i = k;
	}
	if (i < j->n && (j->s[i] == 'e' || j->s[i] == 'E')) {
		i++;
		if (i < j->n && (j->s[i] == '+' || j->s[i] == '-'))
			i++;
		if ((k = digits(j, i)) == i)
			return bad(j, "bad exponent");
		i = k;
	}
	j->v[*id].len = (uint32_t)(i - j->i);
	j->i = i;
	return 0;
}

static int parse_value(struct ct_jread *j, int depth, int *id);

/* An array or object at j->s[j->i] ('[' or '{'). */
static int parse_container(struct ct_jread *j, int depth, int *id)
{
	int obj = j->s[j->i] == '{', prev = -1, rc, child, val;
	char close = obj ? '}' : ']';

	if (depth >= CT_JREAD_MAX_DEPTH)
		return ct_error(CT_ETOOBIG, "JSON: nested deeper than %d at byte %zu",
				CT_JREAD_MAX_DEPTH, j->i);
	rc = new_node(j, obj ? CT_JREAD_OBJECT : CT_JREAD_ARRAY, id);
	if (rc < 0)
		return rc;
	j->i++;
	skip_ws(j);
	if (j->i < j->n && j->s[j->i] == close) {
		j->i++;
		return 0;
	}
	for (;;) {
		skip_ws(j);
		if (obj) {
			if (j->i >= j->n || j->s[j->i] != '"')
				return bad(j, "expected a key");
			rc = parse_string(j, &child);
			skip_ws(j);
			if (rc == 0 && (j->i >= j->n || j->s[j->i++] != ':'))
				rc = bad(j, "expected ':'");
			if (rc == 0)
				rc = parse_value(j, depth + 1, &val);
		} else {
			rc = parse_value(j, depth + 1, &child);
		}
		if (rc < 0)
			return rc;
		if (prev >= 0)
			j->v[prev].next = child;
		prev = child;
		j->v[*id].count++;
		skip_ws(j);
		if (j->i < j->n && j->s[j->i] == ',') {
			j->i++;
			continue;
		}
		if (j->i < j->n && j->s[j->i] == close) {
			j->i++;
			return 0;
		}
		return bad(j, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int parse_literal(struct ct_jread *j, const char *lit, enum ct_jread_type t,
			 int *id)
{
	size_t len = strlen(lit);
	int rc;

	if (j->n - j->i < len || memcmp(j->s + j->i, lit, len) != 0)
		return bad(j, "unexpected character");
	rc = new_node(j, t, id);
	j->i += len;
	return rc;
}

static int parse_value(struct ct_jread *j, int depth, int *id)
{
	char c;

	skip_ws(j);
	if (j->i >= j->n)
		return bad(j, "unexpected end");
	c = j->s[j->i];
	if (c == '{' || c == '[')
		return parse_container(j, depth, id);
	if (c == '"')
		return parse_string(j, id);
	if (c == '-' || (c >= '0' && c <= '9'))
		return parse_number(j, id);
	if (c == 't')
		return parse_literal(j, "true", CT_JREAD_TRUE, id);
	if (c == 'f')
		return parse_literal(j, "false", CT_JREAD_FALSE, id);
	return parse_literal(j, "null", CT_JREAD_NULL, id);
}

int ct_jread_parse(const char *text, size_t n, int max_nodes, struct ct_jread **out)
{
	struct ct_jread *j;
	int rc, root;

	*out = NULL;
	if (n > UINT32_MAX - 1)
		return ct_error(CT_ETOOBIG, "JSON: %zu bytes is over 4 GiB", n);
	j = calloc(1, sizeof(*j));
	if (j == NULL)
		return CT_ENOMEM;
	j->s = text;
	j->n = n;
	j->max = max_nodes > 0 ? max_nodes : 1;
	rc = parse_value(j, 0, &root);
	if (rc == 0) {
		skip_ws(j);
		if (j->i != j->n)
			rc = bad(j, "text after the value");
	}
	if (rc < 0) {
		ct_jread_free(j);
		return rc;
	}
	*out = j;
	return 0;
}

void ct_jread_free(struct ct_jread *j)
{
	if (j == NULL)
		return;
	free(j->v);
	free(j);
}

int ct_jread_root(const struct ct_jread *j)
{
	(void)j;
	return 0;
}

enum ct_jread_type ct_jread_type(const struct ct_jread *j, int node)
{
	return (enum ct_jread_type)j->v[node].type;
}

int ct_jread_count(const struct ct_jread *j, int node)
{
	return j->v[node].count;
}

int ct_jread_first(const struct ct_jread *j, int node)
{
	if ((j->v[node].type != CT_JREAD_ARRAY && j->v[node].type != CT_JREAD_OBJECT) ||
	    j->v[node].count == 0)
		return -1;
	return node + 1;
}

int ct_jread_next(const struct ct_jread *j, int node)
{
	return j->v[node].next;
}

int ct_jread_get(const struct ct_jread *j, int obj, const char *key)
{
	if (j->v[obj].type != CT_JREAD_OBJECT)
		return -1;
	for (int k = ct_jread_first(j, obj); k >= 0; k = ct_jread_next(j, k))
		if (ct_jread_str_eq(j, k, key))
			return k + 1;
	return -1;
}

int ct_jread_str(const struct ct_jread *j, int s, struct ct_buf *out)
{
	const struct node *nd = &j->v[s];
	const char *p = j->s + nd->off, *end = p + nd->len;
	int rc = 0;

	if (nd->type != CT_JREAD_STRING)
		return ct_error(CT_EINVAL, "JSON: value at byte %u is not a string", nd->off);
	if (!nd->escaped)
		return ct_buf_append(out, p, nd->len);
	while (p < end && rc == 0) {
		const char *bs = memchr(p, '\\', (size_t)(end - p));
		unsigned char u[4];
		uint32_t cp;
		size_t k;

		if (bs == NULL)
			return ct_buf_append(out, p, (size_t)(end - p));
		rc = ct_buf_append(out, p, (size_t)(bs - p));
		k = unescape(bs, (size_t)(end - bs), &cp);
		if (k == 0)	/* checked by the parse */
			return ct_error(CT_EFORMAT, "JSON: bad escape");
		if (rc == 0)
			rc = ct_buf_append(out, u, ct_utf8_encode(cp, u));
		p = bs + k;
	}
	return rc;
}

int ct_jread_str_eq(const struct ct_jread *j, int s, const char *lit)
{
	const struct node *nd = &j->v[s];
	struct ct_buf b;
	int eq;

	if (nd->type != CT_JREAD_STRING)
		return 0;
	if (!nd->escaped)
		return strlen(lit) == nd->len && memcmp(j->s + nd->off, lit, nd->len) == 0;
	ct_buf_init(&b, 0);
	eq = ct_jread_str(j, s, &b) == 0 && b.len == strlen(lit) &&
	     memcmp(b.data, lit, b.len) == 0;
	ct_buf_free(&b);
	return eq;
}

int ct_jread_int(const struct ct_jread *j, int node, long long lo, long long hi,
		long long *v)
{
	const struct node *nd = &j->v[node];
	const char *p = j->s + nd->off;
	size_t i = 0;
	int neg = 0;
	long long x = 0;

	*v = 0;
	if (nd->type != CT_JREAD_NUMBER)
		return ct_error(CT_EFORMAT, "JSON: value at byte %u is not a number", nd->off);
	if (p[0] == '-') {
		neg = 1;
		i = 1;
	}
	for (; i < nd->len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return ct_error(CT_EFORMAT, "JSON: number at byte %u is not an integer",
					nd->off);
		if (x > (INT64_MAX - 9) / 10)
			return ct_error(CT_EFORMAT, "JSON: number at byte %u is too large", nd->off);
		x = x * 10 + (p[i] - '0');
	}
	if (neg)
		x = -x;
	if (x < lo || x > hi)
		return ct_error(CT_EFORMAT, "JSON: %lld at byte %u is outside [%lld, %lld]",
				x, nd->off, lo, hi);
	*v = x;
	return 0;
}

size_t ct_jread_offset(const struct ct_jread *j, int node)
{
	return j->v[node].off;
}
