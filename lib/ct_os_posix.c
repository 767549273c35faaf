/*
 * ct_os_posix.c - the platform layer on Linux and other POSIX systems (see
 * ct_os.h): the system calls the rest of the tree used directly before
 * Windows came, gathered here.
 */
#include "config.h"
#include "ct_os.h"
#include "ct_err.h"
#include "ct_unix.h"
#include "ct_time.h"

#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <termios.h>
#include <time.h>
#ifdef __linux__
#include <sys/sysinfo.h>
#endif

int ct_os_open(const char *path, int flags, ...)
{
	int mode = 0;

	if (flags & O_CREAT) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, int);
		va_end(ap);
	}
	return open(path, flags | O_CLOEXEC, (mode_t)mode);
}

int ct_os_mkdir(const char *path, int mode)
{
	return mkdir(path, (mode_t)mode);
}

int ct_os_replace(const char *from, const char *to)
{
	return rename(from, to);
}

int ct_os_rename_new(const char *from, const char *to)
{
	if (link(from, to) != 0)
		return -1;
	return unlink(from);
}

int ct_os_fsync(int fd)
{
	return fsync(fd);
}

int ct_os_fsync_dir(const char *dir)
{
	int fd, rc = 0;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ct_error_errno("%s: cannot open directory", dir);
	/* Some filesystems cannot fsync a directory; that is not a failure. */
	if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS)
		rc = ct_error_errno("%s: fsync of directory failed", dir);
	close(fd);
	return rc;
}

int ct_os_mkstemp(char *tmpl)
{
	return mkostemp(tmpl, O_CLOEXEC);
}

int ct_os_map(int fd, size_t len, void **addr)
{
	void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);

	*addr = NULL;
	if (p == MAP_FAILED)
		return -1;
	*addr = p;
	return 0;
}

void ct_os_unmap(void *addr, size_t len)
{
	munmap(addr, len);
}

const char *ct_os_last_sep(const char *path)
{
	return strrchr(path, '/');
}

int ct_os_path_absolute(const char *path)
{
	return path[0] == '/';
}

int ct_os_lock(int fd)
{
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? CT_EBUSY : ct_error_errno("flock");
	return 0;
}

int ct_os_private_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		return ct_error_errno("stat %s", dir);
	if (st.st_uid != geteuid())
		return ct_error(CT_EPERM, "%s belongs to another user", dir);
	if ((st.st_mode & 0777) != 0700 && chmod(dir, 0700) < 0)
		return ct_error_errno("chmod %s", dir);
	return 0;
}

int ct_os_data_dir(const char *app, char **out)
{
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");
	int n;

	*out = NULL;
	if (xdg != NULL && *xdg == '/')
		n = asprintf(out, "%s/%s", xdg, app);
	else if (home != NULL && *home)
		n = asprintf(out, "%s/.local/share/%s", home, app);
	else
		return ct_error(CT_ECONFIG, "no state directory: set HOME or use --dir");
	if (n < 0) {
		*out = NULL;
		return CT_ENOMEM;
	}
	return 0;
}

double ct_os_mtime(const struct stat *st)
{
	return st->st_mtim.tv_sec + st->st_mtim.tv_nsec / 1e9;
}

void ct_os_touch(const char *path)
{
	(void)utimensat(AT_FDCWD, path, NULL, 0);
}

int ct_os_disk_space(const char *path, uint64_t *avail, uint64_t *total)
{
	struct statvfs v;

	if (statvfs(path, &v) < 0)
		return ct_error_errno("statvfs %s", path);
	*avail = (uint64_t)v.f_bavail * v.f_frsize;
	*total = (uint64_t)v.f_blocks * v.f_frsize;
	return 0;
}

/* ---- the local control channel: a Unix-domain socket ---- */

int ct_os_local_listen(const char *path, int *fd)
{
	return ct_unix_listen(path, SOCK_NONBLOCK, fd);
}

int ct_os_local_connect(const char *path, int *fd)
{
	return ct_unix_connect(path, fd);
}

int ct_os_local_accept(int listen_fd, int *fd)
{
	*fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (*fd < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? CT_EAGAIN
							    : ct_error_errno("accept");
	/* the accepted socket inherits nothing: make it blocking explicitly */
	fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) & ~O_NONBLOCK);
	return 0;
}

void ct_os_local_remove(const char *path)
{
	unlink(path);
}

/* ---- a loopback TCP listener ---- */

int ct_os_loopback_listen(int port, int *fd, int *bound)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int s, one = 1;

	*fd = -1;
	*bound = 0;
	if (port < 0 || port > 65535)
		return ct_error(CT_EINVAL, "port %d", port);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return ct_error_errno("socket");
	/* a restart right after a stop finds the port in TIME_WAIT */
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		close(s);
		if (e == EADDRINUSE)
			return ct_error(CT_EBUSY, "127.0.0.1:%d is in use", port);
		errno = e;
		return ct_error_errno("bind 127.0.0.1:%d", port);
	}
	if (listen(s, 16) != 0 || getsockname(s, (struct sockaddr *)&sa, &len) != 0) {
		close(s);
		return ct_error_errno("listen on 127.0.0.1:%d", port);
	}
	*fd = s;
	*bound = ntohs(sa.sin_port);
	return 0;
}

int ct_os_loopback_accept(int listen_fd, int *fd)
{
	return ct_os_local_accept(listen_fd, fd);
}

int ct_os_loopback_connect(int port, int *fd)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	*fd = -1;
	if (s < 0)
		return ct_error_errno("socket");
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		close(s);
		if (e == ECONNREFUSED)
			return ct_error(CT_ENET, "nobody listens on 127.0.0.1:%d", port);
		errno = e;
		return ct_error_errno("connect 127.0.0.1:%d", port);
	}
	*fd = s;
	return 0;
}

int ct_os_sock_wait(int fd, int out, int ms)
{
	struct pollfd p = { .fd = fd, .events = out ? POLLOUT : POLLIN };

	return poll(&p, 1, ms);
}

ssize_t ct_os_sock_read(int fd, void *buf, size_t n)
{
	return read(fd, buf, n);
}

ssize_t ct_os_sock_write(int fd, const void *buf, size_t n)
{
	return write(fd, buf, n);
}

void ct_os_sock_close(int fd)
{
	close(fd);
}

/* ---- processes ---- */

void ct_os_on_stop(void (*fn)(int sig))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

void ct_os_on_reload(void (*fn)(int sig))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigaction(SIGHUP, &sa, NULL);
}

void ct_os_stop(void)
{
	raise(SIGTERM);
}

void ct_os_no_sigpipe(void)
{
	signal(SIGPIPE, SIG_IGN);
}

int ct_os_hostname(char *buf, size_t cap)
{
	if (cap == 0 || gethostname(buf, cap - 1) < 0)
		return -1;
	buf[cap - 1] = '\0';
	return 0;
}

int ct_os_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 4096 ? 4096 : (int)n;
}

void ct_os_describe(char *os, size_t cap, uint64_t *ram)
{
	struct utsname u;
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

	if (uname(&u) == 0)
		snprintf(os, cap, "%s %s", u.sysname, u.release);
	*ram = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
}

int ct_os_on_battery(void)
{
	return -1;
}

double ct_os_uptime(void)
{
#ifdef __linux__
	struct sysinfo si;

	return sysinfo(&si) == 0 ? (double)si.uptime : 1e9;
#else
	return 1e9;
#endif
}

int ct_os_cpu_ticks(unsigned long long *busy, unsigned long long *total,
		    unsigned long long *self)
{
	(void)busy;
	(void)total;
	(void)self;
	return CT_EUNSUPP;	/* /proc/stat (cl_load.c) */
}

void ct_os_cond_init(pthread_cond_t *c)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
}

void ct_os_cond_deadline(double s, struct timespec *ts)
{
	ct_time_after(CLOCK_MONOTONIC, s, ts);
}

void ct_os_sleep(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

/* ---- the terminal ---- */

static struct termios term_saved;
static int term_is_raw;

int ct_os_term_raw(void)
{
	struct termios raw;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &term_saved) != 0)
		return 0;
	raw = term_saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	term_is_raw = 1;
	return 1;
}

void ct_os_term_restore(void)
{
	if (term_is_raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &term_saved);
	term_is_raw = 0;
}

int ct_os_term_size(int *cols, int *rows)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0 || ws.ws_row == 0)
		return -1;
	*cols = ws.ws_col;
	*rows = ws.ws_row;
	return 0;
}

int ct_os_term_key(int ms, char *c)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };

	return poll(&p, 1, ms) > 0 && read(STDIN_FILENO, c, 1) >= 0;
}
