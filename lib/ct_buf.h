/*
 * ct_buf.h - a growable byte buffer with a hard cap.
 *
 * Every buffer a peer can grow (request bodies, XML replies, downloads) is a
 * ct_buf with a `max`: appending past it fails with CT_ETOOBIG and leaves the
 * buffer as it was. The data is always NUL-terminated one byte past `len`
 * (not counted), so text can be used as a C string.
 *
 *   struct ct_buf b;
 *   ct_buf_init(&b, 1 << 20);
 *   rc = ct_buf_appendf(&b, "<x>%d</x>", n); if (rc < 0) goto out;
 *   ...
 *   ct_buf_free(&b);
 */
#ifndef CT_BUF_H
#define CT_BUF_H

#include <stddef.h>

struct ct_buf {
	unsigned char *data;	/* owned; NULL until the first append */
	size_t len;		/* bytes in use */
	size_t cap;		/* bytes allocated (excluding the NUL slot) */
	size_t max;		/* hard cap on len; 0 means SIZE_MAX */
};

#define CT_BUF_INIT(maxbytes) { NULL, 0, 0, (maxbytes) }

/* Initialise an empty buffer that may hold at most `max` bytes (0: no cap). */
void ct_buf_init(struct ct_buf *b, size_t max);

/* Release the memory; the buffer is empty (same cap) and reusable. */
void ct_buf_free(struct ct_buf *b);

/* Forget the contents, keep the memory. */
void ct_buf_reset(struct ct_buf *b);

/* Make room for `extra` more bytes. CT_ETOOBIG past the cap, CT_ENOMEM. */
int ct_buf_reserve(struct ct_buf *b, size_t extra);

int ct_buf_append(struct ct_buf *b, const void *data, size_t n);
int ct_buf_appends(struct ct_buf *b, const char *s);
int ct_buf_appendf(struct ct_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Contents as a NUL-terminated string ("" for an empty buffer). */
const char *ct_buf_cstr(const struct ct_buf *b);

/* Hand the memory to the caller (free() it; may be NULL when empty), leaving
 * the buffer empty. *len_out, when not NULL, receives the length. */
unsigned char *ct_buf_steal(struct ct_buf *b, size_t *len_out);

#endif
