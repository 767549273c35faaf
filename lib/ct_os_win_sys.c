/*
 * ct_os_win_sys.c - the platform layer on Windows, the rest of ct_os.h
 * (files and directories are ct_os_win.c): the local control channel over
 * loopback TCP with a token, console control events, the CPU, memory and
 * OS description, CPU times for the idle decision, the console.
 */
#define CT_OS_IMPL 1
#include "config.h"
#include "ct_os.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_time.h"

#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <bcrypt.h>
#include <conio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_HEX 32

/* ---- the local control channel ---- */

static char listen_token[TOKEN_HEX + 1];	/* of this process's listener */

static int net_init(void)
{
	static LONG done;
	WSADATA w;

	if (InterlockedCompareExchange(&done, 1, 0) == 0 && WSAStartup(MAKEWORD(2, 2), &w) != 0)
		return ct_error(CT_ENET, "WSAStartup failed");
	return 0;
}

static void set_errno_wsa(void)
{
	int e = WSAGetLastError();

	errno = e == WSAEWOULDBLOCK ? EAGAIN : e == WSAEINTR ? EINTR
		: e == WSAECONNRESET ? ECONNRESET : EIO;
}

static void make_token(char *out)
{
	unsigned char r[TOKEN_HEX / 2];

	if (BCryptGenRandom(NULL, r, sizeof(r), BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
		for (size_t i = 0; i < sizeof(r); i++)
			r[i] = (unsigned char)(GetTickCount64() >> (i % 8) ^ i * 131u);
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
}

/* socket bound to 127.0.0.1 (port 0: any), not inherited. */
static int loopback_socket(SOCKET *s, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	if (*s == INVALID_SOCKET) {
		set_errno_wsa();
		return ct_error_errno("socket");
	}
	SetHandleInformation((HANDLE)*s, HANDLE_FLAG_INHERIT, 0);
	return 0;
}

int ct_os_local_listen(const char *path, int *fd)
{
	struct sockaddr_in sa;
	int len = sizeof(sa), rc;
	u_long nb = 1;
	char line[64];
	SOCKET s;

	*fd = -1;
	rc = net_init();
	if (rc == 0) rc = loopback_socket(&s, &sa);
	if (rc < 0)
		return rc;
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(s, 8) != 0 ||
	    getsockname(s, (struct sockaddr *)&sa, &len) != 0 || ioctlsocket(s, FIONBIO, &nb) != 0) {
		set_errno_wsa();
		closesocket(s);
		return ct_error_errno("listen on loopback for %s", path);
	}
	make_token(listen_token);
	snprintf(line, sizeof(line), "%u %s\n", (unsigned)ntohs(sa.sin_port), listen_token);
	rc = ct_file_write_atomic(path, line, strlen(line), 0600);
	if (rc < 0) {
		closesocket(s);
		return rc;
	}
	*fd = (int)s;
	return 0;
}

/* Port and token of the endpoint file at path. */
static int read_endpoint(const char *path, unsigned *port, char *token)
{
	unsigned char *data = NULL;
	size_t len;
	int rc = ct_file_read_all(path, 128, &data, &len);

	if (rc == CT_ENOENT)
		return ct_error(CT_ENOENT, "%s: no such socket", path);
	if (rc < 0)
		return rc;
	if (sscanf((char *)data, "%u %32[0-9a-f]", port, token) != 2 || *port == 0 || *port > 65535)
		rc = ct_error(CT_EFORMAT, "%s: not a control endpoint", path);
	free(data);
	return rc;
}

static int send_all(SOCKET s, const char *p, size_t n)
{
	while (n > 0) {
		int w = send(s, p, (int)n, 0);

		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int ct_os_loopback_connect(int port, int *fd)
{
	struct sockaddr_in sa;
	SOCKET s;
	int rc;

	*fd = -1;
	rc = net_init();
	if (rc == 0) rc = loopback_socket(&s, &sa);
	if (rc < 0)
		return rc;
	sa.sin_port = htons((u_short)port);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = WSAGetLastError();

		closesocket(s);
		if (e == WSAECONNREFUSED)
			return ct_error(CT_ENET, "nobody listens on 127.0.0.1:%d", port);
		set_errno_wsa();
		return ct_error_errno("connect 127.0.0.1:%d", port);
	}
	*fd = (int)s;
	return 0;
}

int ct_os_local_connect(const char *path, int *fd)
{
	char token[TOKEN_HEX + 2];
	unsigned port;
	int rc;

	*fd = -1;
	rc = net_init();
	if (rc == 0) rc = read_endpoint(path, &port, token);
	if (rc == 0) rc = ct_os_loopback_connect((int)port, fd);
	if (rc == CT_ENET)
		return ct_error(CT_ENET, "%s: nobody listens", path);
	if (rc < 0)
		return rc;
	strcat(token, "\n");
	if (send_all((SOCKET)*fd, token, strlen(token)) < 0) {
		closesocket((SOCKET)*fd);
		*fd = -1;
		return ct_error(CT_ENET, "%s: connection dropped", path);
	}
	return 0;
}

/* Read the peer's token line (2 s at most): 0 if it is ours. */
static int check_token(SOCKET s)
{
	char line[TOKEN_HEX + 2];
	size_t n = 0;

	while (n < sizeof(line)) {
		if (ct_os_sock_wait((int)s, 0, 2000) <= 0 || recv(s, line + n, 1, 0) != 1)
			return -1;
		if (line[n] == '\n')
			break;
		n++;
	}
	return n == TOKEN_HEX && memcmp(line, listen_token, TOKEN_HEX) == 0 ? 0 : -1;
}

int ct_os_loopback_accept(int listen_fd, int *fd)
{
	SOCKET s = accept((SOCKET)listen_fd, NULL, NULL);
	u_long nb = 0;

	*fd = -1;
	if (s == INVALID_SOCKET) {
		if (WSAGetLastError() == WSAEWOULDBLOCK)
			return CT_EAGAIN;
		set_errno_wsa();
		return ct_error_errno("accept");
	}
	/* an accepted socket inherits the listener's non-blocking mode */
	ioctlsocket(s, FIONBIO, &nb);
	SetHandleInformation((HANDLE)s, HANDLE_FLAG_INHERIT, 0);
	*fd = (int)s;
	return 0;
}

int ct_os_local_accept(int listen_fd, int *fd)
{
	int rc = ct_os_loopback_accept(listen_fd, fd);

	if (rc == 0 && check_token((SOCKET)*fd) < 0) {
		closesocket((SOCKET)*fd);
		*fd = -1;
		return ct_error(CT_EPERM, "control connection without the endpoint's token");
	}
	return rc;
}

int ct_os_loopback_listen(int port, int *fd, int *bound)
{
	struct sockaddr_in sa;
	int len = sizeof(sa), one = 1, rc;
	u_long nb = 1;
	SOCKET s;

	*fd = -1;
	*bound = 0;
	if (port < 0 || port > 65535)
		return ct_error(CT_EINVAL, "port %d", port);
	rc = net_init();
	if (rc == 0) rc = loopback_socket(&s, &sa);
	if (rc < 0)
		return rc;
	/* Windows' SO_REUSEADDR would let another program take the port */
	setsockopt(s, SOL_SOCKET, SO_EXCLUSIVEADDRUSE, (const char *)&one, sizeof(one));
	sa.sin_port = htons((u_short)port);
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = WSAGetLastError();

		closesocket(s);
		if (e == WSAEADDRINUSE || e == WSAEACCES)
			return ct_error(CT_EBUSY, "127.0.0.1:%d is in use", port);
		set_errno_wsa();
		return ct_error_errno("bind 127.0.0.1:%d", port);
	}
	if (listen(s, 16) != 0 || getsockname(s, (struct sockaddr *)&sa, &len) != 0 ||
	    ioctlsocket(s, FIONBIO, &nb) != 0) {
		set_errno_wsa();
		closesocket(s);
		return ct_error_errno("listen on 127.0.0.1:%d", port);
	}
	*fd = (int)s;
	*bound = ntohs(sa.sin_port);
	return 0;
}

void ct_os_local_remove(const char *path)
{
	ct_os_unlink(path);
}

int ct_os_sock_wait(int fd, int out, int ms)
{
	fd_set set;
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	int r;

	FD_ZERO(&set);
	FD_SET((SOCKET)fd, &set);
	r = select(0, out ? NULL : &set, out ? &set : NULL, NULL, &tv);
	if (r == SOCKET_ERROR) {
		set_errno_wsa();
		return -1;
	}
	return r;
}

ssize_t ct_os_sock_read(int fd, void *buf, size_t n)
{
	int r = recv((SOCKET)fd, buf, n > INT_MAX ? INT_MAX : (int)n, 0);

	if (r == SOCKET_ERROR) {
		set_errno_wsa();
		return -1;
	}
	return r;
}

ssize_t ct_os_sock_write(int fd, const void *buf, size_t n)
{
	int r = send((SOCKET)fd, buf, n > INT_MAX ? INT_MAX : (int)n, 0);

	if (r == SOCKET_ERROR) {
		set_errno_wsa();
		return -1;
	}
	return r;
}

void ct_os_sock_close(int fd)
{
	closesocket((SOCKET)fd);
}

/* ---- processes ---- */

static void (*stop_fn)(int sig);

/* Ctrl-C and Ctrl-Break ask to stop; closing the console, logging off and
 * shutting down end the process when this returns, so those wait a little
 * for the daemon to write its checkpoint and state. */
static BOOL WINAPI on_console(DWORD ev)
{
	if (stop_fn == NULL)
		return FALSE;
	stop_fn(ev == CTRL_C_EVENT ? SIGINT : SIGTERM);
	if (ev == CTRL_CLOSE_EVENT || ev == CTRL_LOGOFF_EVENT || ev == CTRL_SHUTDOWN_EVENT)
		Sleep(4000);
	return TRUE;
}

void ct_os_on_stop(void (*fn)(int sig))
{
	stop_fn = fn;
	SetConsoleCtrlHandler(on_console, TRUE);
}

void ct_os_on_reload(void (*fn)(int sig))
{
	(void)fn;	/* no SIGHUP: `ctune prefs reload` is the way */
}

void ct_os_stop(void)
{
	void (*fn)(int) = stop_fn;

	if (fn != NULL)
		fn(SIGTERM);
}

void ct_os_no_sigpipe(void)
{
}

int ct_os_ncpus(void)
{
	DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);

	return n < 1 ? 1 : n > 4096 ? 4096 : (int)n;
}

void ct_os_describe(char *os, size_t cap, uint64_t *ram)
{
	typedef LONG(WINAPI * rtl_get_version)(OSVERSIONINFOW *);
	rtl_get_version get = (rtl_get_version)(void (*)(void))GetProcAddress(
		GetModuleHandleW(L"ntdll.dll"), "RtlGetVersion");
	OSVERSIONINFOW v = { .dwOSVersionInfoSize = sizeof(v) };
	MEMORYSTATUSEX m = { .dwLength = sizeof(m) };

	if (get != NULL && get(&v) == 0)
		snprintf(os, cap, "Windows %lu.%lu.%lu", (unsigned long)v.dwMajorVersion,
			 (unsigned long)v.dwMinorVersion, (unsigned long)v.dwBuildNumber);
	else
		snprintf(os, cap, "Windows");
	*ram = GlobalMemoryStatusEx(&m) ? m.ullTotalPhys : 0;
}

int ct_os_on_battery(void)
{
	SYSTEM_POWER_STATUS s;

	/* ACLineStatus 0: offline; 1 online, 255 unknown (a desktop) */
	return GetSystemPowerStatus(&s) && s.ACLineStatus == 0;
}

double ct_os_uptime(void)
{
	return GetTickCount64() / 1000.0;
}

static unsigned long long ft(FILETIME f)
{
	return ((unsigned long long)f.dwHighDateTime << 32) | f.dwLowDateTime;
}

int ct_os_cpu_ticks(unsigned long long *busy, unsigned long long *total,
		    unsigned long long *self)
{
	FILETIME idle, kern, user, c, e, pk, pu;

	/* 100 ns units over all CPUs; the kernel time includes the idle time */
	if (!GetSystemTimes(&idle, &kern, &user) ||
	    !GetProcessTimes(GetCurrentProcess(), &c, &e, &pk, &pu))
		return ct_error(CT_EIO, "GetSystemTimes failed");
	*total = ft(kern) + ft(user);
	*busy = *total - ft(idle);
	*self = ft(pk) + ft(pu);
	return 0;
}

void ct_os_cond_init(pthread_cond_t *c)
{
	pthread_cond_init(c, NULL);	/* winpthreads: CLOCK_REALTIME only */
}

void ct_os_cond_deadline(double s, struct timespec *ts)
{
	ct_time_after(CLOCK_REALTIME, s, ts);
}

void ct_os_sleep(double s)
{
	if (s > 0)
		Sleep((DWORD)(s * 1000));
}

/* ---- the console ---- */

static DWORD con_saved;
static int con_raw;

int ct_os_term_raw(void)
{
	HANDLE in = GetStdHandle(STD_INPUT_HANDLE), out = GetStdHandle(STD_OUTPUT_HANDLE);
	DWORD m;

	if (!GetConsoleMode(in, &con_saved))
		return 0;
	SetConsoleMode(in, con_saved & ~(DWORD)(ENABLE_LINE_INPUT | ENABLE_ECHO_INPUT));
	/* the watch view draws with ANSI escapes */
	if (GetConsoleMode(out, &m))
		SetConsoleMode(out, m | ENABLE_VIRTUAL_TERMINAL_PROCESSING);
	con_raw = 1;
	return 1;
}

void ct_os_term_restore(void)
{
	if (con_raw)
		SetConsoleMode(GetStdHandle(STD_INPUT_HANDLE), con_saved);
	con_raw = 0;
}

int ct_os_term_size(int *cols, int *rows)
{
	CONSOLE_SCREEN_BUFFER_INFO i;

	if (!GetConsoleScreenBufferInfo(GetStdHandle(STD_OUTPUT_HANDLE), &i))
		return -1;
	*cols = i.srWindow.Right - i.srWindow.Left + 1;
	*rows = i.srWindow.Bottom - i.srWindow.Top + 1;
	return *cols > 0 && *rows > 0 ? 0 : -1;
}

int ct_os_term_key(int ms, char *c)
{
	for (int waited = 0; waited < ms; waited += 50) {
		if (_kbhit()) {
			*c = (char)_getch();
			return 1;
		}
		Sleep(50);
	}
	return 0;
}
