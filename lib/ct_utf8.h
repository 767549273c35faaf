/*
 * ct_utf8.h - UTF-8 checks for strings a peer sends (host descriptions,
 * error messages, account and team names): the database stores utf8mb4
 * and refuses a byte sequence that is not UTF-8 (MariaDB error 1366), so
 * every such string is either cut on a character boundary and scrubbed,
 * or refused, before it reaches SQL.
 *
 * "Valid" is RFC 3629: shortest form, no surrogates (U+D800..DFFF), at
 * most U+10FFFF, at most 4 bytes a character; NUL ends a C string and is
 * never part of one. No allocation, no locale, thread-safe.
 */
#ifndef CT_UTF8_H
#define CT_UTF8_H

#include <stddef.h>

/* Length in bytes (1..4) of the valid UTF-8 character at s[0..n), or 0
 * when s[0] does not start one (invalid, overlong, surrogate, > U+10FFFF,
 * or cut short by n). */
size_t ct_utf8_char_len(const char *s, size_t n);

/* 1 when the NUL-terminated s is entirely valid UTF-8, else 0. */
int ct_utf8_valid(const char *s);

/* Make the NUL-terminated s fit a column for descriptive text, in place:
 * each byte that does not belong to a valid character becomes '?', then s
 * is cut at the last character boundary at or before max_bytes bytes (a
 * multibyte character that would cross the limit is dropped whole).
 * Returns the new length; s stays NUL-terminated and valid UTF-8. */
size_t ct_utf8_fit(char *s, size_t max_bytes);

struct ct_buf;

/* Append n bytes of s to out as valid UTF-8 text: each byte that does not
 * start a valid character, and each control character but \n and \t
 * (NUL and DEL too), becomes U+FFFD. Returns 0 or a ct_buf error. */
int ct_utf8_clean(const char *s, size_t n, struct ct_buf *out);

#endif
