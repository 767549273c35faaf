/*
 * ct_zin.c - piecewise zlib inflate through ISA-L or zlib (see ct_zin.h).
 */
#include "config.h"
#include "ct_zin.h"
#include "ct_err.h"
#include "ct_options.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

/* One run hands the library at most this much of either side (both
 * libraries count in 32 bits). */
#define ZIN_STEP_MAX ((size_t)UINT_MAX)

static size_t cap(size_t n)
{
	return n < ZIN_STEP_MAX ? n : ZIN_STEP_MAX;
}

static int use_isal(void)
{
#ifdef HAVE_ISAL
	const char *e = ct_opt_str(CT_OPT_INFLATE);

	return e == NULL || strcmp(e, "zlib") != 0;
#else
	return 0;
#endif
}

int ct_zin_init(struct ct_zin *z)
{
	memset(z, 0, sizeof(*z));
#ifdef HAVE_ISAL
	if (use_isal()) {
		struct inflate_state *s = malloc(sizeof(*s));

		if (s == NULL)
			return CT_ENOMEM;
		isal_inflate_init(s);
		s->crc_flag = ISAL_ZLIB;
		z->impl = s;
		z->isal = 1;
		return 0;
	}
#endif
	z_stream *zs = calloc(1, sizeof(*zs));

	if (zs == NULL)
		return CT_ENOMEM;
	if (inflateInit(zs) != Z_OK) {
		free(zs);
		return ct_error(CT_EZLIB, "inflateInit failed");
	}
	z->impl = zs;
	return 0;
}

#ifdef HAVE_ISAL
static int run_isal(struct ct_zin *z)
{
	struct inflate_state *s = z->impl;
	size_t in = cap(z->avail_in), out = cap(z->avail_out);
	int r;

	s->next_in = (uint8_t *)z->next_in;
	s->avail_in = (uint32_t)in;
	s->next_out = z->next_out;
	s->avail_out = (uint32_t)out;
	r = isal_inflate(s);
	/* After a failure the counts are not to be trusted: on a bad symbol
	 * ISA-L has left avail_in wrapped below zero (2^32 - 2 of 94 bytes),
	 * and moving next_in by that is undefined (found by fuzzing). */
	if (r != ISAL_DECOMP_OK || s->avail_in > in || s->avail_out > out)
		return ct_error(CT_ECORRUPT, "bad zlib stream (isa-l %d)", r);
	z->next_in += in - s->avail_in;
	z->avail_in -= in - s->avail_in;
	z->next_out += out - s->avail_out;
	z->avail_out -= out - s->avail_out;
	if (s->block_state != ISAL_BLOCK_FINISH)
		return 0;
	/* ISA-L reads ahead into a bit buffer: whole bytes left there at
	 * the end were not part of the stream */
	if (s->read_in_length > 0) {
		size_t back = (size_t)s->read_in_length / 8;

		z->next_in -= back;
		z->avail_in += back;
	}
	return 1;
}
#endif

static int run_zlib(struct ct_zin *z)
{
	z_stream *zs = z->impl;
	size_t in = cap(z->avail_in), out = cap(z->avail_out);
	int r;

	zs->next_in = (unsigned char *)z->next_in;
	zs->avail_in = (uInt)in;
	zs->next_out = z->next_out;
	zs->avail_out = (uInt)out;
	r = inflate(zs, Z_NO_FLUSH);
	z->next_in += in - zs->avail_in;
	z->avail_in -= in - zs->avail_in;
	z->next_out += out - zs->avail_out;
	z->avail_out -= out - zs->avail_out;
	if (r == Z_STREAM_END)
		return 1;
	if (r == Z_OK || r == Z_BUF_ERROR)	/* no progress possible: wants more */
		return 0;
	return ct_error(CT_ECORRUPT, "bad zlib stream (%d)", r);
}

int ct_zin_run(struct ct_zin *z)
{
	int rc;

	if (z->ended != 0)
		return z->ended > 0 ? 1 : ct_error(CT_ECORRUPT, "bad zlib stream (failed before)");
	if (z->impl == NULL)
		return ct_error(CT_ESTATE, "inflate: not started");
#ifdef HAVE_ISAL
	rc = z->isal ? run_isal(z) : run_zlib(z);
#else
	rc = run_zlib(z);
#endif
	if (rc != 0)
		z->ended = rc > 0 ? 1 : -1;
	return rc;
}

const char *ct_zin_impl(const struct ct_zin *z)
{
	return z->isal ? "isa-l" : "zlib";
}

void ct_zin_end(struct ct_zin *z)
{
	if (z->impl != NULL && !z->isal)
		inflateEnd(z->impl);
	free(z->impl);
	z->impl = NULL;
}
