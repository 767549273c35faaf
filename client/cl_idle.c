/*
 * cl_idle.c - see cl_idle.h: the interface and the file source (tests);
 * the OS's own sources are cl_idle_evdev.c (Linux) and cl_idle_win.c.
 */
#include "config.h"
#include "cl_idle.h"
#include "ct_err.h"
#include "ct_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- file source (tests) ---- */

static int file_idle(void *ctx, double *out)
{
	unsigned char *data = NULL;
	char *end;
	size_t len;
	double v;
	int rc;

	rc = ct_file_read_all(ctx, 64, &data, &len);
	if (rc < 0)
		return rc;
	v = strtod((char *)data, &end);
	while (*end == ' ' || *end == '\n' || *end == '\t' || *end == '\r')
		end++;
	if (end == (char *)data || *end != '\0' || !isfinite(v) || v < 0)
		rc = ct_error(CT_EFORMAT, "%s: not a number of idle seconds", (char *)ctx);
	else
		*out = v;
	free(data);
	return rc;
}

int ct_idle_source_set(struct ct_idle_source *src, const char *name,
		       int (*idle_seconds)(void *ctx, double *out), void (*close)(void *ctx),
		       void *ctx)
{
	src->name = name;
	src->idle_seconds = idle_seconds;
	src->close = close;
	src->ctx = ctx;
	return 0;
}

int ct_idle_open_file(struct ct_idle_source *src, const char *path)
{
	char *copy = strdup(path);

	if (copy == NULL)
		return CT_ENOMEM;
	return ct_idle_source_set(src, "file", file_idle, free, copy);
}

void ct_idle_close(struct ct_idle_source *src)
{
	if (src->close != NULL)
		src->close(src->ctx);
	src->close = NULL;
	src->ctx = NULL;
}
