/*
 * cl_idle_evdev.c - the idle sources of Linux desktops and servers (see
 * cl_idle.h): keyboard and mouse event devices, the X11 screensaver
 * extension, and the default order (logind, X11, event devices). Windows
 * builds cl_idle_win.c instead; the file source and the interface are
 * cl_idle.c.
 */
#include "config.h"
#include "cl_idle.h"
#include "ct_err.h"
#include "ct_os.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_X11
#include <X11/Xlib.h>
#include <X11/extensions/scrnsaver.h>
#endif

/* ---- input-device source (evdev) ---- */

#define EV_MAX_DEVICES 64
#define EV_RESCAN_S 30.0		/* look for plugged-in devices this often */

struct input_ctx {
	char *devroot;
	const struct ct_clock *clk;
	int fds[EV_MAX_DEVICES];
	int nfds;
	double last_input;		/* wall time of the newest event seen */
	double scanned;			/* wall time of the last device scan */
};

static int test_bit(const unsigned long *bits, unsigned bit)
{
	return (bits[bit / (8 * sizeof(long))] >> (bit % (8 * sizeof(long)))) & 1;
}

/* 1 if fd is a keyboard, mouse or touchpad: keys A and SPACE, or relative
 * X/Y with a left button, or a touch surface. Power buttons, lid switches,
 * accelerometers and joysticks do not count as the user at the machine. */
static int is_kbd_or_mouse(int fd)
{
	unsigned long ev[1], key[KEY_MAX / (8 * sizeof(long)) + 1];
	unsigned long rel[REL_MAX / (8 * sizeof(long)) + 1];

	memset(ev, 0, sizeof(ev));
	memset(key, 0, sizeof(key));
	memset(rel, 0, sizeof(rel));
	if (ioctl(fd, EVIOCGBIT(0, sizeof(ev)), ev) < 0)
		return 0;
	if (test_bit(ev, EV_KEY))
		(void)ioctl(fd, EVIOCGBIT(EV_KEY, sizeof(key)), key);
	if (test_bit(ev, EV_REL))
		(void)ioctl(fd, EVIOCGBIT(EV_REL, sizeof(rel)), rel);
	if (test_bit(key, KEY_A) && test_bit(key, KEY_SPACE))
		return 1;
	if (test_bit(rel, REL_X) && test_bit(rel, REL_Y) && test_bit(key, BTN_LEFT))
		return 1;
	return test_bit(ev, EV_ABS) && test_bit(key, BTN_TOUCH);
}

static void input_close_fds(struct input_ctx *ctx)
{
	for (int i = 0; i < ctx->nfds; i++)
		close(ctx->fds[i]);
	ctx->nfds = 0;
}

/* (Re)open every readable keyboard/mouse event device under devroot/input.
 * A FIFO named event* is taken as a device of unknown kind: the unit tests
 * write input_event records into one (/dev never holds FIFOs). */
static void input_scan(struct input_ctx *ctx)
{
	char dir[1024], path[1300];
	struct dirent *de;
	struct stat st;
	DIR *d;

	input_close_fds(ctx);
	snprintf(dir, sizeof(dir), "%s/input", ctx->devroot);
	d = opendir(dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL && ctx->nfds < EV_MAX_DEVICES) {
		int fd;

		if (strncmp(de->d_name, "event", 5) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;	/* not in the input group: logind/X11 must do */
		if (fstat(fd, &st) < 0 || !(S_ISFIFO(st.st_mode) ||
					    (S_ISCHR(st.st_mode) && is_kbd_or_mouse(fd)))) {
			close(fd);
			continue;
		}
		ctx->fds[ctx->nfds++] = fd;
	}
	closedir(d);
}

/* Drain fd; move last_input to the newest key/motion event (its own time
 * stamp, CLOCK_REALTIME, clamped to [last_input, now]). */
static void input_drain(struct input_ctx *ctx, int fd, double now)
{
	struct input_event ev[64];
	ssize_t n;

	while ((n = read(fd, ev, sizeof(ev))) > 0) {
		for (size_t i = 0; i < (size_t)n / sizeof(ev[0]); i++) {
			double t;

			if (ev[i].type != EV_KEY && ev[i].type != EV_REL && ev[i].type != EV_ABS &&
			    !(ev[i].type == EV_SYN && ev[i].code == SYN_DROPPED))
				continue;
			t = ev[i].input_event_sec + ev[i].input_event_usec / 1e6;
			if (t > now || t < now - 86400.0 * 365)
				t = now;	/* a device on another clock */
			if (t > ctx->last_input)
				ctx->last_input = t;
		}
	}
}

static int input_idle(void *vctx, double *out)
{
	struct input_ctx *ctx = vctx;
	double now = ct_clock_now(ctx->clk);

	if (now - ctx->scanned >= EV_RESCAN_S || now < ctx->scanned) {
		for (int i = 0; i < ctx->nfds; i++)
			input_drain(ctx, ctx->fds[i], now);
		input_scan(ctx);
		ctx->scanned = now;
	}
	for (int i = 0; i < ctx->nfds; i++)
		input_drain(ctx, ctx->fds[i], now);
	if (ctx->nfds == 0 && ctx->last_input == 0) {
		/* nothing can show input (a container, a headless server, or
		 * no permission): idle since boot, as if nobody were there */
		*out = ct_os_uptime();
		return 0;
	}
	*out = now > ctx->last_input ? now - ctx->last_input : 0;
	return 0;
}

static void input_close(void *vctx)
{
	struct input_ctx *ctx = vctx;

	if (ctx == NULL)
		return;
	input_close_fds(ctx);
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
	ctx->scanned = ct_clock_now(clk);
	input_scan(ctx);
	/* input before we looked is unknown: count from now (conservative) */
	if (ctx->nfds > 0)
		ctx->last_input = ctx->scanned;
	return ct_idle_source_set(src, "input", input_idle, input_close, ctx);
}

/* Number of devices the input source watches (for status and tests). */
int ct_idle_input_devices(const struct ct_idle_source *src)
{
	const struct input_ctx *ctx = src->ctx;

	return src->idle_seconds == input_idle ? ctx->nfds : -1;
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
	return ct_idle_source_set(src, "x11", x11_idle, x11_close, d);
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
	if (ct_idle_open_logind(src, clk) == 0)
		return 0;
	if (ct_idle_open_x11(src) == 0)
		return 0;
	return ct_idle_open_input(src, "/dev", clk);
}
