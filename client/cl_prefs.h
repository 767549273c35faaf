/*
 * cl_prefs.h - the volunteer's preferences and the decision "may the client
 * compute now?".
 *
 * Preferences come, lowest first, from the defaults, the project's web
 * site (ct_prefs_save_web: the keys of ct_prefs_web_keys, kept in
 * prefs_web.conf), prefs.conf in the state directory (ct_conf format) and
 * the command-line options of `ctune run` (ct_prefs_build):
 *
 *   idle_minutes = 3          # compute only after this long without input
 *   run_on_battery = off      # compute on a laptop running on battery
 *   max_cpu_percent = 100     # duty cycle of the compute thread
 *   run_hours = 22-7          # local time window (HH[:MM]-HH[:MM], may wrap)
 *   gpu_only = off            # never compute on the CPU
 *   always = off              # ignore idleness (like `ctune run --always`)
 *   checkpoint_seconds = 60   # engine state saved at least this often
 *   checkpoint_mb_per_hour = 2048  # ... but big states less often, so
 *                             # that checkpoints write at most this much an
 *                             # hour (0: no cap; a 124M WU's state is 1.5 GB)
 *   device = auto             # auto, cpu, opencl, opencl:N
 *   work_buffer = 1           # tasks to keep queued per project (at least)
 *   work_buf_min = 10         # seconds of work queued below which to ask
 *   work_buf_max = 30         # ... for enough to reach this many seconds
 *   cache_max_mb = 1024       # base models/shards kept by hash for later
 *                             # tasks and rounds (least recently used go)
 *   disk_max_gb = 50          # the most the client's directory may hold (GB,
 *                             # 10^9 bytes); inputs that would pass it are
 *                             # refused before their download starts
 *   disk_min_free_gb = 0.1    # ... and so are inputs that would leave less
 *                             # than this free on its file system
 *   suspend_cpu_percent = 0   # suspend while other programs use more than
 *                             # this share of the machine's CPU (0: never)
 *   web = off                 # serve the local control page (cl_web.h)
 *   web_port = 31416          # ... on 127.0.0.1:this port (0: a free one)
 *
 * The decision is a pure function of the prefs and a snapshot of the
 * environment, so the tests drive it without a keyboard or a battery.
 */
#ifndef CT_CL_PREFS_H
#define CT_CL_PREFS_H

struct ct_conf;

struct ct_prefs {
	double idle_minutes;
	int run_on_battery;
	int max_cpu_percent;		/* 1..100 */
	int run_from, run_to;		/* minutes after midnight; -1: no window */
	int gpu_only;
	int always;
	double checkpoint_seconds;
	long checkpoint_mb_per_hour;	/* 0: no cap */
	char device[32];		/* "auto", "cpu", "opencl", "opencl:N" */
	int work_buffer;		/* 1..16 */
	int suspend_cpu_percent;	/* 0 (off) .. 100 */
	double work_buf_min, work_buf_max;	/* seconds of queued work */
	long cache_max_mb;		/* 0: keep only what tasks in hand use */
	double disk_max_gb;		/* the client's directory holds at most this */
	double disk_min_free_gb;	/* free space a download must leave */
	int web;			/* serve the local control page */
	int web_port;			/* 0..65535 (0: a free port) */
};

/* The defaults listed above. */
void ct_prefs_default(struct ct_prefs *p);

/* Read the keys above from c into p (keys absent keep p's values). Unknown
 * keys are ignored with a warning (a newer client's prefs file still loads).
 * Returns 0 or CT_ECONFIG naming file:line and key. */
int ct_prefs_from_conf(struct ct_prefs *p, const struct ct_conf *c);

/* Load path into p if it exists (missing file: p unchanged, 0). */
int ct_prefs_load(struct ct_prefs *p, const char *path);

/* The keys computing preferences on the project's web site may set (the
 * rest stay the computer's own), NULL-terminated. */
extern const char *const ct_prefs_web_keys[];

/* The preferences in force, lowest first: the defaults, the web's (the
 * file web_path, as saved by ct_prefs_save_web; a bad one is logged and
 * skipped), the volunteer's prefs.conf (file_path; missing: none) and the
 * command line's (cli, may be NULL: keys as in prefs.conf), as BOINC's
 * local override wins over the web. Returns 0 or the CT_ECONFIG of
 * prefs.conf or cli (p untouched then). */
int ct_prefs_build(struct ct_prefs *p, const char *web_path, const char *file_path,
		   const struct ct_conf *cli);

/* The time (web_prefs_time) of the web preferences saved at web_path, 0
 * when there are none. */
long long ct_prefs_web_time(const char *web_path);

/* Keep the web's preferences `text` (prefs.conf lines) saved at unix time
 * t: the keys of ct_prefs_web_keys only (others are dropped with a
 * warning), each checked as prefs.conf's are, written atomically to
 * web_path with their time. Returns 0, or CT_ECONFIG for a value the
 * client refuses (nothing written), or a file error. */
int ct_prefs_save_web(const char *web_path, const char *text, long long t);

/* p as prefs.conf lines, "key = value\n" for every key above in that
 * order (run_hours "any" when there is no window), into b. 0 or CT_ETOOBIG
 * / CT_ENOMEM. */
struct ct_buf;
int ct_prefs_format(const struct ct_prefs *p, struct ct_buf *b);

/* Set the keys of `changes` in the volunteer's file at path (missing: made),
 * keeping its other lines and comments: a key's line is replaced, a new key
 * goes before the first [section] or at the end. Keys must be those above,
 * values words, numbers or hours ([A-Za-z0-9_.:+-], at most 64 bytes), and
 * the whole file must load as preferences, else nothing is written
 * (CT_EINVAL, CT_ECONFIG naming the key). Written atomically. Returns 0 or
 * that error, or a file error. */
int ct_prefs_edit(const char *path, const struct ct_conf *changes);

/* Parse "HH[:MM]-HH[:MM]" (or "" / "any": no window). Returns 0 or
 * CT_EINVAL; from == to means no window. */
int ct_prefs_parse_hours(const char *s, int *from, int *to);

/* Check a device string: auto, cpu, opencl, opencl:N. 0 or CT_EINVAL. */
int ct_prefs_check_device(const char *s);

/* What the decision looks at. */
struct ct_run_env {
	double idle_seconds;	/* since last user input */
	int on_battery;		/* 1 if running on battery */
	int minute_of_day;	/* local time, 0..1439 */
	int device_is_gpu;	/* the chosen compute device is not the CPU */
	double other_cpu_percent;	/* machine CPU used by others (cl_load.h) */
};

/* Why the client does not compute (0: it may). */
enum ct_suspend_reason {
	CT_RUN_OK = 0,
	CT_SUSPEND_USER_ACTIVE,
	CT_SUSPEND_BATTERY,
	CT_SUSPEND_TIME_OF_DAY,
	CT_SUSPEND_GPU_ONLY,
	CT_SUSPEND_USER_REQUEST,
	CT_SUSPEND_CPU_BUSY,
};

/* The decision: CT_RUN_OK or the first reason to stay suspended. */
enum ct_suspend_reason ct_prefs_decide(const struct ct_prefs *p, const struct ct_run_env *e);

/* "running", "user active", "on battery", ... */
const char *ct_suspend_reason_str(enum ct_suspend_reason r);

/* Seconds between checkpoints of a state of `bytes`: checkpoint_seconds,
 * or longer so that they write at most checkpoint_mb_per_hour MiB an hour
 * (a 124M WU's 1.5 GB every minute would be 2 TB a day of a volunteer's
 * SSD; the state is also saved on every suspend and exit). */
double ct_prefs_checkpoint_interval(const struct ct_prefs *p, double bytes);

/* Seconds to sleep after computing for `busy` seconds so that the compute
 * share is max_cpu_percent: busy * (100 / pct - 1). */
double ct_prefs_throttle_sleep(const struct ct_prefs *p, double busy);

/* 1 if the machine runs on battery according to the power_supply class
 * directory `dir` (NULL: /sys/class/power_supply): some "Mains" supply
 * offline and a "Battery" discharging. No supplies (desktops, containers):
 * 0. */
int ct_prefs_on_battery(const char *dir);

#endif
