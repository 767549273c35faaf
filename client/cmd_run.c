/*
 * cmd_run.c - `ctune run`: the daemon's command line. Options override
 * prefs.conf in the state directory (see cl_prefs.h); the work is done by
 * ct_daemon_run (cl_daemon.h).
 */
#include "commands.h"
#include "cl_daemon.h"
#include "cl_paths.h"
#include "cl_prefs.h"
#include "ct_conf.h"
#include "ct_err.h"
#include "ct_os.h"
#include "ct_log.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
	OPT_ALWAYS = 256, OPT_IDLE_MIN, OPT_IDLE_FILE, OPT_DEVICE, OPT_NO_SELFTEST,
	OPT_BATTERY, OPT_CPU, OPT_HOURS, OPT_GPU_ONLY, OPT_CKPT, OPT_BUFFER,
	OPT_BACKOFF, OPT_EXIT_AFTER, OPT_LOG_FILE, OPT_SUSPEND_CPU,
	OPT_BUF_MIN, OPT_BUF_MAX, OPT_CACHE_MB, OPT_WEB, OPT_WEB_PORT,
};

static const struct option opts[] = {
	{ "dir", required_argument, NULL, 'd' },
	{ "always", no_argument, NULL, OPT_ALWAYS },
	{ "idle-minutes", required_argument, NULL, OPT_IDLE_MIN },
	{ "idle-file", required_argument, NULL, OPT_IDLE_FILE },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "no-selftest", no_argument, NULL, OPT_NO_SELFTEST },
	{ "run-on-battery", no_argument, NULL, OPT_BATTERY },
	{ "max-cpu-percent", required_argument, NULL, OPT_CPU },
	{ "run-hours", required_argument, NULL, OPT_HOURS },
	{ "gpu-only", no_argument, NULL, OPT_GPU_ONLY },
	{ "checkpoint-seconds", required_argument, NULL, OPT_CKPT },
	{ "work-buffer", required_argument, NULL, OPT_BUFFER },
	{ "suspend-cpu-percent", required_argument, NULL, OPT_SUSPEND_CPU },
	{ "work-buf-min", required_argument, NULL, OPT_BUF_MIN },
	{ "work-buf-max", required_argument, NULL, OPT_BUF_MAX },
	{ "cache-max-mb", required_argument, NULL, OPT_CACHE_MB },
	{ "backoff-base", required_argument, NULL, OPT_BACKOFF },
	{ "exit-after", required_argument, NULL, OPT_EXIT_AFTER },
	{ "log-file", required_argument, NULL, OPT_LOG_FILE },
	{ "web", no_argument, NULL, OPT_WEB },
	{ "web-port", required_argument, NULL, OPT_WEB_PORT },
	{ NULL, 0, NULL, 0 },
};

static int number(const char *s, double min, double max, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end != '\0' || !(v >= min && v <= max))
		return ct_error(CT_EUSAGE, "'%s' is not a number in [%g, %g]", s, min, max);
	*out = v;
	return 0;
}

/* The options that set a preference: the prefs.conf key each sets, and
 * the value of a flag (NULL: the option's argument). They become a ct_conf
 * read over prefs.conf (cl_prefs.h), so a reload keeps them on top. */
static const struct { int opt; const char *key, *flag; } pref_opts[] = {
	{ OPT_ALWAYS, "always", "on" }, { OPT_IDLE_MIN, "idle_minutes", NULL },
	{ OPT_DEVICE, "device", NULL }, { OPT_BATTERY, "run_on_battery", "on" },
	{ OPT_CPU, "max_cpu_percent", NULL }, { OPT_HOURS, "run_hours", NULL },
	{ OPT_GPU_ONLY, "gpu_only", "on" }, { OPT_CKPT, "checkpoint_seconds", NULL },
	{ OPT_BUFFER, "work_buffer", NULL }, { OPT_BUF_MIN, "work_buf_min", NULL },
	{ OPT_BUF_MAX, "work_buf_max", NULL }, { OPT_CACHE_MB, "cache_max_mb", NULL },
	{ OPT_SUSPEND_CPU, "suspend_cpu_percent", NULL }, { OPT_WEB, "web", "on" },
	{ OPT_WEB_PORT, "web_port", NULL },
};

/* Apply one option to the command line's prefs / the daemon options. */
static int apply(int c, const char *arg, struct ct_conf *cli, struct ct_daemon_opts *o,
		 const char **log_file)
{
	int rc = 0;

	/* a port for the control page asks for the page */
	if (c == OPT_WEB_PORT && (rc = ct_conf_set(cli, "web", "on")) < 0)
		return rc;
	for (size_t i = 0; i < sizeof(pref_opts) / sizeof(pref_opts[0]); i++)
		if (pref_opts[i].opt == c)
			return ct_conf_set(cli, pref_opts[i].key,
					   pref_opts[i].flag ? pref_opts[i].flag : arg);
	switch (c) {
	case OPT_IDLE_FILE: o->idle_file = arg; break;
	case OPT_NO_SELFTEST: o->selftest = 0; break;
	case OPT_BACKOFF: rc = number(arg, 0.01, 1e6, &o->backoff_base); break;
	case OPT_EXIT_AFTER: rc = number(arg, 0.1, 1e9, &o->exit_after); break;
	case OPT_LOG_FILE: *log_file = arg; break;
	default: rc = CT_EUSAGE;
	}
	return rc;
}

static int cmd_run(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_daemon_opts o = { .selftest = 1 };
	const char *dir_opt = NULL, *log_file = NULL;
	char *dir = NULL, *prefs_path = NULL;
	struct ct_conf *cli = NULL;
	struct ct_prefs check;
	int c, rc;

	(void)ctx;
	/* first pass: --dir only (prefs.conf lives in the dir) */
	while ((c = getopt_long(argc, argv, "d:", opts, NULL)) != -1) {
		if (c == 'd')
			dir_opt = optarg;
		else if (c == '?')
			return CT_EXIT_USAGE;	/* ct_cmd_resolve named it */
	}
	if (optind < argc) {
		fprintf(stderr, "ctune run: unexpected argument '%s'\n", argv[optind]);
		return CT_EXIT_USAGE;
	}
	umask(077);
	rc = ct_conf_new(&cli);
	if (rc == 0) rc = ct_cl_state_dir(dir_opt, &dir);
	if (rc == 0) rc = ct_cl_make_private_dir(dir);
	if (rc == 0 && (prefs_path = ct_cl_path(dir, CT_CL_PREFS_FILE)) == NULL) rc = CT_ENOMEM;
	if (rc < 0) {
		fprintf(stderr, "ctune run: %s\n", ct_errmsg(rc));
		goto out;
	}
	optind = 0;
	while ((c = getopt_long(argc, argv, "d:", opts, NULL)) != -1) {
		if (c == 'd')
			continue;
		rc = apply(c, optarg, cli, &o, &log_file);
		if (rc < 0) {
			fprintf(stderr, "ctune run: %s\n", ct_errmsg(rc));
			rc = CT_EUSAGE;
			goto out;
		}
	}
	/* the file and the options now, so a mistake stops the start */
	rc = ct_prefs_build(&check, NULL, prefs_path, cli);
	if (rc < 0) {
		fprintf(stderr, "ctune run: %s\n", ct_errmsg(rc));
		rc = CT_EUSAGE;
		goto out;
	}
	if (log_file != NULL && (rc = ct_log_open(log_file)) < 0) {
		fprintf(stderr, "ctune run: %s\n", ct_errmsg(rc));
		goto out;
	}
	o.dir = dir;
	o.cli_prefs = cli;
	rc = ct_daemon_run(&o);
	if (rc < 0)
		ct_log_error("ctune run: %s", ct_errmsg(rc));
out:
	ct_conf_free(cli);
	free(dir);
	free(prefs_path);
	return rc == 0 ? CT_EXIT_OK : rc == CT_EUSAGE ? CT_EXIT_USAGE : CT_EXIT_FAIL;
}

const struct ct_cmd_def ct_run_cmd = {
	.name = "run", .fn = cmd_run, .opts = opts, .shortopts = "d:", .max_args = 0,
	.summary = "run the client daemon: fetch, train and return work",
	.usage = "[options]",
	.help =
		"Run the volunteer daemon: fetch work from every attached project, train\n"
		"while the computer is idle, upload and report the results.\n\n"
		"  -d, --dir DIR              state directory\n"
		"      --always               compute regardless of user activity\n"
		"      --idle-minutes M       idle time before computing (default 3)\n"
		"      --idle-file PATH       read idle seconds from PATH (testing)\n"
		"      --device D             auto, cpu, opencl or opencl:N\n"
		"      --no-selftest          skip the OpenCL conformance self-test\n"
		"      --run-on-battery       also compute on battery power\n"
		"      --max-cpu-percent P    duty cycle of computing (1-100)\n"
		"      --run-hours H-H        only compute in this local time window\n"
		"      --gpu-only             never compute on the CPU\n"
		"      --checkpoint-seconds S checkpoint interval (default 60)\n"
		"      --work-buffer N        tasks to keep queued per project\n"
		"      --work-buf-min S       ask for work when less than S seconds are\n"
		"                             queued (default 10) ...\n"
		"      --work-buf-max S       ... enough for S seconds (default 30)\n"
		"      --cache-max-mb N       keep inputs by hash up to N MiB (default 1024)\n"
		"      --suspend-cpu-percent P suspend while other programs use more\n"
		"                             than P% of the CPU (0: never, default)\n"
		"      --backoff-base S       first retry delay after a failure (default 60)\n"
		"      --exit-after S         stop after S seconds (testing)\n"
		"      --log-file PATH        log to PATH instead of stderr\n"
		"      --web                  serve the control page on 127.0.0.1; its\n"
		"                             address (with a token) is in the log, in\n"
		"                             'ctune web' and 'ctune status'\n"
		"      --web-port N           the page on this port (default 31416; 0: a\n"
		"                             free one); implies --web\n"
		"Preferences: the defaults, then those set on the project's web site\n"
		"(sent with each scheduler reply, kept in DIR/prefs_web.conf), then\n"
		"DIR/prefs.conf, then these options. 'ctune prefs reload' or SIGHUP\n"
		"reads them again.\n",
};
