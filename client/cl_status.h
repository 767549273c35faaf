/*
 * cl_status.h - what `ctune status` and `ctune saver` show: the daemon's
 * <status> document (cl_daemon.c writes it) parsed into a struct, and the
 * two renderings, as pure functions into a buffer so tests can check them.
 */
#ifndef CT_CL_STATUS_H
#define CT_CL_STATUS_H

#include <stddef.h>

#include "ct_buf.h"

#define CT_STATUS_MAX_LOSSES 512
#define CT_STATUS_MAX_TASKS 64
#define CT_STATUS_MAX_PROJECTS 16

struct ct_status_task {
	char name[128];
	char state[16];
	double progress;
	long step, steps;
	double last_loss;		/* NaN if unknown */
	char job[32], round[32];
	char error[128];
};

struct ct_status_project {
	char url[256];
	char user_name[64];
	long hostid;
	double credit, rac;
	long rank;
	long pending_results;		/* reported, awaiting validation */
	double eta_task_s, eta_queue_s;	/* -1 unknown */
	long queued_tasks;
	long nfailures;
	int suspended;			/* the user suspended this project */
	double next_rpc_in;
	struct ct_status_task tasks[CT_STATUS_MAX_TASKS];
	int ntasks;
};

struct ct_status {
	long pid;
	char version[32];
	char device[32];
	char device_name[128];
	int conforming;
	char activity[32];
	char reason[64];
	int user_suspended;		/* `ctune suspend` or the page's Suspend */
	char web_url[160];		/* the control page's address, "" if off */
	double idle_seconds;
	double tokens_per_s;
	char running[128];
	double uptime;
	long results_done, results_reported;
	double seconds, tokens;
	struct ct_status_project projects[CT_STATUS_MAX_PROJECTS];
	int nprojects;
	float losses[CT_STATUS_MAX_LOSSES];
	int nlosses;
};

/* Parse a <status> document. Returns 0, CT_EXML, CT_EPROTO. Lists longer
 * than the caps are cut, strings truncated. */
int ct_status_parse(const void *data, size_t n, struct ct_status *s);

/* The running task (the one named by s->running), or NULL; *proj gets its
 * project when not NULL. */
const struct ct_status_task *ct_status_running(const struct ct_status *s,
					       const struct ct_status_project **proj);

/* `ctune status` text: projects, tasks with progress bars, device, loss,
 * credit. */
int ct_status_render_text(const struct ct_status *s, struct ct_buf *b);

/* One full-screen frame of `ctune saver` for a terminal of cols x rows:
 * ANSI escapes (home, clear), a title, job/round/step, a loss curve made of
 * block characters, tokens/s, device, credit and rank. */
int ct_status_render_saver(const struct ct_status *s, int cols, int rows, struct ct_buf *b);

/* A progress bar of `width` cells for fraction f (clamped to 0..1). */
int ct_status_bar(struct ct_buf *b, double f, int width);

/* "ETA this WU 40 s, queue 3 min (4 tasks); credit granted 12.5, 2 results
 * pending validation" into buf (unknown ETAs print "?"). */
void ct_status_eta_line(const struct ct_status_project *p, char *buf, size_t n);

#endif
