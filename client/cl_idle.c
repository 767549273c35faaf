/*
 * cl_idle.c - see cl_idle.h.
 */
#include "config.h"
#include "cl_idle.h"
#include "ct_err.h"
#include "ct_file.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>

#ifdef HAVE_X11
#include <X11/Xlib.h>
#include <X11/extensions/scrnsaver.h>
#endif

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

int ct_idle_open_file(struct ct_idle_source *src, const char *path)
{
	src->ctx = strdup(path);
	if (src->ctx == NULL)
		return CT_ENOMEM;
	src->name = "file";
	src->idle_seconds = file_idle;
	src->close = free;
	return 0;
}

/* ---- input-device source ---- */

struct input_ctx {
	char *devroot;
	const struct ct_clock *clk;
};

/* Newest atime/mtime of the entries of dir whose names start with prefix. */
static void newest_in(const char *dir, const char *prefix, double *newest, int *found)
{
	struct dirent *de;
	struct stat st;
	char path[1024];
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		double t;

		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) < 0)
			continue;
		*found = 1;
		t = st.st_atim.tv_sec + st.st_atim.tv_nsec / 1e9;
		if (t > *newest)
			*newest = t;
		t = st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
		if (t > *newest)
			*newest = t;
	}
	closedir(d);
}

static int input_idle(void *vctx, double *out)
{
	struct input_ctx *ctx = vctx;
	double newest = 0, now = ct_clock_now(ctx->clk);
	char dir[1024];
	int found = 0;

	snprintf(dir, sizeof(dir), "%s/input", ctx->devroot);
	newest_in(dir, "event", &newest, &found);
	newest_in(dir, "mice", &newest, &found);
	snprintf(dir, sizeof(dir), "%s/pts", ctx->devroot);
	newest_in(dir, "", &newest, &found);
	if (!found) {
		struct sysinfo si;

		*out = sysinfo(&si) == 0 ? (double)si.uptime : 1e9;
		return 0;
	}
	*out = now > newest ? now - newest : 0;
	return 0;
}

static void input_close(void *vctx)
{
	struct input_ctx *ctx = vctx;

	if (ctx == NULL)
		return;
	free(ctx->devroot);
	free(ctx);
}

int ct_idle_open_input(struct ct_idle_source *src, const char *devroot,
		       const struct ct_clock *clk)
{
	struct input_ctx *ctx = calloc(1, sizeof(*ctx));

	if (ctx == NULL)
		return CT_ENOMEM;
	ctx->devroot = strdup(devroot ? devroot : "/dev");
	if (ctx->devroot == NULL) {
		free(ctx);
		return CT_ENOMEM;
	}
	ctx->clk = clk;
	src->name = "input";
	src->idle_seconds = input_idle;
	src->close = input_close;
	src->ctx = ctx;
	return 0;
}

/* ---- X11 screensaver extension ---- */

#ifdef HAVE_X11
static int x11_idle(void *ctx, double *out)
{
	XScreenSaverInfo info;
	Display *d = ctx;

	if (!XScreenSaverQueryInfo(d, DefaultRootWindow(d), &info))
		return ct_error(CT_EIO, "XScreenSaverQueryInfo failed");
	*out = info.idle / 1000.0;
	return 0;
}

static void x11_close(void *ctx)
{
	if (ctx != NULL)
		XCloseDisplay(ctx);
}

int ct_idle_open_x11(struct ct_idle_source *src)
{
	int ev, er;
	Display *d;

	if (getenv("DISPLAY") == NULL)
		return ct_error(CT_ENOENT, "no DISPLAY");
	d = XOpenDisplay(NULL);
	if (d == NULL)
		return ct_error(CT_ENOENT, "cannot open display %s", getenv("DISPLAY"));
	if (!XScreenSaverQueryExtension(d, &ev, &er)) {
		XCloseDisplay(d);
		return ct_error(CT_ENOENT, "display has no MIT-SCREEN-SAVER extension");
	}
	src->name = "x11";
	src->idle_seconds = x11_idle;
	src->close = x11_close;
	src->ctx = d;
	return 0;
}
#else
int ct_idle_open_x11(struct ct_idle_source *src)
{
	(void)src;
	return ct_error(CT_EUNSUPP, "built without X11");
}
#endif

int ct_idle_open_default(struct ct_idle_source *src, const struct ct_clock *clk)
{
	if (ct_idle_open_x11(src) == 0)
		return 0;
	return ct_idle_open_input(src, "/dev", clk);
}

void ct_idle_close(struct ct_idle_source *src)
{
	if (src->close != NULL)
		src->close(src->ctx);
	src->close = NULL;
	src->ctx = NULL;
}
