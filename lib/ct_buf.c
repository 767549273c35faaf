/*
 * ct_buf.c - see ct_buf.h.
 */
#include "ct_buf.h"
#include "ct_err.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t buf_max(const struct ct_buf *b)
{
	return b->max ? b->max : SIZE_MAX - 1;
}

void ct_buf_init(struct ct_buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

void ct_buf_free(struct ct_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void ct_buf_reset(struct ct_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

int ct_buf_reserve(struct ct_buf *b, size_t extra)
{
	size_t need, ncap;
	unsigned char *p;

	if (extra > buf_max(b) - b->len)
		return ct_error(CT_ETOOBIG, "buffer over its limit of %zu bytes", buf_max(b));
	need = b->len + extra;
	if (need <= b->cap && b->data != NULL)
		return 0;
	ncap = b->cap ? b->cap : 64;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	if (ncap > buf_max(b))
		ncap = buf_max(b);
	p = realloc(b->data, ncap + 1);
	if (p == NULL)
		return CT_ENOMEM;
	b->data = p;
	b->cap = ncap;
	return 0;
}

int ct_buf_append(struct ct_buf *b, const void *data, size_t n)
{
	int rc = ct_buf_reserve(b, n);

	if (rc < 0)
		return rc;
	if (n > 0)
		memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int ct_buf_appends(struct ct_buf *b, const char *s)
{
	return ct_buf_append(b, s, strlen(s));
}

int ct_buf_appendf(struct ct_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return CT_EINVAL;
	rc = ct_buf_reserve(b, (size_t)n);
	if (rc < 0)
		return rc;
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

const char *ct_buf_cstr(const struct ct_buf *b)
{
	return b->data ? (const char *)b->data : "";
}

unsigned char *ct_buf_steal(struct ct_buf *b, size_t *len_out)
{
	unsigned char *p = b->data;

	if (len_out)
		*len_out = b->len;
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	return p;
}
