/*
 * ct_jv.h - a small, strict JSON reader into a tree of values, for the
 * files that come with Hugging Face models (config.json, the header of a
 * .safetensors file). RFC 8259 syntax; strings are UTF-8 with escapes
 * decoded (\u pairs joined; a lone surrogate or a NUL is refused); numbers
 * are kept as their text and as a double. Every size is capped by the
 * caller's limits (input bytes, values, depth).
 *
 *   struct ct_jv *root;
 *   rc = ct_jv_parse(text, n, &lim, "config.json", &root);
 *   const struct ct_jv *h = ct_jv_get(root, "hidden_size");
 *   ...
 *   ct_jv_free(root);
 */
#ifndef CT_JV_H
#define CT_JV_H

#include <stddef.h>
#include <stdint.h>

enum ct_jv_type { CT_JV_NULL, CT_JV_FALSE, CT_JV_TRUE, CT_JV_NUM, CT_JV_STR,
		  CT_JV_ARR, CT_JV_OBJ };

struct ct_jv {
	enum ct_jv_type type;
	double num;		/* CT_JV_NUM */
	char *str;		/* CT_JV_STR: the decoded string; CT_JV_NUM: its text */
	size_t n;		/* CT_JV_ARR / CT_JV_OBJ: number of items */
	struct ct_jv *items;	/* n values */
	char **keys;		/* CT_JV_OBJ: n keys (decoded) */
};

struct ct_jv_limits {
	size_t max_bytes;	/* input size */
	size_t max_values;	/* values in the whole tree */
	int max_depth;		/* nesting of arrays and objects */
};

/* Parse n bytes of s (exactly one JSON value, whitespace around it). *out
 * is owned by the caller (ct_jv_free). Returns 0, CT_EFORMAT naming `name`
 * and the byte offset, CT_ERANGE (over a limit) or CT_ENOMEM. */
int ct_jv_parse(const char *s, size_t n, const struct ct_jv_limits *lim,
		const char *name, struct ct_jv **out);

/* Free a tree from ct_jv_parse; NULL is a no-op. */
void ct_jv_free(struct ct_jv *v);

/* Member `key` of object o (the last one if repeated), or NULL (also when
 * o is NULL or not an object). */
const struct ct_jv *ct_jv_get(const struct ct_jv *o, const char *key);

/* v as an integer in [lo, hi]: 0 and *out, or CT_EFORMAT naming `what`
 * (not a number, not integral, out of range). */
int ct_jv_int(const struct ct_jv *v, int64_t lo, int64_t hi, const char *what,
	      int64_t *out);

#endif
