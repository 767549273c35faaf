/*
 * ct_jinja_val.c - the values of lib/ct_jinja: the arena they live in,
 * conversion from JSON (lib/ct_jv), and what Python does with them -
 * truth, ==, <, str() and repr(), json.dumps as transformers' tojson
 * calls it (ensure_ascii=False). Strings are UTF-8 bytes; lengths and
 * indices count code points, as Python's do.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_jinja_int.h"
#include "ct_unicode.h"

/* ---- arena ---- */

struct jchunk {
	struct jchunk *next;
	size_t used, size;
	unsigned char data[];
};

#define JA_CHUNK (64u << 10)

void *ja_alloc(struct jarena *a, size_t n)
{
	struct jchunk *c = a->head;
	size_t sz;
	void *p;

	n = (n + 7) & ~(size_t)7;
	if (n == 0)
		n = 8;
	if (a->max != 0 && (n > a->max || a->used > a->max - n))
		return NULL;
	if (c == NULL || c->size - c->used < n) {
		sz = n > JA_CHUNK / 4 ? n : JA_CHUNK;
		c = malloc(sizeof(*c) + sz);
		if (c == NULL)
			return NULL;
		c->size = sz;
		c->used = 0;
		if (sz == n && a->head != NULL) {	/* keep the open chunk open */
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	p = c->data + c->used;
	c->used += n;
	a->used += n;
	memset(p, 0, n);
	return p;
}

void ja_free(struct jarena *a)
{
	struct jchunk *c = a->head, *next;

	for (; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
	a->used = 0;
}

/* ---- UTF-8 ---- */

size_t ju_len(const char *p, size_t n)
{
	size_t i = 0, k = 0;

	while (i < n) {
		uint32_t cp;

		i += ct_utf8_decode((const unsigned char *)p + i, n - i, &cp);
		k++;
	}
	return k;
}

size_t ju_off(const char *p, size_t n, size_t i)
{
	size_t o = 0;

	while (i > 0 && o < n) {
		uint32_t cp;

		o += ct_utf8_decode((const unsigned char *)p + o, n - o, &cp);
		i--;
	}
	return o;
}

int ju_space(uint32_t cp)
{
	if (cp >= 0x1c && cp <= 0x1f)
		return 1;
	return cp < 0x110000 && ct_unicode_class(cp) == CT_UCLS_SPACE;
}

/* ---- lists and dicts ---- */

struct jlist *jl_new(struct jrun *r, size_t n)
{
	if (n > (SIZE_MAX - sizeof(struct jlist)) / sizeof(struct jval)) {
		jr_err(r, CT_ETOOBIG, "list too long");
		return NULL;
	}
	struct jlist *l = jr_alloc(r, sizeof(*l) + n * sizeof(struct jval));

	if (l != NULL)
		l->n = n;
	return l;
}

struct jdict *jd_new(struct jrun *r, size_t cap)
{
	struct jdict *d = jr_alloc(r, sizeof(*d));

	if (d == NULL)
		return NULL;
	cap = cap < 4 ? 4 : cap;
	d->k = jr_alloc(r, cap * sizeof(*d->k));
	d->v = jr_alloc(r, cap * sizeof(*d->v));
	if (d->k == NULL || d->v == NULL)
		return NULL;
	d->cap = cap;
	return d;
}

struct jval *jd_get(const struct jdict *d, const char *k, size_t kn)
{
	size_t i;

	for (i = d->n; i-- > 0;)	/* the last of repeated JSON keys */
		if (d->k[i].n == kn && memcmp(d->k[i].p, k, kn) == 0)
			return &d->v[i];
	return NULL;
}

int jd_set(struct jrun *r, struct jdict *d, struct jstr k, struct jval v)
{
	struct jval *old = jd_get(d, k.p, k.n);
	int rc;

	if (old != NULL) {
		*old = v;
		return 0;
	}
	rc = jr_charge(r, d->n / 8);
	if (rc < 0)
		return rc;
	if (d->n == d->cap) {
		size_t cap = d->cap;

		rc = jr_grow(r, (void **)&d->k, &cap, d->n, sizeof(*d->k));
		if (rc >= 0)
			rc = jr_grow(r, (void **)&d->v, &d->cap, d->n, sizeof(*d->v));
		if (rc < 0)
			return rc;
	}
	d->k[d->n] = k;
	d->v[d->n++] = v;
	return 0;
}

int jr_strdup(struct jrun *r, const char *p, size_t n, struct jstr *out)
{
	char *q = jr_alloc(r, n + 1);

	if (q == NULL)
		return CT_ETOOBIG;
	memcpy(q, p, n);
	out->p = q;
	out->n = n;
	return 0;
}

/* One more level of a value walked (JSON in, repr, JSON out): capped
 * depth, a step charged. */
static int walk_in(struct jrun *r, int depth)
{
	if (depth > 200)
		return jr_err(r, CT_ETOOBIG, "a value nests more than 200 deep");
	return jr_charge(r, 1);
}

/* ---- from JSON ---- */

static int num_from_json(const struct ct_jv *j, struct jval *out)
{
	const char *s = j->str;

	if (strpbrk(s, ".eE") == NULL && fabs(j->num) < 9.2e18) {
		*out = jv_int(strtoll(s, NULL, 10));
		return 0;
	}
	*out = jv_float(j->num);
	return 0;
}

static int obj_from_json(struct jrun *r, const struct ct_jv *j, int depth,
			 struct jval *out)
{
	struct jdict *d = jd_new(r, j->n);
	size_t i;
	int rc;

	if (d == NULL)
		return CT_ETOOBIG;
	for (i = 0; i < j->n; i++) {
		struct jval v;
		struct jstr k = { j->keys[i], strlen(j->keys[i]) };

		rc = jv_from_json(r, &j->items[i], depth + 1, &v);
		if (rc < 0)
			return rc;
		rc = jd_set(r, d, k, v);
		if (rc < 0)
			return rc;
	}
	out->t = JT_DICT;
	out->u.d = d;
	return 0;
}

int jv_from_json(struct jrun *r, const struct ct_jv *j, int depth, struct jval *out)
{
	struct jlist *l;
	size_t i;
	int rc;

	*out = jv_none();
	rc = walk_in(r, depth);
	if (rc < 0)
		return rc;
	switch (j->type) {
	case CT_JV_NULL: return 0;
	case CT_JV_FALSE: *out = jv_bool(0); return 0;
	case CT_JV_TRUE: *out = jv_bool(1); return 0;
	case CT_JV_NUM: return num_from_json(j, out);
	case CT_JV_STR: *out = jv_str(j->str, strlen(j->str)); return 0;
	case CT_JV_OBJ: return obj_from_json(r, j, depth, out);
	case CT_JV_ARR: break;
	}
	l = jl_new(r, j->n);
	if (l == NULL)
		return CT_ETOOBIG;
	for (i = 0; i < j->n; i++) {
		rc = jv_from_json(r, &j->items[i], depth + 1, &l->v[i]);
		if (rc < 0)
			return rc;
	}
	out->t = JT_LIST;
	out->u.l = l;
	return 0;
}

/* ---- truth, equality, order ---- */

int jv_truthy(const struct jval *v)
{
	switch ((enum jt)v->t) {
	case JT_UNDEF: case JT_NONE: return 0;
	case JT_BOOL: case JT_INT: return v->u.i != 0;
	case JT_FLOAT: return v->u.f != 0.0;
	case JT_STR: return v->u.s.n != 0;
	case JT_LIST: return v->u.l->n != 0;
	case JT_DICT: return v->u.d->n != 0;
	default: return 1;
	}
}

const char *jv_typename(const struct jval *v)
{
	static const char *const names[] = {
		[JT_UNDEF] = "undefined", [JT_NONE] = "none", [JT_BOOL] = "bool",
		[JT_INT] = "int", [JT_FLOAT] = "float", [JT_STR] = "string",
		[JT_LIST] = "list", [JT_DICT] = "dict", [JT_NS] = "namespace",
		[JT_LOOP] = "loop", [JT_FUNC] = "function", [JT_METHOD] = "method",
		[JT_MACRO] = "macro",
	};
	return names[v->t];
}

static int is_num(const struct jval *v)
{
	return v->t == JT_BOOL || v->t == JT_INT || v->t == JT_FLOAT;
}

static double num_of(const struct jval *v)
{
	return v->t == JT_FLOAT ? v->u.f : (double)v->u.i;
}

int jv_equal(const struct jval *a, const struct jval *b)
{
	size_t i;

	if (is_num(a) && is_num(b)) {
		if (a->t != JT_FLOAT && b->t != JT_FLOAT)
			return a->u.i == b->u.i;
		return num_of(a) == num_of(b);
	}
	if (a->t != b->t)
		return 0;
	switch ((enum jt)a->t) {
	case JT_UNDEF: case JT_NONE: return 1;
	case JT_STR:
		return a->u.s.n == b->u.s.n && memcmp(a->u.s.p, b->u.s.p, a->u.s.n) == 0;
	case JT_LIST:
		if (a->u.l->n != b->u.l->n)
			return 0;
		for (i = 0; i < a->u.l->n; i++)
			if (!jv_equal(&a->u.l->v[i], &b->u.l->v[i]))
				return 0;
		return 1;
	case JT_DICT:
		if (a->u.d->n != b->u.d->n)
			return 0;
		for (i = 0; i < a->u.d->n; i++) {
			const struct jval *o = jd_get(b->u.d, a->u.d->k[i].p, a->u.d->k[i].n);

			if (o == NULL || !jv_equal(&a->u.d->v[i], o))
				return 0;
		}
		return 1;
	default:
		return a->u.d == b->u.d;
	}
}

static int cmp_bytes(const struct jstr *a, const struct jstr *b)
{
	size_t n = a->n < b->n ? a->n : b->n;
	int c = memcmp(a->p, b->p, n);

	if (c != 0)
		return c < 0 ? -1 : 1;
	return a->n < b->n ? -1 : a->n > b->n;
}

int jv_compare(struct jrun *r, const struct jval *a, const struct jval *b, int *cmp)
{
	size_t i;
	int rc;

	if (is_num(a) && is_num(b)) {
		double x = num_of(a), y = num_of(b);

		*cmp = x < y ? -1 : x > y;
		return 0;
	}
	if (a->t == JT_STR && b->t == JT_STR) {	/* UTF-8 order is code point order */
		*cmp = cmp_bytes(&a->u.s, &b->u.s);
		return 0;
	}
	if (a->t == JT_LIST && b->t == JT_LIST) {
		for (i = 0; i < a->u.l->n && i < b->u.l->n; i++) {
			if (jv_equal(&a->u.l->v[i], &b->u.l->v[i]))
				continue;
			return jv_compare(r, &a->u.l->v[i], &b->u.l->v[i], cmp);
		}
		*cmp = a->u.l->n < b->u.l->n ? -1 : a->u.l->n > b->u.l->n;
		return 0;
	}
	rc = jr_err(r, CT_EINVAL, "'<' not supported between %s and %s",
		    jv_typename(a), jv_typename(b));
	return rc;
}

/* ---- str() and repr() ---- */

/* Python's repr(float): the shortest digits that read back the same,
 * fixed notation for exponents -4..15, else d.ddde+XX. */
static void float_repr(double x, char *o, size_t cap)
{
	char d[40];
	int p, e, nd, k = 0;
	char digits[20];

	if (isnan(x)) { snprintf(o, cap, "nan"); return; }
	if (isinf(x)) { snprintf(o, cap, x < 0 ? "-inf" : "inf"); return; }
	for (p = 1; p <= 17; p++) {
		snprintf(d, sizeof(d), "%.*e", p - 1, x);
		if (strtod(d, NULL) == x)
			break;
	}
	/* d is [-]D[.DDD]e[+-]XX */
	char *s = d, *ep = strchr(d, 'e');
	int neg = *s == '-';

	s += neg;
	e = atoi(ep + 1);
	nd = 0;
	for (; s < ep; s++)
		if (*s != '.')
			digits[nd++] = *s;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (neg)
		o[k++] = '-';
	if (e >= -4 && e < 16) {
		int i;

		if (e < 0) {
			k += snprintf(o + k, cap - k, "0.");
			for (i = 0; i < -e - 1; i++)
				o[k++] = '0';
			memcpy(o + k, digits, nd);
			k += nd;
		} else {
			for (i = 0; i <= e; i++)
				o[k++] = i < nd ? digits[i] : '0';
			o[k++] = '.';
			if (nd > e + 1) {
				memcpy(o + k, digits + e + 1, nd - e - 1);
				k += nd - e - 1;
			} else {
				o[k++] = '0';
			}
		}
		o[k] = '\0';
		return;
	}
	o[k++] = digits[0];
	if (nd > 1) {
		o[k++] = '.';
		memcpy(o + k, digits + 1, nd - 1);
		k += nd - 1;
	}
	snprintf(o + k, cap - k, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
}

/* Python's repr(str): single quotes unless the text has ' and no ". */
static int str_repr(struct ct_buf *b, const struct jstr *s)
{
	char q = memchr(s->p, '\'', s->n) && !memchr(s->p, '"', s->n) ? '"' : '\'';
	size_t i;
	int rc;

	rc = ct_buf_append(b, &q, 1);
	for (i = 0; rc >= 0 && i < s->n; i++) {
		unsigned char c = (unsigned char)s->p[i];

		if (c == '\\' || c == (unsigned char)q)
			rc = ct_buf_appendf(b, "\\%c", c);
		else if (c == '\n')
			rc = ct_buf_appends(b, "\\n");
		else if (c == '\r')
			rc = ct_buf_appends(b, "\\r");
		else if (c == '\t')
			rc = ct_buf_appends(b, "\\t");
		else if (c < 0x20 || c == 0x7f)
			rc = ct_buf_appendf(b, "\\x%02x", c);
		else
			rc = ct_buf_append(b, &c, 1);
	}
	if (rc >= 0)
		rc = ct_buf_append(b, &q, 1);
	return rc;
}

static int repr_append(struct jrun *r, struct ct_buf *b, const struct jval *v, int depth);

static int seq_repr(struct jrun *r, struct ct_buf *b, const struct jval *v, int depth)
{
	const struct jlist *l = v->u.l;
	size_t i;
	int rc;

	rc = ct_buf_appends(b, v->tuple ? "(" : "[");
	for (i = 0; rc >= 0 && i < l->n; i++) {
		if (i > 0)
			rc = ct_buf_appends(b, ", ");
		if (rc >= 0)
			rc = repr_append(r, b, &l->v[i], depth + 1);
	}
	if (rc >= 0 && v->tuple && l->n == 1)
		rc = ct_buf_appends(b, ",");
	if (rc >= 0)
		rc = ct_buf_appends(b, v->tuple ? ")" : "]");
	return rc;
}

static int dict_repr(struct jrun *r, struct ct_buf *b, const struct jdict *d, int depth)
{
	size_t i;
	int rc;

	rc = ct_buf_appends(b, "{");
	for (i = 0; rc >= 0 && i < d->n; i++) {
		if (i > 0)
			rc = ct_buf_appends(b, ", ");
		if (rc >= 0)
			rc = str_repr(b, &d->k[i]);
		if (rc >= 0)
			rc = ct_buf_appends(b, ": ");
		if (rc >= 0)
			rc = repr_append(r, b, &d->v[i], depth + 1);
	}
	if (rc >= 0)
		rc = ct_buf_appends(b, "}");
	return rc;
}

static int scalar_str(struct ct_buf *b, const struct jval *v)
{
	char f[48];

	switch ((enum jt)v->t) {
	case JT_UNDEF: return 0;
	case JT_NONE: return ct_buf_appends(b, "None");
	case JT_BOOL: return ct_buf_appends(b, v->u.i ? "True" : "False");
	case JT_INT: return ct_buf_appendf(b, "%lld", (long long)v->u.i);
	case JT_FLOAT: float_repr(v->u.f, f, sizeof(f)); return ct_buf_appends(b, f);
	case JT_STR: return ct_buf_append(b, v->u.s.p, v->u.s.n);
	case JT_NS: return ct_buf_appends(b, "<Namespace>");
	case JT_LOOP: return ct_buf_appends(b, "<LoopContext>");
	case JT_FUNC: case JT_METHOD: case JT_MACRO: return ct_buf_appends(b, "<function>");
	default: return CT_EINVAL;
	}
}

static int repr_append(struct jrun *r, struct ct_buf *b, const struct jval *v, int depth)
{
	int rc;

	rc = walk_in(r, depth);
	if (rc < 0)
		return rc;
	if (v->t == JT_STR)
		return str_repr(b, &v->u.s);
	if (v->t == JT_LIST)
		return seq_repr(r, b, v, depth);
	if (v->t == JT_DICT)
		return dict_repr(r, b, v->u.d, depth);
	return scalar_str(b, v);
}

static int buf_err(struct jrun *r, int rc)
{
	if (rc >= 0 || r->err)
		return rc;
	if (rc == CT_ETOOBIG)
		return jr_err(r, CT_ETOOBIG, "text over the limit of %zu bytes",
			      r->t->lim.max_out);
	return jr_err(r, rc, "%s", ct_strerror(rc));
}

int jv_str_append(struct jrun *r, struct ct_buf *b, const struct jval *v)
{
	int rc;

	if (v->t == JT_LIST || v->t == JT_DICT)
		rc = repr_append(r, b, v, 0);
	else
		rc = scalar_str(b, v);
	return buf_err(r, rc);
}

int jv_to_str(struct jrun *r, const struct jval *v, struct jstr *out)
{
	struct ct_buf b = CT_BUF_INIT(r->t->lim.max_out);
	int rc;

	if (v->t == JT_STR) {
		*out = v->u.s;
		return 0;
	}
	if (v->t == JT_INT || v->t == JT_FLOAT) {	/* short: no buffer to grow */
		char tmp[48];

		if (v->t == JT_INT)
			snprintf(tmp, sizeof(tmp), "%lld", (long long)v->u.i);
		else
			float_repr(v->u.f, tmp, sizeof(tmp));
		return jr_strdup(r, tmp, strlen(tmp), out);
	}
	rc = jv_str_append(r, &b, v);
	if (rc >= 0)
		rc = jr_strdup(r, ct_buf_cstr(&b), b.len, out);
	ct_buf_free(&b);
	return rc;
}

/* ---- JSON ---- */

static int json_str(struct ct_buf *b, const struct jstr *s)
{
	size_t i, from = 0;
	int rc;

	rc = ct_buf_append(b, "\"", 1);
	for (i = 0; rc >= 0 && i < s->n; i++) {
		unsigned char c = (unsigned char)s->p[i];
		static const char esc[] = { ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n',
					    ['\r'] = 'r', ['\t'] = 't' };

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		rc = ct_buf_append(b, s->p + from, i - from);
		from = i + 1;
		if (rc < 0)
			break;
		if (c == '"' || c == '\\')
			rc = ct_buf_appendf(b, "\\%c", c);
		else if (c < sizeof(esc) && esc[c])
			rc = ct_buf_appendf(b, "\\%c", esc[c]);
		else
			rc = ct_buf_appendf(b, "\\u%04x", c);
	}
	if (rc >= 0)
		rc = ct_buf_append(b, s->p + from, s->n - from);
	if (rc >= 0)
		rc = ct_buf_append(b, "\"", 1);
	return rc;
}

static int json_nl(struct ct_buf *b, int indent, int depth)
{
	int rc = ct_buf_append(b, "\n", 1), i;

	for (i = 0; rc >= 0 && i < indent * depth; i++)
		rc = ct_buf_append(b, " ", 1);
	return rc;
}

struct jsonfmt {
	int indent;
	const char *item, *key;
	int sort;
};

static int json_val(struct jrun *r, struct ct_buf *b, const struct jval *v,
		    const struct jsonfmt *f, int depth);

static int json_list(struct jrun *r, struct ct_buf *b, const struct jlist *l,
		     const struct jsonfmt *f, int depth)
{
	size_t i;
	int rc;

	if (l->n == 0)
		return ct_buf_appends(b, "[]");
	rc = ct_buf_appends(b, "[");
	for (i = 0; rc >= 0 && i < l->n; i++) {
		if (i > 0)
			rc = ct_buf_appends(b, f->item);
		if (rc >= 0 && f->indent >= 0)
			rc = json_nl(b, f->indent, depth + 1);
		if (rc >= 0)
			rc = json_val(r, b, &l->v[i], f, depth + 1);
	}
	if (rc >= 0 && f->indent >= 0)
		rc = json_nl(b, f->indent, depth);
	return rc < 0 ? rc : ct_buf_appends(b, "]");
}

/* Key order: insertion, or sorted by bytes (= code points) for sort_keys. */
static int json_order(struct jrun *r, const struct jdict *d, int sort, size_t **out)
{
	size_t *ix = jr_alloc(r, (d->n + 1) * sizeof(*ix)), i, j;
	int rc;

	if (ix == NULL)
		return CT_ETOOBIG;
	for (i = 0; i < d->n; i++)
		ix[i] = i;
	rc = jr_charge(r, sort ? d->n * d->n / 4 : 0);
	if (rc < 0)
		return rc;
	for (i = 1; sort && i < d->n; i++)	/* insertion sort: stable, charged */
		for (j = i; j > 0 && cmp_bytes(&d->k[ix[j - 1]], &d->k[ix[j]]) > 0; j--) {
			size_t t = ix[j];

			ix[j] = ix[j - 1];
			ix[j - 1] = t;
		}
	*out = ix;
	return 0;
}

static int json_dict(struct jrun *r, struct ct_buf *b, const struct jdict *d,
		     const struct jsonfmt *f, int depth)
{
	size_t i, *ix;
	int rc;

	if (d->n == 0)
		return ct_buf_appends(b, "{}");
	rc = json_order(r, d, f->sort, &ix);
	if (rc < 0)
		return rc;
	rc = ct_buf_appends(b, "{");
	for (i = 0; rc >= 0 && i < d->n; i++) {
		if (i > 0)
			rc = ct_buf_appends(b, f->item);
		if (rc >= 0 && f->indent >= 0)
			rc = json_nl(b, f->indent, depth + 1);
		if (rc >= 0)
			rc = json_str(b, &d->k[ix[i]]);
		if (rc >= 0)
			rc = ct_buf_appends(b, f->key);
		if (rc >= 0)
			rc = json_val(r, b, &d->v[ix[i]], f, depth + 1);
	}
	if (rc >= 0 && f->indent >= 0)
		rc = json_nl(b, f->indent, depth);
	return rc < 0 ? rc : ct_buf_appends(b, "}");
}

static int json_val(struct jrun *r, struct ct_buf *b, const struct jval *v,
		    const struct jsonfmt *f, int depth)
{
	char num[48];
	int rc;

	rc = walk_in(r, depth);
	if (rc < 0)
		return rc;
	switch ((enum jt)v->t) {
	case JT_NONE: return ct_buf_appends(b, "null");
	case JT_BOOL: return ct_buf_appends(b, v->u.i ? "true" : "false");
	case JT_INT: return ct_buf_appendf(b, "%lld", (long long)v->u.i);
	case JT_FLOAT:
		if (isnan(v->u.f) || isinf(v->u.f))
			return ct_buf_appends(b, isnan(v->u.f) ? "NaN" :
					      v->u.f < 0 ? "-Infinity" : "Infinity");
		float_repr(v->u.f, num, sizeof(num));
		return ct_buf_appends(b, num);
	case JT_STR: return json_str(b, &v->u.s);
	case JT_LIST: return json_list(r, b, v->u.l, f, depth);
	case JT_DICT: case JT_NS: return json_dict(r, b, v->u.d, f, depth);
	default:
		return jr_err(r, CT_EINVAL, "tojson: a %s is not JSON serializable",
			      jv_typename(v));
	}
}

int jv_json_append(struct jrun *r, struct ct_buf *b, const struct jval *v,
		   int indent, const char *item_sep, const char *key_sep,
		   int sort_keys, int depth)
{
	struct jsonfmt f = { indent, item_sep, key_sep, sort_keys };
	int rc = json_val(r, b, v, &f, depth);

	return buf_err(r, rc);
}
