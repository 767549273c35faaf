/*
 * cmd_status.c - `ctune status`, `ctune saver` and the small control
 * commands `ctune suspend|resume|quit`: clients of the daemon's control
 * socket (cl_ctl.h).
 */
#include "commands.h"
#include "cl_ctl.h"
#include "cl_paths.h"
#include "cl_status.h"
#include "ct_err.h"

#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

/* Ask the daemon of the state directory; reply in b. */
static int ask(const char *dir_opt, const char *cmd, struct ct_buf *b)
{
	char *dir = NULL, *sock = NULL;
	int rc;

	rc = ct_cl_state_dir(dir_opt, &dir);
	if (rc == 0 && (sock = ct_cl_path(dir, CT_CL_SOCKET_FILE)) == NULL)
		rc = CT_ENOMEM;
	if (rc == 0)
		rc = ct_ctl_request(sock, cmd, 10, b);
	free(dir);
	free(sock);
	return rc;
}

/* Parse --dir/--help (and the flags in extra) common to these commands. */
static int parse_dir(int argc, char **argv, const char *usage, const char **dir, int *xml,
		     double *interval, long *frames)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "xml", no_argument, NULL, 'x' },
		{ "interval", required_argument, NULL, 'i' },
		{ "frames", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
		if (c == 'd') {
			*dir = optarg;
		} else if (c == 'x' && xml != NULL) {
			*xml = 1;
		} else if (c == 'i' && interval != NULL) {
			*interval = atof(optarg);
		} else if (c == 'n' && frames != NULL) {
			*frames = atol(optarg);
		} else {
			fputs(usage, c == 'h' ? stdout : stderr);
			return c == 'h' ? CT_EXIT_OK : CT_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fputs(usage, stderr);
		return CT_EXIT_USAGE;
	}
	return -1;
}

int ct_cmd_status(int argc, char **argv)
{
	struct ct_buf reply = CT_BUF_INIT(CT_CTL_MAX_REPLY), out = CT_BUF_INIT(0);
	struct ct_status *s = calloc(1, sizeof(*s));
	const char *dir = NULL;
	int xml = 0, rc;

	rc = parse_dir(argc, argv,
		       "usage: ctune status [--dir DIR] [--xml]\n"
		       "Show the running daemon's projects, tasks, device and credit.\n",
		       &dir, &xml, NULL, NULL);
	if (rc >= 0 || s == NULL) {
		free(s);
		return rc >= 0 ? rc : CT_EXIT_FAIL;
	}
	rc = ask(dir, "status", &reply);
	if (rc == 0 && xml)
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

static int simple(int argc, char **argv, const char *cmd, const char *usage)
{
	struct ct_buf reply = CT_BUF_INIT(1 << 16);
	const char *dir = NULL;
	int rc = parse_dir(argc, argv, usage, &dir, NULL, NULL, NULL);

	if (rc >= 0)
		return rc;
	rc = ask(dir, cmd, &reply);
	if (rc == 0 && strncmp(ct_buf_cstr(&reply), "ok", 2) != 0)
		rc = ct_error(CT_EDENIED, "%s", ct_buf_cstr(&reply));
	if (rc < 0)
		fprintf(stderr, "ctune %s: %s\n", cmd, ct_errmsg(rc));
	ct_buf_free(&reply);
	return rc == 0 ? CT_EXIT_OK : CT_EXIT_FAIL;
}

int ct_cmd_suspend(int argc, char **argv)
{
	return simple(argc, argv, "suspend", "usage: ctune suspend [--dir DIR]\n"
		      "Stop computing (checkpointed) until 'ctune resume'.\n");
}

int ct_cmd_resume(int argc, char **argv)
{
	return simple(argc, argv, "resume", "usage: ctune resume [--dir DIR]\n");
}

int ct_cmd_quit(int argc, char **argv)
{
	return simple(argc, argv, "quit", "usage: ctune quit [--dir DIR]\n"
		      "Make the daemon checkpoint and exit.\n");
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
	struct termios saved;
};

static void term_enter(struct term *t)
{
	struct termios raw;

	t->tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &t->saved) == 0;
	if (t->tty) {
		raw = t->saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	/* alternate screen, hidden cursor, cleared */
	fputs("\x1b[?1049h\x1b[?25l\x1b[2J", stdout);
	fflush(stdout);
}

static void term_leave(struct term *t)
{
	fputs("\x1b[?25h\x1b[?1049l", stdout);
	fflush(stdout);
	if (t->tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
}

static void term_size(int *cols, int *rows)
{
	struct winsize ws;

	*cols = 80;
	*rows = 24;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
		*cols = ws.ws_col;
		*rows = ws.ws_row;
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

int ct_cmd_saver(int argc, char **argv)
{
	struct ct_status *s = calloc(1, sizeof(*s));
	struct sigaction sa;
	struct term t;
	const char *dir = NULL;
	double interval = 1;
	long frames = 0;
	int rc;

	rc = parse_dir(argc, argv,
		       "usage: ctune saver [--dir DIR] [--interval S] [--frames N]\n"
		       "Full-screen live view of the daemon: job, loss curve, speed, credit.\n"
		       "Any key exits (--frames N: exit after N frames).\n",
		       &dir, NULL, &interval, &frames);
	if (rc >= 0 || s == NULL) {
		free(s);
		return rc >= 0 ? rc : CT_EXIT_FAIL;
	}
	if (!(interval >= 0.05))
		interval = 0.05;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = saver_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	term_enter(&t);
	for (long n = 0; !saver_quit && (frames <= 0 || n < frames); n++) {
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
		char key;

		saver_frame(dir, s);
		if (frames > 0 && n + 1 == frames)
			break;
		if (t.tty && poll(&p, 1, (int)(interval * 1000)) > 0 &&
		    read(STDIN_FILENO, &key, 1) >= 0)
			break;
		if (!t.tty)
			usleep((useconds_t)(interval * 1e6));
	}
	term_leave(&t);
	free(s);
	return CT_EXIT_OK;
}
