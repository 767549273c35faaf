/*
 * cl_daemon.h - `ctune run`: the volunteer daemon.
 *
 * One process per state directory (flock on ctune.lock). Threads:
 *  - one network thread per attached project: downloads inputs, uploads
 *    results, and makes the scheduler RPC (report finished results, ask for
 *    work when fewer than work_buffer tasks are queued), honouring the
 *    server's request_delay and backing off with jitter after failures;
 *  - the compute thread (the caller's): decides from the prefs and the idle
 *    source whether it may compute, runs the chosen task's WU step by step,
 *    checkpoints every checkpoint_seconds and on every suspend, and writes
 *    the upload file at the end;
 *  - the control thread: answers `ctune status`, `saver`, suspend/resume,
 *    attach/detach, `prefs set`, `web` on the Unix socket;
 *  - with `web = on`, the control page's listener and a thread per
 *    browser connection (cl_web.h), which call the same control handler.
 * They share the client state under one mutex; every change is saved
 * atomically before anyone acts on it (see cl_state.h for the order).
 */
#ifndef CT_CL_DAEMON_H
#define CT_CL_DAEMON_H

#include "ct_clock.h"
#include "cl_prefs.h"

struct ct_daemon_opts {
	const char *dir;		/* state directory (exists, 0700) */
	/* the command line's preferences, prefs.conf keys (NULL: none): the
	 * daemon reads defaults, the web's, prefs.conf, then these, at start
	 * and on every reload (cl_prefs.h) */
	const struct ct_conf *cli_prefs;
	const char *idle_file;		/* test idle source, or NULL */
	double backoff_base;		/* seconds; <= 0: 60 */
	double backoff_cap;		/* seconds; <= 0: 4 h */
	int selftest;			/* run the OpenCL self-test at start */
	double exit_after;		/* > 0: stop after this many seconds (tests) */
	const struct ct_clock *clk;	/* NULL: the system clock */
};

/* Run until SIGTERM/SIGINT or a "quit" on the control socket, then
 * checkpoint the running task and save. Returns 0 or a CT_E* code for a
 * start-up failure (state unreadable, another daemon running, socket). */
int ct_daemon_run(const struct ct_daemon_opts *o);

#endif
