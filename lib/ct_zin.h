/*
 * ct_zin.h - inflating one zlib-format stream a piece at a time, through
 * Intel's ISA-L (igzip) when the build has it and zlib's inflate otherwise.
 *
 * The result uploads of a 124M model are ~300 MB of deflate: inflating
 * them was two thirds of the server's decode time. On this project's
 * streams ISA-L inflates 2.2-2.5x faster than zlib 1.2.13 (doc/results.md,
 * "Server cost of a real model size"). Both give the same bytes and the
 * same verdicts (header, adler-32, trailing bytes); CT_INFLATE=zlib in the
 * environment picks zlib in a build with ISA-L (the tests run both).
 *
 *   struct ct_zin z;
 *   rc = ct_zin_init(&z);             if (rc < 0) ...
 *   z.next_in = p; z.avail_in = n;    z.next_out = o; z.avail_out = m;
 *   rc = ct_zin_run(&z);              1: stream ended, 0: wants more, < 0
 *   ct_zin_end(&z);
 */
#ifndef CT_ZIN_H
#define CT_ZIN_H

#include <stddef.h>

struct ct_zin {
	const unsigned char *next_in;
	size_t avail_in;	/* input bytes at next_in (at most 4 GiB - 1 per run) */
	unsigned char *next_out;
	size_t avail_out;	/* room at next_out (same cap) */
	void *impl;		/* the library's state (owned) */
	int isal;		/* 1 when ISA-L inflates */
	int ended;
};

/* Start a zlib stream. Returns 0, CT_ENOMEM or CT_EZLIB. */
int ct_zin_init(struct ct_zin *z);

/* Inflate from next_in into next_out until the input is used up, the
 * output is full or the stream ends; the pointers and counts move on.
 * Returns 1 once the stream has ended and its checksum matched (input
 * bytes after the stream stay in avail_in: they were not consumed), 0 when
 * it has not ended yet (no error: it wants input or output space), or
 * CT_ECORRUPT for a stream that is not valid zlib. After an end or an
 * error, further calls return the same. */
int ct_zin_run(struct ct_zin *z);

/* Name of the inflater in use ("isa-l" or "zlib"), for logs and benches. */
const char *ct_zin_impl(const struct ct_zin *z);

/* Free the state (z may be zeroed or already ended: then a no-op). */
void ct_zin_end(struct ct_zin *z);

#endif
