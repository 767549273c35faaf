/*
 * ct_jinja_eval.c - the evaluator of lib/ct_jinja: statements write to the
 * render's capped buffer, expressions give values (ct_jinja_int.h), with
 * Python Jinja's semantics: `and`/`or` give an operand, `~` makes text of
 * both sides, `+` wants two of a kind, an undefined value renders as ""
 * but fails in arithmetic or when its attribute is taken, a `for` has
 * its own scope (so `set` in a loop does not leak; namespaces exist for
 * that) and `if` has none. Every node charges a step; the work of a
 * filter or method is charged by its size.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_jinja_int.h"

enum { CTL_BREAK = 1, CTL_CONTINUE = 2 };

int jr_err(struct jrun *r, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->err = 1;
	return ct_error(code, "%s line %d: %s", r->t->name, r->line, msg);
}

int jr_charge(struct jrun *r, uint64_t units)
{
	r->steps += units;
	if (r->steps > r->t->lim.max_steps)
		return r->err ? CT_ETOOBIG :
			jr_err(r, CT_ETOOBIG, "more than %llu steps of work",
			       (unsigned long long)r->t->lim.max_steps);
	return 0;
}

void *jr_alloc(struct jrun *r, size_t n)
{
	void *p = ja_alloc(&r->mem, n);

	if (p == NULL && !r->err)
		jr_err(r, CT_ETOOBIG, "values over the limit of %zu bytes", r->mem.max);
	return p;
}

int jr_grow(struct jrun *r, void **arr, size_t *cap, size_t n, size_t elem)
{
	size_t nc = *cap ? 2 * *cap : 8;
	void *g;

	if (nc > SIZE_MAX / elem)
		return jr_err(r, CT_ETOOBIG, "an array too long");
	g = jr_alloc(r, nc * elem);
	if (g == NULL)
		return CT_ETOOBIG;
	if (n)
		memcpy(g, *arr, n * elem);
	*arr = g;
	*cap = nc;
	return 0;
}

/* ---- scopes ---- */

int jf_set(struct jrun *r, struct jframe *f, struct jstr name, struct jval v)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->v[i].name.n == name.n && memcmp(f->v[i].name.p, name.p, name.n) == 0) {
			f->v[i].v = v;
			return 0;
		}
	if (f->n == f->cap) {
		int rc = jr_grow(r, (void **)&f->v, &f->cap, f->n, sizeof(*f->v));

		if (rc < 0)
			return rc;
	}
	f->v[f->n].name = name;
	f->v[f->n++].v = v;
	return 0;
}

static struct jval lookup(const struct jrun *r, struct jstr name)
{
	int k;
	size_t i;

	for (k = r->nfr - 1; k >= 0; k--)
		for (i = 0; (k >= r->base || k == 0) && i < r->fr[k].n; i++)
			if (r->fr[k].v[i].name.n == name.n &&
			    memcmp(r->fr[k].v[i].name.p, name.p, name.n) == 0)
				return r->fr[k].v[i].v;
	struct jval u = jv_undef();

	u.u.s = name;
	return u;
}

/* ---- expressions ---- */

static int eval(struct jrun *r, const struct jnode *n, struct jval *out);

static struct jval undef_named(struct jstr name)
{
	struct jval u = jv_undef();

	u.u.s = name;
	return u;
}

static int undefined_err(struct jrun *r, const struct jval *v)
{
	if (v->u.s.n > 0)
		return jr_err(r, CT_EINVAL, "'%.*s' is undefined", (int)v->u.s.n, v->u.s.p);
	return jr_err(r, CT_EINVAL, "an undefined value is used");
}

static int get_attr(struct jrun *r, const struct jval *obj, struct jstr name,
		    struct jval *out)
{
	const struct jval *x;
	int rc;

	if (obj->t == JT_UNDEF)
		return undefined_err(r, obj);
	rc = jl_attr(r, obj, name.p, name.n, out);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (obj->t == JT_DICT) {
		rc = jr_charge(r, obj->u.d->n / 8);
		x = jd_get(obj->u.d, name.p, name.n);
		if (x != NULL) {
			*out = *x;
			return rc;
		}
	}
	*out = undef_named(name);
	return 0;
}

/* Python's index into n items: negative from the end; -1 when outside. */
static int64_t seq_index(int64_t i, size_t n)
{
	if (i < 0)
		i += (int64_t)n;
	return i < 0 || (uint64_t)i >= n ? -1 : i;
}

static int get_item(struct jrun *r, const struct jval *obj, const struct jval *key,
		    struct jval *out)
{
	int64_t i;

	*out = jv_undef();
	if (obj->t == JT_UNDEF)
		return undefined_err(r, obj);
	if (obj->t == JT_DICT && key->t == JT_STR) {
		const struct jval *x = jd_get(obj->u.d, key->u.s.p, key->u.s.n);

		if (x != NULL) {
			*out = *x;
			return jr_charge(r, obj->u.d->n / 8);
		}
	}
	if (key->t == JT_STR)	/* d['items'] falls back to d.items, as in Jinja */
		return get_attr(r, obj, key->u.s, out);
	if (key->t != JT_INT && key->t != JT_BOOL)
		return 0;
	if (obj->t == JT_LIST) {
		i = seq_index(key->u.i, obj->u.l->n);
		if (i >= 0)
			*out = obj->u.l->v[i];
	} else if (obj->t == JT_STR) {
		size_t len = ju_len(obj->u.s.p, obj->u.s.n), o, e;

		i = seq_index(key->u.i, len);
		if (i >= 0) {
			o = ju_off(obj->u.s.p, obj->u.s.n, (size_t)i);
			e = o + ju_off(obj->u.s.p + o, obj->u.s.n - o, 1);
			*out = jv_str(obj->u.s.p + o, e - o);
		}
		return jr_charge(r, obj->u.s.n / 16);
	}
	return 0;
}

/* Python's slice.indices(len): start, stop, step to walk. */
static int slice_bounds(struct jrun *r, const struct jval *a, const struct jval *b,
			const struct jval *c, size_t len, int64_t ix[3])
{
	int64_t n = (int64_t)len, step = 1, lo, hi;
	const struct jval *v[2] = { a, b };
	int k;

	if (c->t != JT_NONE && c->t != JT_UNDEF) {
		if (c->t != JT_INT || c->u.i == 0)
			return jr_err(r, CT_EINVAL, "slice step must be a non-zero integer");
		step = c->u.i;
	}
	lo = step < 0 ? -1 : 0;
	hi = step < 0 ? n - 1 : n;
	ix[0] = step < 0 ? hi : lo;
	ix[1] = step < 0 ? lo : hi;
	for (k = 0; k < 2; k++) {
		int64_t x;

		if (v[k]->t == JT_NONE || v[k]->t == JT_UNDEF)
			continue;
		if (v[k]->t != JT_INT && v[k]->t != JT_BOOL)
			return jr_err(r, CT_EINVAL, "slice indices must be integers");
		x = v[k]->u.i;
		if (x < 0)
			x = x + n < lo ? lo : x + n;
		else if (x > hi)
			x = hi;
		ix[k] = x;
	}
	ix[2] = step;
	return 0;
}

static int do_slice(struct jrun *r, const struct jval *obj, const struct jval *a,
		    const struct jval *b, const struct jval *c, struct jval *out)
{
	size_t len, cnt = 0, k = 0;
	int64_t ix[3] = { 0, 0, 1 }, i;
	struct jlist *l;
	int rc, str = obj->t == JT_STR;

	if (obj->t == JT_UNDEF)
		return undefined_err(r, obj);
	if (!str && obj->t != JT_LIST)
		return jr_err(r, CT_EINVAL, "a %s cannot be sliced", jv_typename(obj));
	len = str ? ju_len(obj->u.s.p, obj->u.s.n) : obj->u.l->n;
	rc = slice_bounds(r, a, b, c, len, ix);
	for (i = ix[0]; rc >= 0 && (ix[2] > 0 ? i < ix[1] : i > ix[1]); i += ix[2])
		cnt++;
	rc = rc < 0 ? rc : jr_charge(r, cnt + (str ? obj->u.s.n / 16 : 0));
	if (rc < 0)
		return rc;
	if (str && ix[2] == 1) {
		size_t o = ju_off(obj->u.s.p, obj->u.s.n, (size_t)ix[0]);
		size_t e = cnt ? ju_off(obj->u.s.p, obj->u.s.n, (size_t)ix[1]) : o;

		*out = jv_str(obj->u.s.p + o, e - o);
		return 0;
	}
	if (str) {
		struct ct_buf sb = CT_BUF_INIT(obj->u.s.n + 1);
		struct jstr s;

		for (i = ix[0]; rc >= 0 && k < cnt; i += ix[2], k++) {
			size_t o = ju_off(obj->u.s.p, obj->u.s.n, (size_t)i);

			rc = ct_buf_append(&sb, obj->u.s.p + o,
					   ju_off(obj->u.s.p + o, obj->u.s.n - o, 1));
		}
		rc = rc < 0 ? rc : jr_strdup(r, ct_buf_cstr(&sb), sb.len, &s);
		ct_buf_free(&sb);
		*out = jv_str(s.p, s.n);
		return rc < 0 ? jr_err(r, rc, "slicing a string: %s", ct_strerror(rc)) : 0;
	}
	l = jl_new(r, cnt);
	if (l == NULL)
		return CT_ETOOBIG;
	for (i = ix[0]; k < cnt; i += ix[2])
		l->v[k++] = obj->u.l->v[i];
	out->t = JT_LIST;
	out->tuple = obj->tuple;
	out->u.l = l;
	return 0;
}

/* Arguments of a call, filter or test: positional then keywords. */
struct jargs {
	struct jval pos[8], kw[8];
	struct jstr kwn[8];
	int npos, nkw;
};

static int eval_args(struct jrun *r, const struct jnode *n, struct jargs *a)
{
	int i, rc;

	if (n->nargs > 8 || n->nkw > 8)
		return jr_err(r, CT_EUNSUPP, "more than 8 arguments");
	a->npos = n->nargs;
	a->nkw = n->nkw;
	for (i = 0; i < n->nargs; i++) {
		rc = eval(r, n->args[i], &a->pos[i]);
		if (rc < 0)
			return rc;
	}
	for (i = 0; i < n->nkw; i++) {
		a->kwn[i] = n->kwname[i];
		rc = eval(r, n->kw[i], &a->kw[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int exec_body(struct jrun *r, const struct jstmt *s);

/* Run body into a string of its own (macros, set and filter blocks). */
static int render_to_str(struct jrun *r, const struct jstmt *body, struct jval *out)
{
	struct ct_buf b = CT_BUF_INIT(r->t->lim.max_out), *saved = r->out;
	struct jstr str = { "", 0 };
	int rc;

	r->out = &b;
	rc = exec_body(r, body);
	r->out = saved;
	if (rc >= 0 && b.len > 0)
		rc = jr_strdup(r, ct_buf_cstr(&b), b.len, &str);
	ct_buf_free(&b);
	*out = jv_str(str.p, str.n);
	return rc;
}

/* A macro's parameter i (1..): positional, keyword, default, undefined. */
static int macro_arg(struct jrun *r, const struct jstmt *m, const struct jargs *a,
		     int i, struct jval *v)
{
	int k;

	*v = undef_named(m->target[i]);
	if (i - 1 < a->npos) {
		*v = a->pos[i - 1];
		return 0;
	}
	for (k = 0; k < a->nkw; k++)
		if (a->kwn[k].n == m->target[i].n &&
		    memcmp(a->kwn[k].p, m->target[i].p, a->kwn[k].n) == 0) {
			*v = a->kw[k];
			return 0;
		}
	return m->dflt[i] != NULL ? eval(r, m->dflt[i], v) : 0;
}

/* A macro call: its parameters in a frame of their own over the
 * template's globals (the caller's loops hidden), its body's text the
 * value. Nesting (recursion too) is capped by max_depth. */
static int call_macro(struct jrun *r, const struct jstmt *m, const struct jargs *a,
		      struct jval *out)
{
	int i, k, rc = 0, base = r->base;
	struct jval v;

	if (a->npos > m->ntarget - 1)
		return jr_err(r, CT_EINVAL, "macro '%.*s' takes %d arguments, not %d",
			      (int)m->target[0].n, m->target[0].p, m->ntarget - 1, a->npos);
	for (k = 0; k < a->nkw; k++) {
		for (i = 1; i < m->ntarget; i++)
			if (a->kwn[k].n == m->target[i].n &&
			    memcmp(a->kwn[k].p, m->target[i].p, a->kwn[k].n) == 0)
				break;
		if (i == m->ntarget)
			return jr_err(r, CT_EINVAL, "macro '%.*s' has no parameter '%.*s'",
				      (int)m->target[0].n, m->target[0].p,
				      (int)a->kwn[k].n, a->kwn[k].p);
	}
	if (r->calls >= J_MAX_CALLS || r->nfr == J_MAX_FRAMES)
		return jr_err(r, CT_ETOOBIG, "macro calls nested more than %d deep", r->calls);
	memset(&r->fr[r->nfr], 0, sizeof(r->fr[0]));
	r->base = r->nfr++;
	r->calls++;
	for (i = 1; rc >= 0 && i < m->ntarget; i++) {
		rc = macro_arg(r, m, a, i, &v);
		if (rc >= 0)
			rc = jf_set(r, &r->fr[r->nfr - 1], m->target[i], v);
	}
	if (rc >= 0)
		rc = render_to_str(r, m->body, out);
	r->calls--;
	r->nfr--;
	r->base = base;
	return rc < 0 ? rc : 0;
}

static int eval_call(struct jrun *r, const struct jnode *n, struct jval *out)
{
	struct jargs a;
	struct jval fn;
	int rc;

	rc = eval(r, n->a, &fn);
	if (rc >= 0)
		rc = eval_args(r, n, &a);
	if (rc < 0)
		return rc;
	r->line = n->line;
	if (fn.t == JT_UNDEF)
		return undefined_err(r, &fn);
	if (fn.t == JT_MACRO)
		return call_macro(r, fn.u.mac, &a, out);
	if (fn.t != JT_FUNC && fn.t != JT_METHOD)
		return jr_err(r, CT_EINVAL, "a %s is not callable", jv_typename(&fn));
	return jl_call(r, &fn, a.pos, a.npos, a.kwn, a.kw, a.nkw, out);
}

static int eval_filter(struct jrun *r, const struct jnode *n, struct jval *out)
{
	struct jargs a;
	int rc;

	rc = eval(r, n->a, out);
	if (rc >= 0)
		rc = eval_args(r, n, &a);
	if (rc < 0)
		return rc;
	r->line = n->line;
	return jl_filter_run(r, n->fn, out, a.pos, a.npos, a.kwn, a.kw, a.nkw);
}

static int eval_test(struct jrun *r, const struct jnode *n, struct jval *out)
{
	struct jargs a;
	struct jval v;
	int rc, res = 0;

	rc = eval(r, n->a, &v);
	if (rc >= 0)
		rc = eval_args(r, n, &a);
	if (rc < 0)
		return rc;
	r->line = n->line;
	rc = jl_test_run(r, n->fn, &v, a.pos, a.npos, &res);
	*out = jv_bool(n->op ? !res : res);
	return rc;
}

static int is_num(const struct jval *v)
{
	return v->t == JT_INT || v->t == JT_BOOL || v->t == JT_FLOAT;
}

static int eval_unary(struct jrun *r, const struct jnode *n, struct jval *out)
{
	struct jval v;
	int rc = eval(r, n->a, &v);

	if (rc < 0)
		return rc;
	if (n->op == OP_NOT) {
		*out = jv_bool(!jv_truthy(&v));
		return 0;
	}
	r->line = n->line;
	if (v.t == JT_UNDEF)
		return undefined_err(r, &v);
	if (!is_num(&v))
		return jr_err(r, CT_EINVAL, "bad operand for unary %c: %s",
			      n->op == OP_NEG ? '-' : '+', jv_typename(&v));
	if (v.t == JT_FLOAT)
		*out = jv_float(n->op == OP_NEG ? -v.u.f : v.u.f);
	else if (n->op == OP_NEG && v.u.i == INT64_MIN)
		return jr_err(r, CT_ERANGE, "integer overflow");
	else
		*out = jv_int(n->op == OP_NEG ? -v.u.i : v.u.i);
	return 0;
}

static int concat_str(struct jrun *r, struct jstr a, struct jstr b, struct jval *out)
{
	char *p;

	if (a.n == 0 || b.n == 0) {
		*out = a.n == 0 ? jv_str(b.p, b.n) : jv_str(a.p, a.n);
		return 0;
	}
	p = jr_alloc(r, a.n + b.n + 1);
	if (p == NULL)
		return CT_ETOOBIG;
	memcpy(p, a.p, a.n);
	memcpy(p + a.n, b.p, b.n);
	*out = jv_str(p, a.n + b.n);
	return jr_charge(r, (a.n + b.n) / 64);
}

static int concat_list(struct jrun *r, const struct jlist *a, const struct jlist *b,
		       struct jval *out)
{
	struct jlist *l = jl_new(r, a->n + b->n);

	if (l == NULL)
		return CT_ETOOBIG;
	memcpy(l->v, a->v, a->n * sizeof(*l->v));
	memcpy(l->v + a->n, b->v, b->n * sizeof(*l->v));
	out->t = JT_LIST;
	out->u.l = l;
	return jr_charge(r, l->n);
}

/* s * k, list * k */
static int repeat(struct jrun *r, const struct jval *s, int64_t k, struct jval *out)
{
	size_t unit = s->t == JT_STR ? s->u.s.n : s->u.l->n * sizeof(struct jval), i;
	size_t cnt = k < 0 ? 0 : (size_t)k;
	unsigned char *p;

	if (cnt > 0 && unit > r->mem.max / cnt)
		return jr_err(r, CT_ETOOBIG, "repetition over the limit of %zu bytes", r->mem.max);
	if (s->t == JT_LIST) {
		struct jlist *l = jl_new(r, s->u.l->n * cnt);

		if (l == NULL)
			return CT_ETOOBIG;
		for (i = 0; i < cnt; i++)
			memcpy(l->v + i * s->u.l->n, s->u.l->v, unit);
		out->t = JT_LIST;
		out->u.l = l;
		return jr_charge(r, l->n);
	}
	p = jr_alloc(r, unit * cnt + 1);
	if (p == NULL)
		return CT_ETOOBIG;
	for (i = 0; i < cnt; i++)
		memcpy(p + i * unit, s->u.s.p, unit);
	*out = jv_str((char *)p, unit * cnt);
	return jr_charge(r, unit * cnt / 64);
}

static int int_arith(struct jrun *r, int op, int64_t a, int64_t b, struct jval *out)
{
	int64_t x = 0;
	int ovf = 0;

	switch (op) {
	case OP_ADD: ovf = __builtin_add_overflow(a, b, &x); break;
	case OP_SUB: ovf = __builtin_sub_overflow(a, b, &x); break;
	case OP_MUL: ovf = __builtin_mul_overflow(a, b, &x); break;
	case OP_FLOORDIV: case OP_MOD:
		if (b == 0)
			return jr_err(r, CT_EINVAL, "integer division or modulo by zero");
		if (a == INT64_MIN && b == -1)
			return jr_err(r, CT_ERANGE, "integer overflow");
		x = a / b;
		if ((a % b != 0) && ((a < 0) != (b < 0)))
			x--;
		if (op == OP_MOD)
			x = a - x * b;
		break;
	case OP_POW:
		if (b < 0) {
			*out = jv_float(pow((double)a, (double)b));
			return 0;
		}
		x = 1;
		for (int64_t i = 0; i < b && !ovf; i++) {
			ovf = __builtin_mul_overflow(x, a, &x);
			if (x == 0 || x == 1)
				break;
		}
		break;
	}
	if (ovf)
		return jr_err(r, CT_ERANGE, "integer overflow");
	*out = jv_int(x);
	return 0;
}

static int num_arith(struct jrun *r, int op, const struct jval *a, const struct jval *b,
		     struct jval *out)
{
	double x = a->t == JT_FLOAT ? a->u.f : (double)a->u.i;
	double y = b->t == JT_FLOAT ? b->u.f : (double)b->u.i;

	if (op == OP_DIV || ((op == OP_FLOORDIV || op == OP_MOD) && a->t != JT_FLOAT &&
			     b->t != JT_FLOAT)) {
		if (y == 0)
			return jr_err(r, CT_EINVAL, "division by zero");
		if (op == OP_DIV) {
			*out = jv_float(x / y);
			return 0;
		}
	}
	if (a->t != JT_FLOAT && b->t != JT_FLOAT)
		return int_arith(r, op, a->u.i, b->u.i, out);
	if ((op == OP_FLOORDIV || op == OP_MOD) && y == 0)
		return jr_err(r, CT_EINVAL, "float division by zero");
	switch (op) {
	case OP_ADD: *out = jv_float(x + y); break;
	case OP_SUB: *out = jv_float(x - y); break;
	case OP_MUL: *out = jv_float(x * y); break;
	case OP_FLOORDIV: *out = jv_float(floor(x / y)); break;
	case OP_MOD: {
		double m = fmod(x, y);

		if (m != 0 && ((m < 0) != (y < 0)))
			m += y;
		*out = jv_float(m);
		break;
	}
	case OP_POW: *out = jv_float(pow(x, y)); break;
	}
	return 0;
}

static int contains(struct jrun *r, const struct jval *needle, const struct jval *hay,
		    int *res)
{
	size_t i;

	*res = 0;
	switch ((enum jt)hay->t) {
	case JT_UNDEF:
		return 0;
	case JT_STR:
		if (needle->t != JT_STR)
			return jr_err(r, CT_EINVAL, "'in <string>' needs a string, not a %s",
				      jv_typename(needle));
		*res = needle->u.s.n == 0 ||
		       memmem(hay->u.s.p, hay->u.s.n, needle->u.s.p, needle->u.s.n) != NULL;
		return jr_charge(r, hay->u.s.n / 64);
	case JT_LIST:
		for (i = 0; i < hay->u.l->n && !*res; i++)
			*res = jv_equal(needle, &hay->u.l->v[i]);
		return jr_charge(r, hay->u.l->n);
	case JT_DICT: case JT_NS:
		*res = needle->t == JT_STR &&
		       jd_get(hay->u.d, needle->u.s.p, needle->u.s.n) != NULL;
		return jr_charge(r, hay->u.d->n / 8);
	default:
		return jr_err(r, CT_EINVAL, "'in' a %s", jv_typename(hay));
	}
}

static int binop(struct jrun *r, int op, const struct jval *a, const struct jval *b,
		 struct jval *out)
{
	struct jstr sa, sb;
	int rc, c;

	switch (op) {
	case OP_CONCAT:
		rc = jv_to_str(r, a, &sa);
		if (rc >= 0)
			rc = jv_to_str(r, b, &sb);
		return rc < 0 ? rc : concat_str(r, sa, sb, out);
	case OP_EQ: case OP_NE:
		*out = jv_bool(jv_equal(a, b) == (op == OP_EQ));
		return 0;
	case OP_IN: case OP_NOTIN:
		rc = contains(r, a, b, &c);
		*out = jv_bool(c == (op == OP_IN));
		return rc;
	case OP_LT: case OP_LE: case OP_GT: case OP_GE:
		rc = jv_compare(r, a, b, &c);
		*out = jv_bool(op == OP_LT ? c < 0 : op == OP_LE ? c <= 0 :
			       op == OP_GT ? c > 0 : c >= 0);
		return rc;
	}
	if (a->t == JT_UNDEF || b->t == JT_UNDEF)
		return undefined_err(r, a->t == JT_UNDEF ? a : b);
	if (is_num(a) && is_num(b))
		return num_arith(r, op, a, b, out);
	if (op == OP_ADD && a->t == JT_STR && b->t == JT_STR)
		return concat_str(r, a->u.s, b->u.s, out);
	if (op == OP_ADD && a->t == JT_LIST && b->t == JT_LIST)
		return concat_list(r, a->u.l, b->u.l, out);
	if (op == OP_MUL && (a->t == JT_STR || a->t == JT_LIST) && (b->t == JT_INT || b->t == JT_BOOL))
		return repeat(r, a, b->u.i, out);
	if (op == OP_MUL && (b->t == JT_STR || b->t == JT_LIST) && (a->t == JT_INT || a->t == JT_BOOL))
		return repeat(r, b, a->u.i, out);
	if (op == OP_MOD && a->t == JT_STR)
		return jr_err(r, CT_EUNSUPP, "string formatting with %% is not supported");
	return jr_err(r, CT_EINVAL, "unsupported operand types: %s and %s",
		      jv_typename(a), jv_typename(b));
}

static int eval_bin(struct jrun *r, const struct jnode *n, struct jval *out)
{
	struct jval a, b;
	int rc;

	rc = eval(r, n->a, &a);
	if (rc >= 0)
		rc = eval(r, n->b, &b);
	if (rc < 0)
		return rc;
	r->line = n->line;
	return binop(r, n->op, &a, &b, out);
}

static int eval_seq(struct jrun *r, const struct jnode *n, struct jval *out)
{
	struct jlist *l = jl_new(r, (size_t)n->nargs);
	int i, rc;

	if (l == NULL)
		return CT_ETOOBIG;
	for (i = 0; i < n->nargs; i++) {
		rc = eval(r, n->args[i], &l->v[i]);
		if (rc < 0)
			return rc;
	}
	out->t = JT_LIST;
	out->tuple = n->tuple;
	out->u.l = l;
	return 0;
}

static int eval_dict(struct jrun *r, const struct jnode *n, struct jval *out)
{
	struct jdict *d = jd_new(r, (size_t)n->nargs);
	struct jval k, v;
	int i, rc;

	if (d == NULL)
		return CT_ETOOBIG;
	for (i = 0; i < n->nargs; i++) {
		rc = eval(r, n->args[i], &k);
		if (rc >= 0)
			rc = eval(r, n->args[n->nargs + i], &v);
		if (rc < 0)
			return rc;
		if (k.t != JT_STR)
			return jr_err(r, CT_EUNSUPP, "dict keys other than strings are not supported");
		rc = jd_set(r, d, k.u.s, v);
		if (rc < 0)
			return rc;
	}
	out->t = JT_DICT;
	out->u.d = d;
	return 0;
}

static int eval_index(struct jrun *r, const struct jnode *n, struct jval *out)
{
	struct jval obj, a, b = jv_none(), c = jv_none();
	int rc;

	rc = eval(r, n->a, &obj);
	if (rc < 0)
		return rc;
	if (n->kind == E_ATTR) {
		r->line = n->line;
		return get_attr(r, &obj, n->name, out);
	}
	a = jv_none();
	if (n->b != NULL)
		rc = eval(r, n->b, &a);
	if (rc >= 0 && n->kind == E_SLICE && n->c != NULL)
		rc = eval(r, n->c, &b);
	if (rc >= 0 && n->kind == E_SLICE && n->nargs > 0)
		rc = eval(r, n->args[0], &c);
	if (rc < 0)
		return rc;
	r->line = n->line;
	if (n->kind == E_SLICE)
		return do_slice(r, &obj, &a, &b, &c, out);
	return get_item(r, &obj, &a, out);
}

static int eval(struct jrun *r, const struct jnode *n, struct jval *out)
{
	struct jval a;
	int rc = jr_charge(r, 1);

	if (rc < 0)
		return rc;
	switch ((enum je)n->kind) {
	case E_CONST: *out = n->cv; return 0;
	case E_NAME: *out = lookup(r, n->name); return 0;
	case E_ATTR: case E_ITEM: case E_SLICE: return eval_index(r, n, out);
	case E_CALL: return eval_call(r, n, out);
	case E_FILTER: return eval_filter(r, n, out);
	case E_TEST: return eval_test(r, n, out);
	case E_UNARY: return eval_unary(r, n, out);
	case E_BIN: return eval_bin(r, n, out);
	case E_AND: case E_OR:
		rc = eval(r, n->a, out);
		if (rc < 0 || jv_truthy(out) == (n->kind == E_OR))
			return rc;
		return eval(r, n->b, out);
	case E_COND:
		rc = eval(r, n->b, &a);
		if (rc < 0)
			return rc;
		if (jv_truthy(&a))
			return eval(r, n->a, out);
		if (n->c == NULL) {
			*out = jv_undef();
			return 0;
		}
		return eval(r, n->c, out);
	case E_LIST: return eval_seq(r, n, out);
	case E_DICT: return eval_dict(r, n, out);
	}
	return jr_err(r, CT_EINTERNAL, "unknown node %d", n->kind);
}

/* ---- statements ---- */


static int bind(struct jrun *r, struct jframe *f, const struct jstmt *s,
		const struct jval *v)
{
	int i, rc = 0;

	if (s->ntarget == 1)
		return jf_set(r, f, s->target[0], *v);
	if (v->t != JT_LIST)
		return jr_err(r, CT_EINVAL, "cannot unpack a %s", jv_typename(v));
	if (v->u.l->n != (size_t)s->ntarget)
		return jr_err(r, CT_EINVAL, "%zu values to unpack into %d names",
			      v->u.l->n, s->ntarget);
	for (i = 0; rc >= 0 && i < s->ntarget; i++)
		rc = jf_set(r, f, s->target[i], v->u.l->v[i]);
	return rc;
}

static int exec_set(struct jrun *r, const struct jstmt *s)
{
	struct jframe *f = &r->fr[r->nfr - 1];
	struct jval v, ns;
	int rc;

	rc = eval(r, s->e, &v);
	if (rc < 0)
		return rc;
	r->line = s->line;
	if (s->attr.n == 0)
		return bind(r, f, s, &v);
	ns = lookup(r, s->target[0]);
	if (ns.t != JT_NS)
		return jr_err(r, CT_EINVAL, "cannot set an attribute of a %s (only of a namespace)",
			      jv_typename(&ns));
	return jd_set(r, ns.u.d, s->attr, v);
}

static int exec_setblock(struct jrun *r, const struct jstmt *s)
{
	struct jval v;
	int rc = render_to_str(r, s->body, &v);

	if (rc != 0)
		return rc;
	return jf_set(r, &r->fr[r->nfr - 1], s->target[0], v);
}

/* The chain of a filter block on v, innermost (operand NULL) first. */
static int filter_chain(struct jrun *r, const struct jnode *n, struct jval *v)
{
	struct jargs a;
	int rc = 0;

	if (n->a != NULL)
		rc = filter_chain(r, n->a, v);
	if (rc >= 0)
		rc = eval_args(r, n, &a);
	if (rc < 0)
		return rc;
	r->line = n->line;
	return jl_filter_run(r, n->fn, v, a.pos, a.npos, a.kwn, a.kw, a.nkw);
}

static int exec_filter(struct jrun *r, const struct jstmt *s)
{
	struct jval v;
	int rc = render_to_str(r, s->body, &v);

	if (rc == 0)
		rc = filter_chain(r, s->e, &v);
	if (rc >= 0)
		rc = jv_str_append(r, r->out, &v);
	return rc;
}

static int exec_macro(struct jrun *r, const struct jstmt *s)
{
	struct jval v = jv_undef();

	v.t = JT_MACRO;
	v.u.mac = s;
	return jf_set(r, &r->fr[r->nfr - 1], s->target[0], v);
}

/* What a for loop walks: a list's items, a dict's keys, a string's code
 * points; nothing for undefined. */
static int iter_items(struct jrun *r, const struct jval *v, struct jlist **out)
{
	size_t i, n, o;
	struct jlist *l;

	if (v->t == JT_LIST) {
		*out = v->u.l;
		return 0;
	}
	if (v->t == JT_UNDEF) {
		*out = jl_new(r, 0);
		return *out ? 0 : CT_ETOOBIG;
	}
	if (v->t != JT_DICT && v->t != JT_STR)
		return jr_err(r, CT_EINVAL, "a %s is not iterable", jv_typename(v));
	n = v->t == JT_DICT ? v->u.d->n : ju_len(v->u.s.p, v->u.s.n);
	l = jl_new(r, n);
	if (l == NULL)
		return CT_ETOOBIG;
	for (i = 0, o = 0; i < n; i++) {
		if (v->t == JT_DICT) {
			l->v[i] = jv_str(v->u.d->k[i].p, v->u.d->k[i].n);
			continue;
		}
		size_t len = ju_off(v->u.s.p + o, v->u.s.n - o, 1);

		l->v[i] = jv_str(v->u.s.p + o, len);
		o += len;
	}
	*out = l;
	return jr_charge(r, n);
}

/* The items that pass the loop's `if` (evaluated with the loop's names
 * bound, without `loop`, as Jinja does). */
static int loop_filter(struct jrun *r, const struct jstmt *s, struct jlist **items)
{
	struct jlist *in = *items, *l = jl_new(r, in->n);
	struct jval c;
	size_t i;
	int rc;

	if (l == NULL)
		return CT_ETOOBIG;
	l->n = 0;
	for (i = 0; i < in->n; i++) {
		rc = bind(r, &r->fr[r->nfr - 1], s, &in->v[i]);
		if (rc >= 0)
			rc = eval(r, s->cond, &c);
		if (rc < 0)
			return rc;
		if (jv_truthy(&c))
			l->v[l->n++] = in->v[i];
	}
	*items = l;
	return 0;
}

static int exec_for(struct jrun *r, const struct jstmt *s)
{
	static const struct jstr loop_name = { "loop", 4 };
	struct jloop *lp = jr_alloc(r, sizeof(*lp));
	struct jlist *items = NULL;
	struct jval v;
	int rc;

	if (lp == NULL)
		return CT_ETOOBIG;
	rc = eval(r, s->e, &v);
	r->line = s->line;
	if (rc >= 0)
		rc = iter_items(r, &v, &items);
	if (rc < 0)
		return rc;
	if (r->nfr == J_MAX_FRAMES)
		return jr_err(r, CT_ETOOBIG, "loops nested more than %d deep", J_MAX_FRAMES - 1);
	memset(&r->fr[r->nfr++], 0, sizeof(r->fr[0]));
	if (s->cond != NULL)
		rc = loop_filter(r, s, &items);
	lp->items = items;
	v.t = JT_LOOP;
	v.u.loop = lp;
	for (lp->i = 0; rc >= 0 && lp->i < items->n; lp->i++) {
		rc = jr_charge(r, 1);
		if (rc >= 0)
			rc = jf_set(r, &r->fr[r->nfr - 1], loop_name, v);
		if (rc >= 0)
			rc = bind(r, &r->fr[r->nfr - 1], s, &items->v[lp->i]);
		if (rc >= 0)
			rc = exec_body(r, s->body);
		if (rc == CTL_CONTINUE)
			rc = 0;
		if (rc == CTL_BREAK)
			break;
	}
	if (rc >= 0 && items->n == 0 && s->orelse != NULL)
		rc = exec_body(r, s->orelse);
	r->nfr--;
	return rc < 0 ? rc : 0;
}

static int exec_one(struct jrun *r, const struct jstmt *s)
{
	struct jval v;
	int rc;

	switch ((enum js)s->kind) {
	case S_TEXT:
		rc = ct_buf_append(r->out, s->text.p, s->text.n);
		break;
	case S_OUT:
		rc = eval(r, s->e, &v);
		if (rc >= 0)
			rc = jv_str_append(r, r->out, &v);
		if (rc >= 0 && v.t == JT_STR)
			rc = jr_charge(r, v.u.s.n / 64);
		return rc;
	case S_SET: return exec_set(r, s);
	case S_SETBLOCK: return exec_setblock(r, s);
	case S_IF:
		for (;;) {
			rc = eval(r, s->e, &v);
			if (rc < 0)
				return rc;
			if (jv_truthy(&v))
				return exec_body(r, s->body);
			if (!s->orelif)
				return exec_body(r, s->orelse);
			s = s->orelse;
		}
	case S_FOR: return exec_for(r, s);
	case S_GENERATION: return exec_body(r, s->body);
	case S_MACRO: return exec_macro(r, s);
	case S_FILTER: return exec_filter(r, s);
	case S_BREAK: return CTL_BREAK;
	case S_CONTINUE: return CTL_CONTINUE;
	default: return jr_err(r, CT_EINTERNAL, "unknown statement %d", s->kind);
	}
	if (rc == CT_ETOOBIG)
		return jr_err(r, CT_ETOOBIG, "text over the limit of %zu bytes", r->out->max);
	return rc < 0 ? jr_err(r, rc, "%s", ct_strerror(rc)) : 0;
}

static int exec_body(struct jrun *r, const struct jstmt *s)
{
	int rc;

	for (; s != NULL; s = s->next) {
		r->line = s->line;
		rc = jr_charge(r, 1);
		if (rc >= 0)
			rc = exec_one(r, s);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int add_vars(struct jrun *r, const struct ct_jinja_env *env)
{
	size_t i;
	int rc;

	rc = jl_globals(r, &r->fr[0]);
	for (i = 0; rc >= 0 && env != NULL && i < env->nvars; i++) {
		struct jstr name = { env->vars[i].name, strlen(env->vars[i].name) };
		struct jval v;

		rc = jv_from_json(r, env->vars[i].value, 0, &v);
		if (rc >= 0)
			rc = jf_set(r, &r->fr[0], name, v);
	}
	return rc;
}

int ct_jinja_render(const struct ct_jinja *t, const struct ct_jinja_env *env,
		    int *raised, struct ct_buf *out)
{
	struct ct_buf b = CT_BUF_INIT(t->lim.max_out);
	struct jrun *r = calloc(1, sizeof(*r));
	int rc;

	if (raised != NULL)
		*raised = 0;
	if (r == NULL)
		return ct_error(CT_ENOMEM, "out of memory rendering %s", t->name);
	r->t = t;
	r->env = env;
	r->mem.max = t->lim.max_mem;
	r->out = &b;
	r->nfr = 1;
	rc = add_vars(r, env);
	if (rc >= 0)
		rc = exec_body(r, t->body);
	if (rc >= 0)
		rc = ct_buf_append(out, b.data ? (const char *)b.data : "", b.len);
	else if (b.len > 0)
		(void)ct_buf_append(out, b.data, b.len);
	if (raised != NULL)
		*raised = r->raised;
	ja_free(&r->mem);
	free(r);
	ct_buf_free(&b);
	return rc < 0 ? rc : 0;
}
