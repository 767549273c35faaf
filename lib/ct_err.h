/*
 * ct_err.h - crowdtune's error codes.
 *
 * Every function that can fail returns int: 0 on success, a negative CT_E*
 * code on failure. The codes come from one X-macro table (append-only: codes
 * travel in protocol replies and logs, so a number never changes meaning),
 * which also generates ct_strerror() and ct_errname().
 *
 * A failing function may attach a one-line detail ("model.bin: bad magic
 * 1234") with ct_error(); the detail is thread-local and read back with
 * ct_errmsg(), which falls back to ct_strerror() when no detail was set for
 * that code. This gives the one-line errors users see without threading a
 * message buffer through every call.
 */
#ifndef CT_ERR_H
#define CT_ERR_H

/* X(name, value, message) */
#define CT_ERRNO_MAP(X) \
	X(NOMEM,     -1,  "out of memory") \
	X(INVAL,     -2,  "invalid argument") \
	X(IO,        -3,  "input/output error") \
	X(NOENT,     -4,  "no such file or directory") \
	X(FORMAT,    -5,  "malformed data") \
	X(TOOBIG,    -6,  "size over the limit") \
	X(RANGE,     -7,  "value out of range") \
	X(EXISTS,    -8,  "already exists") \
	X(PERM,      -9,  "permission denied") \
	X(HASH,      -10, "hash mismatch") \
	X(XML,       -11, "malformed XML") \
	X(DB,        -12, "database error") \
	X(HTTP,      -13, "HTTP error") \
	X(NET,       -14, "network error") \
	X(TIMEOUT,   -15, "timed out") \
	X(CL,        -16, "OpenCL error") \
	X(DEVNOMEM,  -17, "out of device memory") \
	X(UNSUPP,    -18, "not supported") \
	X(AUTH,      -19, "authentication failed") \
	X(DENIED,    -20, "request denied") \
	X(CONFIG,    -21, "configuration error") \
	X(STATE,     -22, "invalid state") \
	X(BUSY,      -23, "resource busy") \
	X(NOTFOUND,  -24, "not found") \
	X(AGAIN,     -25, "try again later") \
	X(CANCELED,  -26, "canceled") \
	X(INTERNAL,  -27, "internal error") \
	X(MISMATCH,  -28, "mismatch") \
	X(NOSPC,     -29, "no space left on device") \
	X(CORRUPT,   -30, "corrupt data") \
	X(EXPIRED,   -31, "expired") \
	X(DUP,       -32, "duplicate") \
	X(PROTO,     -33, "protocol error") \
	X(NONFINITE, -34, "non-finite value (NaN or Inf)") \
	X(USAGE,     -35, "usage error") \
	X(ZLIB,      -36, "compression error") \
	X(CRYPTO,    -37, "cryptography error")

enum ct_errno {
	CT_OK = 0,
#define CT_ERR_ENUM_(name, val, msg) CT_E##name = (val),
	CT_ERRNO_MAP(CT_ERR_ENUM_)
#undef CT_ERR_ENUM_
};

/* Static message for a code ("unknown error -99" style for unknown codes,
 * from a thread-local buffer). Never NULL. */
const char *ct_strerror(int code);

/* Symbolic name of a code without the CT_E prefix ("NOMEM"), or "UNKNOWN". */
const char *ct_errname(int code);

/* Map an errno value to a CT_E* code (ENOENT -> CT_ENOENT, ENOSPC -> ...). */
int ct_from_errno(int err);

/* Record a printf-style detail for `code` in this thread and return `code`,
 * so failures read: return ct_error(CT_EFORMAT, "%s: bad magic", path); */
int ct_error(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Like ct_error() but the detail is followed by ": strerror(errno)" and the
 * code is derived from errno. */
int ct_error_errno(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* The detail last recorded in this thread if it was for `code`, else
 * ct_strerror(code). Valid until the next ct_error() in this thread. */
const char *ct_errmsg(int code);

/* Forget this thread's detail. */
void ct_error_clear(void);

#endif
