/*
 * ct_os.h - the platform layer: what differs between POSIX systems and
 * Windows, behind one set of ct_os_* functions (lib/ct_os_posix.c,
 * lib/ct_os_win.c; a macOS port would be a third file or reuse the POSIX
 * one). The rest of the tree is one code path and never tests _WIN32.
 *
 * Files: paths are UTF-8 everywhere. On Windows the CRT's narrow calls
 * (open, fopen, stat, mkdir, unlink, rename, opendir ...) would read them in
 * the ANSI code page and fail for a user named "Jörg" or "李"; this header
 * maps those names onto UTF-16 wrappers (ct_os_win.c) for every file that
 * includes it, as git's compat layer does, and opens everything in binary
 * mode (the Windows build includes this header in every file: configure's
 * -include). Atomic replace writes through (MoveFileExW + FlushFileBuffers).
 *
 * The local control channel: a Unix-domain socket file (mode 0600) on
 * POSIX; on Windows, where neither every Windows 10 nor Wine has AF_UNIX, a
 * loopback TCP port written with a random token into the same file (under
 * %LOCALAPPDATA%, readable by its user only): a connection that does not
 * send the token first is dropped. Socket descriptors are ints on both.
 */
#ifndef CT_OS_H
#define CT_OS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifdef _WIN32
#ifndef O_CLOEXEC
#define O_CLOEXEC _O_NOINHERIT
#endif
#ifndef O_NONBLOCK
#define O_NONBLOCK 0
#endif
#ifndef O_DIRECTORY
#define O_DIRECTORY 0
#endif
#ifndef EDQUOT
#define EDQUOT 10069		/* WSAEDQUOT: a value no CRT errno uses */
#endif
#ifndef ELOOP
#define ELOOP 10062		/* WSAELOOP */
#endif
#define S_ISLNK(m) 0
#include <math.h>
#include <string.h>
/* MinGW-w64's fmaf is not fused: it rounds twice and is wrong in about one
 * case in six, and the engine's arithmetic is a chain of fmaf (results
 * must be bit for bit those of Linux). GCC turns fmaf into the FMA
 * instruction in code compiled for a CPU that has one (the AVX2 and
 * AVX-512 kernel paths, engine/ct_isa.h) and calls the library function
 * elsewhere; this asm label makes that call ct_os_win.c's exact fmaf
 * instead of MinGW's. */
float fmaf(float x, float y, float z) __asm__("ct_os_fmaf");
#if !defined(_FILE_OFFSET_BITS) || _FILE_OFFSET_BITS != 64
#error "the Windows build needs -D_FILE_OFFSET_BITS=64 (files over 2 GiB)"
#endif
#ifndef CT_OS_IMPL
/* <sys/stat.h> made stat _stat64 (64-bit sizes): route its calls */
#define _stat64(p, s) ct_os_stat(p, s)
#define _fstat64(fd, s) ct_os_fstat(fd, s)
#define lstat(p, s) ct_os_stat(p, s)
#define fopen(p, m) ct_os_fopen(p, m)
#define mkdir(p, m) ct_os_mkdir(p, m)
#define unlink(p) ct_os_unlink(p)
#define remove(p) ct_os_unlink(p)
#define rmdir(p) ct_os_rmdir(p)
#define rename(a, b) ct_os_replace(a, b)
#define access(p, m) ct_os_access(p, m)
#define chmod(p, m) ct_os_chmod(p, m)
#define DIR struct ct_os_dir
#define opendir(p) ct_os_opendir(p)
#define readdir(d) ct_os_readdir(d)
#define closedir(d) ct_os_closedir(d)
#define fsync(fd) ct_os_fsync(fd)
#define realpath(p, r) ct_os_realpath(p, r)
#define geteuid() 0
#define fchmod(fd, m) ((void)(fd), (void)(m), 0)
#define setenv(k, v, o) ct_os_setenv(k, v, o)
#endif
int ct_os_setenv(const char *key, const char *val, int overwrite);
struct ct_os_dir;
FILE *ct_os_fopen(const char *path, const char *mode);
/* stat(2) of path (a trailing / or \\ allowed, as on POSIX) */
int ct_os_stat(const char *path, struct stat *st);
/* fstat(2); a directory is S_IFDIR (the CRT says S_IFREG) */
int ct_os_fstat(int fd, struct stat *st);
int ct_os_unlink(const char *path);
int ct_os_rmdir(const char *path);
int ct_os_access(const char *path, int mode);
int ct_os_chmod(const char *path, int mode);
struct ct_os_dir *ct_os_opendir(const char *path);
struct dirent *ct_os_readdir(struct ct_os_dir *d);
int ct_os_closedir(struct ct_os_dir *d);
char *ct_os_realpath(const char *path, char *resolved);
char *strndup(const char *s, size_t n);
char *mkdtemp(char *tmpl);
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t pread(int fd, void *buf, size_t n, off_t off);
void *memmem(const void *h, size_t hn, const void *n, size_t nn);
#endif

/* open(2) (a third argument, the mode, with O_CREAT); on Windows by the
 * UTF-16 path, binary, sharing delete so that an open file can be renamed
 * over or removed as on POSIX. The fd, or -1 with errno. */
int ct_os_open(const char *path, int flags, ...);

/* mkdir(2) with mode on POSIX; Windows has no modes (the ACL of the parent,
 * %LOCALAPPDATA% being the user's own, applies). 0 or -1 with errno. */
int ct_os_mkdir(const char *path, int mode);

/* Rename from over to, replacing it atomically; on Windows MoveFileExW with
 * MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH. 0 or -1 with errno. */
int ct_os_replace(const char *from, const char *to);

/* Rename from to a name that must not exist yet: never replaces a file
 * another process made first (link + unlink; on Windows MoveFileExW
 * without MOVEFILE_REPLACE_EXISTING, written through). 0 or -1 with
 * errno (EEXIST: to exists; from is left then). */
int ct_os_rename_new(const char *from, const char *to);

/* Flush fd's data to the disk (fsync / FlushFileBuffers). 0 or -1, errno. */
int ct_os_fsync(int fd);

/* Make a rename or unlink in dir durable: fsync of the directory on POSIX
 * (filesystems that cannot are not an error); nothing on Windows, where
 * MOVEFILE_WRITE_THROUGH did it. Returns 0 or a CT_E* code. */
int ct_os_fsync_dir(const char *dir);

/* mkstemp: replace the trailing XXXXXX of tmpl, create the file exclusively
 * (0600, close-on-exec, binary). The fd, or -1 with errno. */
int ct_os_mkstemp(char *tmpl);

/* Map len bytes of fd read-only (private) into *addr. Returns 0, or -1
 * with errno (*addr = NULL). ct_os_unmap undoes it. */
int ct_os_map(int fd, size_t len, void **addr);
void ct_os_unmap(void *addr, size_t len);

/* The last directory separator in path ('/'; on Windows '/' or '\\'), or
 * NULL. */
const char *ct_os_last_sep(const char *path);

/* 1 if path is absolute: it starts with '/'; on Windows also "X:\\",
 * "X:/" or "\\\\" (a share). */
int ct_os_path_absolute(const char *path);

/* Take an exclusive lock on the open file fd without waiting: 0, CT_EBUSY
 * if another process holds it. The lock goes when fd is closed or the
 * process dies. */
int ct_os_lock(int fd);

/* Check that dir (existing) is private to this user: on POSIX owned by the
 * effective uid (else CT_EPERM) and chmod-ed to 0700; on Windows the
 * per-user %LOCALAPPDATA% ACL covers it (0). */
int ct_os_private_dir(const char *dir);

/* The per-user data directory of app: $XDG_DATA_HOME/app or
 * $HOME/.local/share/app on POSIX, %LOCALAPPDATA%\app on Windows. *out is
 * malloc'd UTF-8 (caller frees). Returns 0, CT_ECONFIG when there is none
 * (names what to set), CT_ENOMEM. */
int ct_os_data_dir(const char *app, char **out);

/* Modification time of st in seconds (with the fraction where the OS has
 * one); ct_os_touch sets path's to now (errors ignored). */
double ct_os_mtime(const struct stat *st);
void ct_os_touch(const char *path);

/* Free and total bytes of the filesystem holding path. 0 or a CT_E* code. */
int ct_os_disk_space(const char *path, uint64_t *avail, uint64_t *total);

/* ---- the local control channel ---- */

/* Listen on the local endpoint path (non-blocking listener), replacing a
 * stale one. *fd the listener (-1 on failure). Returns 0 or a CT_E* code. */
int ct_os_local_listen(const char *path, int *fd);

/* Connect to the endpoint at path: blocking socket in *fd. Returns 0;
 * CT_ENOENT if nothing is there, CT_ENET if nobody listens, CT_E* else. */
int ct_os_local_connect(const char *path, int *fd);

/* Accept one connection (blocking socket in *fd) on a listener: 0, CT_EAGAIN
 * if none is waiting, another CT_E* code on errors (a Windows peer that
 * did not prove it read the endpoint file is refused with CT_EPERM). */
int ct_os_local_accept(int listen_fd, int *fd);

/* Remove the endpoint file of a listener that is closed. */
void ct_os_local_remove(const char *path);

/* A TCP listener on 127.0.0.1:port (port 0: a free one the system picks),
 * non-blocking and not inherited, for the client's local control page
 * (client/cl_web.c), which checks its own token. *fd the listener and
 * *bound its port (-1 and 0 on failure). Returns 0, CT_EBUSY when the
 * port is taken, or a CT_E* code. */
int ct_os_loopback_listen(int port, int *fd, int *bound);

/* Accept one connection on a ct_os_loopback_listen listener: a blocking
 * socket in *fd. 0, CT_EAGAIN if none is waiting, or a CT_E* code. */
int ct_os_loopback_accept(int listen_fd, int *fd);

/* Connect to 127.0.0.1:port: a blocking socket in *fd (-1 on failure).
 * 0, CT_ENET when nobody listens, or a CT_E* code. */
int ct_os_loopback_connect(int port, int *fd);

/* Wait up to ms milliseconds until fd can be read (out = 0) or written
 * (out = 1): > 0 ready, 0 timed out, < 0 error. */
int ct_os_sock_wait(int fd, int out, int ms);

/* recv/send/close on a socket descriptor: byte count or -1 with errno
 * (EINTR, EAGAIN as on POSIX). */
ssize_t ct_os_sock_read(int fd, void *buf, size_t n);
ssize_t ct_os_sock_write(int fd, const void *buf, size_t n);
void ct_os_sock_close(int fd);

/* ---- processes ---- */

/* Call fn(sig) from a signal (POSIX: SIGTERM, SIGINT) or a
 * console control event (Windows: Ctrl-C, Ctrl-Break, close, logoff,
 * shutdown) asking this process to stop. fn only sets a flag. */
void ct_os_on_stop(void (*fn)(int sig));

/* Call fn(sig) from a signal handler when the process is asked to read
 * its configuration again (POSIX: SIGHUP; Windows has no such request:
 * nothing happens). */
void ct_os_on_reload(void (*fn)(int sig));

/* Ask this process to stop as a SIGTERM would: the function ct_os_on_stop
 * registered is called (POSIX: raise(SIGTERM)); nothing before that. For
 * a Windows service's stop and shutdown requests (client/service_win.c). */
void ct_os_stop(void);

/* Writes to a closed socket or pipe fail with EPIPE instead of killing
 * the process (SIGPIPE ignored; Windows has no such signal). */
void ct_os_no_sigpipe(void);

/* This machine's host name into buf (NUL-terminated): 0 or -1. */
int ct_os_hostname(char *buf, size_t cap);

/* Number of CPUs online (>= 1). */
int ct_os_ncpus(void);

/* The OS name and release (e.g. "Linux 6.1.0", "Windows 10.0.19045") into
 * os, the physical memory in *ram (0 if unknown). */
void ct_os_describe(char *os, size_t cap, uint64_t *ram);

/* 1 if the machine runs on battery, 0 on mains, -1 where the OS says it
 * elsewhere (POSIX: /sys/class/power_supply, cl_prefs.c reads it). */
int ct_os_on_battery(void);

/* Seconds since boot (1e9 if unknown). */
double ct_os_uptime(void);

/* Busy and total CPU time of the machine and this process's CPU time, in
 * one unit: 0, or CT_EUNSUPP where /proc/stat is the source (POSIX). */
int ct_os_cpu_ticks(unsigned long long *busy, unsigned long long *total,
		    unsigned long long *self);

/* Initialise a condition variable whose timed waits ct_os_cond_deadline
 * computes: on the monotonic clock where pthreads has it (a wall clock
 * step does not stretch a wait); winpthreads waits on the wall clock. */
void ct_os_cond_init(pthread_cond_t *c);

/* The absolute time s seconds from now on that clock, for
 * pthread_cond_timedwait on a condition of ct_os_cond_init. */
void ct_os_cond_deadline(double s, struct timespec *ts);

/* Sleep s seconds (a signal may end it early). */
void ct_os_sleep(double s);

/* ---- the terminal (ctune status --watch) ---- */

/* Put stdin in raw mode if it is a terminal: 1 if so (restore with
 * ct_os_term_restore), 0 otherwise. */
int ct_os_term_raw(void);
void ct_os_term_restore(void);

/* Columns and rows of stdout's terminal: 0, or -1 if not a terminal. */
int ct_os_term_size(int *cols, int *rows);

/* Wait up to ms for a key (or the end) on stdin: 1 (the byte in *c), or 0. */
int ct_os_term_key(int ms, char *c);

#endif
