/*
 * ct_log.c - see ct_log.h. One mutex serialises lines so that messages from
 * the server's threads never interleave.
 */
#include "ct_log.h"
#include "ct_err.h"
#include "ct_os.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static enum ct_log_level log_level = CT_LOG_INFO;
static const char *log_ident = "crowdtune";
static FILE *log_file;

static const char *const level_names[] = {
	[CT_LOG_ERROR] = "ERROR",
	[CT_LOG_WARN] = "WARN",
	[CT_LOG_INFO] = "INFO",
	[CT_LOG_DEBUG] = "DEBUG",
};

void ct_log_set_ident(const char *ident)
{
	log_ident = ident ? ident : "crowdtune";
}

void ct_log_set_level(enum ct_log_level level)
{
	if (level > CT_LOG_DEBUG)
		level = CT_LOG_DEBUG;
	log_level = level;
}

enum ct_log_level ct_log_get_level(void)
{
	return log_level;
}

int ct_log_parse_level(const char *s, enum ct_log_level *out)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };

	for (int i = 0; i < 4; i++) {
		if (strcasecmp(s, names[i]) == 0 || (s[0] == '0' + i && s[1] == '\0')) {
			*out = (enum ct_log_level)i;
			return 0;
		}
	}
	if (strcasecmp(s, "warning") == 0) {
		*out = CT_LOG_WARN;
		return 0;
	}
	return ct_error(CT_EINVAL, "unknown log level '%s' (error, warn, info, debug)", s);
}

int ct_log_open(const char *path)
{
	FILE *f = NULL;
	int fd;

	if (path != NULL) {
		fd = ct_os_open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
		if (fd < 0)
			return ct_error_errno("cannot open log file %s", path);
		f = fdopen(fd, "a");
		if (f == NULL) {
			close(fd);
			return ct_error_errno("cannot open log file %s", path);
		}
		setvbuf(f, NULL, _IOLBF, 0);
	}
	pthread_mutex_lock(&log_lock);
	if (log_file != NULL)
		fclose(log_file);
	log_file = f;
	pthread_mutex_unlock(&log_lock);
	return 0;
}

void ct_log_close(void)
{
	ct_log_open(NULL);
}

void ct_log(enum ct_log_level level, const char *fmt, ...)
{
	char stamp[40], line[2048];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	FILE *out;
	int n;

	if (level > log_level)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	n = snprintf(line, sizeof(line), "%s.%03ldZ %s[%ld] %s: ", stamp,
		     ts.tv_nsec / 1000000, log_ident, (long)getpid(),
		     level_names[level > CT_LOG_DEBUG ? CT_LOG_DEBUG : level]);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	out = log_file ? log_file : stderr;
	fputs(line, out);
	fputc('\n', out);
	fflush(out);
	pthread_mutex_unlock(&log_lock);
}
