/*
 * cl_idle_win.c - the idle source of Windows (see cl_idle.h), built
 * instead of cl_idle_evdev.c: seconds since the last keyboard or mouse
 * input of the session (GetLastInputInfo); a locked session or a running
 * screensaver counts as nobody at the machine. The same preferences
 * (idle_minutes ...) decide from it as on Linux.
 */
#include "config.h"
#include "cl_idle.h"
#include "ct_err.h"

#include <windows.h>

/* 1 if the session is locked: the input desktop is then Winlogon's, which
 * this process may not switch to. */
static int session_locked(void)
{
	HDESK d = OpenInputDesktop(0, FALSE, DESKTOP_SWITCHDESKTOP);
	int locked;

	if (d == NULL)
		return 1;
	locked = !SwitchDesktop(d);
	CloseDesktop(d);
	return locked;
}

static int saver_running(void)
{
	BOOL on = FALSE;

	return SystemParametersInfoW(SPI_GETSCREENSAVERRUNNING, 0, &on, 0) && on;
}

static int win_idle(void *ctx, double *out)
{
	LASTINPUTINFO li = { .cbSize = sizeof(li) };
	DWORD now = GetTickCount();

	(void)ctx;
	if (!GetLastInputInfo(&li))
		return ct_error(CT_EIO, "GetLastInputInfo failed");
	/* tick counts wrap after 49.7 days: unsigned difference */
	*out = (DWORD)(now - li.dwTime) / 1000.0;
	if (session_locked() || saver_running())
		*out = *out > 1e9 ? *out : 1e9;
	return 0;
}

int ct_idle_open_input(struct ct_idle_source *src, const char *devroot,
		       const struct ct_clock *clk)
{
	(void)src;
	(void)devroot;
	(void)clk;
	return ct_error(CT_EUNSUPP, "no input devices to read on Windows");
}

int ct_idle_input_devices(const struct ct_idle_source *src)
{
	(void)src;
	return -1;
}

int ct_idle_open_x11(struct ct_idle_source *src)
{
	(void)src;
	return ct_error(CT_EUNSUPP, "built without X11");
}

int ct_idle_open_default(struct ct_idle_source *src, const struct ct_clock *clk)
{
	(void)clk;
	return ct_idle_source_set(src, "session", win_idle, NULL, NULL);
}
