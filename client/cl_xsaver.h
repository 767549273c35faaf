/*
 * cl_xsaver.h - `ctune saver` as an xscreensaver hack: the same live view
 * as the terminal saver (job, round, loss curve, tokens/s, device, credit,
 * rank), drawn with Xlib into the window xscreensaver hands over
 * ($XSCREENSAVER_WINDOW or --window-id), or into the root window (--root).
 * Only built with X11 (HAVE_X11); otherwise ct_xsaver_run says so.
 *
 * To use it, add to ~/.xscreensaver's programs list:
 *     "crowdtune"  ctune saver --root
 */
#ifndef CT_CL_XSAVER_H
#define CT_CL_XSAVER_H

/* ct_xsaver_run's window: a new top-level window of its own (--x11). */
#define CT_XSAVER_NEW_WINDOW ((unsigned long)-1)

/* Draw the status of the daemon whose socket is sock_path every interval
 * seconds into window (0: the root window; CT_XSAVER_NEW_WINDOW: a window
 * of its own, 800x480) until SIGTERM/SIGINT, or, when frames > 0, until
 * it has drawn that many frames (--frames N). Returns
 * 0, CT_EUNSUPP (no X11 support built in) or CT_ENOENT (no display). */
int ct_xsaver_run(const char *sock_path, unsigned long window, double interval, long frames);

#endif
