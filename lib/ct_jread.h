/*
 * ct_jread.h - a strict JSON (RFC 8259) reader for configuration files
 * that come from elsewhere (Hugging Face's tokenizer.json): the whole text
 * is parsed into a flat array of nodes once, then walked by index. Strings
 * stay in the source text and are unescaped on demand.
 *
 * Limits: nesting depth CT_JREAD_MAX_DEPTH and a node count the caller
 * gives (every value, every object key, is one node); over either the
 * parse fails with CT_ETOOBIG. The source text must outlive the document.
 *
 *   struct ct_jread *j;
 *   rc = ct_jread_parse(text, len, 1 << 24, &j);   if (rc < 0) goto out;
 *   int model = ct_jread_get(j, ct_jread_root(j), "model");
 *   for (int k = ct_jread_first(j, vocab); k >= 0; k = ct_jread_next(j, k))
 *           ... key node k, its value node k + 1 (objects) ...
 *   ct_jread_free(j);
 *
 * Node indexes are int; -1 means "none". Read-only after parse.
 */
#ifndef CT_JREAD_H
#define CT_JREAD_H

#include <stddef.h>

#include "ct_buf.h"

#define CT_JREAD_MAX_DEPTH 64

enum ct_jread_type {
	CT_JREAD_NULL, CT_JREAD_FALSE, CT_JREAD_TRUE, CT_JREAD_NUMBER,
	CT_JREAD_STRING, CT_JREAD_ARRAY, CT_JREAD_OBJECT,
};

struct ct_jread;

/* Parse n bytes of text (UTF-8; a leading BOM is refused like any other
 * stray byte). Duplicate object keys are allowed here (callers that care
 * check). Returns 0, CT_EFORMAT (detail: what and the byte offset),
 * CT_ETOOBIG (depth, max_nodes) or CT_ENOMEM; *out NULL on failure, else
 * owned by the caller (ct_jread_free). */
int ct_jread_parse(const char *text, size_t n, int max_nodes, struct ct_jread **out);

/* Release j; NULL is a no-op. */
void ct_jread_free(struct ct_jread *j);

/* The top-level value (node 0). */
int ct_jread_root(const struct ct_jread *j);

enum ct_jread_type ct_jread_type(const struct ct_jread *j, int node);

/* Children of an array or object: its element (array) or key (object)
 * count. An object's key node k has its value at node k + 1. */
int ct_jread_count(const struct ct_jread *j, int node);

/* The first element / key of an array or object, or -1 when empty or not a
 * container; ct_jread_next gives the following sibling or -1. */
int ct_jread_first(const struct ct_jread *j, int node);
int ct_jread_next(const struct ct_jread *j, int node);

/* The value of key `key` in object obj (the first such key), or -1 when obj
 * is not an object or has no such key. */
int ct_jread_get(const struct ct_jread *j, int obj, const char *key);

/* Append the unescaped UTF-8 bytes of string node s to out (\u escapes
 * with surrogate pairs decoded; a lone surrogate is CT_EFORMAT). Returns 0,
 * CT_EINVAL (not a string), CT_EFORMAT or the buffer's error. */
int ct_jread_str(const struct ct_jread *j, int s, struct ct_buf *out);

/* 1 when string node s equals the NUL-terminated lit (after unescaping),
 * else 0 (also when s is not a string). */
int ct_jread_str_eq(const struct ct_jread *j, int s, const char *lit);

/* An integer number node in [lo, hi] into *v. CT_EFORMAT otherwise (a
 * fraction, an exponent, out of range, not a number). */
int ct_jread_int(const struct ct_jread *j, int node, long long lo, long long hi,
		long long *v);

/* The byte offset of node in the source (for error messages). */
size_t ct_jread_offset(const struct ct_jread *j, int node);

#endif
