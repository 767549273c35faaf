/*
 * ct_log.h - levelled logging to stderr or a file, thread-safe.
 *
 * Lines look like "2026-11-22T15:04:05.123Z ctune-server[123] WARN: text".
 * Format strings are checked by the compiler.
 */
#ifndef CT_LOG_H
#define CT_LOG_H

enum ct_log_level {
	CT_LOG_ERROR = 0,
	CT_LOG_WARN = 1,
	CT_LOG_INFO = 2,
	CT_LOG_DEBUG = 3,
};

/* Program name shown in each line (default "crowdtune"); the string is not
 * copied and must outlive logging. */
void ct_log_set_ident(const char *ident);

/* Messages above `level` are dropped. Default CT_LOG_INFO. */
void ct_log_set_level(enum ct_log_level level);
enum ct_log_level ct_log_get_level(void);

/* Parse "error", "warn", "info", "debug" (or 0..3). Returns 0 and sets
 * *out, or CT_EINVAL. */
int ct_log_parse_level(const char *s, enum ct_log_level *out);

/* Append to `path` (created 0640) instead of stderr; NULL goes back to
 * stderr. Returns 0 or a negative CT_E* code (the old target stays). */
int ct_log_open(const char *path);

/* Close the log file, if any, and go back to stderr. */
void ct_log_close(void);

void ct_log(enum ct_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define ct_log_error(...) ct_log(CT_LOG_ERROR, __VA_ARGS__)
#define ct_log_warn(...)  ct_log(CT_LOG_WARN, __VA_ARGS__)
#define ct_log_info(...)  ct_log(CT_LOG_INFO, __VA_ARGS__)
#define ct_log_debug(...) ct_log(CT_LOG_DEBUG, __VA_ARGS__)

#endif
