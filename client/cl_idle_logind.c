/*
 * cl_idle_logind.c - the logind idle source (see cl_idle.h).
 *
 * systemd-logind aggregates the idle state of every session on the machine
 * that can be idle: graphical sessions report it themselves (GNOME, KDE,
 * xss-lock ... set IdleHint after their own idle delay), text sessions by
 * the time of the last INPUT on their terminal. The manager object's
 * IdleHint/IdleSinceHint properties therefore count keyboard and mouse use
 * of every user, and never a program writing to a terminal. Read over the
 * system bus with libsystemd's sd-bus; the bus address can be moved with
 * DBUS_SYSTEM_BUS_ADDRESS (sd-bus honours it), which is how a test could
 * point it at its own bus.
 */
#include "config.h"
#include "cl_idle.h"
#include "ct_err.h"

#include <stdint.h>
#include <stdlib.h>

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-bus.h>

#define LOGIND_DEST "org.freedesktop.login1"
#define LOGIND_PATH "/org/freedesktop/login1"
#define LOGIND_IFACE "org.freedesktop.login1.Manager"

struct logind_ctx {
	sd_bus *bus;
	const struct ct_clock *clk;
};

static int get_prop(sd_bus *bus, const char *name, char type, void *out)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	int r;

	r = sd_bus_get_property_trivial(bus, LOGIND_DEST, LOGIND_PATH, LOGIND_IFACE,
					name, &err, type, out);
	if (r < 0) {
		int rc = ct_error(CT_EIO, "logind %s: %s", name,
				  err.message ? err.message : "D-Bus call failed");

		sd_bus_error_free(&err);
		return rc;
	}
	return 0;
}

static int logind_idle(void *vctx, double *out)
{
	struct logind_ctx *ctx = vctx;
	uint64_t since = 0;
	int hint = 0, rc;

	rc = get_prop(ctx->bus, "IdleHint", 'b', &hint);
	if (rc == 0 && hint)
		rc = get_prop(ctx->bus, "IdleSinceHint", 't', &since);
	if (rc < 0)
		return rc;
	if (!hint) {
		*out = 0;
	} else {
		double now = ct_clock_now(ctx->clk), t = (double)since / 1e6;

		*out = now > t ? now - t : 0;
	}
	return 0;
}

static void logind_close(void *vctx)
{
	struct logind_ctx *ctx = vctx;

	if (ctx == NULL)
		return;
	sd_bus_flush_close_unref(ctx->bus);
	free(ctx);
}

int ct_idle_open_logind(struct ct_idle_source *src, const struct ct_clock *clk)
{
	struct logind_ctx *ctx = calloc(1, sizeof(*ctx));
	double v;
	int r, rc;

	if (ctx == NULL)
		return CT_ENOMEM;
	ctx->clk = clk;
	r = sd_bus_open_system(&ctx->bus);
	if (r < 0) {
		free(ctx);
		return ct_error(CT_ENOENT, "no system bus for logind");
	}
	rc = logind_idle(ctx, &v);	/* is logind there and answering? */
	if (rc < 0) {
		logind_close(ctx);
		return ct_error(CT_ENOENT, "logind does not answer on the system bus");
	}
	return ct_idle_source_set(src, "logind", logind_idle, logind_close, ctx);
}
#else
int ct_idle_open_logind(struct ct_idle_source *src, const struct ct_clock *clk)
{
	(void)src;
	(void)clk;
	return ct_error(CT_EUNSUPP, "built without libsystemd");
}
#endif
