/*
 * cl_idle.h - how long the user has been away: a seam with three sources.
 *
 *  - x11:   the X11 screensaver extension (XScreenSaverQueryInfo's idle
 *           time); only when configure found x11 + xscrnsaver (HAVE_X11)
 *           and a display can be opened.
 *  - input: Linux input activity without X: the newest access/modify time
 *           of /dev/input/event*, /dev/input/mice and the entries of /dev/pts (terminals
 *           touched by ssh/console users). No such devices at all (a
 *           container, a headless server) counts as idle since boot.
 *  - file:  for tests and scripting: a file whose content is the number of
 *           idle seconds (`ctune run --idle-file PATH`). A missing or
 *           unparsable file is an error, so a test cannot pass by accident.
 *
 * The daemon polls the source about once a second while computing, so
 * activity suspends work within one or two seconds.
 */
#ifndef CT_CL_IDLE_H
#define CT_CL_IDLE_H

#include "cl_clock.h"

struct ct_idle_source {
	const char *name;		/* "x11", "input", "file" */
	/* Seconds since the last user input into *out. 0 or a CT_E* code. */
	int (*idle_seconds)(void *ctx, double *out);
	/* Release ctx (NULL-safe; also frees ctx itself). */
	void (*close)(void *ctx);
	void *ctx;
};

/* The test source reading `path`. Returns 0, CT_ENOMEM. The path is copied. */
int ct_idle_open_file(struct ct_idle_source *src, const char *path);

/* The Linux input-device source. `devroot` is "/dev" normally (tests pass a
 * directory with input/ and pts/ inside); times are compared with clk's
 * wall clock. Returns 0, CT_ENOMEM. */
int ct_idle_open_input(struct ct_idle_source *src, const char *devroot,
		       const struct ct_clock *clk);

/* The X11 source on $DISPLAY. CT_EUNSUPP when built without X11, CT_ENOENT
 * when no display can be opened or it lacks the extension. */
int ct_idle_open_x11(struct ct_idle_source *src);

/* X11 if available, else input on /dev. */
int ct_idle_open_default(struct ct_idle_source *src, const struct ct_clock *clk);

/* Close src (NULL-safe, idempotent). */
void ct_idle_close(struct ct_idle_source *src);

static inline int ct_idle_get(struct ct_idle_source *src, double *out)
{
	return src->idle_seconds(src->ctx, out);
}

#endif
