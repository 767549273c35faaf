/*
 * ct_gzip.h - gzip and raw zlib compression of buffers and files (zlib),
 * with a hard cap on the inflated size.
 *
 * Anything a peer sends may be a zip bomb (a few KB that inflate to GBs), so
 * decompression writes into a ct_buf and its `max` is the cap: inflating past
 * it stops with CT_ETOOBIG after at most `max` bytes were allocated. A
 * decompressing call with out->max == 0 (no cap) is refused with CT_EINVAL.
 *
 *   struct ct_buf out = CT_BUF_INIT(64 << 20);
 *   rc = ct_gzip_decompress(body, len, &out); if (rc < 0) goto out;
 */
#ifndef CT_GZIP_H
#define CT_GZIP_H

#include <stddef.h>

#include "ct_buf.h"

/* Compression levels: zlib's 0..9, or -1 for zlib's default (6). */
#define CT_GZIP_DEFAULT_LEVEL (-1)

/* Compress n bytes at in as one gzip member appended to out. Returns 0,
 * CT_EINVAL (bad level), CT_ETOOBIG (out's cap), CT_ENOMEM or CT_EZLIB. On
 * failure out->len is as it was. */
int ct_gzip_compress(const void *in, size_t n, int level, struct ct_buf *out);

/* Inflate the gzip stream (one or more concatenated members) at in,
 * appending to out. out->max caps out->len: over it -> CT_ETOOBIG. Bad
 * header, bad CRC, trailing garbage -> CT_EFORMAT; truncated stream ->
 * CT_EFORMAT; other zlib failures -> CT_EZLIB. On failure out->len is as it
 * was (the memory may have grown). */
int ct_gzip_decompress(const void *in, size_t n, struct ct_buf *out);

/* 1 if p starts with the gzip magic (1f 8b 08), else 0. */
int ct_gzip_is_gzip(const void *p, size_t n);

/* Raw zlib stream (RFC 1950, "deflate with adler32") versions of the two
 * calls above, same arguments, errors and cap semantics. */
int ct_zlib_compress(const void *in, size_t n, int level, struct ct_buf *out);
int ct_zlib_decompress(const void *in, size_t n, struct ct_buf *out);

/* gzip the file src into dst (written atomically: a crash leaves either the
 * old dst or the whole new one). Streams; memory use is constant. Returns
 * 0 or a CT_E* code with the failing path in the detail. */
int ct_gzip_file(const char *src, const char *dst, int level);

/* gunzip src into dst (atomically); more than max_out inflated bytes ->
 * CT_ETOOBIG and dst is left untouched (max_out 0 -> CT_EINVAL). */
int ct_gunzip_file(const char *src, const char *dst, size_t max_out);

#endif
