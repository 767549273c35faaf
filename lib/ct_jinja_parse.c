/*
 * ct_jinja_parse.c - lexer and parser of lib/ct_jinja: template text to
 * the tree of struct jstmt / struct jnode (ct_jinja_int.h), with Python
 * Jinja's whitespace rules as transformers sets them (trim_blocks,
 * lstrip_blocks; `-` strips, `+` keeps), newlines normalised to \n and
 * one trailing newline dropped. Expressions follow Jinja's precedence:
 * if-else < or < and < not < comparisons and `in` < + - < ~ < * / // %
 * < ** < unary - + < filters, tests (`is`), calls < . [] ().
 *
 * Statements: set (name, names, ns.attr, and the block form), if / elif
 * / else, for (with `if` and `else`), break, continue, macro (with
 * defaults; no caller/varargs), the filter block, transformers'
 * generation block. The rest of
 * Jinja's statements are refused by name with their line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_jinja_int.h"
#include "ct_unicode.h"

enum tk { TK_EOF, TK_TEXT, TK_VBEGIN, TK_VEND, TK_BBEGIN, TK_BEND, TK_NAME,
	  TK_STR, TK_INT, TK_FLOAT, TK_OP };

struct tok {
	uint8_t t;
	char op[3];
	int line;
	struct jstr s;		/* TK_TEXT, TK_NAME, TK_STR (decoded) */
	int64_t i;
	double f;
};

struct jp {
	struct ct_jinja *t;
	const char *src;	/* normalised copy */
	size_t n, pos;
	int line;
	struct tok *tk;
	size_t ntk, cap, i;
	int depth;
	int loops;		/* for bodies open */
};

static int jp_err(struct jp *p, int code, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int jp_err(struct jp *p, int code, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ct_error(code, "%s line %d: %s", p->t->name, line, msg);
}

static void *jp_alloc(struct jp *p, size_t n)
{
	return ja_alloc(&p->t->mem, n);
}

/* ---- lexer ---- */

static int tok_push(struct jp *p, const struct tok *t)
{
	if (p->ntk == p->cap) {
		size_t nc = p->cap ? 2 * p->cap : 256;
		struct tok *n = realloc(p->tk, nc * sizeof(*n));

		if (n == NULL)
			return ct_error(CT_ENOMEM, "out of memory parsing %s", p->t->name);
		p->tk = n;
		p->cap = nc;
	}
	p->tk[p->ntk++] = *t;
	return 0;
}

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static void count_lines(struct jp *p, size_t from, size_t to)
{
	for (; from < to; from++)
		p->line += p->src[from] == '\n';
}

/* Python's escapes in a string literal; unknown ones stay as written. */
static size_t unescape_one(const char *s, size_t n, char *o, size_t *used)
{
	static const char simple[][2] = { { 'n', '\n' }, { 't', '\t' }, { 'r', '\r' },
		{ '\\', '\\' }, { '\'', '\'' }, { '"', '"' }, { 'b', '\b' },
		{ 'f', '\f' }, { 'v', '\v' }, { 'a', '\a' }, { '0', '\0' } };
	size_t i, len = 0;
	uint32_t cp = 0;

	for (i = 0; i < sizeof(simple) / sizeof(simple[0]); i++)
		if (n >= 2 && s[1] == simple[i][0] && !(s[1] == '0' && n > 2 && s[2] >= '0' && s[2] <= '7')) {
			*o = simple[i][1];
			*used = 2;
			return 1;
		}
	if (n >= 2 && (s[1] == 'x' || s[1] == 'u' || s[1] == 'U'))
		len = s[1] == 'x' ? 2 : s[1] == 'u' ? 4 : 8;
	for (i = 0; len > 0 && i < len; i++) {
		char c = 2 + i < n ? s[2 + i] : 0;
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			len = 0;
		else
			cp = cp * 16 + (uint32_t)d;
	}
	if (len > 0 && cp < 0x110000 && !(cp >= 0xd800 && cp < 0xe000)) {
		*used = 2 + len;
		return ct_utf8_encode(cp, (unsigned char *)o);
	}
	o[0] = '\\';		/* as Python keeps "\d" */
	*used = 1;
	return 1;
}

static int lex_string(struct jp *p, struct tok *t)
{
	char q = p->src[p->pos];
	size_t i = p->pos + 1, k = 0;
	char *o;

	while (i < p->n && p->src[i] != q)
		i += p->src[i] == '\\' && i + 1 < p->n ? 2 : 1;
	if (i >= p->n)
		return jp_err(p, CT_EFORMAT, p->line, "unterminated string");
	o = jp_alloc(p, i - p->pos + 8);
	if (o == NULL)
		return ct_error(CT_ENOMEM, "out of memory parsing %s", p->t->name);
	for (size_t j = p->pos + 1; j < i;) {
		size_t used = 1;

		if (p->src[j] == '\\')
			k += unescape_one(p->src + j, i - j, o + k, &used);
		else
			o[k++] = p->src[j];
		j += used;
	}
	count_lines(p, p->pos, i);
	t->t = TK_STR;
	t->s.p = o;
	t->s.n = k;
	p->pos = i + 1;
	return 0;
}

static int lex_number(struct jp *p, struct tok *t)
{
	const char *s = p->src + p->pos;
	char buf[64];
	size_t i = 0, k = 0;
	int fl = 0;

	while (p->pos + i < p->n && (s[i] == '_' || (s[i] >= '0' && s[i] <= '9') ||
	       (s[i] == '.' && !fl && p->pos + i + 1 < p->n && s[i + 1] >= '0' && s[i + 1] <= '9') ||
	       ((s[i] == 'e' || s[i] == 'E') && i > 0) ||
	       ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E')))) {
		fl |= s[i] == '.' || s[i] == 'e' || s[i] == 'E';
		if (s[i] != '_' && k < sizeof(buf) - 1)
			buf[k++] = s[i];
		i++;
	}
	buf[k] = '\0';
	t->t = fl ? TK_FLOAT : TK_INT;
	t->f = strtod(buf, NULL);
	t->i = strtoll(buf, NULL, 10);
	if (!fl && (k > 18 || k == sizeof(buf) - 1))
		return jp_err(p, CT_EUNSUPP, p->line, "integer %s is too large", buf);
	p->pos += i;
	return 0;
}

static const char *const ops2[] = { "**", "//", "==", "!=", "<=", ">=" };
static const char ops1[] = "+-*/%~<>=.,:|()[]{}";

static int lex_op(struct jp *p, struct tok *t, int *depth)
{
	const char *s = p->src + p->pos;
	size_t i;

	t->t = TK_OP;
	for (i = 0; i < sizeof(ops2) / sizeof(ops2[0]); i++)
		if (p->pos + 1 < p->n && s[0] == ops2[i][0] && s[1] == ops2[i][1]) {
			memcpy(t->op, s, 2);
			p->pos += 2;
			return 0;
		}
	if (strchr(ops1, s[0]) == NULL || s[0] == '\0')
		return jp_err(p, CT_EFORMAT, p->line, "unexpected character '%c'", s[0]);
	t->op[0] = s[0];
	*depth += strchr("([{", s[0]) != NULL;
	*depth -= strchr(")]}", s[0]) != NULL && *depth > 0;
	p->pos++;
	return 0;
}

/* At the end of a tag (depth 0): 1 with *strip set when src[pos] starts
 * "-}}"/"}}" (var) or "-%}"/"%}" (block). */
static int at_close(const struct jp *p, char c, int *strip)
{
	const char *s = p->src + p->pos;
	size_t left = p->n - p->pos;

	*strip = left >= 3 && s[0] == '-' && s[1] == c && s[2] == '}';
	return *strip || (left >= 2 && s[0] == c && s[1] == '}');
}

static int lex_tag(struct jp *p, int var, int *strip_after)
{
	char close = var ? '}' : '%';
	struct tok t;
	int depth = 0, strip = 0, rc;

	for (;;) {
		while (p->pos < p->n && is_ws(p->src[p->pos]))
			p->line += p->src[p->pos++] == '\n';
		if (p->pos >= p->n)
			return jp_err(p, CT_EFORMAT, p->line, "the template ends inside a tag");
		if (depth == 0 && at_close(p, close, &strip))
			break;
		memset(&t, 0, sizeof(t));
		t.line = p->line;
		char c = p->src[p->pos];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
			size_t b = p->pos;

			while (p->pos < p->n && (p->src[p->pos] == '_' ||
			       (p->src[p->pos] >= 'a' && p->src[p->pos] <= 'z') ||
			       (p->src[p->pos] >= 'A' && p->src[p->pos] <= 'Z') ||
			       (p->src[p->pos] >= '0' && p->src[p->pos] <= '9')))
				p->pos++;
			t.t = TK_NAME;
			t.s.p = p->src + b;
			t.s.n = p->pos - b;
			rc = 0;
		} else if (c >= '0' && c <= '9') {
			rc = lex_number(p, &t);
		} else if (c == '\'' || c == '"') {
			rc = lex_string(p, &t);
		} else {
			rc = lex_op(p, &t, &depth);
		}
		if (rc >= 0)
			rc = tok_push(p, &t);
		if (rc < 0)
			return rc;
	}
	memset(&t, 0, sizeof(t));
	t.t = var ? TK_VEND : TK_BEND;
	t.line = p->line;
	p->pos += strip ? 3 : 2;
	*strip_after = strip;
	return tok_push(p, &t);
}

/* Where the next "{{", "{%" or "{#" starts at or after pos, or n. */
static size_t next_open(const struct jp *p)
{
	const char *s = p->src + p->pos, *e = p->src + p->n;

	while ((s = memchr(s, '{', (size_t)(e - s))) != NULL && s + 1 < e) {
		if (s[1] == '{' || s[1] == '%' || s[1] == '#')
			return (size_t)(s - p->src);
		s++;
	}
	return p->n;
}

/* The text before a tag: `-` strips all white space; a block or comment
 * tag alone on its line after spaces and tabs takes them (lstrip_blocks). */
static size_t text_end(const struct jp *p, size_t from, size_t to, char kind,
		       char mod, int line_starting)
{
	size_t l, i;

	if (mod == '-') {
		while (to > from && is_ws(p->src[to - 1]))
			to--;
		return to;
	}
	if (kind == '{' || mod == '+')
		return to;
	for (l = to; l > from && p->src[l - 1] != '\n'; l--)
		;
	if (l == from && !line_starting)
		return to;
	for (i = l; i < to; i++)
		if (p->src[i] != ' ' && p->src[i] != '\t')
			return to;
	return l;
}

static int lex_comment(struct jp *p, int *strip_after)
{
	const char *e = p->src + p->pos;

	for (;;) {
		e = memchr(e, '#', (size_t)(p->src + p->n - e));
		if (e == NULL || e + 1 >= p->src + p->n)
			return jp_err(p, CT_EFORMAT, p->line, "unterminated comment");
		if (e[1] == '}')
			break;
		e++;
	}
	*strip_after = e > p->src + p->pos && e[-1] == '-';
	count_lines(p, p->pos, (size_t)(e - p->src));
	p->pos = (size_t)(e - p->src) + 2;
	return 0;
}

/* After a tag: `-` strips all white space; a block or comment tag drops
 * one newline (trim_blocks). Returns whether a line starts here. */
static int after_tag(struct jp *p, char kind, int strip)
{
	int nl = 0;

	if (strip) {
		while (p->pos < p->n && is_ws(p->src[p->pos])) {
			nl = p->src[p->pos] == '\n';
			p->line += nl;
			p->pos++;
		}
		return nl;
	}
	if (kind != '{' && p->pos < p->n && p->src[p->pos] == '\n') {
		p->pos++;
		p->line++;
		return 1;
	}
	return 0;
}

static int lex_all(struct jp *p)
{
	int line_starting = 1, strip = 0, rc;
	struct tok t;

	while (p->pos < p->n) {
		size_t o = next_open(p), te;
		char kind = o < p->n ? p->src[o + 1] : 0;
		char mod = o + 2 < p->n ? p->src[o + 2] : 0;

		te = o < p->n ? text_end(p, p->pos, o, kind, mod, line_starting) : o;
		if (te > p->pos) {
			memset(&t, 0, sizeof(t));
			t.t = TK_TEXT;
			t.line = p->line;
			t.s.p = p->src + p->pos;
			t.s.n = te - p->pos;
			rc = tok_push(p, &t);
			if (rc < 0)
				return rc;
		}
		count_lines(p, p->pos, o);
		if (o >= p->n)
			break;
		p->pos = o + 2 + (mod == '-' || mod == '+');
		if (kind == '#') {
			rc = lex_comment(p, &strip);
		} else {
			memset(&t, 0, sizeof(t));
			t.t = kind == '{' ? TK_VBEGIN : TK_BBEGIN;
			t.line = p->line;
			rc = tok_push(p, &t);
			if (rc >= 0)
				rc = lex_tag(p, kind == '{', &strip);
		}
		if (rc < 0)
			return rc;
		line_starting = after_tag(p, kind, strip);
	}
	memset(&t, 0, sizeof(t));
	t.t = TK_EOF;
	t.line = p->line;
	return tok_push(p, &t);
}

/* Newlines to \n, one trailing newline off (Jinja's defaults). */
static int normalise(struct jp *p, const char *src, size_t n)
{
	char *o = jp_alloc(p, n + 1);
	size_t i, k = 0;

	if (o == NULL)
		return ct_error(CT_ENOMEM, "out of memory parsing %s", p->t->name);
	for (i = 0; i < n; i++) {
		if (src[i] == '\r') {
			o[k++] = '\n';
			i += i + 1 < n && src[i + 1] == '\n';
		} else {
			o[k++] = src[i];
		}
	}
	if (k > 0 && o[k - 1] == '\n')
		k--;
	p->src = o;
	p->n = k;
	return 0;
}

/* ---- parser: helpers ---- */

static const struct tok *cur(const struct jp *p)
{
	return &p->tk[p->i];
}

static int is_op(const struct jp *p, const char *op)
{
	return cur(p)->t == TK_OP && strcmp(cur(p)->op, op) == 0;
}

static int is_name(const struct jp *p, const char *name)
{
	const struct tok *t = cur(p);

	return t->t == TK_NAME && t->s.n == strlen(name) && memcmp(t->s.p, name, t->s.n) == 0;
}

static int is_name_at(const struct jp *p, size_t k, const char *name)
{
	const struct tok *t = &p->tk[p->i + k < p->ntk ? p->i + k : p->ntk - 1];

	return t->t == TK_NAME && t->s.n == strlen(name) && memcmp(t->s.p, name, t->s.n) == 0;
}

static const char *tok_desc(const struct tok *t, char *buf, size_t cap)
{
	static const char *const names[] = { "end of template", "text", "'{{'", "'}}'",
		"'{%'", "'%}'", "name", "string", "integer", "float", "operator" };

	if (t->t == TK_NAME)
		snprintf(buf, cap, "'%.*s'", (int)(t->s.n > 40 ? 40 : t->s.n), t->s.p);
	else if (t->t == TK_OP)
		snprintf(buf, cap, "'%s'", t->op);
	else
		snprintf(buf, cap, "%s", names[t->t]);
	return buf;
}

static int unexpected(struct jp *p, const char *want)
{
	char d[64];

	return jp_err(p, CT_EFORMAT, cur(p)->line, "expected %s, got %s", want,
		      tok_desc(cur(p), d, sizeof(d)));
}

static int expect_op(struct jp *p, const char *op)
{
	char want[8];

	if (!is_op(p, op)) {
		snprintf(want, sizeof(want), "'%s'", op);
		return unexpected(p, want);
	}
	p->i++;
	return 0;
}

static int expect_name(struct jp *p, struct jstr *out)
{
	if (cur(p)->t != TK_NAME)
		return unexpected(p, "a name");
	*out = cur(p)->s;
	p->i++;
	return 0;
}

static struct jnode *node(struct jp *p, int kind, int line)
{
	struct jnode *n = jp_alloc(p, sizeof(*n));

	if (n == NULL) {
		ct_error(CT_ENOMEM, "out of memory parsing %s", p->t->name);
		return NULL;
	}
	n->kind = (uint8_t)kind;
	n->line = line;
	return n;
}

static int enter(struct jp *p)
{
	if (++p->depth > p->t->lim.max_depth)
		return jp_err(p, CT_ETOOBIG, cur(p)->line, "nested more than %d deep",
			      p->t->lim.max_depth);
	return 0;
}

/* ---- expressions ---- */

static int p_expr(struct jp *p, int condexpr, struct jnode **out);
static int p_unary(struct jp *p, int with_filter, struct jnode **out);

/* Grow a node array by one (arena: copied when full, sizes double). */
static int push_node(struct jp *p, struct jnode ***arr, int *n, struct jnode *x)
{
	if ((*n & (*n - 1)) == 0) {
		struct jnode **g = jp_alloc(p, (size_t)(*n ? 2 * *n : 1) * sizeof(*g));

		if (g == NULL)
			return ct_error(CT_ENOMEM, "out of memory parsing %s", p->t->name);
		if (*n)
			memcpy(g, *arr, (size_t)*n * sizeof(*g));
		*arr = g;
	}
	(*arr)[(*n)++] = x;
	return 0;
}

/* (a, b, k=v): positional into n->args, keywords into n->kw. */
static int p_args(struct jp *p, struct jnode *n)
{
	int rc, nk = 0;
	struct jnode *x;

	rc = expect_op(p, "(");
	while (rc >= 0 && !is_op(p, ")")) {
		if (is_op(p, "*") || is_op(p, "**"))
			return jp_err(p, CT_EUNSUPP, cur(p)->line, "*args and **kwargs are not supported");
		if (cur(p)->t == TK_NAME && p->tk[p->i + 1].t == TK_OP &&
		    strcmp(p->tk[p->i + 1].op, "=") == 0) {
			struct jstr k = cur(p)->s;

			p->i += 2;
			rc = p_expr(p, 1, &x);
			if (rc < 0)
				return rc;
			if ((nk & (nk - 1)) == 0) {
				struct jstr *g = jp_alloc(p, (size_t)(nk ? 2 * nk : 1) * sizeof(*g));

				if (g == NULL)
					return ct_error(CT_ENOMEM, "out of memory");
				if (nk)
					memcpy(g, n->kwname, (size_t)nk * sizeof(*g));
				n->kwname = g;
			}
			n->kwname[nk] = k;
			rc = push_node(p, &n->kw, &nk, x);
		} else {
			if (nk > 0)
				return jp_err(p, CT_EFORMAT, cur(p)->line,
					      "a positional argument after a keyword one");
			rc = p_expr(p, 1, &x);
			if (rc >= 0)
				rc = push_node(p, &n->args, &n->nargs, x);
		}
		if (rc >= 0 && !is_op(p, ")"))
			rc = expect_op(p, ",");
	}
	n->nkw = nk;
	return rc < 0 ? rc : expect_op(p, ")");
}

static int p_list(struct jp *p, const char *close, struct jnode *n, int dict)
{
	struct jnode *k, *v;
	int rc = 0, nk = 0;
	struct jnode **vals = NULL;

	while (rc >= 0 && !is_op(p, close)) {
		rc = p_expr(p, 1, &k);
		if (rc >= 0 && dict)
			rc = expect_op(p, ":");
		if (rc >= 0 && dict)
			rc = p_expr(p, 1, &v);
		if (rc >= 0)
			rc = push_node(p, &n->args, &n->nargs, k);
		if (rc >= 0 && dict)
			rc = push_node(p, &vals, &nk, v);
		if (rc >= 0 && !is_op(p, close))
			rc = expect_op(p, ",");
	}
	if (rc >= 0 && dict) {	/* keys then values, in one array */
		for (int i = 0; rc >= 0 && i < nk; i++)
			rc = push_node(p, &n->args, &n->nargs, vals[i]);
		n->nargs = nk;
	}
	return rc < 0 ? rc : expect_op(p, close);
}

static int p_const_name(struct jp *p, struct jnode *n)
{
	static const struct { const char *name; int t, b; } consts[] = {
		{ "true", JT_BOOL, 1 }, { "True", JT_BOOL, 1 }, { "false", JT_BOOL, 0 },
		{ "False", JT_BOOL, 0 }, { "none", JT_NONE, 0 }, { "None", JT_NONE, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(consts) / sizeof(consts[0]); i++)
		if (is_name(p, consts[i].name)) {
			n->kind = E_CONST;
			n->cv = consts[i].t == JT_BOOL ? jv_bool(consts[i].b) : jv_none();
			p->i++;
			return 1;
		}
	return 0;
}

static int p_strings(struct jp *p, struct jnode *n)
{
	size_t len = 0, k, j;
	char *o;

	for (k = p->i; p->tk[k].t == TK_STR; k++)
		len += p->tk[k].s.n;
	o = jp_alloc(p, len + 1);
	if (o == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	for (len = 0, j = p->i; j < k; j++) {
		memcpy(o + len, p->tk[j].s.p, p->tk[j].s.n);
		len += p->tk[j].s.n;
	}
	p->i = k;
	n->kind = E_CONST;
	n->cv = jv_str(o, len);
	return 0;
}

static int p_paren(struct jp *p, struct jnode *n, struct jnode **out)
{
	struct jnode *x;
	int rc;

	p->i++;
	if (is_op(p, ")")) {
		p->i++;
		n->kind = E_LIST;
		n->tuple = 1;
		*out = n;
		return 0;
	}
	rc = p_expr(p, 1, &x);
	if (rc < 0)
		return rc;
	if (!is_op(p, ",")) {
		*out = x;
		return expect_op(p, ")");
	}
	n->kind = E_LIST;
	n->tuple = 1;
	rc = push_node(p, &n->args, &n->nargs, x);
	while (rc >= 0 && is_op(p, ",")) {
		p->i++;
		if (is_op(p, ")"))
			break;
		rc = p_expr(p, 1, &x);
		if (rc >= 0)
			rc = push_node(p, &n->args, &n->nargs, x);
	}
	*out = n;
	return rc < 0 ? rc : expect_op(p, ")");
}

static int p_primary(struct jp *p, struct jnode **out)
{
	const struct tok *t = cur(p);
	struct jnode *n = node(p, E_CONST, t->line);

	if (n == NULL)
		return CT_ENOMEM;
	*out = n;
	switch (t->t) {
	case TK_NAME:
		if (p_const_name(p, n))
			return 0;
		n->kind = E_NAME;
		n->name = t->s;
		p->i++;
		return 0;
	case TK_STR: return p_strings(p, n);
	case TK_INT: n->cv = jv_int(t->i); p->i++; return 0;
	case TK_FLOAT: n->cv = jv_float(t->f); p->i++; return 0;
	case TK_OP:
		if (strcmp(t->op, "(") == 0)
			return p_paren(p, n, out);
		if (strcmp(t->op, "[") == 0 || strcmp(t->op, "{") == 0) {
			int dict = t->op[0] == '{';

			n->kind = dict ? E_DICT : E_LIST;
			p->i++;
			return p_list(p, dict ? "}" : "]", n, dict);
		}
		/* fall through */
	default:
		return unexpected(p, "an expression");
	}
}

/* [a], [a:b], [a:b:c], [::-1] */
static int p_subscript(struct jp *p, struct jnode *obj, struct jnode **out)
{
	struct jnode *n = node(p, E_ITEM, cur(p)->line), *x = NULL;
	int rc = 0;

	if (n == NULL)
		return CT_ENOMEM;
	p->i++;
	n->a = obj;
	if (!is_op(p, ":"))
		rc = p_expr(p, 1, &x);
	if (rc < 0)
		return rc;
	if (!is_op(p, ":")) {
		if (is_op(p, ","))
			return jp_err(p, CT_EUNSUPP, cur(p)->line, "a tuple subscript is not supported");
		n->b = x;
		*out = n;
		return expect_op(p, "]");
	}
	n->kind = E_SLICE;
	n->b = x;
	p->i++;
	if (!is_op(p, "]") && !is_op(p, ":"))
		rc = p_expr(p, 1, &n->c);
	if (rc >= 0 && is_op(p, ":")) {
		p->i++;
		if (!is_op(p, "]")) {
			rc = p_expr(p, 1, &x);
			if (rc >= 0)
				rc = push_node(p, &n->args, &n->nargs, x);
		}
	}
	*out = n;
	return rc < 0 ? rc : expect_op(p, "]");
}

static int p_postfix(struct jp *p, struct jnode **np)
{
	int rc = 0;

	while (rc >= 0) {
		struct jnode *n;

		if (is_op(p, "[")) {
			rc = p_subscript(p, *np, np);
		} else if (is_op(p, ".")) {
			n = node(p, E_ATTR, cur(p)->line);
			if (n == NULL)
				return CT_ENOMEM;
			p->i++;
			n->a = *np;
			if (cur(p)->t == TK_INT) {	/* x.0 is x[0] */
				n->kind = E_ITEM;
				n->b = node(p, E_CONST, cur(p)->line);
				if (n->b == NULL)
					return CT_ENOMEM;
				n->b->cv = jv_int(cur(p)->i);
				p->i++;
			} else {
				rc = expect_name(p, &n->name);
			}
			*np = n;
		} else if (is_op(p, "(")) {
			n = node(p, E_CALL, cur(p)->line);
			if (n == NULL)
				return CT_ENOMEM;
			n->a = *np;
			rc = p_args(p, n);
			*np = n;
		} else {
			break;
		}
	}
	return rc;
}

static int p_filter(struct jp *p, struct jnode **np)
{
	struct jnode *n = node(p, E_FILTER, cur(p)->line);
	struct jstr name;
	int rc, f;

	if (n == NULL)
		return CT_ENOMEM;
	p->i++;
	rc = expect_name(p, &name);
	if (rc < 0)
		return rc;
	f = jl_filter_find(name.p, name.n);
	if (f < 0)
		return jp_err(p, CT_EUNSUPP, n->line, "filter '%.*s' is not supported",
			      (int)name.n, name.p);
	n->fn = (uint16_t)f;
	n->a = *np;
	n->name = name;
	*np = n;
	return is_op(p, "(") ? p_args(p, n) : 0;
}

static int test_arg_follows(const struct jp *p)
{
	const struct tok *t = cur(p);

	if (t->t == TK_NAME)
		return !is_name(p, "else") && !is_name(p, "or") && !is_name(p, "and") &&
		       !is_name(p, "if");
	return t->t == TK_STR || t->t == TK_INT || t->t == TK_FLOAT ||
	       is_op(p, "[") || is_op(p, "{");
}

static int p_test(struct jp *p, struct jnode **np)
{
	struct jnode *n = node(p, E_TEST, cur(p)->line), *x;
	struct jstr name;
	int rc, f;

	if (n == NULL)
		return CT_ENOMEM;
	p->i++;
	if (is_name(p, "not")) {
		n->op = 1;
		p->i++;
	}
	rc = expect_name(p, &name);
	if (rc < 0)
		return rc;
	f = jl_test_find(name.p, name.n);
	if (f < 0)
		return jp_err(p, CT_EUNSUPP, n->line, "test '%.*s' is not supported",
			      (int)name.n, name.p);
	n->fn = (uint16_t)f;
	n->a = *np;
	n->name = name;
	*np = n;
	if (is_op(p, "("))
		return p_args(p, n);
	if (!test_arg_follows(p))
		return 0;
	rc = p_primary(p, &x);
	if (rc >= 0)
		rc = p_postfix(p, &x);
	return rc < 0 ? rc : push_node(p, &n->args, &n->nargs, x);
}

static int p_unary(struct jp *p, int with_filter, struct jnode **out)
{
	int rc = enter(p);

	if (rc < 0)
		return rc;
	if (is_op(p, "-") || is_op(p, "+")) {
		struct jnode *n = node(p, E_UNARY, cur(p)->line);

		if (n == NULL)
			return CT_ENOMEM;
		n->op = is_op(p, "-") ? OP_NEG : OP_POS;
		p->i++;
		rc = p_unary(p, 0, &n->a);
		*out = n;
	} else {
		rc = p_primary(p, out);
	}
	if (rc >= 0)
		rc = p_postfix(p, out);
	while (rc >= 0 && with_filter) {
		if (is_op(p, "|"))
			rc = p_filter(p, out);
		else if (is_name(p, "is"))
			rc = p_test(p, out);
		else if (is_op(p, "("))
			rc = p_postfix(p, out);
		else
			break;
	}
	p->depth--;
	return rc;
}

struct binop {
	const char *tok;
	int op;
};

static const struct binop math1[] = { { "+", OP_ADD }, { "-", OP_SUB }, { NULL, 0 } };
static const struct binop concat[] = { { "~", OP_CONCAT }, { NULL, 0 } };
static const struct binop math2[] = { { "*", OP_MUL }, { "/", OP_DIV },
	{ "//", OP_FLOORDIV }, { "%", OP_MOD }, { NULL, 0 } };
static const struct binop power[] = { { "**", OP_POW }, { NULL, 0 } };
static const struct binop cmp[] = { { "==", OP_EQ }, { "!=", OP_NE }, { "<", OP_LT },
	{ "<=", OP_LE }, { ">", OP_GT }, { ">=", OP_GE }, { NULL, 0 } };

/* The levels from comparisons down, one table each, loosest first. */
static const struct binop *const levels[] = { cmp, math1, concat, math2, power };
#define NLEVELS ((int)(sizeof(levels) / sizeof(levels[0])))

static int level_op(const struct jp *p, int lv, int *op, int *ntok)
{
	const struct binop *b;

	for (b = levels[lv]; b->tok != NULL; b++)
		if (is_op(p, b->tok)) {
			*op = b->op;
			*ntok = 1;
			return 1;
		}
	if (lv == 0 && is_name(p, "in")) {
		*op = OP_IN;
		*ntok = 1;
		return 1;
	}
	if (lv == 0 && is_name(p, "not") && is_name_at(p, 1, "in")) {
		*op = OP_NOTIN;
		*ntok = 2;
		return 1;
	}
	return 0;
}

static int p_level(struct jp *p, int lv, struct jnode **out)
{
	int rc, op, ntok, chained = 0;

	if (lv == NLEVELS)
		return p_unary(p, 1, out);
	rc = p_level(p, lv + 1, out);
	while (rc >= 0 && level_op(p, lv, &op, &ntok)) {
		struct jnode *n = node(p, E_BIN, cur(p)->line);

		if (n == NULL)
			return CT_ENOMEM;
		if (lv == 0 && chained++)
			return jp_err(p, CT_EUNSUPP, n->line, "chained comparisons are not supported");
		p->i += (size_t)ntok;
		n->op = (uint8_t)op;
		n->a = *out;
		rc = p_level(p, lv + 1, &n->b);
		*out = n;
	}
	return rc;
}

static int p_not(struct jp *p, struct jnode **out)
{
	int rc;

	if (!is_name(p, "not"))
		return p_level(p, 0, out);
	struct jnode *n = node(p, E_UNARY, cur(p)->line);

	if (n == NULL)
		return CT_ENOMEM;
	p->i++;
	n->op = OP_NOT;
	rc = enter(p);
	if (rc >= 0)
		rc = p_not(p, &n->a);
	p->depth--;
	*out = n;
	return rc;
}

static int p_logic(struct jp *p, int kind, struct jnode **out)
{
	const char *word = kind == E_OR ? "or" : "and";
	int rc = kind == E_OR ? p_logic(p, E_AND, out) : p_not(p, out);

	while (rc >= 0 && is_name(p, word)) {
		struct jnode *n = node(p, kind, cur(p)->line);

		if (n == NULL)
			return CT_ENOMEM;
		p->i++;
		n->a = *out;
		rc = kind == E_OR ? p_logic(p, E_AND, &n->b) : p_not(p, &n->b);
		*out = n;
	}
	return rc;
}

static int p_expr(struct jp *p, int condexpr, struct jnode **out)
{
	int rc = enter(p);

	if (rc >= 0)
		rc = p_logic(p, E_OR, out);
	while (rc >= 0 && condexpr && is_name(p, "if")) {
		struct jnode *n = node(p, E_COND, cur(p)->line);

		if (n == NULL)
			return CT_ENOMEM;
		p->i++;
		n->a = *out;
		rc = p_logic(p, E_OR, &n->b);
		if (rc >= 0 && is_name(p, "else")) {
			p->i++;
			rc = p_expr(p, 1, &n->c);
		}
		*out = n;
	}
	p->depth--;
	return rc;
}

/* ---- statements ---- */

static int p_body(struct jp *p, const char *const *ends, struct jstmt **out);

static struct jstmt *stmt(struct jp *p, int kind, int line)
{
	struct jstmt *s = jp_alloc(p, sizeof(*s));

	if (s == NULL) {
		ct_error(CT_ENOMEM, "out of memory parsing %s", p->t->name);
		return NULL;
	}
	s->kind = (uint8_t)kind;
	s->line = line;
	return s;
}

static int end_tag(struct jp *p)
{
	if (cur(p)->t != TK_BEND)
		return unexpected(p, "'%}'");
	p->i++;
	return 0;
}

/* {% WORD %} closing a block: the name, then '%}'. */
static int close_word(struct jp *p, const char *word)
{
	char want[32];

	if (cur(p)->t != TK_BBEGIN || !is_name_at(p, 1, word)) {
		snprintf(want, sizeof(want), "{%% %s %%}", word);
		return unexpected(p, want);
	}
	p->i += 2;
	return end_tag(p);
}

static int p_targets(struct jp *p, struct jstmt *s)
{
	int rc;

	do {
		if (s->ntarget == 8)
			return jp_err(p, CT_EUNSUPP, s->line, "more than 8 names to unpack");
		rc = expect_name(p, &s->target[s->ntarget++]);
		if (rc < 0 || !is_op(p, ","))
			break;
		p->i++;
	} while (1);
	return rc;
}

static int st_set(struct jp *p, struct jstmt *s)
{
	static const char *const ends[] = { "endset", NULL };
	int rc;

	s->kind = S_SET;
	rc = p_targets(p, s);
	if (rc >= 0 && s->ntarget == 1 && is_op(p, ".")) {
		p->i++;
		rc = expect_name(p, &s->attr);
	}
	if (rc < 0)
		return rc;
	if (cur(p)->t == TK_BEND && s->ntarget == 1 && s->attr.n == 0) {
		s->kind = S_SETBLOCK;
		p->i++;
		rc = p_body(p, ends, &s->body);
		return rc < 0 ? rc : close_word(p, "endset");
	}
	if (is_op(p, "|"))
		return jp_err(p, CT_EUNSUPP, s->line, "a filtered set block is not supported");
	rc = expect_op(p, "=");
	if (rc >= 0)
		rc = p_expr(p, 1, &s->e);
	if (rc >= 0 && is_op(p, ","))
		return jp_err(p, CT_EUNSUPP, s->line, "set from a tuple is not supported");
	return rc < 0 ? rc : end_tag(p);
}

static int st_if(struct jp *p, struct jstmt *s)
{
	static const char *const ends[] = { "elif", "else", "endif", NULL };
	int rc;

	s->kind = S_IF;
	rc = p_expr(p, 1, &s->e);
	if (rc >= 0)
		rc = end_tag(p);
	if (rc >= 0)
		rc = p_body(p, ends, &s->body);
	if (rc < 0)
		return rc;
	/* at {% elif / else / endif */
	if (is_name_at(p, 1, "elif")) {
		struct jstmt *e = stmt(p, S_IF, cur(p)->line);

		if (e == NULL)
			return CT_ENOMEM;
		p->i += 2;
		s->orelse = e;
		s->orelif = 1;
		return st_if(p, e);	/* the elif chain shares the endif */
	}
	if (is_name_at(p, 1, "else")) {
		static const char *const e2[] = { "endif", NULL };

		p->i += 2;
		rc = end_tag(p);
		if (rc >= 0)
			rc = p_body(p, e2, &s->orelse);
		if (rc < 0)
			return rc;
	}
	return close_word(p, "endif");
}

static int st_for(struct jp *p, struct jstmt *s)
{
	static const char *const ends[] = { "else", "endfor", NULL };
	static const char *const e2[] = { "endfor", NULL };
	int rc;

	s->kind = S_FOR;
	rc = p_targets(p, s);
	if (rc >= 0 && !is_name(p, "in"))
		rc = unexpected(p, "'in'");
	if (rc < 0)
		return rc;
	p->i++;
	rc = p_expr(p, 0, &s->e);
	if (rc >= 0 && is_name(p, "if")) {
		p->i++;
		rc = p_expr(p, 1, &s->cond);
	}
	if (rc >= 0 && is_name(p, "recursive"))
		return jp_err(p, CT_EUNSUPP, s->line, "recursive loops are not supported");
	if (rc >= 0)
		rc = end_tag(p);
	p->loops++;
	if (rc >= 0)
		rc = p_body(p, ends, &s->body);
	p->loops--;
	if (rc >= 0 && is_name_at(p, 1, "else")) {
		p->i += 2;
		rc = end_tag(p);
		if (rc >= 0)
			rc = p_body(p, e2, &s->orelse);
	}
	return rc < 0 ? rc : close_word(p, "endfor");
}

static int st_loopctl(struct jp *p, struct jstmt *s, int kind)
{
	if (p->loops == 0)
		return jp_err(p, CT_EFORMAT, s->line, "%s outside a loop",
			      kind == S_BREAK ? "break" : "continue");
	s->kind = (uint8_t)kind;
	return end_tag(p);
}

/* transformers' {% generation %}...{% endgeneration %}: marks the
 * assistant's text (for return_assistant_tokens_mask); renders its body. */
static int st_generation(struct jp *p, struct jstmt *s)
{
	static const char *const ends[] = { "endgeneration", NULL };
	int rc = end_tag(p);

	s->kind = S_GENERATION;
	if (rc >= 0)
		rc = p_body(p, ends, &s->body);
	return rc < 0 ? rc : close_word(p, "endgeneration");
}

/* {% macro name(a, b=default) %}...{% endmacro %} */
static int st_macro(struct jp *p, struct jstmt *s)
{
	static const char *const ends[] = { "endmacro", NULL };
	int rc, loops = p->loops;

	s->kind = S_MACRO;
	s->ntarget = 1;
	rc = expect_name(p, &s->target[0]);
	if (rc >= 0)
		rc = expect_op(p, "(");
	while (rc >= 0 && !is_op(p, ")")) {
		if (s->ntarget == 8)
			return jp_err(p, CT_EUNSUPP, s->line, "more than 7 macro parameters");
		rc = expect_name(p, &s->target[s->ntarget]);
		if (rc >= 0 && is_op(p, "=")) {
			p->i++;
			rc = p_expr(p, 1, &s->dflt[s->ntarget]);
		}
		s->ntarget++;
		if (rc >= 0 && !is_op(p, ")"))
			rc = expect_op(p, ",");
	}
	if (rc >= 0)
		rc = expect_op(p, ")");
	if (rc >= 0)
		rc = end_tag(p);
	p->loops = 0;		/* a loop outside does not reach into the body */
	if (rc >= 0)
		rc = p_body(p, ends, &s->body);
	p->loops = loops;
	return rc < 0 ? rc : close_word(p, "endmacro");
}

/* {% filter name(args)|name2 %}...{% endfilter %}: the chain is parsed as
 * after a '|' (p_filter steps over the word `filter` as over one), the
 * innermost node's operand left NULL: the block's text. */
static int st_filter(struct jp *p, struct jstmt *s)
{
	static const char *const ends[] = { "endfilter", NULL };
	int rc;

	s->kind = S_FILTER;
	p->i--;
	rc = p_filter(p, &s->e);
	while (rc >= 0 && is_op(p, "|"))
		rc = p_filter(p, &s->e);
	if (rc >= 0)
		rc = end_tag(p);
	if (rc >= 0)
		rc = p_body(p, ends, &s->body);
	return rc < 0 ? rc : close_word(p, "endfilter");
}

static int st_break(struct jp *p, struct jstmt *s)
{
	return st_loopctl(p, s, S_BREAK);
}

static int st_continue(struct jp *p, struct jstmt *s)
{
	return st_loopctl(p, s, S_CONTINUE);
}

static const struct {
	const char *name;
	int (*parse)(struct jp *p, struct jstmt *s);
} statements[] = {
	{ "set", st_set }, { "if", st_if }, { "for", st_for },
	{ "break", st_break }, { "continue", st_continue },
	{ "generation", st_generation }, { "macro", st_macro }, { "filter", st_filter },
};

static int p_block(struct jp *p, struct jstmt **out)
{
	const struct tok *t = &p->tk[p->i + 1];
	struct jstmt *s;
	size_t i;

	if (t->t != TK_NAME)
		return p->i++, unexpected(p, "a statement");
	for (i = 0; i < sizeof(statements) / sizeof(statements[0]); i++)
		if (is_name_at(p, 1, statements[i].name)) {
			s = stmt(p, S_TEXT, t->line);
			if (s == NULL)
				return CT_ENOMEM;
			p->i += 2;
			*out = s;
			return statements[i].parse(p, s);
		}
	if ((t->s.n > 3 && memcmp(t->s.p, "end", 3) == 0) || is_name_at(p, 1, "else") ||
	    is_name_at(p, 1, "elif"))
		return jp_err(p, CT_EFORMAT, t->line, "unexpected '%.*s'", (int)t->s.n, t->s.p);
	return jp_err(p, CT_EUNSUPP, t->line, "statement '%.*s' is not supported",
		      (int)(t->s.n > 40 ? 40 : t->s.n), t->s.p);
}

static int at_end(const struct jp *p, const char *const *ends)
{
	for (; ends != NULL && *ends != NULL; ends++)
		if (cur(p)->t == TK_BBEGIN && is_name_at(p, 1, *ends))
			return 1;
	return 0;
}

static int p_out(struct jp *p, struct jstmt *s)
{
	int rc = p_expr(p, 1, &s->e);

	if (rc >= 0 && is_op(p, ","))
		return jp_err(p, CT_EUNSUPP, s->line, "a tuple in {{ }} is not supported");
	if (rc >= 0 && cur(p)->t != TK_VEND)
		rc = unexpected(p, "'}}'");
	p->i++;
	return rc;
}

/* Statements up to one of `ends` (left unconsumed) or the end. */
static int p_body(struct jp *p, const char *const *ends, struct jstmt **out)
{
	struct jstmt **tail = out, *s = NULL;
	int rc = enter(p);

	*out = NULL;
	while (rc >= 0 && cur(p)->t != TK_EOF && !at_end(p, ends)) {
		const struct tok *t = cur(p);

		if (t->t == TK_TEXT || t->t == TK_VBEGIN) {
			s = stmt(p, t->t == TK_TEXT ? S_TEXT : S_OUT, t->line);
			if (s == NULL)
				return CT_ENOMEM;
			s->text = t->s;
			p->i++;
			if (t->t == TK_VBEGIN)
				rc = p_out(p, s);
		} else if (t->t == TK_BBEGIN) {
			rc = p_block(p, &s);
		} else {
			rc = unexpected(p, "text or a tag");
		}
		if (rc < 0)
			return rc;
		*tail = s;
		tail = &s->next;
	}
	if (rc >= 0 && ends != NULL && !at_end(p, ends)) {
		const char *const *last = ends;

		while (last[1] != NULL)
			last++;
		rc = jp_err(p, CT_EFORMAT, cur(p)->line, "missing {%% %s %%}", *last);
	}
	p->depth--;
	return rc;
}

void ct_jinja_limits_default(struct ct_jinja_limits *lim)
{
	lim->max_src = 1u << 20;
	lim->max_out = 64u << 20;
	lim->max_mem = 256u << 20;
	lim->max_steps = 10000000u;
	lim->max_depth = 64;
}

int ct_jinja_parse(const char *src, size_t n, const struct ct_jinja_limits *lim,
		   const char *name, struct ct_jinja **out)
{
	struct jp p = { 0 };
	struct ct_jinja *t;
	int rc;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return ct_error(CT_ENOMEM, "out of memory parsing %s", name);
	if (lim != NULL)
		t->lim = *lim;
	else
		ct_jinja_limits_default(&t->lim);
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "template");
	p.t = t;
	p.line = 1;
	if (n > t->lim.max_src) {
		rc = ct_error(CT_ETOOBIG, "%s: %zu bytes, over the limit of %zu", t->name,
			      n, t->lim.max_src);
		goto out;
	}
	t->mem.max = 64 * n + (1u << 20);
	rc = normalise(&p, src, n);
	if (rc >= 0)
		rc = lex_all(&p);
	if (rc >= 0)
		rc = p_body(&p, NULL, &t->body);
	if (rc >= 0 && cur(&p)->t != TK_EOF)
		rc = unexpected(&p, "the end");
out:
	free(p.tk);
	if (rc < 0) {
		ct_jinja_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void ct_jinja_free(struct ct_jinja *t)
{
	if (t == NULL)
		return;
	ja_free(&t->mem);
	free(t);
}
