/*
 * ct_jinja_int.h - the insides of lib/ct_jinja: values, the syntax tree,
 * the arena both live in, and the state of one render. Shared by
 * ct_jinja_parse.c (lexer and parser), ct_jinja_eval.c (statements and
 * expressions), ct_jinja_lib.c (filters, tests, methods, globals) and
 * ct_jinja_val.c (values: conversion, truth, equality, text, JSON).
 *
 * Values are immutable (as in transformers' ImmutableSandboxedEnvironment)
 * except namespaces, so they are passed by value and share their parts;
 * all of a render's memory comes from one capped arena freed at its end.
 */
#ifndef CT_JINJA_INT_H
#define CT_JINJA_INT_H

#include <stddef.h>
#include <stdint.h>

#include "ct_buf.h"
#include "ct_jinja.h"

/* ---- arena ---- */

struct jchunk;
struct jarena {
	struct jchunk *head;
	size_t used, max;	/* bytes handed out; cap (0: none) */
};

/* n bytes (8-aligned, zeroed) or NULL: over the cap or out of memory. */
void *ja_alloc(struct jarena *a, size_t n);
void ja_free(struct jarena *a);

/* ---- values ---- */

enum jt { JT_UNDEF, JT_NONE, JT_BOOL, JT_INT, JT_FLOAT, JT_STR, JT_LIST,
	  JT_DICT, JT_NS, JT_LOOP, JT_FUNC, JT_METHOD, JT_MACRO };

struct jstr {
	const char *p;
	size_t n;
};

struct jlist;
struct jdict;
struct jloop;
struct jval {
	uint8_t t;		/* enum jt */
	uint8_t tuple;		/* JT_LIST made as a tuple: repr (a, b) */
	uint16_t id;		/* JT_FUNC: global; JT_METHOD: method */
	union {
		int64_t i;		/* JT_BOOL, JT_INT */
		double f;		/* JT_FLOAT */
		struct jstr s;		/* JT_STR; JT_UNDEF: the name (may be empty) */
		struct jlist *l;	/* JT_LIST */
		struct jdict *d;	/* JT_DICT, JT_NS */
		struct jloop *loop;	/* JT_LOOP */
		const struct jval *self; /* JT_METHOD: the receiver */
		const struct jstmt *mac; /* JT_MACRO: its definition */
	} u;
};

struct jlist {
	size_t n;
	struct jval v[];
};

/* Insertion-ordered; string keys only (JSON's, and the templates'). */
struct jdict {
	size_t n, cap;
	struct jstr *k;
	struct jval *v;
};

struct jloop {
	const struct jlist *items;
	size_t i;
};

/* ---- syntax tree ---- */

enum jop { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_POW,
	   OP_CONCAT, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_IN, OP_NOTIN,
	   OP_NOT, OP_NEG, OP_POS };

enum je { E_CONST, E_NAME, E_ATTR, E_ITEM, E_SLICE, E_CALL, E_FILTER,
	  E_TEST, E_UNARY, E_BIN, E_AND, E_OR, E_COND, E_LIST, E_DICT };

struct jnode {
	uint8_t kind;		/* enum je */
	uint8_t op;		/* E_UNARY, E_BIN: enum jop; E_TEST: negated */
	uint8_t tuple;		/* E_LIST written as a tuple */
	uint16_t fn;		/* E_FILTER, E_TEST: index in the table */
	int line;
	struct jval cv;		/* E_CONST */
	struct jstr name;	/* E_NAME, E_ATTR */
	struct jnode *a, *b, *c; /* operands; E_SLICE: a[b:c:args[0]] */
	int nargs, nkw;		/* E_CALL/E_FILTER/E_TEST: args after a; E_LIST/E_DICT: items */
	struct jnode **args;	/* E_DICT: keys then values */
	struct jstr *kwname;
	struct jnode **kw;
};

enum js { S_TEXT, S_OUT, S_SET, S_SETBLOCK, S_IF, S_FOR, S_BREAK, S_CONTINUE,
	  S_GENERATION, S_MACRO, S_FILTER };

struct jstmt {
	uint8_t kind;		/* enum js */
	uint8_t orelif;		/* S_IF: orelse is the elif's S_IF */
	int line;
	struct jstmt *next;
	struct jstr text;	/* S_TEXT */
	struct jnode *e;	/* S_OUT, S_SET value, S_IF cond, S_FOR iterable */
	struct jnode *cond;	/* S_FOR: the `if` filter */
	struct jstr target[8];	/* S_SET/S_FOR names; S_MACRO: name, then parameters */
	struct jnode *dflt[8];	/* S_MACRO: parameters' defaults (NULL: none) */
	int ntarget;
	struct jstr attr;	/* S_SET ns.attr: target[0] . attr */
	struct jstmt *body, *orelse; /* S_IF / S_FOR / S_SETBLOCK / S_GENERATION /
				      * S_MACRO / S_FILTER (e: the filter, e->a NULL) */
};

struct ct_jinja {
	struct jarena mem;
	struct jstmt *body;
	struct ct_jinja_limits lim;
	char name[64];
};

/* ---- a render ---- */

struct jvar {
	struct jstr name;
	struct jval v;
};

struct jframe {
	struct jvar *v;
	size_t n, cap;
};

#define J_MAX_FRAMES 80
/* Macro calls open at once (recursion too): each may hold expressions and
 * statements max_depth deep on the C stack. */
#define J_MAX_CALLS 20

struct jrun {
	const struct ct_jinja *t;
	const struct ct_jinja_env *env;
	struct jarena mem;
	struct ct_buf *out;
	uint64_t steps;
	int depth;
	int line;		/* of the statement or expression running */
	int raised;
	int err;		/* a detail was recorded (jr_err) */
	int base;		/* frames below it (but 0) are hidden: a macro's caller's */
	int calls;		/* macro calls open */
	struct jframe fr[J_MAX_FRAMES];
	int nfr;
};

/* Errors of a render, naming the template and the line: CT_EINVAL (the
 * template's fault), CT_EUNSUPP, CT_ETOOBIG, CT_ENOMEM. */
int jr_err(struct jrun *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Charge `units` of work; CT_ETOOBIG past max_steps. */
int jr_charge(struct jrun *r, uint64_t units);
void *jr_alloc(struct jrun *r, size_t n);	/* NULL: jr_err already said why */
/* Double the array *arr of *cap elements of `elem` bytes (8 when empty),
 * keeping its first n. */
int jr_grow(struct jrun *r, void **arr, size_t *cap, size_t n, size_t elem);

/* ---- values (ct_jinja_val.c) ---- */

static inline struct jval jv_undef(void) { struct jval v = { 0 }; v.t = JT_UNDEF; return v; }
static inline struct jval jv_none(void) { struct jval v = { 0 }; v.t = JT_NONE; return v; }
static inline struct jval jv_bool(int b) { struct jval v = { 0 }; v.t = JT_BOOL; v.u.i = !!b; return v; }
static inline struct jval jv_int(int64_t i) { struct jval v = { 0 }; v.t = JT_INT; v.u.i = i; return v; }
static inline struct jval jv_float(double f) { struct jval v = { 0 }; v.t = JT_FLOAT; v.u.f = f; return v; }
static inline struct jval jv_str(const char *p, size_t n)
{
	struct jval v = { 0 };

	v.t = JT_STR;
	v.u.s.p = p;
	v.u.s.n = n;
	return v;
}

int jv_from_json(struct jrun *r, const struct ct_jv *j, int depth, struct jval *out);
int jv_truthy(const struct jval *v);
const char *jv_typename(const struct jval *v);
/* 1 equal, 0 not (Python's ==; 1 == 1.0 == True). */
int jv_equal(const struct jval *a, const struct jval *b);
/* Python's <: -1/0/1 in *cmp, or CT_EINVAL for types that do not order. */
int jv_compare(struct jrun *r, const struct jval *a, const struct jval *b, int *cmp);
/* Python's str() (undefined: "") appended to b; CT_ETOOBIG/CT_ENOMEM. */
int jv_str_append(struct jrun *r, struct ct_buf *b, const struct jval *v);
/* str(v) as a string value (strings themselves not copied). */
int jv_to_str(struct jrun *r, const struct jval *v, struct jstr *out);
/* json.dumps(v, ensure_ascii=False, indent=indent (<0: none),
 * separators=(item, key), sort_keys) appended to b. */
int jv_json_append(struct jrun *r, struct ct_buf *b, const struct jval *v,
		   int indent, const char *item_sep, const char *key_sep,
		   int sort_keys, int depth);
struct jlist *jl_new(struct jrun *r, size_t n);
struct jdict *jd_new(struct jrun *r, size_t cap);
/* The value of key k, or NULL. */
struct jval *jd_get(const struct jdict *d, const char *k, size_t kn);
int jd_set(struct jrun *r, struct jdict *d, struct jstr k, struct jval v);
/* A copy of n bytes in the render's arena. */
int jr_strdup(struct jrun *r, const char *p, size_t n, struct jstr *out);
/* Length in code points (invalid bytes count one each). */
size_t ju_len(const char *p, size_t n);
/* Byte offset of code point i (clamped to n). */
size_t ju_off(const char *p, size_t n, size_t i);
/* Python's str.isspace for one code point. */
int ju_space(uint32_t cp);

/* ---- the library (ct_jinja_lib.c) ---- */

typedef int (*jfilter_fn)(struct jrun *r, const struct jnode *n, struct jval *v,
			  const struct jval *args, int nargs,
			  const struct jstr *kwn, const struct jval *kwv, int nkw);
typedef int (*jtest_fn)(struct jrun *r, const struct jval *v,
			const struct jval *args, int nargs, int *res);

/* Index of filter/test `name` in its table, or -1. */
int jl_filter_find(const char *name, size_t n);
int jl_test_find(const char *name, size_t n);
const char *jl_test_name(int i);
int jl_filter_run(struct jrun *r, int i, struct jval *v, const struct jval *args,
		  int nargs, const struct jstr *kwn, const struct jval *kwv, int nkw);
int jl_test_run(struct jrun *r, int i, const struct jval *v,
		const struct jval *args, int nargs, int *res);
/* obj.name for strings, dicts, namespaces, loops: 1 and *out when there
 * is such an attribute (a bound method, a loop's field), 0 when not. */
int jl_attr(struct jrun *r, const struct jval *obj, const char *name, size_t n,
	    struct jval *out);
/* Call a global function or bound method. */
int jl_call(struct jrun *r, const struct jval *fn, const struct jval *args,
	    int nargs, const struct jstr *kwn, const struct jval *kwv, int nkw,
	    struct jval *out);
/* The globals a render starts with, added to frame 0. */
int jl_globals(struct jrun *r, struct jframe *f);

/* ---- frames (ct_jinja_eval.c) ---- */
int jf_set(struct jrun *r, struct jframe *f, struct jstr name, struct jval v);

#endif
