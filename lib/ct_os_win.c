/*
 * ct_os_win.c - the platform layer on Windows (see ct_os.h), built by
 * MinGW-w64. Paths arrive as UTF-8 and go to the UTF-16 ("W") calls, so
 * user names outside the ANSI code page work; paths of MAX_PATH or more get
 * the \\?\ prefix. Errors of Win32 calls become errno values for the CT_E*
 * mapping of ct_err.c.
 */
#define CT_OS_IMPL 1
#include "config.h"
#include "ct_os.h"
#include "ct_err.h"
#include "ct_file.h"

#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <bcrypt.h>
#include <conio.h>
#include <io.h>
#include <signal.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utime.h>
#include <wchar.h>

#define WPATH_MAX 32768

/* ---- UTF-8 <-> UTF-16 ---- */

/* fmaf, correctly rounded; its symbol is ct_os_fmaf (ct_os.h), called
 * where the compiler has no FMA instruction. x*y is exact in double,
 * TwoSum gives the rounding error of + z, and rounding that sum to odd
 * before the final rounding to float makes the double rounding harmless
 * (53 >= 24 + 2 bits). Checked against glibc on 5 million triples with
 * cancellations. */
float fmaf(float x, float y, float z)
{
	double xy = (double)x * (double)y, s = xy + (double)z, bb, err;
	uint64_t u;

	if (!isfinite(s))
		return (float)s;
	bb = s - xy;
	err = (xy - (s - bb)) + ((double)z - bb);
	memcpy(&u, &s, sizeof(u));
	if (err != 0 && (u & 1) == 0) {
		u += (err > 0) == (s > 0) ? 1 : (uint64_t)-1;
		memcpy(&s, &u, sizeof(s));
	}
	return (float)s;
}

/* path as a malloc'd UTF-16 string with backslashes (\\?\ prefixed when
 * long and absolute), or NULL with errno (EINVAL: not UTF-8). */
static wchar_t *wide(const char *path)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
	int pre = 0;
	wchar_t *w;

	if (n <= 0 || n > WPATH_MAX) {
		errno = n <= 0 ? EINVAL : ENAMETOOLONG;
		return NULL;
	}
	if (n >= MAX_PATH - 12 && path[0] && path[1] == ':' && (path[2] == '/' || path[2] == '\\'))
		pre = 4;
	w = malloc(((size_t)n + (size_t)pre) * sizeof(*w));
	if (w == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (pre)
		memcpy(w, L"\\\\?\\", 4 * sizeof(*w));
	MultiByteToWideChar(CP_UTF8, 0, path, -1, w + pre, n);
	for (wchar_t *p = w + pre; *p; p++)
		if (*p == L'/')
			*p = L'\\';
	return w;
}

/* w as UTF-8 into out (cap bytes): 0, or -1 if it does not fit. */
static int narrow(const wchar_t *w, char *out, int cap)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, out, cap, NULL, NULL);

	return n > 0 ? 0 : -1;
}

/* errno for GetLastError()'s code. */
static int win_errno(DWORD e)
{
	static const struct { DWORD w; int e; } map[] = {
		{ ERROR_FILE_NOT_FOUND, ENOENT }, { ERROR_PATH_NOT_FOUND, ENOENT },
		{ ERROR_ACCESS_DENIED, EACCES }, { ERROR_SHARING_VIOLATION, EACCES },
		{ ERROR_LOCK_VIOLATION, EACCES }, { ERROR_ALREADY_EXISTS, EEXIST },
		{ ERROR_FILE_EXISTS, EEXIST }, { ERROR_DISK_FULL, ENOSPC },
		{ ERROR_HANDLE_DISK_FULL, ENOSPC }, { ERROR_NOT_ENOUGH_MEMORY, ENOMEM },
		{ ERROR_OUTOFMEMORY, ENOMEM }, { ERROR_INVALID_PARAMETER, EINVAL },
		{ ERROR_INVALID_NAME, ENOENT }, { ERROR_FILENAME_EXCED_RANGE, ENAMETOOLONG },
		{ ERROR_DIR_NOT_EMPTY, ENOTEMPTY }, { ERROR_WRITE_PROTECT, EROFS },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].w == e)
			return map[i].e;
	return EIO;
}

static int fail_win(void)
{
	errno = win_errno(GetLastError());
	return -1;
}

/* ---- files ---- */

/* CreateFileW's disposition for open(2) flags. */
static DWORD disposition(int flags)
{
	if ((flags & O_CREAT) && (flags & O_EXCL))
		return CREATE_NEW;
	if ((flags & O_CREAT) && (flags & O_TRUNC))
		return CREATE_ALWAYS;
	if (flags & O_CREAT)
		return OPEN_ALWAYS;
	return flags & O_TRUNC ? TRUNCATE_EXISTING : OPEN_EXISTING;
}

/* open(2) by CreateFileW, sharing read, write and delete as POSIX does: a
 * file may be renamed over or removed while open (the CRT's own open
 * refuses both), binary, never inherited. The mode is ignored. */
int ct_os_open(const char *path, int flags, ...)
{
	int acc = flags & (O_RDONLY | O_WRONLY | O_RDWR), fd;
	DWORD access = acc == O_WRONLY ? GENERIC_WRITE : acc == O_RDWR
		? GENERIC_READ | GENERIC_WRITE : GENERIC_READ;
	wchar_t *w = wide(path);
	HANDLE h;

	if (w == NULL)
		return -1;
	h = CreateFileW(w, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			disposition(flags), FILE_ATTRIBUTE_NORMAL | FILE_FLAG_BACKUP_SEMANTICS, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return fail_win();
	fd = _open_osfhandle((intptr_t)h, (flags & (O_APPEND | O_RDONLY | O_WRONLY | O_RDWR)) | O_BINARY);
	if (fd < 0) {
		CloseHandle(h);
		errno = EMFILE;
	}
	return fd;
}

/* fopen's mode as open(2) flags. */
static int fopen_flags(const char *mode)
{
	int plus = strchr(mode, '+') != NULL;

	switch (mode[0]) {
	case 'w':
		return (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC;
	case 'a':
		return (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_APPEND;
	default:
		return plus ? O_RDWR : O_RDONLY;
	}
}

FILE *ct_os_fopen(const char *path, const char *mode)
{
	char m[8];
	size_t n = 0;
	FILE *f;
	int fd;

	for (; mode[n] && n < 4; n++)
		m[n] = mode[n] == 't' ? 'b' : mode[n];
	m[n] = '\0';
	if (strchr(m, 'b') == NULL)
		strcat(m, "b");	/* never text mode: files are LF on every OS */
	fd = ct_os_open(path, fopen_flags(mode));
	if (fd < 0)
		return NULL;
	f = _fdopen(fd, m);
	if (f == NULL)
		_close(fd);
	return f;
}

/* Run call(w, arg) on path's UTF-16 form, keeping its errno. */
#define WCALL(path, expr)                 \
	do {                              \
		wchar_t *w = wide(path);  \
		int r_, e_;               \
		if (w == NULL)            \
			return -1;        \
		r_ = (expr);              \
		e_ = errno;               \
		free(w);                  \
		errno = e_;               \
		return r_;                \
	} while (0)

int ct_os_stat(const char *path, struct stat *st)
{
	wchar_t *w = wide(path);
	size_t n;
	int r, e;

	if (w == NULL)
		return -1;
	/* the CRT's stat fails on "dir\\"; keep the root's ("\\", "C:\\") */
	n = wcslen(w);
	while (n > 1 && w[n - 1] == L'\\' && !(n == 3 && w[1] == L':'))
		w[--n] = L'\0';
	r = _wstat64(w, st);
	e = errno;
	free(w);
	errno = e;
	return r;
}

int ct_os_fstat(int fd, struct stat *st)
{
	BY_HANDLE_FILE_INFORMATION info;
	HANDLE h = (HANDLE)_get_osfhandle(fd);

	if ((_fstat64)(fd, st) < 0)	/* the CRT's, not ct_os.h's macro */
		return -1;
	if (h != INVALID_HANDLE_VALUE && GetFileInformationByHandle(h, &info) &&
	    (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY))
		st->st_mode = (unsigned short)((st->st_mode & ~S_IFMT) | S_IFDIR);
	return 0;
}

int ct_os_mkdir(const char *path, int mode)
{
	(void)mode;
	WCALL(path, _wmkdir(w));
}

int ct_os_unlink(const char *path)
{
	WCALL(path, _wunlink(w));
}

int ct_os_rmdir(const char *path)
{
	WCALL(path, _wrmdir(w));
}

int ct_os_access(const char *path, int mode)
{
	WCALL(path, _waccess(w, mode & 06));
}

int ct_os_chmod(const char *path, int mode)
{
	WCALL(path, _wchmod(w, (mode & 0200) ? _S_IREAD | _S_IWRITE : _S_IREAD));
}

static int replace_w(const wchar_t *from, const wchar_t *to)
{
	/* a virus scanner or indexer may hold the target open for a moment */
	for (int i = 0; i < 50; i++) {
		if (MoveFileExW(from, to, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
			return 0;
		if (GetLastError() != ERROR_ACCESS_DENIED && GetLastError() != ERROR_SHARING_VIOLATION)
			break;
		Sleep(20);
	}
	return fail_win();
}

int ct_os_replace(const char *from, const char *to)
{
	wchar_t *wf = wide(from), *wt = wide(to);
	int r = -1, e;

	if (wf != NULL && wt != NULL)
		r = replace_w(wf, wt);
	e = errno;
	free(wf);
	free(wt);
	errno = e;
	return r;
}

int ct_os_rename_new(const char *from, const char *to)
{
	wchar_t *wf = wide(from), *wt = wide(to);
	int r = -1, e;

	if (wf != NULL && wt != NULL)
		r = MoveFileExW(wf, wt, MOVEFILE_WRITE_THROUGH) ? 0 : fail_win();
	e = errno;
	free(wf);
	free(wt);
	errno = e;
	return r;
}

int ct_os_fsync(int fd)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);

	if (h == INVALID_HANDLE_VALUE) {
		errno = EBADF;
		return -1;
	}
	return FlushFileBuffers(h) ? 0 : fail_win();
}

int ct_os_fsync_dir(const char *dir)
{
	(void)dir;	/* MOVEFILE_WRITE_THROUGH flushed the rename */
	return 0;
}

/* A random value from the system's generator. */
static uint64_t random64(void)
{
	uint64_t v = 0;

	if (BCryptGenRandom(NULL, (PUCHAR)&v, sizeof(v), BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
		v = GetTickCount64() ^ ((uint64_t)GetCurrentProcessId() << 32);
	return v;
}

int ct_os_mkstemp(char *tmpl)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	size_t n = strlen(tmpl);

	if (n < 6 || strcmp(tmpl + n - 6, "XXXXXX") != 0) {
		errno = EINVAL;
		return -1;
	}
	for (int tries = 0; tries < 100; tries++) {
		uint64_t r = random64();
		int fd;

		for (int i = 0; i < 6; i++, r /= 36)
			tmpl[n - 6 + i] = set[r % 36];
		fd = ct_os_open(tmpl, O_RDWR | O_CREAT | O_EXCL | O_NOINHERIT, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

/* pwrite/pread by seeking there and back: the CRT has neither (an fd is
 * not shared between threads that do this at once). */
static ssize_t at_offset(int fd, void *buf, size_t n, off_t off, int wr)
{
	int64_t cur = _lseeki64(fd, 0, SEEK_CUR);
	ssize_t r;
	int e;

	if (cur < 0 || _lseeki64(fd, off, SEEK_SET) < 0)
		return -1;
	r = wr ? _write(fd, buf, (unsigned)(n > INT_MAX ? INT_MAX : n))
	       : _read(fd, buf, (unsigned)(n > INT_MAX ? INT_MAX : n));
	e = errno;
	_lseeki64(fd, cur, SEEK_SET);
	errno = e;
	return r;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return at_offset(fd, (void *)buf, n, off, 1);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	return at_offset(fd, buf, n, off, 0);
}

char *mkdtemp(char *tmpl)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	size_t n = strlen(tmpl);

	if (n < 6 || strcmp(tmpl + n - 6, "XXXXXX") != 0) {
		errno = EINVAL;
		return NULL;
	}
	for (int tries = 0; tries < 100; tries++) {
		uint64_t r = random64();

		for (int i = 0; i < 6; i++, r /= 36)
			tmpl[n - 6 + i] = set[r % 36];
		if (ct_os_mkdir(tmpl, 0700) == 0)
			return tmpl;
		if (errno != EEXIST)
			return NULL;
	}
	return NULL;
}

int ct_os_map(int fd, size_t len, void **addr)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd), m;

	*addr = NULL;
	m = CreateFileMappingW(h, NULL, PAGE_READONLY, 0, 0, NULL);
	if (m == NULL)
		return fail_win();
	*addr = MapViewOfFile(m, FILE_MAP_READ, 0, 0, len);
	CloseHandle(m);		/* the view keeps the mapping */
	return *addr == NULL ? fail_win() : 0;
}

void ct_os_unmap(void *addr, size_t len)
{
	(void)len;
	UnmapViewOfFile(addr);
}

const char *ct_os_last_sep(const char *path)
{
	const char *s = strrchr(path, '/'), *b = strrchr(path, '\\');

	return s == NULL || (b != NULL && b > s) ? b : s;
}

int ct_os_path_absolute(const char *path)
{
	int drive = ((path[0] >= 'A' && path[0] <= 'Z') || (path[0] >= 'a' && path[0] <= 'z')) &&
		    path[1] == ':' && (path[2] == '\\' || path[2] == '/');

	return drive || path[0] == '/' || (path[0] == '\\' && path[1] == '\\');
}

int ct_os_lock(int fd)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	OVERLAPPED ov;

	memset(&ov, 0, sizeof(ov));
	if (LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ov))
		return 0;
	if (GetLastError() == ERROR_LOCK_VIOLATION || GetLastError() == ERROR_IO_PENDING)
		return CT_EBUSY;
	fail_win();
	return ct_error_errno("LockFileEx");
}

int ct_os_private_dir(const char *dir)
{
	struct stat st;

	if (ct_os_stat(dir, &st) < 0)
		return ct_error_errno("stat %s", dir);
	return 0;	/* %LOCALAPPDATA%'s ACL is the user's */
}

int ct_os_data_dir(const char *app, char **out)
{
	const wchar_t *base = _wgetenv(L"LOCALAPPDATA");
	char buf[4096];

	*out = NULL;
	if (base == NULL || !*base || narrow(base, buf, sizeof(buf)) < 0)
		return ct_error(CT_ECONFIG, "no state directory: LOCALAPPDATA is not set; use --dir");
	if (asprintf(out, "%s\\%s", buf, app) < 0) {
		*out = NULL;
		return CT_ENOMEM;
	}
	return 0;
}

double ct_os_mtime(const struct stat *st)
{
	return (double)st->st_mtime;
}

void ct_os_touch(const char *path)
{
	wchar_t *w = wide(path);

	if (w != NULL)
		(void)_wutime(w, NULL);
	free(w);
}

int ct_os_disk_space(const char *path, uint64_t *avail, uint64_t *total)
{
	ULARGE_INTEGER a, t;
	wchar_t *w = wide(path);
	BOOL ok;

	if (w == NULL)
		return ct_error_errno("%s", path);
	ok = GetDiskFreeSpaceExW(w, &a, &t, NULL);
	free(w);
	if (!ok) {
		fail_win();
		return ct_error_errno("GetDiskFreeSpaceEx %s", path);
	}
	*avail = a.QuadPart;
	*total = t.QuadPart;
	return 0;
}

/* ---- directories ---- */

struct ct_os_dir {
	_WDIR *d;
	struct dirent ent;
};

struct ct_os_dir *ct_os_opendir(const char *path)
{
	struct ct_os_dir *d = calloc(1, sizeof(*d));
	wchar_t *w = wide(path);

	if (d == NULL || w == NULL) {
		free(d);
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	d->d = _wopendir(w);
	free(w);
	if (d->d == NULL) {
		free(d);
		return NULL;
	}
	return d;
}

struct dirent *ct_os_readdir(struct ct_os_dir *d)
{
	struct _wdirent *e;

	while ((e = _wreaddir(d->d)) != NULL)
		if (narrow(e->d_name, d->ent.d_name, (int)sizeof(d->ent.d_name)) == 0) {
			d->ent.d_namlen = (unsigned short)strlen(d->ent.d_name);
			return &d->ent;
		}	/* a name over 260 UTF-8 bytes is skipped */
	return NULL;
}

int ct_os_closedir(struct ct_os_dir *d)
{
	int r = _wclosedir(d->d);

	free(d);
	return r;
}

char *ct_os_realpath(const char *path, char *resolved)
{
	wchar_t *w = wide(path), full[WPATH_MAX];
	char *out;

	if (w == NULL)
		return NULL;
	if (_wfullpath(full, w, WPATH_MAX) == NULL || GetFileAttributesW(full) == INVALID_FILE_ATTRIBUTES) {
		free(w);
		errno = ENOENT;
		return NULL;
	}
	free(w);
	out = resolved ? resolved : malloc(WPATH_MAX);
	if (out == NULL || narrow(full, out, resolved ? MAX_PATH : WPATH_MAX) < 0) {
		if (resolved == NULL)
			free(out);
		errno = ENAMETOOLONG;
		return NULL;
	}
	for (char *p = out; *p; p++)
		if (*p == '\\')
			*p = '/';
	return out;
}

char *strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = malloc(len + 1);

	if (p == NULL)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

void *memmem(const void *h, size_t hn, const void *n, size_t nn)
{
	const unsigned char *p = h;

	if (nn == 0)
		return (void *)h;
	for (size_t i = 0; i + nn <= hn; i++)
		if (p[i] == *(const unsigned char *)n && memcmp(p + i, n, nn) == 0)
			return (void *)(p + i);
	return NULL;
}

int ct_os_setenv(const char *key, const char *val, int overwrite)
{
	if (!overwrite && getenv(key) != NULL)
		return 0;
	errno = _putenv_s(key, val);
	return errno ? -1 : 0;
}

int ct_os_hostname(char *buf, size_t cap)
{
	wchar_t w[256];
	DWORD n = 256;

	if (cap == 0 || !GetComputerNameExW(ComputerNameDnsHostname, w, &n) ||
	    narrow(w, buf, (int)cap) < 0)
		return -1;
	return 0;
}
