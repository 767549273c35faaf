/*
 * launch_win.c - ctunew.exe: runs ctune.exe (from its own folder) with the
 * same arguments and no console window, for the autostart (the Run key
 * and the Startup folder shortcut that the installer writes, e.g.
 * `ctunew.exe run`): ctune.exe is a console program, and started from
 * there it would open a console window at every login. A GUI-subsystem
 * program (-mwindows) opens none, and CREATE_NO_WINDOW gives the client a
 * console of its own that is never shown (Ctrl events, the CRT's stdio).
 * Waits for the client and exits with its status; says in a message box
 * only when ctune.exe cannot be started at all.
 */
#include <windows.h>

#include <stdio.h>
#include <wchar.h>

#define CMD_CAP 32768	/* CreateProcessW's command-line limit */

int WINAPI wWinMain(HINSTANCE inst, HINSTANCE prev, PWSTR args, int show)
{
	static wchar_t exe[CMD_CAP], cmd[CMD_CAP], msg[CMD_CAP + 128];
	STARTUPINFOW si = { .cb = sizeof(si) };
	PROCESS_INFORMATION pi;
	DWORD n = GetModuleFileNameW(NULL, exe, CMD_CAP), code = 1;
	wchar_t *sep;

	(void)inst, (void)prev, (void)show;
	sep = n > 0 && n < CMD_CAP ? wcsrchr(exe, L'\\') : NULL;
	if (sep == NULL || (size_t)(sep - exe) + 11 >= CMD_CAP)
		return 1;
	wcscpy(sep + 1, L"ctune.exe");
	if (_snwprintf(cmd, CMD_CAP, L"\"%ls\" %ls", exe, args ? args : L"") < 0)
		return 1;
	cmd[CMD_CAP - 1] = 0;
	if (!CreateProcessW(exe, cmd, NULL, NULL, FALSE, CREATE_NO_WINDOW, NULL, NULL, &si,
			    &pi)) {
		_snwprintf(msg, sizeof(msg) / sizeof(msg[0]),
			   L"crowdtune could not start %ls (Windows error %lu).", exe,
			   (unsigned long)GetLastError());
		msg[sizeof(msg) / sizeof(msg[0]) - 1] = 0;
		MessageBoxW(NULL, msg, L"crowdtune", MB_OK | MB_ICONERROR);
		return 1;
	}
	CloseHandle(pi.hThread);
	WaitForSingleObject(pi.hProcess, INFINITE);
	GetExitCodeProcess(pi.hProcess, &code);
	CloseHandle(pi.hProcess);
	return (int)code;
}
