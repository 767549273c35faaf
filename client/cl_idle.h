/*
 * cl_idle.h - how long the user has been away: keyboard and mouse input
 * only, never output. A seam with four sources, tried best first by
 * ct_idle_open_default:
 *
 *  - logind: systemd-logind's IdleHint/IdleSinceHint over the system bus
 *           (sd-bus; built when configure found libsystemd). Covers every
 *           session on the seat, X11, Wayland and text consoles alike.
 *  - x11:   the X11 screensaver extension (XScreenSaverQueryInfo's idle
 *           time); only when configure found x11 + xscrnsaver (HAVE_X11)
 *           and a display can be opened.
 *  - input: the newest key/motion event read from the keyboard, mouse and
 *           touchpad devices among /dev/input/event* (evdev; needs read
 *           permission: root or the "input" group). Nothing readable (a
 *           container, a headless server) counts as idle since boot.
 *           Terminals are NOT looked at: a program printing to a pty
 *           changes its times without anybody at the keyboard.
 *  - file:  for tests and scripting: a file whose content is the number of
 *           idle seconds (`ctune run --idle-file PATH`). A missing or
 *           unparsable file is an error, so a test cannot pass by accident.
 *
 * The daemon polls the source about once a second while computing, so
 * activity suspends work within one or two seconds.
 */
#ifndef CT_CL_IDLE_H
#define CT_CL_IDLE_H

#include "ct_clock.h"

struct ct_idle_source {
	const char *name;		/* "logind", "x11", "input", "session", "file" */
	/* Seconds since the last user input into *out. 0 or a CT_E* code. */
	int (*idle_seconds)(void *ctx, double *out);
	/* Release ctx (NULL-safe; also frees ctx itself). */
	void (*close)(void *ctx);
	void *ctx;
};

/* The test source reading `path`. Returns 0, CT_ENOMEM. The path is copied. */
int ct_idle_open_file(struct ct_idle_source *src, const char *path);

/* The Linux evdev source. `devroot` is "/dev" normally (tests pass a
 * directory with input/ inside; a FIFO named input/event* there is read as
 * a device, so a test can write struct input_event records into it).
 * Devices are rescanned every 30 s (hot-plug); input before the source was
 * opened is unknown and counted as happening at open time. Event times are
 * compared with clk's wall clock. Returns 0, CT_ENOMEM. */
int ct_idle_open_input(struct ct_idle_source *src, const char *devroot,
		       const struct ct_clock *clk);

/* Devices the input source reads, -1 if src is another source. */
int ct_idle_input_devices(const struct ct_idle_source *src);

/* The logind source on the system bus. CT_EUNSUPP when built without
 * libsystemd, CT_ENOENT when no bus or logind answers. */
int ct_idle_open_logind(struct ct_idle_source *src, const struct ct_clock *clk);

/* The X11 source on $DISPLAY. CT_EUNSUPP when built without X11, CT_ENOENT
 * when no display can be opened or it lacks the extension. */
int ct_idle_open_x11(struct ct_idle_source *src);

/* For the open functions above: make src the source called name that asks
 * idle_seconds(ctx) and ends with close(ctx). Returns 0. */
int ct_idle_source_set(struct ct_idle_source *src, const char *name,
		       int (*idle_seconds)(void *ctx, double *out), void (*close)(void *ctx),
		       void *ctx);

/* logind, else X11, else input on /dev; on Windows the session's input
 * time, locked or screensaver = idle (cl_idle_win.c, name "session"). */
int ct_idle_open_default(struct ct_idle_source *src, const struct ct_clock *clk);

/* Close src (NULL-safe, idempotent). */
void ct_idle_close(struct ct_idle_source *src);

static inline int ct_idle_get(struct ct_idle_source *src, double *out)
{
	return src->idle_seconds(src->ctx, out);
}

#endif
