/*
 * ct_jv.c - strict recursive-descent JSON reader (see ct_jv.h). Depth is
 * bounded by the caller's limit, so the recursion is too.
 */
#include "config.h"
#include "ct_jv.h"
#include "ct_err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct jp {
	const char *s, *name;
	size_t n, i, values;
	const struct ct_jv_limits *lim;
};

static int bad(const struct jp *p, const char *what)
{
	return ct_error(CT_EFORMAT, "%s: bad JSON: %s at byte %zu", p->name, what, p->i);
}

static void ws(struct jp *p)
{
	while (p->i < p->n && strchr(" \t\r\n", p->s[p->i]) != NULL && p->s[p->i] != '\0')
		p->i++;
}

static int hex4(struct jp *p, uint32_t *v)
{
	*v = 0;
	if (p->n - p->i < 4)
		return bad(p, "short \\u escape");
	for (int k = 0; k < 4; k++) {
		char c = p->s[p->i++];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			return bad(p, "bad \\u escape");
		*v = *v * 16 + (uint32_t)d;
	}
	return 0;
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A \u escape (after the 'u'), joining a surrogate pair. */
static int escape_u(struct jp *p, uint32_t *cp)
{
	uint32_t lo;
	int rc = hex4(p, cp);

	if (rc < 0)
		return rc;
	if (*cp >= 0xdc00 && *cp < 0xe000)
		return bad(p, "lone low surrogate");
	if (*cp < 0xd800 || *cp >= 0xdc00)
		return *cp == 0 ? bad(p, "NUL in a string") : 0;
	if (p->n - p->i < 2 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u')
		return bad(p, "lone high surrogate");
	p->i += 2;
	rc = hex4(p, &lo);
	if (rc < 0)
		return rc;
	if (lo < 0xdc00 || lo >= 0xe000)
		return bad(p, "bad surrogate pair");
	*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
	return 0;
}

/* A string at p->i (the opening quote), decoded into a malloc'd copy. */
static int string(struct jp *p, char **out)
{
	size_t start = ++p->i, end = start;
	char *o;
	size_t k = 0;
	int rc;

	while (end < p->n && p->s[end] != '"')
		end += p->s[end] == '\\' ? 2 : 1;
	if (end >= p->n)
		return bad(p, "unterminated string");
	o = malloc(end - start + 1);	/* decoding never grows the text */
	if (o == NULL)
		return ct_error(CT_ENOMEM, "out of memory reading %s", p->name);
	while (p->i < end) {
		unsigned char c = (unsigned char)p->s[p->i++];
		uint32_t cp;

		if (c < 0x20) {
			rc = bad(p, c ? "control character in a string" : "NUL in a string");
			goto fail;
		}
		if (c != '\\') {
			o[k++] = (char)c;
			continue;
		}
		c = (unsigned char)p->s[p->i++];
		switch (c) {
		case '"': case '\\': case '/': o[k++] = (char)c; break;
		case 'b': o[k++] = '\b'; break;
		case 'f': o[k++] = '\f'; break;
		case 'n': o[k++] = '\n'; break;
		case 'r': o[k++] = '\r'; break;
		case 't': o[k++] = '\t'; break;
		case 'u':
			rc = escape_u(p, &cp);
			if (rc < 0)
				goto fail;
			k += put_utf8(o + k, cp);
			break;
		default:
			rc = bad(p, "bad escape");
			goto fail;
		}
	}
	p->i = end + 1;
	o[k] = '\0';
	*out = o;
	return 0;
fail:
	free(o);
	return rc;
}

static int number(struct jp *p, struct ct_jv *v)
{
	size_t st = p->i;
	const char *s = p->s;

	if (p->i < p->n && s[p->i] == '-')
		p->i++;
	if (p->i < p->n && s[p->i] == '0')
		p->i++;
	else if (p->i < p->n && s[p->i] >= '1' && s[p->i] <= '9')
		while (p->i < p->n && s[p->i] >= '0' && s[p->i] <= '9')
			p->i++;
	else
		return bad(p, "bad number");
	if (p->i < p->n && s[p->i] == '.') {
		size_t d = ++p->i;

		while (p->i < p->n && s[p->i] >= '0' && s[p->i] <= '9')
			p->i++;
		if (p->i == d)
			return bad(p, "bad fraction");
	}
	if (p->i < p->n && (s[p->i] == 'e' || s[p->i] == 'E')) {
		size_t d;

		p->i++;
		if (p->i < p->n && (s[p->i] == '+' || s[p->i] == '-'))
			p->i++;
		d = p->i;
		while (p->i < p->n && s[p->i] >= '0' && s[p->i] <= '9')
			p->i++;
		if (p->i == d)
			return bad(p, "bad exponent");
	}
	if (p->i - st > 64)
		return bad(p, "number too long");
	v->type = CT_JV_NUM;
	v->str = malloc(p->i - st + 1);
	if (v->str == NULL)
		return ct_error(CT_ENOMEM, "out of memory reading %s", p->name);
	memcpy(v->str, s + st, p->i - st);
	v->str[p->i - st] = '\0';
	v->num = strtod(v->str, NULL);	/* the syntax is checked; C locale */
	return 0;
}

static int value(struct jp *p, struct ct_jv *v, int depth);

/* Grow an array's or object's item list by one zeroed slot. */
static int grow(struct jp *p, struct ct_jv *v, size_t *cap)
{
	if (v->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 4;
		struct ct_jv *it = realloc(v->items, nc * sizeof(*it));
		char **ks = v->type == CT_JV_OBJ ? realloc(v->keys, nc * sizeof(*ks)) : NULL;

		if (it != NULL)
			v->items = it;
		if (ks != NULL)
			v->keys = ks;
		if (it == NULL || (v->type == CT_JV_OBJ && ks == NULL))
			return ct_error(CT_ENOMEM, "out of memory reading %s", p->name);
		*cap = nc;
	}
	memset(&v->items[v->n], 0, sizeof(v->items[0]));
	if (v->type == CT_JV_OBJ)
		v->keys[v->n] = NULL;
	v->n++;
	return 0;
}

static int container(struct jp *p, struct ct_jv *v, int depth)
{
	const char close = p->s[p->i] == '[' ? ']' : '}';
	size_t cap = 0;
	int rc;

	v->type = close == ']' ? CT_JV_ARR : CT_JV_OBJ;
	if (depth >= p->lim->max_depth)
		return ct_error(CT_ERANGE, "%s: JSON nested deeper than %d", p->name,
				p->lim->max_depth);
	p->i++;
	ws(p);
	if (p->i < p->n && p->s[p->i] == close) {
		p->i++;
		return 0;
	}
	for (;;) {
		rc = grow(p, v, &cap);
		if (rc < 0)
			return rc;
		if (v->type == CT_JV_OBJ) {
			ws(p);
			if (p->i >= p->n || p->s[p->i] != '"')
				return bad(p, "expected a key");
			rc = string(p, &v->keys[v->n - 1]);
			if (rc < 0)
				return rc;
			ws(p);
			if (p->i >= p->n || p->s[p->i] != ':')
				return bad(p, "expected ':'");
			p->i++;
		}
		rc = value(p, &v->items[v->n - 1], depth + 1);
		if (rc < 0)
			return rc;
		ws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->i < p->n && p->s[p->i] == close) {
			p->i++;
			return 0;
		}
		return bad(p, "expected ',' or a closing bracket");
	}
}

static int literal(struct jp *p, const char *word, enum ct_jv_type t, struct ct_jv *v)
{
	size_t k = strlen(word);

	if (p->n - p->i < k || memcmp(p->s + p->i, word, k) != 0)
		return bad(p, "unexpected character");
	p->i += k;
	v->type = t;
	return 0;
}

static int value(struct jp *p, struct ct_jv *v, int depth)
{
	char c;

	if (++p->values > p->lim->max_values)
		return ct_error(CT_ERANGE, "%s: more than %zu JSON values", p->name,
				p->lim->max_values);
	ws(p);
	if (p->i >= p->n)
		return bad(p, "unexpected end");
	c = p->s[p->i];
	if (c == '{' || c == '[')
		return container(p, v, depth);
	if (c == '"') {
		v->type = CT_JV_STR;
		return string(p, &v->str);
	}
	if (c == 't')
		return literal(p, "true", CT_JV_TRUE, v);
	if (c == 'f')
		return literal(p, "false", CT_JV_FALSE, v);
	if (c == 'n')
		return literal(p, "null", CT_JV_NULL, v);
	return number(p, v);
}

static void jv_clear(struct ct_jv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		jv_clear(&v->items[i]);
		if (v->keys != NULL)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
}

void ct_jv_free(struct ct_jv *v)
{
	if (v == NULL)
		return;
	jv_clear(v);
	free(v);
}

int ct_jv_parse(const char *s, size_t n, const struct ct_jv_limits *lim,
		const char *name, struct ct_jv **out)
{
	struct jp p = { .s = s, .n = n, .name = name, .lim = lim };
	struct ct_jv *v;
	int rc;

	*out = NULL;
	if (n > lim->max_bytes)
		return ct_error(CT_ERANGE, "%s: %zu bytes of JSON (limit %zu)", name, n,
				lim->max_bytes);
	v = calloc(1, sizeof(*v));
	if (v == NULL)
		return ct_error(CT_ENOMEM, "out of memory reading %s", name);
	rc = value(&p, v, 0);
	if (rc == 0) {
		ws(&p);
		if (p.i != n)
			rc = bad(&p, "trailing data");
	}
	if (rc < 0) {
		ct_jv_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

const struct ct_jv *ct_jv_get(const struct ct_jv *o, const char *key)
{
	const struct ct_jv *r = NULL;

	if (o == NULL || o->type != CT_JV_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->keys[i], key) == 0)
			r = &o->items[i];
	return r;
}

int ct_jv_int(const struct ct_jv *v, int64_t lo, int64_t hi, const char *what,
	      int64_t *out)
{
	if (v == NULL || v->type != CT_JV_NUM)
		return ct_error(CT_EFORMAT, "%s: %s", what, v ? "not a number" : "missing");
	if (!(v->num >= (double)lo && v->num <= (double)hi) || v->num != floor(v->num))
		return ct_error(CT_EFORMAT, "%s = %s (want an integer %lld..%lld)", what, v->str,
				(long long)lo, (long long)hi);
	*out = (int64_t)v->num;
	return 0;
}
