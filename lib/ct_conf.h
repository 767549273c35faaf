/*
 * ct_conf.h - crowdtune's small config file format, with typed getters whose
 * errors name the file and line.
 *
 *   # comment            ; also a comment
 *   idle_minutes = 3
 *   name = "a \"quoted\" value \\ with escapes"
 *   [server]             # keys below are "server.port", ...
 *   port = 8080
 *   max_upload = 64M     # sizes: plain bytes or k/M/G/T suffix (1024-based)
 *
 * Keys are [A-Za-z0-9_.-]+; a key repeated (after section prefixing) is an
 * error. Unquoted values are trimmed and end at a '#' or ';' preceded by
 * whitespace. Every error is CT_ECONFIG with a detail like
 *   "prefs.conf:12: expected 'key = value'"
 *   "prefs.conf:3: idle_minutes: '3x' is not an integer"
 * readable with ct_errmsg(CT_ECONFIG).
 *
 * A ct_conf keeps keys in file order; values set with ct_conf_set() have
 * no line (errors then say "name: key: ..."). Not thread-safe for writes.
 */
#ifndef CT_CONF_H
#define CT_CONF_H

#include <stddef.h>
#include <stdint.h>

struct ct_conf;

/* Load and parse the file at path (capped at 1 MiB). On success *out is a
 * new ct_conf the caller frees with ct_conf_free(); on failure *out = NULL
 * and the error is CT_ECONFIG (syntax) or a file error (CT_ENOENT, ...). */
int ct_conf_load(const char *path, struct ct_conf **out);

/* Parse n bytes of text; name ("prefs.conf") is used in error messages and
 * copied. Same ownership as ct_conf_load(). */
int ct_conf_parse(const char *text, size_t n, const char *name, struct ct_conf **out);

/* An empty config named "(new)"; free with ct_conf_free(). */
int ct_conf_new(struct ct_conf **out);

/* Raw value of key, or NULL if absent. Owned by c, valid until the key is
 * set again or c is freed. */
const char *ct_conf_get(const struct ct_conf *c, const char *key);

/* *out = the value, or def if the key is absent. Returns 0. */
int ct_conf_get_str(const struct ct_conf *c, const char *key, const char *def,
		    const char **out);

/* Integer (decimal, or 0x hex) in [min, max]; def if absent (def is not
 * range-checked). Not an integer or out of range -> CT_ECONFIG naming
 * file:line and key; *out untouched on failure. */
int ct_conf_get_int(const struct ct_conf *c, const char *key, long def, long min,
		    long max, long *out);

/* Finite double in [min, max]; def if absent. Errors as ct_conf_get_int. */
int ct_conf_get_double(const struct ct_conf *c, const char *key, double def,
		       double min, double max, double *out);

/* Boolean: true/false, yes/no, on/off, 1/0 (case-insensitive); def if
 * absent. *out is 1 or 0. Anything else -> CT_ECONFIG. */
int ct_conf_get_bool(const struct ct_conf *c, const char *key, int def, int *out);

/* Size in bytes: "123", "10k", "5M", "2G", "1T" (also kB/KiB/MB/MiB...;
 * 1024-based); def if absent. Overflow or junk -> CT_ECONFIG. */
int ct_conf_get_size(const struct ct_conf *c, const char *key, uint64_t def,
		     uint64_t *out);

/* Set key (same syntax as in files) to value (copied), replacing any old
 * value. Value must not contain control characters other than tab.
 * Returns 0, CT_EINVAL or CT_ENOMEM. */
int ct_conf_set(struct ct_conf *c, const char *key, const char *value);

/* Write c to path atomically, one "key = value" per line in order, values
 * quoted when needed, so ct_conf_load() reads back the same pairs (keys
 * with a '.' are written as dotted keys, not sections). Returns 0 or a
 * CT_E* file error. */
int ct_conf_save(const struct ct_conf *c, const char *path);

/* Number of keys, and the i-th key in order (NULL if i >= count). */
size_t ct_conf_count(const struct ct_conf *c);
const char *ct_conf_key_at(const struct ct_conf *c, size_t i);

/* Free c and all its strings; NULL is a no-op. */
void ct_conf_free(struct ct_conf *c);

#endif
