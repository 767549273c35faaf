/*
 * saver_win.c - ctune.scr, the Windows screensaver: the saver view of the
 * running client (project, job, round, step, loss curve, tokens/s, device,
 * credit and rank) drawn with GDI from the daemon's status every 2 s, as
 * `ctune saver` draws it in a terminal and cl_xsaver.c in an X11 window.
 * It only reads the status over the control channel; the daemon decides
 * when to compute (a running screensaver counts as idle, cl_idle_win.c).
 *
 * Windows calls a screensaver with /s (run full screen), /p HWND (draw
 * into the preview window of the control panel) or /c (configure; the
 * preferences are prefs.conf, so it says where that is).
 */
#include "config.h"
#include "cl_ctl.h"
#include "cl_paths.h"
#include "cl_status.h"
#include "ct_buf.h"
#include "ct_err.h"

#include <windows.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAVER_TIMER 1
#define SAVER_MS 2000

struct saver {
	char *sock;
	struct ct_status st;
	int ok;			/* the last status request worked */
	int preview;
	POINT start;		/* the mouse when the saver began (-1: unknown) */
};

static struct saver sv;

static void refresh(void)
{
	struct ct_buf reply = CT_BUF_INIT(CT_CTL_MAX_REPLY);

	sv.ok = sv.sock != NULL && ct_ctl_request(sv.sock, "status", 5, &reply) == 0 &&
		ct_status_parse(reply.data, reply.len, &sv.st) == 0;
	ct_buf_free(&reply);
}

static void line_at(HDC dc, int row, int lh, COLORREF c, const char *s)
{
	wchar_t w[512];
	int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, w, 512);

	SetTextColor(dc, c);
	if (n > 1)
		TextOutW(dc, 20, 20 + row * lh, w, n - 1);
}

/* The loss curve in r, newest on the right. */
static void curve(HDC dc, RECT r)
{
	float lo = INFINITY, hi = -INFINITY;
	int n = sv.st.nlosses;
	HPEN pen = CreatePen(PS_SOLID, 2, RGB(50, 205, 50)), old;

	FrameRect(dc, &r, (HBRUSH)GetStockObject(GRAY_BRUSH));
	if (n >= 2) {
		for (int i = 0; i < n; i++) {
			lo = fminf(lo, sv.st.losses[i]);
			hi = fmaxf(hi, sv.st.losses[i]);
		}
		if (!(hi > lo))
			hi = lo + 1;
		old = SelectObject(dc, pen);
		for (int i = 0; i < n; i++) {
			int x = r.left + (int)((long)i * (r.right - r.left) / (n - 1));
			int y = r.bottom - (int)((sv.st.losses[i] - lo) / (hi - lo) * (r.bottom - r.top));

			if (i == 0)
				MoveToEx(dc, x, y, NULL);
			else
				LineTo(dc, x, y);
		}
		SelectObject(dc, old);
	}
	DeleteObject(pen);
}

static void paint(HWND w, HDC dc)
{
	const struct ct_status_project *p = NULL;
	const struct ct_status_task *t = sv.ok ? ct_status_running(&sv.st, &p) : NULL;
	COLORREF fg = RGB(255, 255, 255), dim = RGB(180, 180, 180);
	int lh = sv.preview ? 12 : 22;
	char line[512];
	RECT r;

	GetClientRect(w, &r);
	FillRect(dc, &r, (HBRUSH)GetStockObject(BLACK_BRUSH));
	SetBkMode(dc, TRANSPARENT);
	line_at(dc, 0, lh, fg, "crowdtune - training a language model while you are away");
	if (!sv.ok) {
		line_at(dc, 2, lh, dim, "no ctune daemon is running");
		return;
	}
	if (p == NULL && sv.st.nprojects > 0)
		p = &sv.st.projects[0];
	if (t != NULL)
		snprintf(line, sizeof(line), "job %s  round %s  %s  step %ld/%ld  loss %.4f", t->job,
			 t->round, t->name, t->step, t->steps, t->last_loss);
	else
		snprintf(line, sizeof(line), "%s %s", sv.st.activity, sv.st.reason);
	line_at(dc, 2, lh, fg, line);
	snprintf(line, sizeof(line), "%.0f tokens/s on %s (%s)", sv.st.tokens_per_s, sv.st.device,
		 sv.st.device_name);
	line_at(dc, 3, lh, dim, line);
	if (p != NULL) {
		snprintf(line, sizeof(line), "credit %.4g  recent %.4g  rank %ld  %s", p->credit,
			 p->rac, p->rank, p->user_name);
		line_at(dc, 4, lh, dim, line);
		ct_status_eta_line(p, line, sizeof(line));
		line_at(dc, 5, lh, dim, line);
	}
	r.left += 20;
	r.right -= 20;
	r.top += 20 + 7 * lh;
	r.bottom -= 20;
	if (r.bottom > r.top + 10)
		curve(dc, r);
}

/* In full-screen mode a key, a click or a real mouse move ends the saver. */
static int ends_saver(UINT m, LPARAM lp)
{
	POINT pt = { (short)LOWORD(lp), (short)HIWORD(lp) };

	if (sv.preview)
		return 0;
	if (m == WM_KEYDOWN || m == WM_LBUTTONDOWN || m == WM_RBUTTONDOWN || m == WM_MBUTTONDOWN)
		return 1;
	if (m != WM_MOUSEMOVE)
		return 0;
	if (sv.start.x < 0) {
		sv.start = pt;
		return 0;
	}
	return abs(pt.x - sv.start.x) > 8 || abs(pt.y - sv.start.y) > 8;
}

static LRESULT CALLBACK wndproc(HWND w, UINT m, WPARAM wp, LPARAM lp)
{
	PAINTSTRUCT ps;

	if (ends_saver(m, lp)) {
		PostQuitMessage(0);
		return 0;
	}
	switch (m) {
	case WM_TIMER:
		refresh();
		InvalidateRect(w, NULL, FALSE);
		return 0;
	case WM_PAINT:
		paint(w, BeginPaint(w, &ps));
		EndPaint(w, &ps);
		return 0;
	case WM_DESTROY:
		PostQuitMessage(0);
		return 0;
	default:
		return DefWindowProcW(w, m, wp, lp);
	}
}

static HWND make_window(HINSTANCE inst, HWND parent)
{
	WNDCLASSW wc = { .lpfnWndProc = wndproc, .hInstance = inst,
			 .hCursor = NULL, .lpszClassName = L"ctune_saver" };
	RECT r;

	RegisterClassW(&wc);
	if (parent != NULL) {
		GetClientRect(parent, &r);
		return CreateWindowExW(0, wc.lpszClassName, L"crowdtune", WS_CHILD | WS_VISIBLE, 0, 0,
				       r.right, r.bottom, parent, NULL, inst, NULL);
	}
	ShowCursor(FALSE);
	return CreateWindowExW(WS_EX_TOPMOST, wc.lpszClassName, L"crowdtune", WS_POPUP | WS_VISIBLE,
			       GetSystemMetrics(SM_XVIRTUALSCREEN), GetSystemMetrics(SM_YVIRTUALSCREEN),
			       GetSystemMetrics(SM_CXVIRTUALSCREEN), GetSystemMetrics(SM_CYVIRTUALSCREEN),
			       NULL, NULL, inst, NULL);
}

static void configure(void)
{
	char *dir = NULL, msg[1200];
	wchar_t w[1200];

	ct_cl_state_dir(NULL, &dir);
	snprintf(msg, sizeof(msg), "The crowdtune screensaver shows what the client computes.\n\n"
		 "The client's preferences are in %s\\prefs.conf (see the volunteer guide).",
		 dir ? dir : "%LOCALAPPDATA%\\crowdtune");
	free(dir);
	MultiByteToWideChar(CP_UTF8, 0, msg, -1, w, 1200);
	MessageBoxW(NULL, w, L"crowdtune screensaver", MB_OK | MB_ICONINFORMATION);
}

int WINAPI WinMain(HINSTANCE inst, HINSTANCE prev, LPSTR cmd, int show)
{
	char mode = 'c', *dir = NULL;
	HWND parent = NULL, w;
	MSG msg;

	(void)prev;
	(void)show;
	while (*cmd == ' ')
		cmd++;
	if (*cmd == '/' || *cmd == '-')
		mode = (char)(cmd[1] | 0x20);
	if (mode == 'p')
		parent = (HWND)(uintptr_t)strtoull(cmd + 2 + strspn(cmd + 2, " :"), NULL, 10);
	if (mode != 's' && mode != 'p') {
		configure();
		return 0;
	}
	sv.preview = mode == 'p';
	sv.start.x = -1;
	if (ct_cl_state_dir(NULL, &dir) == 0)
		sv.sock = ct_cl_path(dir, CT_CL_SOCKET_FILE);
	free(dir);
	refresh();
	w = make_window(inst, parent);
	if (w == NULL)
		return 1;
	SetTimer(w, SAVER_TIMER, SAVER_MS, NULL);
	while (GetMessageW(&msg, NULL, 0, 0) > 0)
		DispatchMessageW(&msg);
	free(sv.sock);
	return 0;
}
