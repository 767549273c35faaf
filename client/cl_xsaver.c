/*
 * cl_xsaver.c - see cl_xsaver.h.
 */
#include "config.h"
#include "cl_xsaver.h"
#include "cl_ctl.h"
#include "cl_status.h"
#include "ct_err.h"

#ifdef HAVE_X11
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t xs_quit;

static void xs_signal(int s)
{
	(void)s;
	xs_quit = 1;
}

struct xs {
	Display *dpy;
	Window win;
	GC gc;
	unsigned long fg, dim, curve, bg;
	int w, h, line;
};

static unsigned long color(struct xs *x, const char *name, unsigned long fallback)
{
	XColor c, exact;

	if (XAllocNamedColor(x->dpy, DefaultColormap(x->dpy, DefaultScreen(x->dpy)), name,
			     &c, &exact))
		return c.pixel;
	return fallback;
}

static void text(struct xs *x, int row, unsigned long pixel, const char *s)
{
	XSetForeground(x->dpy, x->gc, pixel);
	XDrawString(x->dpy, x->win, x->gc, 20, 30 + row * x->line, s, (int)strlen(s));
}

/* The loss curve in the box (x0, y0, w, h), newest on the right. */
static void curve(struct xs *x, const struct ct_status *s, int x0, int y0, int w, int h)
{
	XPoint pts[CT_STATUS_MAX_LOSSES];
	float lo = INFINITY, hi = -INFINITY;
	int n = s->nlosses;

	XSetForeground(x->dpy, x->gc, x->dim);
	XDrawRectangle(x->dpy, x->win, x->gc, x0, y0, (unsigned)w, (unsigned)h);
	if (n < 2)
		return;
	for (int i = 0; i < n; i++) {
		lo = fminf(lo, s->losses[i]);
		hi = fmaxf(hi, s->losses[i]);
	}
	if (!(hi > lo))
		hi = lo + 1;
	for (int i = 0; i < n; i++) {
		pts[i].x = (short)(x0 + (long)i * w / (n - 1));
		pts[i].y = (short)(y0 + h - (s->losses[i] - lo) / (hi - lo) * h);
	}
	XSetForeground(x->dpy, x->gc, x->curve);
	XDrawLines(x->dpy, x->win, x->gc, pts, n, CoordModeOrigin);
}

static void draw(struct xs *x, const struct ct_status *s, int ok)
{
	const struct ct_status_project *p = NULL;
	const struct ct_status_task *t = ok ? ct_status_running(s, &p) : NULL;
	char line[512];

	XSetForeground(x->dpy, x->gc, x->bg);
	XFillRectangle(x->dpy, x->win, x->gc, 0, 0, (unsigned)x->w, (unsigned)x->h);
	text(x, 0, x->fg, "crowdtune - training a language model while you are away");
	if (!ok) {
		text(x, 2, x->dim, "no ctune daemon is running");
		return;
	}
	if (p == NULL && s->nprojects > 0)
		p = &s->projects[0];
	if (t != NULL)
		snprintf(line, sizeof(line), "job %s  round %s  %s  step %ld/%ld  loss %.4f",
			 t->job, t->round, t->name, t->step, t->steps, t->last_loss);
	else
		snprintf(line, sizeof(line), "%s %s", s->activity, s->reason);
	text(x, 2, x->fg, line);
	snprintf(line, sizeof(line), "%.0f tokens/s on %s (%s)", s->tokens_per_s, s->device,
		 s->device_name);
	text(x, 3, x->dim, line);
	if (p != NULL) {
		snprintf(line, sizeof(line), "credit %.4g  recent %.4g  rank %ld  %s", p->credit,
			 p->rac, p->rank, p->user_name);
		text(x, 4, x->dim, line);
		ct_status_eta_line(p, line, sizeof(line));
		text(x, 5, x->dim, line);
	}
	curve(x, s, 20, 30 + 7 * x->line, x->w - 40, x->h - (30 + 7 * x->line) - 30);
}

static int xs_open(struct xs *x, unsigned long window)
{
	XWindowAttributes wa;
	int scr;

	memset(x, 0, sizeof(*x));
	x->dpy = XOpenDisplay(NULL);
	if (x->dpy == NULL)
		return ct_error(CT_ENOENT, "cannot open the X display");
	scr = DefaultScreen(x->dpy);
	if (window == CT_XSAVER_NEW_WINDOW) {
		x->win = XCreateSimpleWindow(x->dpy, RootWindow(x->dpy, scr), 0, 0, 800, 480, 0,
					     BlackPixel(x->dpy, scr), BlackPixel(x->dpy, scr));
		XStoreName(x->dpy, x->win, "crowdtune");
		XMapRaised(x->dpy, x->win);
		XSync(x->dpy, False);
	} else {
		x->win = window ? (Window)window : RootWindow(x->dpy, scr);
	}
	XGetWindowAttributes(x->dpy, x->win, &wa);
	x->w = wa.width;
	x->h = wa.height;
	x->gc = XCreateGC(x->dpy, x->win, 0, NULL);
	x->bg = BlackPixel(x->dpy, scr);
	x->fg = WhitePixel(x->dpy, scr);
	x->dim = color(x, "gray70", x->fg);
	x->curve = color(x, "lime green", x->fg);
	x->line = 18;
	XSelectInput(x->dpy, x->win, ExposureMask | StructureNotifyMask);
	return 0;
}

int ct_xsaver_run(const char *sock_path, unsigned long window, double interval, long frames)
{
	struct ct_status *s = calloc(1, sizeof(*s));
	struct sigaction sa;
	struct xs x;
	int rc;

	if (s == NULL)
		return CT_ENOMEM;
	rc = xs_open(&x, window);
	if (rc < 0) {
		free(s);
		return rc;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = xs_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (long n = 0; !xs_quit && (frames <= 0 || n < frames); n++) {
		struct ct_buf reply = CT_BUF_INIT(CT_CTL_MAX_REPLY);
		int ok;

		while (XPending(x.dpy)) {
			XEvent ev;

			XNextEvent(x.dpy, &ev);
			if (ev.type == ConfigureNotify) {
				x.w = ev.xconfigure.width;
				x.h = ev.xconfigure.height;
			}
		}
		ok = ct_ctl_request(sock_path, "status", 5, &reply) == 0 &&
		     ct_status_parse(reply.data, reply.len, s) == 0;
		draw(&x, s, ok);
		XFlush(x.dpy);
		ct_buf_free(&reply);
		if (frames <= 0 || n + 1 < frames)	/* no wait after the last frame */
			usleep((useconds_t)(interval * 1e6));
	}
	XFreeGC(x.dpy, x.gc);
	XCloseDisplay(x.dpy);
	free(s);
	return 0;
}
#else
int ct_xsaver_run(const char *sock_path, unsigned long window, double interval, long frames)
{
	(void)sock_path;
	(void)window;
	(void)interval;
	(void)frames;
	return ct_error(CT_EUNSUPP, "this ctune was built without X11 (configure --with-x11)");
}
#endif
