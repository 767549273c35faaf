/*
 * ct_jinja_lib.c - what lib/ct_jinja's templates can call: filters,
 * tests, the methods of strings and dicts, the fields of `loop`, and the
 * globals transformers gives a chat template (raise_exception,
 * strftime_now) with Jinja's own (namespace, range, dict). Each is a row
 * of a table; a name not in one is refused by name (filters and tests
 * when the template is parsed, methods when it runs). Strings are
 * handled by code points where Python counts them; upper/lower/title
 * change ASCII letters only (doc/chat.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ct_err.h"
#include "ct_jinja_int.h"
#include "ct_unicode.h"

/* ---- arguments ---- */

struct jcall {
	const struct jval *pos;
	int npos;
	const struct jstr *kwn;
	const struct jval *kwv;
	int nkw;
};

/* Argument i, or keyword `name`, or NULL. */
static const struct jval *arg(const struct jcall *c, int i, const char *name)
{
	int k;

	if (i >= 0 && i < c->npos)
		return &c->pos[i];
	for (k = 0; name != NULL && k < c->nkw; k++)
		if (c->kwn[k].n == strlen(name) && memcmp(c->kwn[k].p, name, c->kwn[k].n) == 0)
			return &c->kwv[k];
	return NULL;
}

static int want_str(struct jrun *r, const struct jval *v, const char *what)
{
	if (v->t == JT_STR)
		return 0;
	if (v->t == JT_UNDEF && v->u.s.n > 0)
		return jr_err(r, CT_EINVAL, "%s: '%.*s' is undefined", what, (int)v->u.s.n, v->u.s.p);
	return jr_err(r, CT_EINVAL, "%s wants a string, not a %s", what, jv_typename(v));
}

static int opt_str(struct jrun *r, const struct jval *v, const char *what,
		   const struct jstr **out)
{
	*out = NULL;
	if (v == NULL || v->t == JT_NONE)
		return 0;
	*out = &v->u.s;
	return want_str(r, v, what);
}

static int opt_int(struct jrun *r, const struct jval *v, const char *what,
		   int64_t dflt, int64_t *out)
{
	*out = dflt;
	if (v == NULL || v->t == JT_NONE)
		return 0;
	if (v->t != JT_INT && v->t != JT_BOOL)
		return jr_err(r, CT_EINVAL, "%s wants an integer, not a %s", what, jv_typename(v));
	*out = v->u.i;
	return 0;
}

static struct jval mk_list(struct jlist *l, int tuple)
{
	struct jval v = { 0 };

	v.t = JT_LIST;
	v.tuple = (uint8_t)tuple;
	v.u.l = l;
	return v;
}

/* ---- strings ---- */

static int in_set(uint32_t cp, const struct jstr *chars)
{
	size_t i = 0;

	if (chars == NULL)
		return ju_space(cp);
	while (i < chars->n) {
		uint32_t c;

		i += ct_utf8_decode((const unsigned char *)chars->p + i, chars->n - i, &c);
		if (c == cp)
			return 1;
	}
	return 0;
}

/* Python's str.strip / lstrip / rstrip(chars). */
static struct jstr strip(struct jstr s, const struct jstr *chars, int left, int right)
{
	size_t i = 0, start = 0, end = 0, len;
	int seen = 0;
	uint32_t cp;

	while (i < s.n) {
		len = ct_utf8_decode((const unsigned char *)s.p + i, s.n - i, &cp);
		if (!in_set(cp, chars)) {
			if (!seen)
				start = i;
			seen = 1;
			end = i + len;
		}
		i += len;
	}
	if (!seen)
		return (struct jstr){ s.p, 0 };
	if (!left)
		start = 0;
	if (!right)
		end = s.n;
	return (struct jstr){ s.p + start, end - start };
}

static int m_strip3(struct jrun *r, const struct jval *self, const struct jcall *c,
		    struct jval *out, int left, int right)
{
	const struct jstr *chars;
	struct jstr s;
	int rc = opt_str(r, arg(c, 0, "chars"), "strip", &chars);

	if (rc < 0)
		return rc;
	if (!left && !right)
		return 0;
	s = strip(self->u.s, chars, left, right);
	*out = jv_str(s.p, s.n);
	return jr_charge(r, self->u.s.n / 32);
}

static int m_strip(struct jrun *r, const struct jval *s, const struct jcall *c, struct jval *o)
{
	return m_strip3(r, s, c, o, 1, 1);
}

static int m_lstrip(struct jrun *r, const struct jval *s, const struct jcall *c, struct jval *o)
{
	return m_strip3(r, s, c, o, 1, 0);
}

static int m_rstrip(struct jrun *r, const struct jval *s, const struct jcall *c, struct jval *o)
{
	return m_strip3(r, s, c, o, 0, 1);
}

/* The strings of a str or of a list/tuple of str (startswith's tuples). */
static int affix(struct jrun *r, const struct jval *self, const struct jcall *c,
		 struct jval *out, int end)
{
	const struct jval *a = arg(c, 0, NULL);
	const struct jval *one = a;
	size_t i, n = 1;
	int hit = 0, rc;

	if (a == NULL)
		return jr_err(r, CT_EINVAL, "%s needs an argument", end ? "endswith" : "startswith");
	if (a->t == JT_LIST)
		n = a->u.l->n;
	for (i = 0; i < n && !hit; i++) {
		one = a->t == JT_LIST ? &a->u.l->v[i] : a;
		rc = want_str(r, one, end ? "endswith" : "startswith");
		if (rc < 0)
			return rc;
		hit = one->u.s.n <= self->u.s.n &&
		      memcmp(self->u.s.p + (end ? self->u.s.n - one->u.s.n : 0),
			     one->u.s.p, one->u.s.n) == 0;
	}
	*out = jv_bool(hit);
	return 0;
}

static int m_startswith(struct jrun *r, const struct jval *s, const struct jcall *c, struct jval *o)
{
	return affix(r, s, c, o, 0);
}

static int m_endswith(struct jrun *r, const struct jval *s, const struct jcall *c, struct jval *o)
{
	return affix(r, s, c, o, 1);
}

/* Growable list of values in the render's arena. */
struct jvec {
	struct jval *v;
	size_t n, cap;
};

static int vec_push(struct jrun *r, struct jvec *a, struct jval v)
{
	if (a->n == a->cap) {
		int rc = jr_grow(r, (void **)&a->v, &a->cap, a->n, sizeof(*a->v));

		if (rc < 0)
			return rc;
	}
	a->v[a->n++] = v;
	return jr_charge(r, 1);
}

static int vec_list(struct jrun *r, const struct jvec *a, struct jval *out)
{
	struct jlist *l = jl_new(r, a->n);

	if (l == NULL)
		return CT_ETOOBIG;
	if (a->n)
		memcpy(l->v, a->v, a->n * sizeof(*l->v));
	*out = mk_list(l, 0);
	return 0;
}

/* split() without a separator: runs of white space, none at the ends. */
static int split_ws(struct jrun *r, struct jstr s, int64_t max, struct jvec *a)
{
	size_t i = 0, start = 0, len;
	int in = 0, rc = 0;
	uint32_t cp;

	while (rc >= 0 && i < s.n) {
		len = ct_utf8_decode((const unsigned char *)s.p + i, s.n - i, &cp);
		if (ju_space(cp) && in) {
			rc = vec_push(r, a, jv_str(s.p + start, i - start));
			in = 0;
		} else if (!ju_space(cp) && !in) {
			if (max >= 0 && (int64_t)a->n >= max) {
				struct jstr rest = strip((struct jstr){ s.p + i, s.n - i }, NULL, 0, 1);

				return vec_push(r, a, jv_str(rest.p, rest.n));
			}
			start = i;
			in = 1;
		}
		i += len;
	}
	if (rc >= 0 && in)
		rc = vec_push(r, a, jv_str(s.p + start, s.n - start));
	return rc;
}

static int m_split(struct jrun *r, const struct jval *self, const struct jcall *c,
		   struct jval *out)
{
	const struct jstr *sep;
	struct jvec a = { 0 };
	struct jstr s = self->u.s;
	int64_t max;
	int rc;

	rc = opt_str(r, arg(c, 0, "sep"), "split", &sep);
	if (rc >= 0)
		rc = opt_int(r, arg(c, 1, "maxsplit"), "split", -1, &max);
	if (rc >= 0 && sep != NULL && sep->n == 0)
		rc = jr_err(r, CT_EINVAL, "split: empty separator");
	if (rc >= 0 && sep == NULL)
		rc = split_ws(r, s, max, &a);
	while (rc >= 0 && sep != NULL) {
		const char *hit = max != 0 ? memmem(s.p, s.n, sep->p, sep->n) : NULL;

		if (hit == NULL) {
			rc = vec_push(r, &a, jv_str(s.p, s.n));
			break;
		}
		rc = vec_push(r, &a, jv_str(s.p, (size_t)(hit - s.p)));
		s.n -= (size_t)(hit - s.p) + sep->n;
		s.p = hit + sep->n;
		max -= max > 0;
	}
	if (rc >= 0)
		rc = jr_charge(r, self->u.s.n / 32);
	return rc < 0 ? rc : vec_list(r, &a, out);
}

static int str_replace(struct jrun *r, struct jstr s, struct jstr old, struct jstr new,
		       int64_t count, struct jval *out)
{
	struct ct_buf b = CT_BUF_INIT(r->t->lim.max_out);
	struct jstr res;
	size_t i = 0;
	int rc = 0;

	while (rc >= 0 && i <= s.n) {
		const char *hit = count == 0 ? NULL : old.n == 0 ? s.p + i :
				  memmem(s.p + i, s.n - i, old.p, old.n);
		size_t step;

		if (hit == NULL) {
			rc = ct_buf_append(&b, s.p + i, s.n - i);
			break;
		}
		rc = ct_buf_append(&b, s.p + i, (size_t)(hit - (s.p + i)));
		if (rc >= 0)
			rc = ct_buf_append(&b, new.p, new.n);
		i = (size_t)(hit - s.p) + old.n;
		count -= count > 0;
		if (old.n == 0 && i < s.n) {	/* '' matches between code points */
			step = ju_off(s.p + i, s.n - i, 1);
			if (rc >= 0)
				rc = ct_buf_append(&b, s.p + i, step);
			i += step;
		} else if (old.n == 0) {
			break;
		}
	}
	if (rc >= 0)
		rc = jr_charge(r, b.len / 32);
	if (rc >= 0)
		rc = jr_strdup(r, ct_buf_cstr(&b), b.len, &res);
	ct_buf_free(&b);
	if (rc < 0)
		return r->err ? rc : jr_err(r, rc, "replace: %s", ct_strerror(rc));
	*out = jv_str(res.p, res.n);
	return 0;
}

static int m_replace(struct jrun *r, const struct jval *self, const struct jcall *c,
		     struct jval *out)
{
	const struct jval *o = arg(c, 0, "old"), *n = arg(c, 1, "new");
	int64_t count;
	int rc;

	if (o == NULL || n == NULL)
		return jr_err(r, CT_EINVAL, "replace needs old and new");
	rc = want_str(r, o, "replace");
	if (rc >= 0)
		rc = want_str(r, n, "replace");
	if (rc >= 0)
		rc = opt_int(r, arg(c, 2, "count"), "replace", -1, &count);
	return rc < 0 ? rc : str_replace(r, self->u.s, o->u.s, n->u.s, count, out);
}

/* ASCII case: 0 lower, 1 upper, 2 title, 3 capitalize. */
static int recase(struct jrun *r, struct jstr s, int how, struct jval *out)
{
	char *p = jr_alloc(r, s.n + 1);
	size_t i;
	int word = 0;

	if (p == NULL)
		return CT_ETOOBIG;
	for (i = 0; i < s.n; i++) {
		char ch = s.p[i];
		int up = how == 1 || (how == 2 && !word) || (how == 3 && i == 0);
		int alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');

		if (up && ch >= 'a' && ch <= 'z')
			ch = (char)(ch - 32);
		else if (!up && ch >= 'A' && ch <= 'Z')
			ch = (char)(ch + 32);
		p[i] = ch;
		word = alpha || (unsigned char)ch >= 0x80 ? 1 : 0;
	}
	*out = jv_str(p, s.n);
	return jr_charge(r, s.n / 32);
}

static int m_lower(struct jrun *r, const struct jval *s, const struct jcall *c, struct jval *o)
{
	(void)c;
	return recase(r, s->u.s, 0, o);
}

static int m_upper(struct jrun *r, const struct jval *s, const struct jcall *c, struct jval *o)
{
	(void)c;
	return recase(r, s->u.s, 1, o);
}

static int m_title(struct jrun *r, const struct jval *s, const struct jcall *c, struct jval *o)
{
	(void)c;
	return recase(r, s->u.s, 2, o);
}

static int m_capitalize(struct jrun *r, const struct jval *s, const struct jcall *c, struct jval *o)
{
	(void)c;
	return recase(r, s->u.s, 3, o);
}

static int m_find(struct jrun *r, const struct jval *self, const struct jcall *c,
		  struct jval *out)
{
	const struct jval *a = arg(c, 0, NULL);
	const char *hit;
	int rc;

	if (a == NULL)
		return jr_err(r, CT_EINVAL, "find needs an argument");
	rc = want_str(r, a, "find");
	if (rc < 0)
		return rc;
	hit = memmem(self->u.s.p, self->u.s.n, a->u.s.p, a->u.s.n);
	*out = jv_int(hit ? (int64_t)ju_len(self->u.s.p, (size_t)(hit - self->u.s.p)) : -1);
	return jr_charge(r, self->u.s.n / 32);
}

static int m_count(struct jrun *r, const struct jval *self, const struct jcall *c,
		   struct jval *out)
{
	const struct jval *a = arg(c, 0, NULL);
	struct jstr s = self->u.s;
	int64_t k = 0;
	int rc;

	if (a == NULL)
		return jr_err(r, CT_EINVAL, "count needs an argument");
	rc = want_str(r, a, "count");
	if (rc < 0)
		return rc;
	if (a->u.s.n == 0) {
		*out = jv_int((int64_t)ju_len(s.p, s.n) + 1);
		return 0;
	}
	for (const char *h; (h = memmem(s.p, s.n, a->u.s.p, a->u.s.n)) != NULL; k++) {
		s.n -= (size_t)(h - s.p) + a->u.s.n;
		s.p = h + a->u.s.n;
	}
	*out = jv_int(k);
	return jr_charge(r, self->u.s.n / 32);
}

static int join_list(struct jrun *r, const struct jlist *l, struct jstr sep,
		     const struct jstr *attr, struct jval *out);
static int as_list(struct jrun *r, const struct jval *v, struct jlist **out);

static int m_join(struct jrun *r, const struct jval *self, const struct jcall *c,
		  struct jval *out)
{
	const struct jval *a = arg(c, 0, NULL);
	struct jlist *l;
	int rc;

	if (a == NULL)
		return jr_err(r, CT_EINVAL, "join needs an argument");
	rc = as_list(r, a, &l);
	return rc < 0 ? rc : join_list(r, l, self->u.s, NULL, out);
}

/* ---- dicts ---- */

static int m_items(struct jrun *r, const struct jval *self, const struct jcall *c,
		   struct jval *out)
{
	const struct jdict *d = self->u.d;
	struct jlist *l = jl_new(r, d->n);
	size_t i;

	(void)c;
	if (l == NULL)
		return CT_ETOOBIG;
	for (i = 0; i < d->n; i++) {
		struct jlist *kv = jl_new(r, 2);

		if (kv == NULL)
			return CT_ETOOBIG;
		kv->v[0] = jv_str(d->k[i].p, d->k[i].n);
		kv->v[1] = d->v[i];
		l->v[i] = mk_list(kv, 1);
	}
	*out = mk_list(l, 0);
	return jr_charge(r, d->n);
}

static int keys_or_values(struct jrun *r, const struct jdict *d, int values,
			  struct jval *out)
{
	struct jlist *l = jl_new(r, d->n);
	size_t i;

	if (l == NULL)
		return CT_ETOOBIG;
	for (i = 0; i < d->n; i++)
		l->v[i] = values ? d->v[i] : jv_str(d->k[i].p, d->k[i].n);
	*out = mk_list(l, 0);
	return jr_charge(r, d->n);
}

static int m_keys(struct jrun *r, const struct jval *s, const struct jcall *c, struct jval *o)
{
	(void)c;
	return keys_or_values(r, s->u.d, 0, o);
}

static int m_values(struct jrun *r, const struct jval *s, const struct jcall *c, struct jval *o)
{
	(void)c;
	return keys_or_values(r, s->u.d, 1, o);
}

static int m_get(struct jrun *r, const struct jval *self, const struct jcall *c,
		 struct jval *out)
{
	const struct jval *k = arg(c, 0, NULL), *d = arg(c, 1, NULL);
	const struct jval *x = NULL;

	if (k == NULL)
		return jr_err(r, CT_EINVAL, "get needs a key");
	if (k->t == JT_STR)
		x = jd_get(self->u.d, k->u.s.p, k->u.s.n);
	*out = x ? *x : d ? *d : jv_none();
	return jr_charge(r, self->u.d->n / 8);
}

/* ---- loop ---- */

static int m_cycle(struct jrun *r, const struct jval *self, const struct jcall *c,
		   struct jval *out)
{
	if (c->npos == 0)
		return jr_err(r, CT_EINVAL, "loop.cycle needs arguments");
	*out = c->pos[self->u.loop->i % (size_t)c->npos];
	return 0;
}

typedef int (*jmethod_fn)(struct jrun *r, const struct jval *self, const struct jcall *c,
			  struct jval *out);

static const struct jmethod {
	const char *name;
	uint8_t on;		/* JT_STR, JT_DICT or JT_LOOP */
	jmethod_fn fn;
} methods[] = {
	{ "startswith", JT_STR, m_startswith }, { "endswith", JT_STR, m_endswith },
	{ "split", JT_STR, m_split }, { "strip", JT_STR, m_strip },
	{ "lstrip", JT_STR, m_lstrip }, { "rstrip", JT_STR, m_rstrip },
	{ "replace", JT_STR, m_replace }, { "upper", JT_STR, m_upper },
	{ "lower", JT_STR, m_lower }, { "title", JT_STR, m_title },
	{ "capitalize", JT_STR, m_capitalize }, { "find", JT_STR, m_find },
	{ "count", JT_STR, m_count }, { "join", JT_STR, m_join },
	{ "items", JT_DICT, m_items }, { "keys", JT_DICT, m_keys },
	{ "values", JT_DICT, m_values }, { "get", JT_DICT, m_get },
	{ "cycle", JT_LOOP, m_cycle },
};

/* Python's str methods that are missing here: refused by name. */
static const char *const str_missing[] = {
	"format", "format_map", "isdigit", "isalpha", "isalnum", "isspace", "isupper",
	"islower", "istitle", "isnumeric", "isdecimal", "zfill", "center", "ljust",
	"rjust", "partition", "rpartition", "casefold", "swapcase", "expandtabs",
	"encode", "index", "rindex", "rfind", "rsplit", "splitlines", "removeprefix",
	"removesuffix", "translate", NULL,
};

static int loop_attr(const struct jloop *lp, const char *name, size_t n, struct jval *out)
{
	size_t len = lp->items->n, i = lp->i;
	static const char *const f[] = { "index", "index0", "revindex", "revindex0",
		"first", "last", "length", "previtem", "nextitem", "depth", "depth0", NULL };
	int k;

	for (k = 0; f[k] != NULL; k++)
		if (strlen(f[k]) == n && memcmp(f[k], name, n) == 0)
			break;
	switch (k) {
	case 0: *out = jv_int((int64_t)i + 1); return 1;
	case 1: *out = jv_int((int64_t)i); return 1;
	case 2: *out = jv_int((int64_t)(len - i)); return 1;
	case 3: *out = jv_int((int64_t)(len - i - 1)); return 1;
	case 4: *out = jv_bool(i == 0); return 1;
	case 5: *out = jv_bool(i + 1 == len); return 1;
	case 6: *out = jv_int((int64_t)len); return 1;
	case 7: *out = i > 0 ? lp->items->v[i - 1] : jv_undef(); return 1;
	case 8: *out = i + 1 < len ? lp->items->v[i + 1] : jv_undef(); return 1;
	case 9: *out = jv_int(1); return 1;
	case 10: *out = jv_int(0); return 1;
	}
	return 0;
}

int jl_attr(struct jrun *r, const struct jval *obj, const char *name, size_t n,
	    struct jval *out)
{
	size_t i;

	if (obj->t == JT_NS) {
		const struct jval *x = jd_get(obj->u.d, name, n);

		if (x == NULL)
			return 0;
		*out = *x;
		return 1;
	}
	if (obj->t == JT_LOOP && loop_attr(obj->u.loop, name, n, out))
		return 1;
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (methods[i].on == obj->t && strlen(methods[i].name) == n &&
		    memcmp(methods[i].name, name, n) == 0) {
			struct jval *self = jr_alloc(r, sizeof(*self));

			if (self == NULL)
				return CT_ETOOBIG;
			*self = *obj;
			*out = jv_undef();
			out->t = JT_METHOD;
			out->id = (uint16_t)i;
			out->u.self = self;
			return 1;
		}
	for (i = 0; obj->t == JT_STR && str_missing[i] != NULL; i++)
		if (strlen(str_missing[i]) == n && memcmp(str_missing[i], name, n) == 0)
			return jr_err(r, CT_EUNSUPP, "string method '%s' is not supported",
				      str_missing[i]);
	return 0;
}

/* ---- globals ---- */

static int g_raise(struct jrun *r, const struct jcall *c, struct jval *out)
{
	const struct jval *m = arg(c, 0, NULL);
	struct jstr s = { "", 0 };
	int rc = m ? jv_to_str(r, m, &s) : 0;

	(void)out;
	if (rc < 0)
		return rc;
	r->raised = 1;
	return jr_err(r, CT_EINVAL, "raise_exception: %.*s", (int)(s.n > 300 ? 300 : s.n), s.p);
}

static int g_strftime(struct jrun *r, const struct jcall *c, struct jval *out)
{
	const struct jval *f = arg(c, 0, NULL);
	char fmt[128], buf[512];
	struct tm tm;
	struct jstr s;
	time_t now;
	size_t n;
	int rc;

	if (f == NULL)
		return jr_err(r, CT_EINVAL, "strftime_now needs a format");
	rc = want_str(r, f, "strftime_now");
	if (rc < 0)
		return rc;
	if (f->u.s.n >= sizeof(fmt) || memchr(f->u.s.p, '\0', f->u.s.n))
		return jr_err(r, CT_EINVAL, "strftime_now: format over %zu bytes", sizeof(fmt) - 1);
	memcpy(fmt, f->u.s.p, f->u.s.n);
	fmt[f->u.s.n] = '\0';
	if (r->env != NULL && r->env->now != NULL) {
		rc = r->env->now(r->env->now_arg, &tm);
	} else {
		now = time(NULL);
		rc = localtime_r(&now, &tm) ? 0 : CT_EINVAL;
	}
	if (rc < 0)
		return jr_err(r, CT_EINVAL, "strftime_now: no clock");
	n = strftime(buf, sizeof(buf), fmt, &tm);
	if (n == 0 && fmt[0] != '\0')
		return jr_err(r, CT_EINVAL, "strftime_now: the date is over %zu bytes", sizeof(buf));
	rc = jr_strdup(r, buf, n, &s);
	*out = jv_str(s.p, s.n);
	return rc;
}

static int kw_dict(struct jrun *r, const struct jcall *c, int type, struct jval *out)
{
	struct jdict *d = jd_new(r, (size_t)c->nkw);
	const struct jval *init = arg(c, 0, NULL);
	size_t i;
	int k, rc = 0;

	if (d == NULL)
		return CT_ETOOBIG;
	if (init != NULL && init->t != JT_DICT)
		return jr_err(r, CT_EUNSUPP, "%s(x) with a %s", type == JT_NS ? "namespace" : "dict",
			      jv_typename(init));
	for (i = 0; init != NULL && rc >= 0 && i < init->u.d->n; i++)
		rc = jd_set(r, d, init->u.d->k[i], init->u.d->v[i]);
	for (k = 0; rc >= 0 && k < c->nkw; k++)
		rc = jd_set(r, d, c->kwn[k], c->kwv[k]);
	out->t = (uint8_t)type;
	out->u.d = d;
	return rc;
}

static int g_namespace(struct jrun *r, const struct jcall *c, struct jval *out)
{
	return kw_dict(r, c, JT_NS, out);
}

static int g_dict(struct jrun *r, const struct jcall *c, struct jval *out)
{
	return kw_dict(r, c, JT_DICT, out);
}

static int g_range(struct jrun *r, const struct jcall *c, struct jval *out)
{
	int64_t a = 0, b = 0, step = 1, n, i;
	struct jlist *l;
	int rc;

	if (c->npos < 1 || c->npos > 3)
		return jr_err(r, CT_EINVAL, "range takes 1 to 3 arguments");
	rc = opt_int(r, &c->pos[0], "range", 0, c->npos == 1 ? &b : &a);
	if (rc >= 0 && c->npos > 1)
		rc = opt_int(r, &c->pos[1], "range", 0, &b);
	if (rc >= 0 && c->npos > 2)
		rc = opt_int(r, &c->pos[2], "range", 1, &step);
	if (rc >= 0 && step == 0)
		rc = jr_err(r, CT_EINVAL, "range step must not be zero");
	if (rc < 0)
		return rc;
	n = step > 0 ? (b > a ? (b - a + step - 1) / step : 0) :
		       (a > b ? (a - b - step - 1) / -step : 0);
	rc = jr_charge(r, (uint64_t)n);
	if (rc < 0)
		return rc;
	l = jl_new(r, (size_t)n);
	if (l == NULL)
		return CT_ETOOBIG;
	for (i = 0; i < n; i++)
		l->v[i] = jv_int(a + i * step);
	*out = mk_list(l, 0);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(struct jrun *r, const struct jcall *c, struct jval *out);
} globals[] = {
	{ "raise_exception", g_raise }, { "strftime_now", g_strftime },
	{ "namespace", g_namespace }, { "range", g_range }, { "dict", g_dict },
};

int jl_globals(struct jrun *r, struct jframe *f)
{
	size_t i;
	int rc = 0;

	for (i = 0; rc >= 0 && i < sizeof(globals) / sizeof(globals[0]); i++) {
		struct jval v = jv_undef();
		struct jstr name = { globals[i].name, strlen(globals[i].name) };

		v.t = JT_FUNC;
		v.id = (uint16_t)i;
		rc = jf_set(r, f, name, v);
	}
	return rc;
}

int jl_call(struct jrun *r, const struct jval *fn, const struct jval *args,
	    int nargs, const struct jstr *kwn, const struct jval *kwv, int nkw,
	    struct jval *out)
{
	struct jcall c = { args, nargs, kwn, kwv, nkw };

	*out = jv_none();
	if (fn->t == JT_FUNC)
		return globals[fn->id].fn(r, &c, out);
	return methods[fn->id].fn(r, fn->u.self, &c, out);
}

/* ---- filters ---- */

/* A list of what v holds: a list itself, a dict's keys, a string's code
 * points. */
static int as_list(struct jrun *r, const struct jval *v, struct jlist **out)
{
	size_t i, o = 0, n;
	struct jlist *l;

	if (v->t == JT_LIST) {
		*out = v->u.l;
		return 0;
	}
	if (v->t == JT_UNDEF) {
		*out = jl_new(r, 0);
		return *out ? 0 : CT_ETOOBIG;
	}
	if (v->t == JT_DICT) {
		struct jval k;
		int rc = keys_or_values(r, v->u.d, 0, &k);

		*out = rc < 0 ? NULL : k.u.l;
		return rc;
	}
	if (v->t != JT_STR)
		return jr_err(r, CT_EINVAL, "a %s is not iterable", jv_typename(v));
	n = ju_len(v->u.s.p, v->u.s.n);
	l = jl_new(r, n);
	if (l == NULL)
		return CT_ETOOBIG;
	for (i = 0; i < n; i++) {
		size_t len = ju_off(v->u.s.p + o, v->u.s.n - o, 1);

		l->v[i] = jv_str(v->u.s.p + o, len);
		o += len;
	}
	*out = l;
	return jr_charge(r, n);
}

static int join_list(struct jrun *r, const struct jlist *l, struct jstr sep,
		     const struct jstr *attr, struct jval *out)
{
	struct ct_buf b = CT_BUF_INIT(r->t->lim.max_out);
	struct jstr s;
	size_t i;
	int rc = 0;

	for (i = 0; rc >= 0 && i < l->n; i++) {
		struct jval x = l->v[i];

		if (attr != NULL && x.t == JT_DICT) {
			const struct jval *y = jd_get(x.u.d, attr->p, attr->n);

			x = y ? *y : jv_undef();
		}
		if (i > 0)
			rc = ct_buf_append(&b, sep.p, sep.n);
		if (rc >= 0)
			rc = jv_str_append(r, &b, &x);
	}
	if (rc >= 0)
		rc = jr_charge(r, l->n + b.len / 32);
	if (rc >= 0)
		rc = jr_strdup(r, ct_buf_cstr(&b), b.len, &s);
	ct_buf_free(&b);
	if (rc < 0)
		return r->err ? rc : jr_err(r, rc, "join: %s", ct_strerror(rc));
	*out = jv_str(s.p, s.n);
	return 0;
}

typedef int (*jf_fn)(struct jrun *r, struct jval *v, const struct jcall *c);

static int f_trim(struct jrun *r, struct jval *v, const struct jcall *c)
{
	int rc = want_str(r, v, "trim");

	return rc < 0 ? rc : m_strip3(r, v, c, v, 1, 1);
}

static int f_tojson(struct jrun *r, struct jval *v, const struct jcall *c)
{
	struct ct_buf b = CT_BUF_INIT(r->t->lim.max_out);
	const struct jval *seps = arg(c, 1, "separators"), *sk = arg(c, 2, "sort_keys");
	const char *item = ", ", *key = ": ";
	char is[16] = "", ks[16] = "";
	int64_t indent;
	struct jstr s;
	int rc;

	rc = opt_int(r, arg(c, 0, "indent"), "tojson", -1, &indent);
	if (rc >= 0 && (indent > 64 || indent < -1))
		rc = jr_err(r, CT_EINVAL, "tojson: indent %lld", (long long)indent);
	if (indent >= 0)
		item = ",";
	if (rc >= 0 && seps != NULL && seps->t == JT_LIST && seps->u.l->n == 2 &&
	    seps->u.l->v[0].t == JT_STR && seps->u.l->v[1].t == JT_STR &&
	    seps->u.l->v[0].u.s.n < sizeof(is) && seps->u.l->v[1].u.s.n < sizeof(ks)) {
		memcpy(is, seps->u.l->v[0].u.s.p, seps->u.l->v[0].u.s.n);
		memcpy(ks, seps->u.l->v[1].u.s.p, seps->u.l->v[1].u.s.n);
		item = is;
		key = ks;
	} else if (rc >= 0 && seps != NULL && seps->t != JT_NONE) {
		rc = jr_err(r, CT_EINVAL, "tojson: separators must be two short strings");
	}
	if (rc >= 0)
		rc = jv_json_append(r, &b, v, (int)indent, item, key,
				    sk != NULL && jv_truthy(sk), 0);
	if (rc >= 0)
		rc = jr_charge(r, b.len / 8);
	if (rc >= 0)
		rc = jr_strdup(r, ct_buf_cstr(&b), b.len, &s);
	ct_buf_free(&b);
	if (rc >= 0)
		*v = jv_str(s.p, s.n);
	return rc;
}

static int f_length(struct jrun *r, struct jval *v, const struct jcall *c)
{
	(void)c;
	switch ((enum jt)v->t) {
	case JT_UNDEF: *v = jv_int(0); return 0;
	case JT_STR: *v = jv_int((int64_t)ju_len(v->u.s.p, v->u.s.n)); return jr_charge(r, v->u.s.n / 64);
	case JT_LIST: *v = jv_int((int64_t)v->u.l->n); return 0;
	case JT_DICT: *v = jv_int((int64_t)v->u.d->n); return 0;
	default: return jr_err(r, CT_EINVAL, "a %s has no length", jv_typename(v));
	}
}

static int f_string(struct jrun *r, struct jval *v, const struct jcall *c)
{
	struct jstr s;
	int rc = jv_to_str(r, v, &s);

	(void)c;
	if (rc >= 0)
		*v = jv_str(s.p, s.n);
	return rc;
}

static int f_recase(struct jrun *r, struct jval *v, const struct jcall *c, int how)
{
	int rc = f_string(r, v, c);

	return rc < 0 ? rc : recase(r, v->u.s, how, v);
}

static int f_lower(struct jrun *r, struct jval *v, const struct jcall *c) { return f_recase(r, v, c, 0); }
static int f_upper(struct jrun *r, struct jval *v, const struct jcall *c) { return f_recase(r, v, c, 1); }
static int f_title(struct jrun *r, struct jval *v, const struct jcall *c) { return f_recase(r, v, c, 2); }
static int f_capitalize(struct jrun *r, struct jval *v, const struct jcall *c) { return f_recase(r, v, c, 3); }

static int f_default(struct jrun *r, struct jval *v, const struct jcall *c)
{
	const struct jval *d = arg(c, 0, "default_value"), *b = arg(c, 1, "boolean");

	(void)r;
	if (v->t == JT_UNDEF || (b != NULL && jv_truthy(b) && !jv_truthy(v)))
		*v = d ? *d : jv_str("", 0);
	return 0;
}

static int f_first_last(struct jrun *r, struct jval *v, int last)
{
	struct jlist *l;
	int rc = as_list(r, v, &l);

	if (rc < 0)
		return rc;
	*v = l->n == 0 ? jv_undef() : l->v[last ? l->n - 1 : 0];
	return 0;
}

static int f_first(struct jrun *r, struct jval *v, const struct jcall *c) { (void)c; return f_first_last(r, v, 0); }
static int f_last(struct jrun *r, struct jval *v, const struct jcall *c) { (void)c; return f_first_last(r, v, 1); }

static int f_join(struct jrun *r, struct jval *v, const struct jcall *c)
{
	const struct jval *d = arg(c, 0, "d");
	const struct jstr *attr;
	struct jlist *l;
	int rc;

	rc = opt_str(r, arg(c, 1, "attribute"), "join", &attr);
	if (rc >= 0 && d != NULL)
		rc = want_str(r, d, "join");
	if (rc >= 0)
		rc = as_list(r, v, &l);
	return rc < 0 ? rc : join_list(r, l, d ? d->u.s : (struct jstr){ "", 0 }, attr, v);
}

static int f_list(struct jrun *r, struct jval *v, const struct jcall *c)
{
	struct jlist *l;
	int rc = as_list(r, v, &l);

	(void)c;
	if (rc >= 0)
		*v = mk_list(l, 0);
	return rc;
}

static int f_items(struct jrun *r, struct jval *v, const struct jcall *c)
{
	if (v->t == JT_UNDEF) {
		struct jlist *l = jl_new(r, 0);

		*v = mk_list(l, 0);
		return l ? 0 : CT_ETOOBIG;
	}
	if (v->t != JT_DICT)
		return jr_err(r, CT_EINVAL, "items wants a mapping, not a %s", jv_typename(v));
	return m_items(r, v, c, v);
}

static int f_replace(struct jrun *r, struct jval *v, const struct jcall *c)
{
	int rc = f_string(r, v, c);

	return rc < 0 ? rc : m_replace(r, v, c, v);
}

static int f_reverse(struct jrun *r, struct jval *v, const struct jcall *c)
{
	struct jlist *l, *o;
	size_t i;
	int rc, str = v->t == JT_STR;

	(void)c;
	rc = as_list(r, v, &l);
	if (rc < 0)
		return rc;
	o = jl_new(r, l->n);
	if (o == NULL)
		return CT_ETOOBIG;
	for (i = 0; i < l->n; i++)
		o->v[i] = l->v[l->n - 1 - i];
	if (!str) {
		*v = mk_list(o, 0);
		return jr_charge(r, l->n);
	}
	return join_list(r, o, (struct jstr){ "", 0 }, NULL, v);
}

static int f_int(struct jrun *r, struct jval *v, const struct jcall *c)
{
	const struct jval *d = arg(c, 0, "default");
	char buf[64], *end;

	(void)r;
	if (v->t == JT_INT || v->t == JT_BOOL) {
		*v = jv_int(v->u.i);
		return 0;
	}
	if (v->t == JT_FLOAT && v->u.f > -9.2e18 && v->u.f < 9.2e18) {
		*v = jv_int((int64_t)v->u.f);
		return 0;
	}
	if (v->t == JT_STR && v->u.s.n > 0 && v->u.s.n < sizeof(buf)) {
		memcpy(buf, v->u.s.p, v->u.s.n);
		buf[v->u.s.n] = '\0';
		long long x = strtoll(buf, &end, 10);

		if (*end == '\0') {
			*v = jv_int(x);
			return 0;
		}
	}
	*v = d ? *d : jv_int(0);
	return 0;
}

static int f_float(struct jrun *r, struct jval *v, const struct jcall *c)
{
	const struct jval *d = arg(c, 0, "default");
	char buf[64], *end;

	(void)r;
	if (v->t == JT_INT || v->t == JT_BOOL || v->t == JT_FLOAT) {
		*v = jv_float(v->t == JT_FLOAT ? v->u.f : (double)v->u.i);
		return 0;
	}
	if (v->t == JT_STR && v->u.s.n > 0 && v->u.s.n < sizeof(buf)) {
		memcpy(buf, v->u.s.p, v->u.s.n);
		buf[v->u.s.n] = '\0';
		double x = strtod(buf, &end);

		if (*end == '\0') {
			*v = jv_float(x);
			return 0;
		}
	}
	*v = d ? *d : jv_float(0);
	return 0;
}

static int f_abs(struct jrun *r, struct jval *v, const struct jcall *c)
{
	(void)c;
	if (v->t == JT_FLOAT)
		*v = jv_float(v->u.f < 0 ? -v->u.f : v->u.f);
	else if ((v->t == JT_INT || v->t == JT_BOOL) && v->u.i != INT64_MIN)
		*v = jv_int(v->u.i < 0 ? -v->u.i : v->u.i);
	else
		return jr_err(r, CT_EINVAL, "abs of a %s", jv_typename(v));
	return 0;
}

static int f_safe(struct jrun *r, struct jval *v, const struct jcall *c)
{
	(void)r; (void)v; (void)c;
	return 0;
}

/* select / reject (test, args...) and selectattr / rejectattr (attr,
 * test, args...): the items for which the test holds (or not). */
static int select_items(struct jrun *r, struct jval *v, const struct jcall *c,
			int keep, int attr)
{
	const struct jval *name = arg(c, attr, NULL), *a = attr ? arg(c, 0, NULL) : NULL;
	struct jvec out = { 0 };
	struct jlist *l;
	size_t i;
	int t = -1, rc, res;

	rc = as_list(r, v, &l);
	if (rc >= 0 && attr && (a == NULL || a->t != JT_STR))
		rc = jr_err(r, CT_EINVAL, "selectattr/rejectattr need an attribute name");
	if (rc >= 0 && name != NULL) {
		rc = want_str(r, name, "select");
		t = rc < 0 ? -1 : jl_test_find(name->u.s.p, name->u.s.n);
		if (rc >= 0 && t < 0)
			rc = jr_err(r, CT_EUNSUPP, "test '%.*s' is not supported",
				    (int)name->u.s.n, name->u.s.p);
	}
	for (i = 0; rc >= 0 && i < l->n; i++) {
		struct jval x = l->v[i];

		if (attr) {
			const struct jval *y = x.t == JT_DICT ? jd_get(x.u.d, a->u.s.p, a->u.s.n) : NULL;

			x = y ? *y : jv_undef();
		}
		res = jv_truthy(&x);
		if (t >= 0)
			rc = jl_test_run(r, t, &x, c->pos + attr + 1,
					 c->npos > attr + 1 ? c->npos - attr - 1 : 0, &res);
		if (rc >= 0 && res == keep)
			rc = vec_push(r, &out, l->v[i]);
	}
	return rc < 0 ? rc : vec_list(r, &out, v);
}

static int f_select(struct jrun *r, struct jval *v, const struct jcall *c) { return select_items(r, v, c, 1, 0); }
static int f_reject(struct jrun *r, struct jval *v, const struct jcall *c) { return select_items(r, v, c, 0, 0); }
static int f_selectattr(struct jrun *r, struct jval *v, const struct jcall *c) { return select_items(r, v, c, 1, 1); }
static int f_rejectattr(struct jrun *r, struct jval *v, const struct jcall *c) { return select_items(r, v, c, 0, 1); }

/* map(attribute='x', default=d) or map('filter') (a filter without arguments). */
static int f_map(struct jrun *r, struct jval *v, const struct jcall *c)
{
	const struct jval *attr = arg(c, -1, "attribute"), *dflt = arg(c, -1, "default");
	const struct jval *f = arg(c, 0, NULL);
	struct jlist *l, *o;
	size_t i;
	int rc, fi = -1;

	rc = as_list(r, v, &l);
	if (rc >= 0 && attr == NULL && (f == NULL || f->t != JT_STR))
		rc = jr_err(r, CT_EINVAL, "map needs attribute= or a filter name");
	if (rc >= 0 && attr == NULL) {
		fi = jl_filter_find(f->u.s.p, f->u.s.n);
		if (fi < 0)
			rc = jr_err(r, CT_EUNSUPP, "filter '%.*s' is not supported",
				    (int)f->u.s.n, f->u.s.p);
	}
	if (rc >= 0 && attr != NULL)
		rc = want_str(r, attr, "map");
	o = rc < 0 ? NULL : jl_new(r, l->n);
	if (rc >= 0 && o == NULL)
		rc = CT_ETOOBIG;
	for (i = 0; rc >= 0 && i < l->n; i++) {
		o->v[i] = l->v[i];
		if (fi >= 0) {
			rc = jl_filter_run(r, fi, &o->v[i], NULL, 0, NULL, NULL, 0);
			continue;
		}
		const struct jval *y = l->v[i].t == JT_DICT ?
			jd_get(l->v[i].u.d, attr->u.s.p, attr->u.s.n) : NULL;

		o->v[i] = y ? *y : dflt ? *dflt : jv_undef();
	}
	if (rc >= 0)
		*v = mk_list(o, 0);
	return rc;
}

static const struct {
	const char *name;
	jf_fn fn;
} filters[] = {
	{ "trim", f_trim }, { "tojson", f_tojson }, { "length", f_length },
	{ "count", f_length }, { "string", f_string }, { "lower", f_lower },
	{ "upper", f_upper }, { "title", f_title }, { "capitalize", f_capitalize },
	{ "default", f_default }, { "d", f_default }, { "first", f_first },
	{ "last", f_last }, { "join", f_join }, { "list", f_list },
	{ "items", f_items }, { "replace", f_replace }, { "reverse", f_reverse },
	{ "int", f_int }, { "float", f_float }, { "abs", f_abs }, { "safe", f_safe },
	{ "select", f_select }, { "reject", f_reject }, { "selectattr", f_selectattr },
	{ "rejectattr", f_rejectattr }, { "map", f_map },
};

int jl_filter_find(const char *name, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
		if (strlen(filters[i].name) == n && memcmp(filters[i].name, name, n) == 0)
			return (int)i;
	return -1;
}

int jl_filter_run(struct jrun *r, int i, struct jval *v, const struct jval *args,
		  int nargs, const struct jstr *kwn, const struct jval *kwv, int nkw)
{
	struct jcall c = { args, nargs, kwn, kwv, nkw };

	return filters[i].fn(r, v, &c);
}

/* ---- tests ---- */

static int t_defined(struct jrun *r, const struct jval *v, const struct jval *a, int n, int *res)
{
	(void)r; (void)a; (void)n;
	*res = v->t != JT_UNDEF;
	return 0;
}

static int t_undefined(struct jrun *r, const struct jval *v, const struct jval *a, int n, int *res)
{
	(void)r; (void)a; (void)n;
	*res = v->t == JT_UNDEF;
	return 0;
}

/* Tests on the type alone: a bit per enum jt. */
#define TB(t) (1u << (t))
static const struct {
	const char *name;
	unsigned types;
} type_tests[] = {
	{ "none", TB(JT_NONE) }, { "boolean", TB(JT_BOOL) },
	{ "integer", TB(JT_INT) }, { "float", TB(JT_FLOAT) },
	{ "number", TB(JT_INT) | TB(JT_FLOAT) | TB(JT_BOOL) }, { "string", TB(JT_STR) },
	{ "mapping", TB(JT_DICT) },
	{ "iterable", TB(JT_STR) | TB(JT_LIST) | TB(JT_DICT) | TB(JT_UNDEF) },
	{ "sequence", TB(JT_STR) | TB(JT_LIST) | TB(JT_DICT) | TB(JT_UNDEF) },
	{ "callable", TB(JT_FUNC) | TB(JT_METHOD) | TB(JT_MACRO) },
};
#define NTYPE_TESTS ((int)(sizeof(type_tests) / sizeof(type_tests[0])))

static int t_true(struct jrun *r, const struct jval *v, const struct jval *a, int n, int *res)
{
	(void)r; (void)a; (void)n;
	*res = v->t == JT_BOOL && v->u.i;
	return 0;
}

static int t_false(struct jrun *r, const struct jval *v, const struct jval *a, int n, int *res)
{
	(void)r; (void)a; (void)n;
	*res = v->t == JT_BOOL && !v->u.i;
	return 0;
}

static int need1(struct jrun *r, int n, const char *name)
{
	return n >= 1 ? 0 : jr_err(r, CT_EINVAL, "test '%s' needs an argument", name);
}

static int t_eq(struct jrun *r, const struct jval *v, const struct jval *a, int n, int *res)
{
	int rc = need1(r, n, "equalto");

	*res = rc >= 0 && jv_equal(v, &a[0]);
	return rc;
}

static int t_ne(struct jrun *r, const struct jval *v, const struct jval *a, int n, int *res)
{
	int rc = need1(r, n, "ne");

	*res = rc >= 0 && !jv_equal(v, &a[0]);
	return rc;
}

static int t_sameas(struct jrun *r, const struct jval *v, const struct jval *a, int n, int *res)
{
	int rc = need1(r, n, "sameas");

	/* `is` of Python: the singletons none/true/false, else the same object */
	*res = rc >= 0 && v->t == a[0].t &&
	       ((v->t == JT_NONE || v->t == JT_UNDEF) || (v->t == JT_BOOL && v->u.i == a[0].u.i) ||
		((v->t == JT_LIST || v->t == JT_DICT || v->t == JT_NS) && v->u.d == a[0].u.d));
	return rc;
}

static int t_order(struct jrun *r, const struct jval *v, const struct jval *a, int n,
		   int *res, int which)
{
	int rc = need1(r, n, "comparison"), c = 0;

	if (rc >= 0)
		rc = jv_compare(r, v, &a[0], &c);
	*res = which == 0 ? c < 0 : which == 1 ? c <= 0 : which == 2 ? c > 0 : c >= 0;
	return rc;
}

static int t_lt(struct jrun *r, const struct jval *v, const struct jval *a, int n, int *res) { return t_order(r, v, a, n, res, 0); }
static int t_le(struct jrun *r, const struct jval *v, const struct jval *a, int n, int *res) { return t_order(r, v, a, n, res, 1); }
static int t_gt(struct jrun *r, const struct jval *v, const struct jval *a, int n, int *res) { return t_order(r, v, a, n, res, 2); }
static int t_ge(struct jrun *r, const struct jval *v, const struct jval *a, int n, int *res) { return t_order(r, v, a, n, res, 3); }

static int t_in(struct jrun *r, const struct jval *v, const struct jval *a, int n, int *res)
{
	size_t i;
	int rc = need1(r, n, "in");

	*res = 0;
	if (rc < 0)
		return rc;
	if (a[0].t == JT_STR && v->t == JT_STR) {
		*res = v->u.s.n == 0 || memmem(a[0].u.s.p, a[0].u.s.n, v->u.s.p, v->u.s.n) != NULL;
		return 0;
	}
	if (a[0].t == JT_DICT) {
		*res = v->t == JT_STR && jd_get(a[0].u.d, v->u.s.p, v->u.s.n) != NULL;
		return 0;
	}
	if (a[0].t != JT_LIST)
		return jr_err(r, CT_EINVAL, "test 'in' wants a container, not a %s", jv_typename(&a[0]));
	for (i = 0; i < a[0].u.l->n && !*res; i++)
		*res = jv_equal(v, &a[0].u.l->v[i]);
	return jr_charge(r, a[0].u.l->n);
}

static int int_of(struct jrun *r, const struct jval *v, const char *what, int64_t *x)
{
	if (v->t != JT_INT && v->t != JT_BOOL)
		return jr_err(r, CT_EINVAL, "test '%s' wants an integer, not a %s", what, jv_typename(v));
	*x = v->u.i;
	return 0;
}

static int t_odd(struct jrun *r, const struct jval *v, const struct jval *a, int n, int *res)
{
	int64_t x = 0;
	int rc = int_of(r, v, "odd", &x);

	(void)a; (void)n;
	*res = (x & 1) != 0;
	return rc;
}

static int t_even(struct jrun *r, const struct jval *v, const struct jval *a, int n, int *res)
{
	int64_t x = 0;
	int rc = int_of(r, v, "even", &x);

	(void)a; (void)n;
	*res = (x & 1) == 0;
	return rc;
}

static int t_divisibleby(struct jrun *r, const struct jval *v, const struct jval *a, int n, int *res)
{
	int64_t x = 0, y = 0;
	int rc = need1(r, n, "divisibleby");

	if (rc >= 0)
		rc = int_of(r, v, "divisibleby", &x);
	if (rc >= 0)
		rc = int_of(r, &a[0], "divisibleby", &y);
	if (rc >= 0 && y == 0)
		rc = jr_err(r, CT_EINVAL, "divisibleby 0");
	*res = rc >= 0 && (y == -1 || x % y == 0);
	return rc;
}

static const struct {
	const char *name;
	jtest_fn fn;
} tests[] = {
	{ "defined", t_defined }, { "undefined", t_undefined }, { "true", t_true },
	{ "false", t_false }, { "equalto", t_eq }, { "eq", t_eq }, { "==", t_eq },
	{ "ne", t_ne }, { "!=", t_ne }, { "sameas", t_sameas }, { "lt", t_lt },
	{ "<", t_lt }, { "le", t_le }, { "<=", t_le }, { "gt", t_gt }, { ">", t_gt },
	{ "ge", t_ge }, { ">=", t_ge }, { "lessthan", t_lt }, { "greaterthan", t_gt },
	{ "in", t_in }, { "odd", t_odd }, { "even", t_even },
	{ "divisibleby", t_divisibleby },
};
#define NTESTS ((int)(sizeof(tests) / sizeof(tests[0])))

int jl_test_find(const char *name, size_t n)
{
	int i;

	for (i = 0; i < NTYPE_TESTS; i++)
		if (strlen(type_tests[i].name) == n && memcmp(type_tests[i].name, name, n) == 0)
			return i;
	for (i = 0; i < NTESTS; i++)
		if (strlen(tests[i].name) == n && memcmp(tests[i].name, name, n) == 0)
			return NTYPE_TESTS + i;
	return -1;
}

const char *jl_test_name(int i)
{
	return i < NTYPE_TESTS ? type_tests[i].name : tests[i - NTYPE_TESTS].name;
}

int jl_test_run(struct jrun *r, int i, const struct jval *v,
		const struct jval *args, int nargs, int *res)
{
	if (i < NTYPE_TESTS) {
		*res = (type_tests[i].types & TB(v->t)) != 0;
		return 0;
	}
	return tests[i - NTYPE_TESTS].fn(r, v, args, nargs, res);
}
