/*
 * service_win.c - `ctune service install|uninstall|start|stop` on Windows:
 * the client as a Windows service under the Service Control Manager, for
 * machines that stay on without anyone logging in (BOINC offers the same).
 *
 * The service "crowdtune" runs
 *   "ctune.exe" --dir "DIR" service run [RUN OPTIONS]
 * as NT AUTHORITY\LocalService (no rights on the machine beyond its own
 * folder), started at boot. DIR is --dir or CTUNE_DIR, else
 * %ProgramData%\crowdtune, made by install with an ACL of its own
 * (LocalService, SYSTEM and Administrators; other users nothing): the
 * account key and the control channel's token live there. `service run`
 * is what the SCM starts: it hands the process to the SCM's dispatcher and
 * runs `ctune run` with the options stored at install, logging to
 * DIR\ctune.log; a stop or shutdown request stops the daemon as Ctrl-C
 * does (it checkpoints first). The other commands need an elevated
 * prompt ("Run as administrator").
 *
 * In a service there is no interactive session: keyboard and mouse idle
 * always reads "idle", so the service computes whenever the preferences
 * (run hours, battery, CPU) allow.
 */
#include "config.h"
#include "commands.h"
#include "cl_paths.h"
#include "ct_err.h"
#include "ct_log.h"
#include "ct_os.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <sddl.h>

#define SVC_NAME L"crowdtune"
#define SVC_DISPLAY L"crowdtune volunteer client"
#define SVC_ACCOUNT L"NT AUTHORITY\\LocalService"
#define CMDLINE_MAX 32767	/* CreateProcess's limit, in UTF-16 units */

/* UTF-8 -> UTF-16, malloc'd, or NULL. */
static wchar_t *wide(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
	wchar_t *w = n > 0 ? malloc((size_t)n * sizeof(wchar_t)) : NULL;

	if (w != NULL && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n) {
		free(w);
		w = NULL;
	}
	return w;
}

/* Append arg to the command line in *b (cap units) quoted as the CRT's
 * parser reads it back: backslashes double before a quote. 0 or -1. */
static int quote_arg(wchar_t *b, size_t cap, const wchar_t *arg)
{
	size_t n = wcslen(b);

	if (n > 0 && n + 1 < cap)
		b[n++] = L' ';
	if (n + 1 >= cap)
		return -1;
	b[n++] = L'"';
	for (const wchar_t *p = arg;; p++) {
		size_t bs = 0;

		while (*p == L'\\') {
			bs++;
			p++;
		}
		/* before a quote or the closing quote: 2n backslashes */
		size_t reps = (*p == L'"' || *p == 0) ? 2 * bs + (*p == L'"') : bs;

		if (n + reps + 3 >= cap)
			return -1;
		for (size_t i = 0; i < reps; i++)
			b[n++] = L'\\';
		if (*p == 0)
			break;
		b[n++] = *p;
	}
	b[n++] = L'"';
	b[n] = 0;
	return 0;
}

static int fail_win(const char *what)
{
	DWORD e = GetLastError();

	if (e == ERROR_ACCESS_DENIED)
		fprintf(stderr, "ctune service: %s: access denied (run it from an elevated "
			"prompt: \"Run as administrator\")\n", what);
	else if (e == ERROR_SERVICE_DOES_NOT_EXIST)
		fprintf(stderr, "ctune service: %s: the service is not installed "
			"('ctune service install')\n", what);
	else
		fprintf(stderr, "ctune service: %s: Windows error %lu\n", what, (unsigned long)e);
	return CT_EXIT_FAIL;
}

/* The service's folder: --dir / CTUNE_DIR, else %ProgramData%\crowdtune. */
static int service_dir(char **out)
{
	const char *env = getenv("CTUNE_DIR"), *pd = getenv("ProgramData");

	*out = NULL;
	if (env != NULL && *env)
		return ct_cl_state_dir(NULL, out);
	if (pd == NULL || !*pd)
		return ct_error(CT_ECONFIG, "ProgramData is not set; use --dir");
	if (asprintf(out, "%s\\crowdtune", pd) < 0) {
		*out = NULL;
		return CT_ENOMEM;
	}
	return 0;
}

/* Make dir (or keep it) with an ACL for the service account, SYSTEM and
 * Administrators only, inherited by everything inside. */
static int make_service_dir(const char *dir)
{
	static const wchar_t sddl[] = L"D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;FA;;;LS)";
	SECURITY_ATTRIBUTES sa = { .nLength = sizeof(sa) };
	PSECURITY_DESCRIPTOR sd = NULL;
	wchar_t *w = wide(dir);
	int rc = 0;

	if (w == NULL)
		return CT_ENOMEM;
	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, &sd,
								  NULL)) {
		free(w);
		return fail_win("security descriptor");
	}
	sa.lpSecurityDescriptor = sd;
	if (!CreateDirectoryW(w, &sa)) {
		if (GetLastError() != ERROR_ALREADY_EXISTS)
			rc = fail_win(dir);
		else if (!SetFileSecurityW(w, DACL_SECURITY_INFORMATION, sd))
			rc = fail_win(dir);
	}
	LocalFree(sd);
	free(w);
	return rc;
}

/* ---- install, uninstall, start, stop -------------------------------- */

static SC_HANDLE open_scm(void)
{
	SC_HANDLE m = OpenSCManagerW(NULL, NULL, SC_MANAGER_ALL_ACCESS);

	if (m == NULL)
		fail_win("open the service manager");
	return m;
}

/* Wait up to s seconds for the service to reach state want. */
static int wait_state(SC_HANDLE s, DWORD want, int secs)
{
	SERVICE_STATUS st;

	for (int i = 0; i < secs * 10; i++) {
		if (!QueryServiceStatus(s, &st))
			return -1;
		if (st.dwCurrentState == want)
			return 0;
		Sleep(100);
	}
	return -1;
}

/* The service's command line: this exe, --dir DIR, service run, opts. */
static wchar_t *service_cmdline(const char *dir, int argc, char **argv)
{
	wchar_t exe[MAX_PATH * 2], *b = calloc(CMDLINE_MAX, sizeof(wchar_t)), *w;
	const char *fixed[] = { "--dir", dir, "service", "run" };
	int ok;

	if (b == NULL)
		return NULL;
	DWORD n = GetModuleFileNameW(NULL, exe, MAX_PATH * 2);

	ok = n > 0 && n < MAX_PATH * 2 && quote_arg(b, CMDLINE_MAX, exe) == 0;
	for (int i = 0; ok && i < 4 + argc; i++) {
		w = wide(i < 4 ? fixed[i] : argv[i - 4]);
		ok = w != NULL && quote_arg(b, CMDLINE_MAX, w) == 0;
		free(w);
	}
	if (!ok) {
		free(b);
		return NULL;
	}
	return b;
}

/* The run options after `install` must be what `ctune run` takes. */
static int check_run_opts(int argc, char **argv)
{
	static const struct ct_cmd_def *const table[] = { &ct_run_cmd, NULL };
	const struct ct_cmd_def *def;
	char **v = calloc((size_t)argc + 2, sizeof(char *));
	int nw, rc;

	if (v == NULL)
		return CT_ENOMEM;
	v[0] = (char *)"run";
	for (int i = 0; i < argc; i++)
		v[i + 1] = argv[i];
	rc = ct_cmd_resolve("ctune service install", table, argc + 1, v, &def, &nw);
	free(v);
	if (rc < 0)
		fprintf(stderr, "ctune service install: %s\n", ct_errmsg(rc));
	return rc;
}

static int svc_install(int argc, char **argv)
{
	SERVICE_DESCRIPTIONW desc = { .lpDescription =
		L"Trains work units of the crowdtune projects attached to its folder." };
	char *dir = NULL;
	wchar_t *cmd = NULL;
	SC_HANDLE m = NULL, s = NULL;
	int rc = CT_EXIT_FAIL;

	if (check_run_opts(argc, argv) < 0)
		return CT_EXIT_USAGE;
	if (service_dir(&dir) < 0 || make_service_dir(dir) != 0)
		goto out;
	cmd = service_cmdline(dir, argc, argv);
	if (cmd == NULL) {
		fprintf(stderr, "ctune service install: command line too long\n");
		goto out;
	}
	m = open_scm();
	if (m == NULL)
		goto out;
	s = CreateServiceW(m, SVC_NAME, SVC_DISPLAY, SERVICE_ALL_ACCESS,
			   SERVICE_WIN32_OWN_PROCESS, SERVICE_AUTO_START, SERVICE_ERROR_NORMAL,
			   cmd, NULL, NULL, NULL, SVC_ACCOUNT, NULL);
	if (s == NULL) {
		if (GetLastError() == ERROR_SERVICE_EXISTS)
			fprintf(stderr, "ctune service install: already installed "
				"('ctune service uninstall' first)\n");
		else
			fail_win("install");
		goto out;
	}
	ChangeServiceConfig2W(s, SERVICE_CONFIG_DESCRIPTION, &desc);
	printf("installed the service 'crowdtune' (starts at boot, as LocalService)\n"
	       "  its folder: %s\n"
	       "  attach it:  ctune --dir \"%s\" attach URL --key KEY\n"
	       "  start it:   ctune service start\n", dir, dir);
	rc = CT_EXIT_OK;
out:
	if (s != NULL)
		CloseServiceHandle(s);
	if (m != NULL)
		CloseServiceHandle(m);
	free(cmd);
	free(dir);
	return rc;
}

/* Open the installed service with access acc; NULL after a message. */
static SC_HANDLE open_service(SC_HANDLE *m, DWORD acc, const char *what)
{
	SC_HANDLE s;

	*m = open_scm();
	if (*m == NULL)
		return NULL;
	s = OpenServiceW(*m, SVC_NAME, acc);
	if (s == NULL) {
		fail_win(what);
		CloseServiceHandle(*m);
		*m = NULL;
	}
	return s;
}

/* Ask s to stop and wait for it (up to 60 s: a checkpoint). 0 or -1. */
static int stop_and_wait(SC_HANDLE s)
{
	SERVICE_STATUS st;

	if (!QueryServiceStatus(s, &st))
		return -1;
	if (st.dwCurrentState == SERVICE_STOPPED)
		return 0;
	if (!ControlService(s, SERVICE_CONTROL_STOP, &st) &&
	    GetLastError() != ERROR_SERVICE_NOT_ACTIVE)
		return -1;
	return wait_state(s, SERVICE_STOPPED, 60);
}

static int svc_uninstall(void)
{
	SC_HANDLE m, s = open_service(&m, SERVICE_STOP | SERVICE_QUERY_STATUS | DELETE,
				      "uninstall");
	int rc = CT_EXIT_OK;

	if (s == NULL)
		return CT_EXIT_FAIL;
	if (stop_and_wait(s) < 0)
		fprintf(stderr, "ctune service uninstall: the service did not stop; "
			"removed once it does\n");
	if (!DeleteService(s))
		rc = fail_win("uninstall");
	else
		printf("removed the service 'crowdtune' (its folder and data stay)\n");
	CloseServiceHandle(s);
	CloseServiceHandle(m);
	return rc;
}

static int svc_start(void)
{
	SC_HANDLE m, s = open_service(&m, SERVICE_START | SERVICE_QUERY_STATUS, "start");
	int rc = CT_EXIT_OK;

	if (s == NULL)
		return CT_EXIT_FAIL;
	if (!StartServiceW(s, 0, NULL) && GetLastError() != ERROR_SERVICE_ALREADY_RUNNING)
		rc = fail_win("start");
	else if (wait_state(s, SERVICE_RUNNING, 30) < 0)
		rc = fail_win("start (not running after 30 s; see ctune.log in its folder)");
	else
		printf("the service 'crowdtune' runs\n");
	CloseServiceHandle(s);
	CloseServiceHandle(m);
	return rc;
}

static int svc_stop(void)
{
	SC_HANDLE m, s = open_service(&m, SERVICE_STOP | SERVICE_QUERY_STATUS, "stop");
	int rc = CT_EXIT_OK;

	if (s == NULL)
		return CT_EXIT_FAIL;
	if (stop_and_wait(s) < 0)
		rc = fail_win("stop");
	else
		printf("the service 'crowdtune' is stopped\n");
	CloseServiceHandle(s);
	CloseServiceHandle(m);
	return rc;
}

/* ---- run: the process the SCM starts -------------------------------- */

static SERVICE_STATUS_HANDLE svc_handle;
static SERVICE_STATUS svc_status = { .dwServiceType = SERVICE_WIN32_OWN_PROCESS };
static HANDLE stop_event;
static int run_argc;
static char **run_argv;
static int run_status;

static void report(DWORD state, DWORD exit_code, DWORD wait_ms)
{
	svc_status.dwCurrentState = state;
	svc_status.dwWin32ExitCode = exit_code;
	svc_status.dwWaitHint = wait_ms;
	svc_status.dwControlsAccepted = state == SERVICE_RUNNING ?
		SERVICE_ACCEPT_STOP | SERVICE_ACCEPT_SHUTDOWN : 0;
	svc_status.dwCheckPoint = state == SERVICE_RUNNING || state == SERVICE_STOPPED ?
		0 : svc_status.dwCheckPoint + 1;
	SetServiceStatus(svc_handle, &svc_status);
}

static DWORD WINAPI on_control(DWORD ctl, DWORD type, void *data, void *ctx)
{
	if (ctl == SERVICE_CONTROL_STOP || ctl == SERVICE_CONTROL_SHUTDOWN) {
		report(SERVICE_STOP_PENDING, NO_ERROR, 60000);
		SetEvent(stop_event);
		return NO_ERROR;
	}
	return ctl == SERVICE_CONTROL_INTERROGATE ? NO_ERROR : ERROR_CALL_NOT_IMPLEMENTED;
}

/* Turns a stop request into the daemon's stop, again every half second
 * until the daemon has returned (it may not have set up its handler when
 * the request came). */
static DWORD WINAPI stopper(void *arg)
{
	WaitForSingleObject(stop_event, INFINITE);
	for (;;) {
		ct_os_stop();
		Sleep(500);
	}
	return 0;
}

static void WINAPI service_main(DWORD argc, wchar_t **argv)
{
	static const struct ct_cmd_def *const table[] = { &ct_run_cmd, NULL };
	HANDLE th;

	svc_handle = RegisterServiceCtrlHandlerExW(SVC_NAME, on_control, NULL);
	if (svc_handle == NULL)
		return;
	report(SERVICE_START_PENDING, NO_ERROR, 10000);
	stop_event = CreateEventW(NULL, TRUE, FALSE, NULL);
	th = stop_event ? CreateThread(NULL, 0, stopper, NULL, 0, NULL) : NULL;
	if (th == NULL) {
		report(SERVICE_STOPPED, GetLastError(), 0);
		return;
	}
	report(SERVICE_RUNNING, NO_ERROR, 0);
	run_status = ct_cmd_run("ctune service run", table, NULL, run_argc, run_argv);
	report(SERVICE_STOPPED, run_status == 0 ? NO_ERROR : ERROR_SERVICE_SPECIFIC_ERROR, 0);
}

/* argv: "run" + the stored options, with --log-file DIR\ctune.log unless
 * one is given. */
static int svc_run(int argc, char **argv)
{
	static SERVICE_TABLE_ENTRYW tab[] = { { (wchar_t *)SVC_NAME, service_main },
					      { NULL, NULL } };
	char *dir = NULL, *log = NULL;
	int have_log = 0;

	for (int i = 0; i < argc; i++)
		if (strncmp(argv[i], "--log-file", 10) == 0)
			have_log = 1;
	run_argv = calloc((size_t)argc + 4, sizeof(char *));
	if (run_argv == NULL || ct_cl_state_dir(NULL, &dir) < 0)
		return CT_EXIT_FAIL;
	run_argv[run_argc++] = (char *)"run";
	for (int i = 0; i < argc; i++)
		run_argv[run_argc++] = argv[i];
	if (!have_log && asprintf(&log, "%s\\ctune.log", dir) >= 0) {
		run_argv[run_argc++] = (char *)"--log-file";
		run_argv[run_argc++] = log;
	}
	if (!StartServiceCtrlDispatcherW(tab)) {
		if (GetLastError() == ERROR_FAILED_SERVICE_CONTROLLER_CONNECT)
			fprintf(stderr, "ctune service run: only the service manager starts "
				"this ('ctune service start'); use 'ctune run' in a terminal\n");
		else
			fail_win("run");
		run_status = CT_EXIT_FAIL;
	}
	free(log);
	free(dir);
	free(run_argv);
	return run_status;
}

/* ---- the command table ---------------------------------------------- */

static int cmd_install(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	(void)ctx;
	return svc_install(argc - 1, argv + 1);
}

static int cmd_uninstall(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	(void)ctx, (void)argc, (void)argv;
	return svc_uninstall();
}

static int cmd_start(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	(void)ctx, (void)argc, (void)argv;
	return svc_start();
}

static int cmd_stop(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	(void)ctx, (void)argc, (void)argv;
	return svc_stop();
}

static int cmd_svc_run(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	(void)ctx;
	return svc_run(argc - 1, argv + 1);
}

static const struct ct_cmd_def install_cmd = {
	.name = "install", .fn = cmd_install, .own_opts = 1, .max_args = -1,
	.summary = "install the Windows service (elevated prompt)",
	.usage = "[RUN OPTIONS]",
	.help = "Registers the service 'crowdtune': at boot it runs 'ctune run RUN OPTIONS'\n"
		"as LocalService on the folder --dir (default %ProgramData%\\crowdtune,\n"
		"made with an ACL for the service and administrators only), logging\n"
		"to ctune.log there. Attach it with 'ctune --dir FOLDER attach ...'.\n",
};
static const struct ct_cmd_def uninstall_cmd = {
	.name = "uninstall", .fn = cmd_uninstall, .max_args = 0, .usage = "",
	.summary = "stop and remove the Windows service (its data stays)",
};
static const struct ct_cmd_def start_cmd = {
	.name = "start", .fn = cmd_start, .max_args = 0, .usage = "",
	.summary = "start the Windows service",
};
static const struct ct_cmd_def stop_cmd = {
	.name = "stop", .fn = cmd_stop, .max_args = 0, .usage = "",
	.summary = "stop the Windows service (it checkpoints first)",
};
static const struct ct_cmd_def run_cmd = {
	.name = "run", .fn = cmd_svc_run, .own_opts = 1, .max_args = -1,
	.summary = "the service's process (started by the service manager)",
	.usage = "[RUN OPTIONS]",
};
static const struct ct_cmd_def *const service_cmds[] = {
	&install_cmd, &uninstall_cmd, &start_cmd, &stop_cmd, &run_cmd, NULL,
};

const struct ct_cmd_def ct_service_cmd = {
	.name = "service", .subs = service_cmds,
	.summary = "the client as a Windows service (install, uninstall, start, stop)",
};
