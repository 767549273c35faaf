/*
 * ct_err.c - error code table, messages and the thread-local error detail.
 */
#include "ct_err.h"
#include "ct_os.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char detail_msg[512];
static _Thread_local int detail_code;
static _Thread_local char unknown_buf[40];

const char *ct_strerror(int code)
{
	switch (code) {
	case CT_OK:
		return "success";
#define CT_ERR_STR_(name, val, msg) case (val): return msg;
	CT_ERRNO_MAP(CT_ERR_STR_)
#undef CT_ERR_STR_
	default:
		snprintf(unknown_buf, sizeof(unknown_buf), "unknown error %d", code);
		return unknown_buf;
	}
}

const char *ct_errname(int code)
{
	switch (code) {
	case CT_OK:
		return "OK";
#define CT_ERR_NAME_(name, val, msg) case (val): return #name;
	CT_ERRNO_MAP(CT_ERR_NAME_)
#undef CT_ERR_NAME_
	default:
		return "UNKNOWN";
	}
}

int ct_from_errno(int err)
{
	switch (err) {
	case 0:
		return CT_OK;
	case ENOMEM:
		return CT_ENOMEM;
	case ENOENT:
	case ENOTDIR:
		return CT_ENOENT;
	case EACCES:
	case EPERM:
	case EROFS:
		return CT_EPERM;
	case EEXIST:
		return CT_EEXISTS;
	case ENOSPC:
	case EDQUOT:
		return CT_ENOSPC;
	case EINVAL:
		return CT_EINVAL;
	case EFBIG:
	case E2BIG:
	case ENAMETOOLONG:
		return CT_ETOOBIG;
	case ETIMEDOUT:
		return CT_ETIMEOUT;
	case EAGAIN:
		return CT_EAGAIN;
	case EBUSY:
		return CT_EBUSY;
	case ECONNREFUSED:
	case ECONNRESET:
	case EPIPE:
	case EHOSTUNREACH:
	case ENETUNREACH:
		return CT_ENET;
	default:
		return CT_EIO;
	}
}

static int vset(int code, const char *fmt, va_list ap)
{
	char tmp[sizeof(detail_msg)];

	/* through tmp: callers may pass ct_errmsg()'s buffer as an argument
	 * (ct_error(CT_EPROTO, "%s", ct_errmsg(rc))), which vsnprintf into the
	 * same buffer would garble */
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	memcpy(detail_msg, tmp, sizeof(tmp));
	detail_code = code;
	return code;
}

int ct_error(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(code, fmt, ap);
	va_end(ap);
	return code;
}

int ct_error_errno(const char *fmt, ...)
{
	int saved = errno;
	int code = ct_from_errno(saved);
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vset(code, fmt, ap);
	va_end(ap);
	n = strlen(detail_msg);
	snprintf(detail_msg + n, sizeof(detail_msg) - n, ": %s", strerror(saved));
	errno = saved;
	return code;
}

const char *ct_errmsg(int code)
{
	if (code != CT_OK && code == detail_code && detail_msg[0] != '\0')
		return detail_msg;
	return ct_strerror(code);
}

void ct_error_clear(void)
{
	detail_msg[0] = '\0';
	detail_code = 0;
}
