/*
 * cl_daemon_int.h - what the daemon's three files (cl_daemon.c, cl_net.c,
 * cl_compute.c) share. Not a public interface.
 */
#ifndef CT_CL_DAEMON_INT_H
#define CT_CL_DAEMON_INT_H

#include <pthread.h>
#include <signal.h>

#include "cl_backoff.h"
#include "ct_clock.h"
#include "cl_daemon.h"
#include "cl_host.h"
#include "cl_idle.h"
#include "cl_load.h"
#include "cl_prefs.h"
#include "cl_state.h"
#include "cl_web.h"

#define CT_LOSS_HISTORY 512

struct ct_daemon {
	const struct ct_daemon_opts *o;
	const struct ct_clock *clk;
	char *dir, *state_path, *cache_dir, *slots_dir, *sock_path;
	char *prefs_path, *web_prefs_path;	/* prefs.conf, prefs_web.conf */
	struct ct_prefs prefs;		/* in force (ct_daemon_reload_prefs); written
					 * under the lock, read under it or by the
					 * compute thread's copy */
	struct ct_idle_source idle;
	struct ct_cpu_sampler cpu;	/* compute thread only */
	double cpu_other, cpu_sampled;	/* last other-CPU %, its mono time */
	struct ct_host host;
	char *host_xml;			/* <host> element, made once */
	struct ct_web *web;		/* the control page (cl_web.h), or NULL */
	char *web_token_path;		/* DIR/web_token */

	pthread_mutex_t lock;		/* guards everything below */
	pthread_cond_t wake;		/* network threads wait on it */
	struct ct_state *st;
	struct ct_backoff backoff;
	int user_suspended;		/* "suspend" on the socket */
	int no_work_logged;		/* "asking for no work" was logged */
	enum ct_suspend_reason reason;	/* the compute thread's last decision */
	double idle_seconds;
	char running_project[1024];	/* task the compute thread has open */
	char running_task[128];
	double tokens_per_s;
	double sec_per_token;		/* host speed, kept across tasks (0: unknown) */
	double wu_tokens;		/* size of the newest WU started */
	float losses[CT_LOSS_HISTORY];	/* step losses of the running task */
	int nlosses;
	double started;
	int nthreads;			/* network threads alive */
	volatile int stop;		/* read without the lock: set once */
};

/* Lock/unlock the daemon's mutex. */
void ct_daemon_lock(struct ct_daemon *d);
void ct_daemon_unlock(struct ct_daemon *d);

/* Save the state (lock held); a failure is logged, not fatal: the old file
 * stays valid and the next save tries again. */
void ct_daemon_save(struct ct_daemon *d);

/* Read the preferences again (cl_prefs.h's ct_prefs_build: defaults, the
 * web's, prefs.conf, the command line) into d->prefs; lock held. A bad
 * prefs.conf keeps the old ones (logged). Returns 0 or that error. */
int ct_daemon_reload_prefs(struct ct_daemon *d, const char *why);

/* Keep the web's preferences of a scheduler reply when they are newer
 * than those kept, and apply them (lock held). */
void ct_daemon_web_prefs(struct ct_daemon *d, const char *text, long long t);

/* Wake the network threads (lock held). */
void ct_daemon_wake(struct ct_daemon *d);

/* Sleep up to s seconds on the condition (lock held; returns with it held). */
void ct_daemon_wait(struct ct_daemon *d, double s);

/* Slot directory of a task in *out (malloc'd, caller frees), built by
 * ct_jail_join (cl_jail.h): 0, or CT_EPROTO / CT_EPERM for a name that would
 * leave the client's directory (logged by the caller), CT_ENOMEM. */
int ct_daemon_slot(const struct ct_daemon *d, const char *task_name, char **out);

/* Remove REPORTED tasks of p (except the one the compute thread has open)
 * and their slot directories; then trim the input cache to cache_max_mb
 * (cl_cache.h), keeping what other tasks need. Lock held. */
void ct_daemon_forget_reported(struct ct_daemon *d, struct ct_project *p);

/* A network thread for one project; arg is a malloc'd struct ct_net_arg. */
struct ct_net_arg {
	struct ct_daemon *d;
	char *url;
};
void *ct_net_thread(void *arg);

/* The compute loop; returns when d->stop is set. */
void ct_compute_loop(struct ct_daemon *d);

/* Start the network thread of project url (lock held). */
int ct_daemon_start_project(struct ct_daemon *d, const char *url);

#endif
