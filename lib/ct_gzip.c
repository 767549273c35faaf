/*
 * ct_gzip.c - gzip/zlib compression with an inflate cap (see ct_gzip.h).
 *
 * One deflate loop and one inflate loop serve both buffers and files: they
 * pull input from a `struct src` and push output through a `struct sink`,
 * 64 KiB at a time, so memory use is bounded by the chunk size plus what
 * the sink keeps (a capped ct_buf, or nothing for a file).
 */
#include "ct_gzip.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_os.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#define CHUNK (64u * 1024)
#define WBITS_ZLIB 15
#define WBITS_GZIP (15 + 16)

/* Input: a memory block (fd < 0) or a file read in chunks into buf. */
struct src {
	const unsigned char *mem;
	size_t left;		/* memory bytes not yet handed out */
	int fd;
	const char *path;
	unsigned char *buf;	/* CHUNK bytes when reading a file */
};

/* Output: appended to a ct_buf, or written to an atomic file. */
struct sink {
	struct ct_buf *buf;
	struct ct_afile *af;
	size_t total;		/* bytes pushed so far */
	size_t max;		/* cap on total (inflate only; 0 = none) */
};

/* Refill zs's input if empty. Returns 1 if there is input, 0 at the end,
 * or a CT_E* code. */
static int src_fill(struct src *s, z_stream *zs)
{
	if (zs->avail_in > 0)
		return 1;
	if (s->fd < 0) {
		size_t n = s->left > UINT_MAX ? UINT_MAX : s->left;

		zs->next_in = (unsigned char *)s->mem;
		zs->avail_in = (uInt)n;
		s->mem += n;
		s->left -= n;
		return n > 0;
	}
	for (;;) {
		ssize_t r = read(s->fd, s->buf, CHUNK);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return ct_error_errno("%s: read failed", s->path);
		zs->next_in = s->buf;
		zs->avail_in = (uInt)r;
		return r > 0;
	}
}

static int sink_push(struct sink *k, const unsigned char *p, size_t n)
{
	if (n == 0)
		return 0;
	if (k->max > 0 && n > k->max - k->total)
		return ct_error(CT_ETOOBIG, "inflated data over the limit of %zu bytes", k->max);
	k->total += n;
	if (k->buf != NULL)
		return ct_buf_append(k->buf, p, n);
	return ct_afile_write(k->af, p, n);
}

static int check_level(int level)
{
	if (level < -1 || level > 9)
		return ct_error(CT_EINVAL, "compression level %d not in -1..9", level);
	return 0;
}

/* Deflate everything from s into k. */
static int deflate_run(struct src *s, struct sink *k, int level, int wbits)
{
	unsigned char out[CHUNK];
	z_stream zs;
	int rc, zrc, flush;

	rc = check_level(level);
	if (rc < 0)
		return rc;
	memset(&zs, 0, sizeof(zs));
	zrc = deflateInit2(&zs, level, Z_DEFLATED, wbits, 8, Z_DEFAULT_STRATEGY);
	if (zrc != Z_OK)
		return zrc == Z_MEM_ERROR ? CT_ENOMEM : ct_error(CT_EZLIB, "deflateInit2: %d", zrc);
	do {
		rc = src_fill(s, &zs);
		if (rc < 0)
			goto out;
		flush = rc == 0 ? Z_FINISH : Z_NO_FLUSH;
		do {
			zs.next_out = out;
			zs.avail_out = sizeof(out);
			zrc = deflate(&zs, flush);
			if (zrc == Z_STREAM_ERROR) {
				rc = ct_error(CT_EZLIB, "deflate failed");
				goto out;
			}
			rc = sink_push(k, out, sizeof(out) - zs.avail_out);
			if (rc < 0)
				goto out;
		} while (zs.avail_out == 0);
	} while (flush != Z_FINISH);
	rc = zrc == Z_STREAM_END ? 0 : ct_error(CT_EZLIB, "deflate did not finish");
out:
	deflateEnd(&zs);
	return rc;
}

/* Map an inflate() failure to a CT_E* code. */
static int inflate_error(z_stream *zs, int zrc)
{
	const char *msg = zs->msg ? zs->msg : "corrupt data";

	switch (zrc) {
	case Z_MEM_ERROR:
		return CT_ENOMEM;
	case Z_DATA_ERROR:
	case Z_NEED_DICT:
		return ct_error(CT_EFORMAT, "compressed data is corrupt: %s", msg);
	default:
		return ct_error(CT_EZLIB, "inflate failed (%d): %s", zrc, msg);
	}
}

/* After a stream ended: another gzip member may follow (gzip only); for
 * zlib any trailing byte is an error. Returns 1 to go on, 0 when done. */
static int inflate_next_member(struct src *s, z_stream *zs, int wbits)
{
	int rc = src_fill(s, zs);

	if (rc <= 0)
		return rc;
	if (wbits != WBITS_GZIP)
		return ct_error(CT_EFORMAT, "trailing data after the compressed stream");
	if (inflateReset(zs) != Z_OK)
		return ct_error(CT_EZLIB, "inflateReset failed");
	return 1;
}

static int inflate_loop(struct src *s, struct sink *k, z_stream *zs, int wbits)
{
	unsigned char out[CHUNK];
	int rc, zrc;

	for (;;) {
		rc = src_fill(s, zs);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return ct_error(CT_EFORMAT, "compressed data is truncated");
		do {
			zs->next_out = out;
			zs->avail_out = sizeof(out);
			zrc = inflate(zs, Z_NO_FLUSH);
			if (zrc != Z_OK && zrc != Z_STREAM_END && zrc != Z_BUF_ERROR)
				return inflate_error(zs, zrc);
			rc = sink_push(k, out, sizeof(out) - zs->avail_out);
			if (rc < 0)
				return rc;
			if (zrc == Z_STREAM_END) {
				rc = inflate_next_member(s, zs, wbits);
				if (rc <= 0)
					return rc;
			}
		} while (zs->avail_out == 0 || zs->avail_in > 0);
	}
}

/* Inflate everything from s into k. */
static int inflate_run(struct src *s, struct sink *k, int wbits)
{
	z_stream zs;
	int rc, zrc;

	memset(&zs, 0, sizeof(zs));
	zrc = inflateInit2(&zs, wbits);
	if (zrc != Z_OK)
		return zrc == Z_MEM_ERROR ? CT_ENOMEM : ct_error(CT_EZLIB, "inflateInit2: %d", zrc);
	rc = inflate_loop(s, k, &zs, wbits);
	inflateEnd(&zs);
	return rc;
}

static void mem_src(struct src *s, const void *in, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->mem = in;
	s->left = n;
	s->fd = -1;
}

/* Buffer front end; on failure out->len goes back to where it was. */
static int buf_run(const void *in, size_t n, struct ct_buf *out, int level, int wbits,
		   int compress)
{
	struct sink k = { .buf = out };
	struct src s;
	size_t old = out->len;
	int rc;

	mem_src(&s, in, n);
	if (compress) {
		rc = deflate_run(&s, &k, level, wbits);
	} else {
		if (out->max == 0)
			return ct_error(CT_EINVAL, "decompressing without a size cap");
		k.max = out->max > old ? out->max - old : 0;
		if (k.max == 0)
			return ct_error(CT_ETOOBIG, "no room left under the cap");
		rc = inflate_run(&s, &k, wbits);
	}
	if (rc < 0 && out->data != NULL) {
		out->len = old;
		out->data[old] = '\0';
	}
	return rc;
}

int ct_gzip_compress(const void *in, size_t n, int level, struct ct_buf *out)
{
	return buf_run(in, n, out, level, WBITS_GZIP, 1);
}

int ct_gzip_decompress(const void *in, size_t n, struct ct_buf *out)
{
	return buf_run(in, n, out, 0, WBITS_GZIP, 0);
}

int ct_zlib_compress(const void *in, size_t n, int level, struct ct_buf *out)
{
	return buf_run(in, n, out, level, WBITS_ZLIB, 1);
}

int ct_zlib_decompress(const void *in, size_t n, struct ct_buf *out)
{
	return buf_run(in, n, out, 0, WBITS_ZLIB, 0);
}

int ct_gzip_is_gzip(const void *p, size_t n)
{
	const unsigned char *c = p;

	return n >= 3 && c[0] == 0x1f && c[1] == 0x8b && c[2] == 0x08;
}

/* File front end: src -> dst through an atomic file. */
static int file_run(const char *src, const char *dst, int level, size_t max_out,
		    int compress)
{
	struct ct_afile af = { .fd = -1 };
	struct sink k = { .af = &af, .max = max_out };
	struct src s = { .fd = -1, .path = src };
	int rc;

	s.buf = malloc(CHUNK);
	if (s.buf == NULL)
		return CT_ENOMEM;
	s.fd = ct_os_open(src, O_RDONLY | O_CLOEXEC);
	if (s.fd < 0) {
		rc = ct_error_errno("%s: cannot open", src);
		goto out;
	}
	rc = ct_afile_open(&af, dst, 0644);
	if (rc < 0)
		goto out;
	if (compress)
		rc = deflate_run(&s, &k, level, WBITS_GZIP);
	else
		rc = inflate_run(&s, &k, WBITS_GZIP);
	if (rc == CT_EFORMAT || rc == CT_ETOOBIG) {
		char why[256];

		/* Copy first: ct_errmsg() points at the buffer ct_error() fills. */
		snprintf(why, sizeof(why), "%s", ct_errmsg(rc));
		rc = ct_error(rc, "%s: %s", src, why);
	}
	if (rc == 0)
		rc = ct_afile_commit(&af);
out:
	ct_afile_abort(&af);
	if (s.fd >= 0)
		close(s.fd);
	free(s.buf);
	return rc;
}

int ct_gzip_file(const char *src, const char *dst, int level)
{
	return file_run(src, dst, level, 0, 1);
}

int ct_gunzip_file(const char *src, const char *dst, size_t max_out)
{
	if (max_out == 0)
		return ct_error(CT_EINVAL, "%s: decompressing without a size cap", src);
	return file_run(src, dst, 0, max_out, 0);
}
