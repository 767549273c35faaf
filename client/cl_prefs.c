/*
 * cl_prefs.c - see cl_prefs.h. The config keys are a table so that loading,
 * documentation and the unknown-key warning agree.
 */
#include "cl_prefs.h"
#include "ct_buf.h"
#include "ct_conf.h"
#include "ct_file.h"
#include "ct_err.h"
#include "ct_os.h"
#include "ct_log.h"
#include "ct_time.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ct_prefs_default(struct ct_prefs *p)
{
	memset(p, 0, sizeof(*p));
	p->idle_minutes = 3;
	p->run_on_battery = 0;
	p->max_cpu_percent = 100;
	p->run_from = p->run_to = -1;
	p->gpu_only = 0;
	p->always = 0;
	p->checkpoint_seconds = 60;
	p->checkpoint_mb_per_hour = 2048;
	snprintf(p->device, sizeof(p->device), "auto");
	p->work_buffer = 1;
	p->work_buf_min = 10;
	p->work_buf_max = 30;
	p->cache_max_mb = 1024;
	p->disk_max_gb = 50;
	p->disk_min_free_gb = 0.1;
	p->web = 0;
	p->web_port = 31416;
}

int ct_prefs_parse_hours(const char *s, int *from, int *to)
{
	return ct_time_parse_hours(s, from, to);
}

int ct_prefs_check_device(const char *s)
{
	char *end;
	long n;

	if (strcmp(s, "auto") == 0 || strcmp(s, "cpu") == 0 || strcmp(s, "opencl") == 0)
		return 0;
	if (strncmp(s, "opencl:", 7) == 0) {
		n = strtol(s + 7, &end, 10);
		if (end != s + 7 && *end == '\0' && n >= 0 && n < 64)
			return 0;
	}
	return ct_error(CT_EINVAL, "device '%s': expected auto, cpu, opencl or opencl:N", s);
}

static const char *const known_keys[] = {
	"idle_minutes", "run_on_battery", "max_cpu_percent", "run_hours",
	"gpu_only", "always", "checkpoint_seconds", "checkpoint_mb_per_hour", "device",
	"work_buffer",
	"suspend_cpu_percent", "work_buf_min", "work_buf_max", "cache_max_mb",
	"disk_max_gb", "disk_min_free_gb", "web", "web_port",
};

const char *const ct_prefs_web_keys[] = {
	"max_cpu_percent", "run_hours", "idle_minutes", "run_on_battery",
	"suspend_cpu_percent", "disk_max_gb", "disk_min_free_gb", NULL,
};

#define WEB_TIME_KEY "web_prefs_time"	/* in the saved web file only */

static void warn_unknown(const struct ct_conf *c)
{
	for (size_t i = 0; i < ct_conf_count(c); i++) {
		const char *k = ct_conf_key_at(c, i);
		size_t j;

		for (j = 0; j < sizeof(known_keys) / sizeof(known_keys[0]); j++)
			if (strcmp(k, known_keys[j]) == 0)
				break;
		if (j == sizeof(known_keys) / sizeof(known_keys[0]) && strcmp(k, WEB_TIME_KEY) != 0)
			ct_log_warn("prefs: unknown key '%s' ignored", k);
	}
}

int ct_prefs_from_conf(struct ct_prefs *p, const struct ct_conf *c)
{
	const char *s;
	long v;
	int rc;

	rc = ct_conf_get_double(c, "idle_minutes", p->idle_minutes, 0, 1e6, &p->idle_minutes);
	if (rc < 0) goto out;
	rc = ct_conf_get_bool(c, "run_on_battery", p->run_on_battery, &p->run_on_battery);
	if (rc < 0) goto out;
	rc = ct_conf_get_int(c, "max_cpu_percent", p->max_cpu_percent, 1, 100, &v);
	if (rc < 0) goto out;
	p->max_cpu_percent = (int)v;
	rc = ct_conf_get_bool(c, "gpu_only", p->gpu_only, &p->gpu_only);
	if (rc < 0) goto out;
	rc = ct_conf_get_bool(c, "always", p->always, &p->always);
	if (rc < 0) goto out;
	rc = ct_conf_get_double(c, "checkpoint_seconds", p->checkpoint_seconds, 0.01, 1e6,
				&p->checkpoint_seconds);
	if (rc < 0) goto out;
	rc = ct_conf_get_int(c, "checkpoint_mb_per_hour", p->checkpoint_mb_per_hour, 0,
			     1000000000L, &p->checkpoint_mb_per_hour);
	if (rc < 0) goto out;
	rc = ct_conf_get_int(c, "work_buffer", p->work_buffer, 1, 16, &v);
	if (rc < 0) goto out;
	p->work_buffer = (int)v;
	rc = ct_conf_get_int(c, "suspend_cpu_percent", p->suspend_cpu_percent, 0, 100, &v);
	if (rc < 0) goto out;
	p->suspend_cpu_percent = (int)v;
	rc = ct_conf_get_double(c, "work_buf_min", p->work_buf_min, 0, 86400 * 10,
				&p->work_buf_min);
	if (rc < 0) goto out;
	rc = ct_conf_get_double(c, "work_buf_max", p->work_buf_max, 0, 86400 * 10,
				&p->work_buf_max);
	if (rc < 0) goto out;
	if (p->work_buf_max < p->work_buf_min)
		p->work_buf_max = p->work_buf_min;
	rc = ct_conf_get_int(c, "cache_max_mb", p->cache_max_mb, 0, 1L << 30, &v);
	if (rc < 0) goto out;
	p->cache_max_mb = v;
	rc = ct_conf_get_double(c, "disk_max_gb", p->disk_max_gb, 0, 1e9, &p->disk_max_gb);
	if (rc < 0) goto out;
	rc = ct_conf_get_double(c, "disk_min_free_gb", p->disk_min_free_gb, 0, 1e9,
				&p->disk_min_free_gb);
	if (rc < 0) goto out;
	rc = ct_conf_get_bool(c, "web", p->web, &p->web);
	if (rc < 0) goto out;
	rc = ct_conf_get_int(c, "web_port", p->web_port, 0, 65535, &v);
	if (rc < 0) goto out;
	p->web_port = (int)v;
	s = ct_conf_get(c, "run_hours");
	if (s != NULL && ct_prefs_parse_hours(s, &p->run_from, &p->run_to) < 0) {
		rc = ct_error(CT_ECONFIG, "prefs: %s", ct_errmsg(CT_EINVAL));
		goto out;
	}
	s = ct_conf_get(c, "device");
	if (s != NULL) {
		if (ct_prefs_check_device(s) < 0 || strlen(s) >= sizeof(p->device)) {
			rc = ct_error(CT_ECONFIG, "prefs: %s", ct_errmsg(CT_EINVAL));
			goto out;
		}
		snprintf(p->device, sizeof(p->device), "%s", s);
	}
	warn_unknown(c);
	rc = 0;
out:
	return rc;
}

int ct_prefs_load(struct ct_prefs *p, const char *path)
{
	struct ct_conf *c = NULL;
	int rc;

	rc = ct_conf_load(path, &c);
	if (rc == CT_ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	rc = ct_prefs_from_conf(p, c);
	ct_conf_free(c);
	return rc;
}

int ct_prefs_build(struct ct_prefs *p, const char *web_path, const char *file_path,
		   const struct ct_conf *cli)
{
	struct ct_prefs n;
	int rc;

	ct_prefs_default(&n);
	if (web_path != NULL) {
		struct ct_prefs w = n;

		rc = ct_prefs_load(&w, web_path);
		if (rc < 0)
			ct_log_warn("prefs: the web's, %s: %s (ignored)", web_path, ct_errmsg(rc));
		else
			n = w;
	}
	rc = file_path != NULL ? ct_prefs_load(&n, file_path) : 0;
	if (rc == 0 && cli != NULL)
		rc = ct_prefs_from_conf(&n, cli);
	if (rc == 0)
		*p = n;
	return rc;
}

static const char *onoff(int v)
{
	return v ? "on" : "off";
}

static int format_hours(const struct ct_prefs *p, struct ct_buf *b)
{
	if (p->run_from < 0 || p->run_from == p->run_to)
		return ct_buf_appends(b, "run_hours = any\n");
	return ct_buf_appendf(b, "run_hours = %02d:%02d-%02d:%02d\n", p->run_from / 60,
			      p->run_from % 60, p->run_to / 60, p->run_to % 60);
}

int ct_prefs_format(const struct ct_prefs *p, struct ct_buf *b)
{
	int rc;

	rc = ct_buf_appendf(b, "idle_minutes = %g\nrun_on_battery = %s\nmax_cpu_percent = %d\n",
			    p->idle_minutes, onoff(p->run_on_battery), p->max_cpu_percent);
	if (rc == 0) rc = format_hours(p, b);
	if (rc == 0) rc = ct_buf_appendf(b, "gpu_only = %s\nalways = %s\ncheckpoint_seconds = %g\n"
					 "checkpoint_mb_per_hour = %ld\ndevice = %s\n"
					 "work_buffer = %d\nsuspend_cpu_percent = %d\n",
					 onoff(p->gpu_only), onoff(p->always),
					 p->checkpoint_seconds, p->checkpoint_mb_per_hour,
					 p->device, p->work_buffer, p->suspend_cpu_percent);
	if (rc == 0) rc = ct_buf_appendf(b, "work_buf_min = %g\nwork_buf_max = %g\n"
					 "cache_max_mb = %ld\ndisk_max_gb = %g\n"
					 "disk_min_free_gb = %g\nweb = %s\nweb_port = %d\n",
					 p->work_buf_min, p->work_buf_max, p->cache_max_mb,
					 p->disk_max_gb, p->disk_min_free_gb, onoff(p->web),
					 p->web_port);
	return rc;
}

#define EDIT_MAX_KEYS 32
#define EDIT_MAX_VALUE 64

static int known_key(const char *k)
{
	for (size_t j = 0; j < sizeof(known_keys) / sizeof(known_keys[0]); j++)
		if (strcmp(k, known_keys[j]) == 0)
			return 1;
	return 0;
}

/* Refuse what the edit would have to quote or could misread. */
static int check_edit(const char *k, const char *v)
{
	size_t n = strlen(v);

	if (!known_key(k))
		return ct_error(CT_EINVAL, "unknown preference '%s'", k);
	if (n == 0 || n > EDIT_MAX_VALUE || strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		"abcdefghijklmnopqrstuvwxyz0123456789_.:+-") != n)
		return ct_error(CT_EINVAL, "preference %s: a value of up to %d letters, digits "
				"or _.:+-", k, EDIT_MAX_VALUE);
	return 0;
}

/* The key a "key = value" line sets ("" for comments, blank lines,
 * sections) into key (cap bytes). */
static void line_key(const char *line, size_t n, char *key, size_t cap)
{
	size_t i = strspn(line, " \t"), k;

	key[0] = '\0';
	for (k = i; k < n && (isalnum((unsigned char)line[k]) || strchr("_.-", line[k])); k++)
		;
	if (k == i || k - i >= cap)
		return;
	memcpy(key, line + i, k - i);
	key[k - i] = '\0';
	k += strspn(line + k, " \t");
	if (k >= n || line[k] != '=')
		key[0] = '\0';
}

/* The new keys not yet written, each on a line of its own. */
static int edit_rest(const struct ct_conf *ch, unsigned char *done, struct ct_buf *b)
{
	int rc = 0;

	for (size_t i = 0; i < ct_conf_count(ch) && rc == 0; i++)
		if (!done[i]) {
			const char *k = ct_conf_key_at(ch, i);

			done[i] = 1;
			rc = ct_buf_appendf(b, "%s = %s\n", k, ct_conf_get(ch, k));
		}
	return rc;
}

/* old's lines with the changes made, into b. */
static int edit_text(const char *old, size_t n, const struct ct_conf *ch, struct ct_buf *b)
{
	unsigned char done[EDIT_MAX_KEYS] = { 0 };
	const char *p = old, *end = old + n;
	int rc = 0;

	while (p < end && rc == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
		char key[64];
		size_t i;

		line_key(p, (size_t)(e - p), key, sizeof(key));
		if (p[strspn(p, " \t")] == '[')
			rc = edit_rest(ch, done, b);
		for (i = 0; key[0] && i < ct_conf_count(ch); i++)
			if (strcmp(key, ct_conf_key_at(ch, i)) == 0)
				break;
		if (rc == 0 && key[0] && i < ct_conf_count(ch)) {
			if (!done[i])
				rc = ct_buf_appendf(b, "%s = %s\n", key, ct_conf_get(ch, key));
			done[i] = 1;
		} else if (rc == 0) {
			rc = ct_buf_append(b, p, (size_t)(e - p));
			if (rc == 0) rc = ct_buf_appends(b, "\n");
		}
		p = e + 1;
	}
	if (rc == 0)
		rc = edit_rest(ch, done, b);
	return rc;
}

int ct_prefs_edit(const char *path, const struct ct_conf *changes)
{
	struct ct_buf b = CT_BUF_INIT(1u << 20);
	unsigned char *old = NULL;
	struct ct_conf *check = NULL;
	struct ct_prefs p;
	size_t n = 0;
	int rc = 0;

	if (ct_conf_count(changes) > EDIT_MAX_KEYS)
		return ct_error(CT_EINVAL, "more than %d preferences at once", EDIT_MAX_KEYS);
	for (size_t i = 0; i < ct_conf_count(changes) && rc == 0; i++) {
		const char *k = ct_conf_key_at(changes, i);

		rc = check_edit(k, ct_conf_get(changes, k));
	}
	if (rc < 0)
		return rc;
	rc = ct_file_read_all(path, 1u << 20, &old, &n);
	if (rc == CT_ENOENT)
		rc = 0;
	if (rc == 0) rc = edit_text(old ? (const char *)old : "", n, changes, &b);
	/* errors name the file as the volunteer knows it, not its full path */
	if (rc == 0) rc = ct_conf_parse(ct_buf_cstr(&b), b.len, ct_os_last_sep(path)
					? ct_os_last_sep(path) + 1 : path, &check);
	ct_prefs_default(&p);
	if (rc == 0) rc = ct_prefs_from_conf(&p, check);
	if (rc == 0) rc = ct_file_write_atomic(path, ct_buf_cstr(&b), b.len, 0644);
	ct_conf_free(check);
	ct_buf_free(&b);
	free(old);
	return rc;
}

long long ct_prefs_web_time(const char *web_path)
{
	struct ct_conf *c = NULL;
	long t = 0;

	if (ct_conf_load(web_path, &c) < 0)
		return 0;
	if (ct_conf_get_int(c, WEB_TIME_KEY, 0, 0, LONG_MAX, &t) < 0)
		t = 0;
	ct_conf_free(c);
	return t;
}

static int web_key(const char *k)
{
	for (size_t i = 0; ct_prefs_web_keys[i] != NULL; i++)
		if (strcmp(k, ct_prefs_web_keys[i]) == 0)
			return 1;
	return 0;
}

int ct_prefs_save_web(const char *web_path, const char *text, long long t)
{
	struct ct_conf *in = NULL, *out = NULL;
	struct ct_prefs check;
	char ts[32];
	int rc;

	rc = ct_conf_parse(text, strlen(text), "the web's preferences", &in);
	if (rc == 0)
		rc = ct_conf_new(&out);
	for (size_t i = 0; rc == 0 && i < ct_conf_count(in); i++) {
		const char *k = ct_conf_key_at(in, i);

		if (web_key(k))
			rc = ct_conf_set(out, k, ct_conf_get(in, k));
		else
			ct_log_warn("prefs: the web may not set '%s': ignored", k);
	}
	ct_prefs_default(&check);
	if (rc == 0)
		rc = ct_prefs_from_conf(&check, out);
	snprintf(ts, sizeof(ts), "%lld", t);
	if (rc == 0)
		rc = ct_conf_set(out, WEB_TIME_KEY, ts);
	if (rc == 0)
		rc = ct_conf_save(out, web_path);
	ct_conf_free(in);
	ct_conf_free(out);
	return rc;
}

static int in_window(int from, int to, int minute)
{
	if (from < 0)
		return 1;
	if (from < to)
		return minute >= from && minute < to;
	return minute >= from || minute < to;	/* wraps past midnight */
}

enum ct_suspend_reason ct_prefs_decide(const struct ct_prefs *p, const struct ct_run_env *e)
{
	if (p->gpu_only && !e->device_is_gpu)
		return CT_SUSPEND_GPU_ONLY;
	if (!p->run_on_battery && e->on_battery)
		return CT_SUSPEND_BATTERY;
	if (!in_window(p->run_from, p->run_to, e->minute_of_day))
		return CT_SUSPEND_TIME_OF_DAY;
	if (!p->always && e->idle_seconds < p->idle_minutes * 60.0)
		return CT_SUSPEND_USER_ACTIVE;
	if (p->suspend_cpu_percent > 0 && e->other_cpu_percent > p->suspend_cpu_percent)
		return CT_SUSPEND_CPU_BUSY;
	return CT_RUN_OK;
}

const char *ct_suspend_reason_str(enum ct_suspend_reason r)
{
	static const char *const names[] = {
		[CT_RUN_OK] = "running",
		[CT_SUSPEND_USER_ACTIVE] = "user active",
		[CT_SUSPEND_BATTERY] = "on battery",
		[CT_SUSPEND_TIME_OF_DAY] = "outside run hours",
		[CT_SUSPEND_GPU_ONLY] = "gpu only, no GPU",
		[CT_SUSPEND_USER_REQUEST] = "suspended by user",
		[CT_SUSPEND_CPU_BUSY] = "computer busy",
	};

	if ((unsigned)r < sizeof(names) / sizeof(names[0]) && names[r])
		return names[r];
	return "suspended";
}

double ct_prefs_checkpoint_interval(const struct ct_prefs *p, double bytes)
{
	double s = p->checkpoint_seconds;

	if (p->checkpoint_mb_per_hour > 0 && bytes > 0) {
		double cap = bytes / 1048576.0 * 3600.0 / (double)p->checkpoint_mb_per_hour;

		if (cap > s)
			s = cap;
	}
	return s;
}

double ct_prefs_throttle_sleep(const struct ct_prefs *p, double busy)
{
	int pct = p->max_cpu_percent;

	if (pct >= 100 || pct <= 0 || busy <= 0)
		return 0;
	return busy * (100.0 / pct - 1.0);
}

/* First line of dir/name/file into buf ("" if unreadable). */
static void read_attr(const char *dir, const char *name, const char *file,
		      char *buf, size_t n)
{
	char path[512];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s/%s", dir, name, file);
	f = fopen(path, "r");
	if (f == NULL)
		return;
	if (fgets(buf, (int)n, f) == NULL)
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\r\n")] = '\0';
}

int ct_prefs_on_battery(const char *dir)
{
	int mains_online = 0, discharging = 0;
	struct dirent *de;
	char type[32], val[32];
	DIR *d;

	if (dir == NULL && ct_os_on_battery() >= 0)
		return ct_os_on_battery();
	if (dir == NULL)
		dir = "/sys/class/power_supply";
	d = opendir(dir);
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		read_attr(dir, de->d_name, "type", type, sizeof(type));
		if (strcmp(type, "Mains") == 0) {
			read_attr(dir, de->d_name, "online", val, sizeof(val));
			mains_online |= strcmp(val, "1") == 0;
		} else if (strcmp(type, "Battery") == 0) {
			read_attr(dir, de->d_name, "status", val, sizeof(val));
			discharging |= strcmp(val, "Discharging") == 0;
		}
	}
	closedir(d);
	return discharging && !mains_online;
}
