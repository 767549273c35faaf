/*
 * cmd_status.c - `ctune status`, `ctune saver` and the small control
 * commands `ctune suspend|resume|quit|web|prefs`: clients of the daemon's
 * control socket (cl_ctl.h).
 */
#include "commands.h"
#include "cl_ctl.h"
#include "cl_paths.h"
#include "cl_status.h"
#include "cl_xsaver.h"
#include "ct_err.h"
#include "ct_os.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The daemon's control socket of the state directory (dir_opt may be
 * NULL) into *sock (caller frees). 0 or a CT_E* code. */
static int sock_path(const char *dir_opt, char **sock)
{
	char *dir = NULL;
	int rc;

	*sock = NULL;
	rc = ct_cl_state_dir(dir_opt, &dir);
	if (rc == 0 && (*sock = ct_cl_path(dir, CT_CL_SOCKET_FILE)) == NULL)
		rc = CT_ENOMEM;
	free(dir);
	return rc;
}

/* Ask the daemon of the state directory; reply in b. */
static int ask(const char *dir_opt, const char *cmd, struct ct_buf *b)
{
	char *sock;
	int rc;

	rc = sock_path(dir_opt, &sock);
	if (rc == 0)
		rc = ct_ctl_request(sock, cmd, 10, b);
	free(sock);
	return rc;
}

/* Options of these commands (each command uses some of them). */
struct view_opts {
	const char *dir;
	int xml;
	double interval;
	long frames;
	int x11;			/* draw into an X window */
	unsigned long window;		/* 0: the root window */
};

/* Each command's options, a subset of what parse_opts knows. */
#define OPT_DIR { "dir", required_argument, NULL, 'd' }
#define OPT_END { NULL, 0, NULL, 0 }
static const struct option dir_long[] = { OPT_DIR, OPT_END };
static const struct option status_long[] = {
	OPT_DIR, { "xml", no_argument, NULL, 'x' }, OPT_END,
};
static const struct option saver_long[] = {
	OPT_DIR,
	{ "interval", required_argument, NULL, 'i' },
	{ "frames", required_argument, NULL, 'n' },
	{ "root", no_argument, NULL, 'r' },
	{ "x11", no_argument, NULL, 'X' },
	{ "window-id", required_argument, NULL, 'w' },
	OPT_END,
};

/* Parse the options of opts (one of the above); returns -1 to go on, or an
 * exit status. */
static int parse_opts(int argc, char **argv, const struct option *opts, struct view_opts *v)
{
	int c;

	while ((c = getopt_long(argc, argv, "d:", opts, NULL)) != -1) {
		switch (c) {
		case 'd': v->dir = optarg; break;
		case 'x': v->xml = 1; break;
		case 'i': v->interval = atof(optarg); break;
		case 'n': v->frames = atol(optarg); break;
		case 'r': v->x11 = 1; v->window = 0; break;
		case 'X': v->x11 = 1; v->window = CT_XSAVER_NEW_WINDOW; break;
		case 'w': v->x11 = 1; v->window = strtoul(optarg, NULL, 0); break;
		default: return CT_EXIT_USAGE;	/* ct_cmd_resolve named it */
		}
	}
	return optind != argc ? CT_EXIT_USAGE : -1;
}

/* status and saver: parse the options (opts) into v and allocate the status
 * document they show (*s, freed by the caller). Returns -1 to go on, or an
 * exit status with *s NULL. */
static int view_begin(int argc, char **argv, const struct option *opts, struct view_opts *v,
		      struct ct_status **s)
{
	int rc = parse_opts(argc, argv, opts, v);

	*s = NULL;
	if (rc >= 0)
		return rc;
	*s = calloc(1, sizeof(**s));
	return *s == NULL ? CT_EXIT_FAIL : -1;
}

static int cmd_status(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_buf reply = CT_BUF_INIT(CT_CTL_MAX_REPLY), out = CT_BUF_INIT(0);
	struct ct_status *s;
	struct view_opts v = { 0 };
	int rc;

	(void)ctx;
	rc = view_begin(argc, argv, status_long, &v, &s);
	if (rc >= 0)
		return rc;
	rc = ask(v.dir, "status", &reply);
	if (rc == 0 && v.xml)
		fputs(ct_buf_cstr(&reply), stdout);
	else if (rc == 0) {
		rc = ct_status_parse(reply.data, reply.len, s);
		if (rc == 0) rc = ct_status_render_text(s, &out);
		if (rc == 0) fputs(ct_buf_cstr(&out), stdout);
	}
	if (rc < 0)
		fprintf(stderr, "ctune status: %s\n", ct_errmsg(rc));
	ct_buf_free(&reply);
	ct_buf_free(&out);
	free(s);
	return rc == 0 ? CT_EXIT_OK : CT_EXIT_FAIL;
}

/* Send cmd; a reply other than "ok" is an error (code, with the reply),
 * printed as "ctune WHAT: ...". Returns the exit status. */
static int ask_ok(const char *dir, const char *cmd, const char *what, int code)
{
	struct ct_buf reply = CT_BUF_INIT(1 << 16);
	int rc = ask(dir, cmd, &reply);

	if (rc == 0 && strncmp(ct_buf_cstr(&reply), "ok", 2) != 0)
		rc = ct_error(code, "%s", ct_buf_cstr(&reply));
	if (rc < 0)
		fprintf(stderr, "ctune %s: %s\n", what, ct_errmsg(rc));
	ct_buf_free(&reply);
	return rc == 0 ? CT_EXIT_OK : CT_EXIT_FAIL;
}

/* suspend, resume, quit: one word to the daemon (argv[0]) */
static int simple(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct view_opts v = { 0 };
	int rc = parse_opts(argc, argv, dir_long, &v);

	(void)ctx;
	return rc >= 0 ? rc : ask_ok(v.dir, argv[0], argv[0], CT_EDENIED);
}

/* prefs reload: the daemon reads its preferences again */
static int prefs_reload(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct view_opts v = { 0 };
	int rc = parse_opts(argc, argv, dir_long, &v);

	(void)ctx;
	return rc >= 0 ? rc : ask_ok(v.dir, "prefs reload", "prefs reload", CT_ECONFIG);
}

/* prefs set KEY=VALUE...: into prefs.conf, then in force */
static int prefs_set(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_buf cmd = CT_BUF_INIT(CT_CTL_MAX_LINE - 1);
	const char *dir = NULL;
	int rc, c;

	(void)ctx;
	while ((c = getopt_long(argc, argv, "d:", dir_long, NULL)) != -1) {
		if (c != 'd')
			return CT_EXIT_USAGE;	/* ct_cmd_resolve named it */
		dir = optarg;
	}
	rc = ct_buf_appends(&cmd, "prefs set");
	for (int i = optind; i < argc && rc == 0; i++)
		rc = ct_buf_appendf(&cmd, " %s", argv[i]);
	if (rc < 0) {
		fprintf(stderr, "ctune prefs set: %s\n", ct_errmsg(rc));
		rc = CT_EXIT_USAGE;
	} else {
		rc = ask_ok(dir, ct_buf_cstr(&cmd), "prefs set", CT_ECONFIG);
	}
	ct_buf_free(&cmd);
	return rc;
}

/* web: the control page's address */
static int cmd_web(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_buf reply = CT_BUF_INIT(1 << 12);
	struct view_opts v = { 0 };
	int rc = parse_opts(argc, argv, dir_long, &v);

	(void)ctx;
	if (rc >= 0)
		return rc;
	rc = ask(v.dir, "web", &reply);
	if (rc == 0 && strncmp(ct_buf_cstr(&reply), "http://", 7) != 0)
		rc = ct_error(CT_ENOTFOUND, "%s", ct_buf_cstr(&reply) +
			      (strncmp(ct_buf_cstr(&reply), "error ", 6) == 0 ? 6 : 0));
	if (rc == 0)
		fputs(ct_buf_cstr(&reply), stdout);
	else
		fprintf(stderr, "ctune web: %s\n", ct_errmsg(rc));
	ct_buf_free(&reply);
	return rc == 0 ? CT_EXIT_OK : CT_EXIT_FAIL;
}

/* ---- the saver ---- */

static volatile sig_atomic_t saver_quit;

static void saver_signal(int sig)
{
	(void)sig;
	saver_quit = 1;
}

struct term {
	int tty;
};

static void term_enter(struct term *t)
{
	t->tty = ct_os_term_raw();
	/* alternate screen, hidden cursor, cleared */
	fputs("\x1b[?1049h\x1b[?25l\x1b[2J", stdout);
	fflush(stdout);
}

static void term_leave(struct term *t)
{
	fputs("\x1b[?25h\x1b[?1049l", stdout);
	fflush(stdout);
	if (t->tty)
		ct_os_term_restore();
}

static void term_size(int *cols, int *rows)
{
	if (ct_os_term_size(cols, rows) < 0) {
		*cols = 80;
		*rows = 24;
	}
}

/* Draw one frame; a missing daemon is shown, not fatal. */
static void saver_frame(const char *dir, struct ct_status *s)
{
	struct ct_buf reply = CT_BUF_INIT(CT_CTL_MAX_REPLY), out = CT_BUF_INIT(0);
	int cols, rows, rc;

	term_size(&cols, &rows);
	rc = ask(dir, "status", &reply);
	if (rc == 0) rc = ct_status_parse(reply.data, reply.len, s);
	if (rc == 0)
		rc = ct_status_render_saver(s, cols, rows, &out);
	else
		rc = ct_buf_appendf(&out, "\x1b[H\x1b[2J crowdtune\n\n %s\n\n press any key to exit",
				    ct_errmsg(rc));
	if (rc == 0) {
		fwrite(out.data, 1, out.len, stdout);
		fflush(stdout);
	}
	ct_buf_free(&reply);
	ct_buf_free(&out);
}

/* xscreensaver mode: draw into its window (cl_xsaver.h). */
static int saver_x11(const struct view_opts *v)
{
	char *sock;
	int rc;

	rc = sock_path(v->dir, &sock);
	if (rc == 0)
		rc = ct_xsaver_run(sock, v->window, v->interval, v->frames);
	if (rc < 0)
		fprintf(stderr, "ctune saver: %s\n", ct_errmsg(rc));
	free(sock);
	return rc == 0 ? CT_EXIT_OK : CT_EXIT_FAIL;
}

/* The terminal view until a key, a signal or --frames. */
static int saver_term(const struct view_opts *v, struct ct_status *s)
{
	struct term t;

	ct_os_on_stop(saver_signal);
	term_enter(&t);
	for (long n = 0; !saver_quit && (v->frames <= 0 || n < v->frames); n++) {
		char key;

		saver_frame(v->dir, s);
		if (v->frames > 0 && n + 1 == v->frames)
			break;
		if (t.tty && ct_os_term_key((int)(v->interval * 1000), &key))
			break;
		if (!t.tty)
			ct_os_sleep(v->interval);
	}
	term_leave(&t);
	return CT_EXIT_OK;
}

static int cmd_saver(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_status *s;
	struct view_opts v = { .interval = 1 };
	const char *xs_win = getenv("XSCREENSAVER_WINDOW");
	int rc;

	(void)ctx;
	rc = view_begin(argc, argv, saver_long, &v, &s);
	if (rc >= 0)
		return rc;
	if (!(v.interval >= 0.05))
		v.interval = 0.05;
	if (!v.x11 && xs_win != NULL && *xs_win) {
		v.x11 = 1;
		v.window = strtoul(xs_win, NULL, 0);
	}
	rc = v.x11 ? saver_x11(&v) : saver_term(&v, s);
	free(s);
	return rc;
}

/* ---- the table rows (ct_cmd.h) ---- */

const struct ct_cmd_def ct_status_cmd = {
	.name = "status", .fn = cmd_status, .opts = status_long, .shortopts = "d:",
	.summary = "show projects, tasks and credit of the running daemon",
	.usage = "[--dir DIR] [--xml]",
	.help = "Show the running daemon's projects, tasks, device and credit.\n",
};

const struct ct_cmd_def ct_saver_cmd = {
	.name = "saver", .fn = cmd_saver, .opts = saver_long, .shortopts = "d:",
	.summary = "full-screen live view of the daemon (exits on a key)",
	.usage = "[--dir DIR] [--interval S] [--frames N]\n"
	"       ctune saver --x11 | --root | --window-id ID   (X11: a window of\n"
	"       its own, the root window, or as an xscreensaver hack)",
	.help = "Full-screen live view of the daemon: job, loss curve, speed, credit.\n"
	"Any key exits (--frames N: exit after N frames). Run by xscreensaver\n"
	"($XSCREENSAVER_WINDOW set) it draws into the screensaver's window.\n",
};

const struct ct_cmd_def ct_suspend_cmd = {
	.name = "suspend", .fn = simple, .opts = dir_long, .shortopts = "d:",
	.summary = "stop computing until 'ctune resume'", .usage = "[--dir DIR]",
	.help = "Stop computing (checkpointed) until 'ctune resume'.\n",
};

const struct ct_cmd_def ct_resume_cmd = {
	.name = "resume", .fn = simple, .opts = dir_long, .shortopts = "d:",
	.summary = "resume computing after 'ctune suspend'", .usage = "[--dir DIR]",
};

const struct ct_cmd_def ct_quit_cmd = {
	.name = "quit", .fn = simple, .opts = dir_long, .shortopts = "d:",
	.summary = "make the daemon checkpoint and exit", .usage = "[--dir DIR]",
	.help = "Make the daemon checkpoint and exit.\n",
};

static const struct ct_cmd_def prefs_reload_cmd = {
	.name = "reload", .fn = prefs_reload, .opts = dir_long, .shortopts = "d:",
	.summary = "make the daemon read its preferences again", .usage = "[--dir DIR]",
	.help = "Make the running daemon read its preferences again: the defaults, those\n"
	"set on the project's web site (DIR/prefs_web.conf), DIR/prefs.conf, then the\n"
	"options it was started with. SIGHUP does the same. A bad prefs.conf is\n"
	"refused and the old preferences stay.\n",
};

static const struct ct_cmd_def prefs_set_cmd = {
	.name = "set", .fn = prefs_set, .opts = dir_long, .shortopts = "d:", .min_args = 1,
	.max_args = 16, .summary = "set preferences in prefs.conf and apply them now",
	.usage = "[--dir DIR] KEY=VALUE...",
	.help = "Set preferences (the keys of prefs.conf, e.g. idle_minutes=5 run_hours=22-7)\n"
	"in DIR/prefs.conf, keeping its other lines and comments, and make the running\n"
	"daemon apply them at once. A value it refuses changes nothing. The control\n"
	"page's preferences form does the same.\n",
};

static const struct ct_cmd_def *const prefs_cmds[] = { &prefs_reload_cmd, &prefs_set_cmd, NULL };

const struct ct_cmd_def ct_web_cmd = {
	.name = "web", .fn = cmd_web, .opts = dir_long, .shortopts = "d:",
	.summary = "print the address of the daemon's local control page",
	.usage = "[--dir DIR]",
	.help = "Print the address of the running daemon's control page,\n"
	"http://127.0.0.1:PORT/?token=..., to open in a browser on this computer. The\n"
	"daemon serves it with 'ctune run --web' (or web = on in prefs.conf); the\n"
	"token stays the same across restarts until DIR/web_token is removed.\n",
};

const struct ct_cmd_def ct_prefs_cmd = {
	.name = "prefs", .subs = prefs_cmds,
	.summary = "the daemon's preferences",
};
