/*
 * cl_daemon.c - see cl_daemon.h: start-up, shared helpers, the control
 * socket and its status document, shutdown.
 */
#include "config.h"
#include "cl_daemon_int.h"
#include "cl_buffer.h"
#include "cl_cache.h"
#include "cl_ctl.h"
#include "cl_http.h"
#include "cl_jail.h"
#include "cl_paths.h"
#include "ct_conf.h"
#include "ct_err.h"
#include "ct_os.h"
#include "ct_file.h"
#include "ct_log.h"
#include "ct_xml.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got_signal, got_reload;

static void on_signal(int sig)
{
	got_signal = sig;
}

static void on_reload(int sig)
{
	(void)sig;
	got_reload = 1;
}

int ct_daemon_reload_prefs(struct ct_daemon *d, const char *why)
{
	struct ct_prefs p;
	int rc = ct_prefs_build(&p, d->web_prefs_path, d->prefs_path, d->o->cli_prefs);

	if (rc < 0) {
		ct_log_warn("preferences (%s): %s; the old ones stay", why, ct_errmsg(rc));
		return rc;
	}
	if (strcmp(p.device, d->prefs.device) != 0 && d->host_xml != NULL)
		ct_log_warn("preferences: the device changes at the next start");
	if ((p.web != d->prefs.web || p.web_port != d->prefs.web_port) && d->host_xml != NULL)
		ct_log_warn("preferences: the control page changes at the next start");
	d->prefs = p;
	ct_log_info("preferences read (%s)", why);
	ct_daemon_wake(d);
	return 0;
}

void ct_daemon_web_prefs(struct ct_daemon *d, const char *text, long long t)
{
	int rc;

	if (t <= ct_prefs_web_time(d->web_prefs_path))
		return;
	rc = ct_prefs_save_web(d->web_prefs_path, text, t);
	if (rc < 0) {
		ct_log_warn("the web's preferences refused: %s", ct_errmsg(rc));
		return;
	}
	(void)ct_daemon_reload_prefs(d, "set on the web");
}

void ct_daemon_lock(struct ct_daemon *d)
{
	pthread_mutex_lock(&d->lock);
}

void ct_daemon_unlock(struct ct_daemon *d)
{
	pthread_mutex_unlock(&d->lock);
}

void ct_daemon_save(struct ct_daemon *d)
{
	int rc = ct_state_save(d->st);

	if (rc < 0)
		ct_log_error("saving %s: %s (the previous state is intact)", d->state_path,
			     ct_errmsg(rc));
}

void ct_daemon_wake(struct ct_daemon *d)
{
	pthread_cond_broadcast(&d->wake);
}

void ct_daemon_wait(struct ct_daemon *d, double s)
{
	struct timespec ts;

	ct_os_cond_deadline(s, &ts);
	pthread_cond_timedwait(&d->wake, &d->lock, &ts);
}

int ct_daemon_slot(const struct ct_daemon *d, const char *task_name, char **out)
{
	return ct_jail_join(d->dir, d->slots_dir, task_name, out);
}

/* 1 if some task of any project still needs the cache file sha. */
static int cache_needed(struct ct_daemon *d, const char *sha)
{
	for (size_t i = 0; i < d->st->nprojects; i++) {
		struct ct_project *p = &d->st->projects[i];

		for (size_t j = 0; j < p->ntasks; j++)
			for (size_t k = 0; k < p->tasks[j].nfiles; k++)
				if (strcmp(p->tasks[j].files[k].sha256, sha) == 0 &&
				    p->tasks[j].state != CT_TASK_REPORTED)
					return 1;
	}
	return 0;
}

static int cache_needed_cb(void *ctx, const char *sha)
{
	return cache_needed(ctx, sha);
}

static void remove_slot(struct ct_daemon *d, const char *name)
{
	static const char *const files[] = { CT_CL_SLOT_STATE, CT_CL_SLOT_RESULT };
	char *slot = NULL, path[4200];
	int rc = ct_daemon_slot(d, name, &slot);

	if (rc < 0) {
		ct_log_error("%s: not removing its slot: %s", name, ct_errmsg(rc));
		return;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (ct_path_join(path, sizeof(path), slot, files[i]) == 0)
			unlink(path);
	rmdir(slot);
	free(slot);
}

void ct_daemon_forget_reported(struct ct_daemon *d, struct ct_project *p)
{
	int removed = 0;

	for (size_t i = 0; i < p->ntasks;) {
		struct ct_task *t = &p->tasks[i];

		if (t->state != CT_TASK_REPORTED ||
		    (strcmp(d->running_task, t->name) == 0 &&
		     strcmp(d->running_project, p->url) == 0)) {
			i++;
			continue;
		}
		removed++;
		remove_slot(d, t->name);
		ct_project_remove_task(p, i);
	}
	/* inputs stay cached by hash for the next task or round, within
	 * cache_max_mb (least recently used out first) */
	if (removed > 0)
		(void)ct_cache_trim(d->cache_dir, (uint64_t)d->prefs.cache_max_mb << 20,
				    cache_needed_cb, d, NULL);
}

int ct_daemon_start_project(struct ct_daemon *d, const char *url)
{
	struct ct_net_arg *a = calloc(1, sizeof(*a));
	pthread_t th;

	if (a == NULL || (a->url = strdup(url)) == NULL) {
		free(a);
		return CT_ENOMEM;
	}
	a->d = d;
	if (pthread_create(&th, NULL, ct_net_thread, a) != 0) {
		free(a->url);
		free(a);
		return ct_error(CT_EINTERNAL, "cannot start a thread");
	}
	pthread_detach(th);
	d->nthreads++;
	return 0;
}

/* ---- status document ---- */

static int status_task(struct ct_buf *b, const struct ct_task *t)
{
	const char *job = ct_task_param(t, "job_id"), *round = ct_task_param(t, "round");
	int rc;

	rc = ct_xml_open(b, "task");
	if (rc == 0) rc = ct_xml_elem_str(b, "name", t->name);
	if (rc == 0) rc = ct_xml_elem_str(b, "state", ct_task_state_str(t->state));
	if (rc == 0) rc = ct_xml_elem_double(b, "progress", isfinite(t->progress) ? t->progress : 0);
	if (rc == 0) rc = ct_xml_elem_long(b, "step", t->live_step > t->step ? t->live_step : t->step);
	if (rc == 0) rc = ct_xml_elem_long(b, "steps", t->steps);
	if (rc == 0 && isfinite(t->last_loss)) rc = ct_xml_elem_double(b, "last_loss", t->last_loss);
	if (rc == 0 && job) rc = ct_xml_elem_str(b, "job", job);
	if (rc == 0 && round) rc = ct_xml_elem_str(b, "round", round);
	if (rc == 0) rc = ct_xml_elem_double(b, "deadline", t->deadline);
	if (rc == 0 && t->error) rc = ct_xml_elem_str(b, "error", t->error);
	if (rc == 0) rc = ct_xml_close(b, "task");
	return rc;
}

/* ETAs from the host's measured speed: the running WU and the whole
 * queue (seconds; -1 unknown). */
static int status_eta(struct ct_daemon *d, struct ct_buf *b, const struct ct_project *p)
{
	double eta_task = -1, eta_queue = -1, tokens;
	int n, rc;

	ct_buffer_queued(p, &n, &tokens);
	if (d->sec_per_token > 0) {
		eta_queue = tokens * d->sec_per_token;
		for (size_t i = 0; i < p->ntasks; i++)
			if (p->tasks[i].state == CT_TASK_RUNNING)
				eta_task = ct_buffer_task_tokens(&p->tasks[i]) * d->sec_per_token;
	}
	rc = ct_xml_elem_double(b, "eta_task_s", eta_task);
	if (rc == 0) rc = ct_xml_elem_double(b, "eta_queue_s", eta_queue);
	if (rc == 0) rc = ct_xml_elem_long(b, "queued_tasks", n);
	return rc;
}

static int status_project(struct ct_daemon *d, struct ct_buf *b, const struct ct_project *p)
{
	double now = ct_clock_now(d->clk), next = fmax(p->next_rpc, p->request_delay_until);
	int rc;

	rc = ct_xml_open(b, "project");
	if (rc == 0) rc = ct_xml_elem_str(b, "url", p->url);
	if (rc == 0 && p->user_name) rc = ct_xml_elem_str(b, "user_name", p->user_name);
	if (rc == 0) rc = ct_xml_elem_long(b, "hostid", p->hostid);
	if (rc == 0) rc = ct_xml_elem_double(b, "credit", p->credit);
	if (rc == 0) rc = ct_xml_elem_double(b, "rac", p->rac);
	if (rc == 0) rc = ct_xml_elem_long(b, "rank", p->rank);
	if (rc == 0) rc = ct_xml_elem_long(b, "pending_results", p->pending_results);
	if (rc == 0) rc = status_eta(d, b, p);
	if (rc == 0) rc = ct_xml_elem_long(b, "nfailures", p->nfailures);
	if (rc == 0) rc = ct_xml_elem_long(b, "suspended", p->suspended);
	if (rc == 0) rc = ct_xml_elem_double(b, "next_rpc_in", next > now ? next - now : 0);
	for (size_t i = 0; i < p->ntasks && rc == 0; i++)
		rc = status_task(b, &p->tasks[i]);
	if (rc == 0) rc = ct_xml_close(b, "project");
	return rc;
}

/* The <status> document (lock held). */
static int status_xml(struct ct_daemon *d, struct ct_buf *b)
{
	const struct ct_totals *tt = &d->st->totals;
	int rc;

	rc = ct_xml_open(b, "status");
	if (rc == 0) rc = ct_xml_elem_long(b, "pid", (long)getpid());
	if (rc == 0) rc = ct_xml_elem_str(b, "version", PACKAGE_VERSION);
	if (rc == 0) rc = ct_xml_elem_str(b, "device", d->host.device);
	if (rc == 0) rc = ct_xml_elem_str(b, "device_name",
		strncmp(d->host.device, "opencl:", 7) == 0
			? d->host.devices[atoi(d->host.device + 7)].name : "C reference (CPU)");
	if (rc == 0) rc = ct_xml_elem_long(b, "conforming", d->host.device_conforming);
	if (rc == 0) rc = ct_xml_elem_str(b, "activity", d->reason == CT_RUN_OK
		? (d->running_task[0] ? "computing" : "idle, no work") : "suspended");
	if (rc == 0) rc = ct_xml_elem_str(b, "reason", ct_suspend_reason_str(d->reason));
	if (rc == 0) rc = ct_xml_elem_long(b, "user_suspended", d->user_suspended);
	if (rc == 0 && d->web) rc = ct_xml_elem_str(b, "web_url", ct_web_url(d->web));
	if (rc == 0) rc = ct_xml_elem_double(b, "idle_seconds", fmin(d->idle_seconds, 1e9));
	if (rc == 0) rc = ct_xml_elem_double(b, "tokens_per_s", d->tokens_per_s);
	if (rc == 0 && d->running_task[0]) rc = ct_xml_elem_str(b, "running", d->running_task);
	if (rc == 0) rc = ct_xml_elem_double(b, "uptime", ct_clock_now(d->clk) - d->started);
	if (rc == 0) rc = ct_xml_open(b, "totals");
	if (rc == 0) rc = ct_xml_elem_long(b, "results_done", tt->results_done);
	if (rc == 0) rc = ct_xml_elem_long(b, "results_reported", tt->results_reported);
	if (rc == 0) rc = ct_xml_elem_double(b, "seconds", tt->seconds);
	if (rc == 0) rc = ct_xml_elem_double(b, "tokens", tt->tokens);
	if (rc == 0) rc = ct_xml_close(b, "totals");
	for (size_t i = 0; i < d->st->nprojects && rc == 0; i++)
		rc = status_project(d, b, &d->st->projects[i]);
	if (rc == 0) rc = ct_xml_open(b, "losses");
	for (int i = 0; i < d->nlosses && rc == 0; i++)
		rc = isfinite(d->losses[i]) ? ct_xml_elem_double(b, "l", d->losses[i]) : 0;
	if (rc == 0) rc = ct_xml_close(b, "losses");
	if (rc == 0) rc = ct_xml_close(b, "status");
	return rc;
}

/* "attach URL KEY [CAFILE]" while the daemon runs. Lock held. */
static int ctl_attach(struct ct_daemon *d, const char *args, struct ct_buf *reply)
{
	char url[1024], key[256], ca[1024];
	struct ct_project *p = NULL;
	int rc, n;

	n = sscanf(args, "%1023s %255s %1023s", url, key, ca);
	if (n < 2)
		return ct_buf_appends(reply, "error usage: attach URL KEY [CAFILE]\n");
	rc = ct_state_add_project(d->st, url, key, &p);
	if (rc == 0 && n == 3)
		rc = ct_strset(&p->ca_file, ca);
	if (rc == 0) {
		ct_daemon_save(d);
		rc = ct_daemon_start_project(d, url);
	}
	if (rc < 0)
		return ct_buf_appendf(reply, "error %s\n", ct_errmsg(rc));
	ct_log_info("attached to %s", url);
	return ct_buf_appends(reply, "ok\n");
}

static int ctl_detach(struct ct_daemon *d, const char *url, struct ct_buf *reply)
{
	struct ct_project *p = ct_state_find_project(d->st, url);
	int rc;

	if (p != NULL) {
		/* the compute thread notices its task is gone and drops it */
		for (size_t i = 0; i < p->ntasks; i++)
			p->tasks[i].state = CT_TASK_REPORTED;
		d->running_task[0] = '\0';
		ct_daemon_forget_reported(d, p);
	}
	rc = ct_state_remove_project(d->st, url);
	if (rc < 0)
		return ct_buf_appendf(reply, "error %s\n", ct_errmsg(rc));
	ct_daemon_save(d);
	ct_daemon_wake(d);
	ct_log_info("detached from %s", url);
	return ct_buf_appends(reply, "ok\n");
}

/* "project suspend URL" / "project resume URL" (lock held): a suspended
 * project's tasks stop (the running one checkpoints: cl_compute.c) and no
 * work is asked for it (cl_net.c); its finished results are still
 * reported. Kept in the state file. */
static int project_suspend(struct ct_daemon *d, const char *url, int on, struct ct_buf *reply)
{
	struct ct_project *p = ct_state_find_project(d->st, url);

	if (p == NULL)
		return ct_buf_appendf(reply, "error not attached to %.300s\n", url);
	if (p->suspended != on) {
		p->suspended = on;
		ct_daemon_save(d);
		ct_daemon_wake(d);
		ct_log_info("%s: %s by user", url, on ? "suspended" : "resumed");
	}
	return ct_buf_appends(reply, "ok\n");
}

static int ctl_project_suspend(struct ct_daemon *d, const char *url, struct ct_buf *reply)
{
	return project_suspend(d, url, 1, reply);
}

static int ctl_project_resume(struct ct_daemon *d, const char *url, struct ct_buf *reply)
{
	return project_suspend(d, url, 0, reply);
}

/* "prefs set KEY=VALUE...": into prefs.conf (cl_prefs.h's ct_prefs_edit),
 * then in force. Lock held. */
static int ctl_prefs_set(struct ct_daemon *d, const char *args, struct ct_buf *reply)
{
	struct ct_conf *ch = NULL;
	char *copy = strdup(args), *save = NULL;
	int rc = copy == NULL ? CT_ENOMEM : ct_conf_new(&ch);

	for (char *kv = rc == 0 ? strtok_r(copy, " ", &save) : NULL; kv != NULL && rc == 0;
	     kv = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(kv, '=');

		if (eq == NULL || eq == kv) {
			rc = ct_error(CT_EINVAL, "'%s' is not KEY=VALUE", kv);
			break;
		}
		*eq = '\0';
		rc = ct_conf_set(ch, kv, eq + 1);
	}
	if (rc == 0 && ct_conf_count(ch) == 0)
		rc = ct_error(CT_EINVAL, "usage: prefs set KEY=VALUE...");
	if (rc == 0) rc = ct_prefs_edit(d->prefs_path, ch);
	if (rc == 0) rc = ct_daemon_reload_prefs(d, "prefs set");
	ct_conf_free(ch);
	free(copy);
	return rc < 0 ? ct_buf_appendf(reply, "error %s\n", ct_errmsg(rc))
		      : ct_buf_appends(reply, "ok\n");
}

static int ctl_prefs_get(struct ct_daemon *d, const char *args, struct ct_buf *reply)
{
	(void)args;
	return ct_prefs_format(&d->prefs, reply);
}

static int ctl_prefs_reload(struct ct_daemon *d, const char *args, struct ct_buf *reply)
{
	int rc = ct_daemon_reload_prefs(d, "ctune prefs reload");

	(void)args;
	return rc < 0 ? ct_buf_appendf(reply, "error %s\n", ct_errmsg(rc))
		      : ct_buf_appends(reply, "ok\n");
}

static int ctl_status(struct ct_daemon *d, const char *args, struct ct_buf *reply)
{
	(void)args;
	return status_xml(d, reply);
}

static int ctl_suspend(struct ct_daemon *d, const char *args, struct ct_buf *reply)
{
	(void)args;
	d->user_suspended = 1;
	return ct_buf_appends(reply, "ok\n");
}

static int ctl_resume(struct ct_daemon *d, const char *args, struct ct_buf *reply)
{
	(void)args;
	d->user_suspended = 0;
	return ct_buf_appends(reply, "ok\n");
}

static int ctl_quit(struct ct_daemon *d, const char *args, struct ct_buf *reply)
{
	(void)args;
	d->stop = 1;
	ct_daemon_wake(d);
	return ct_buf_appends(reply, "ok\n");
}

/* "web": the control page's address */
static int ctl_web(struct ct_daemon *d, const char *args, struct ct_buf *reply)
{
	(void)args;
	if (d->web == NULL)
		return ct_buf_appends(reply, "error the control page is off ('ctune run --web' "
				      "or web = on in prefs.conf; see the daemon's log)\n");
	return ct_buf_appendf(reply, "%s\n", ct_web_url(d->web));
}

/* The control commands: a name, or a prefix whose rest is the argument. */
static const struct ctl_cmd {
	const char *name;
	int prefix;
	int (*fn)(struct ct_daemon *d, const char *args, struct ct_buf *reply);
} ctl_cmds[] = {
	{ .name = "status", .fn = ctl_status },
	{ .name = "suspend", .fn = ctl_suspend },
	{ .name = "resume", .fn = ctl_resume },
	{ .name = "prefs reload", .fn = ctl_prefs_reload },
	{ .name = "prefs get", .fn = ctl_prefs_get },
	{ .name = "prefs set ", .prefix = 1, .fn = ctl_prefs_set },
	{ .name = "quit", .fn = ctl_quit },
	{ .name = "attach ", .prefix = 1, .fn = ctl_attach },
	{ .name = "detach ", .prefix = 1, .fn = ctl_detach },
	{ .name = "project suspend ", .prefix = 1, .fn = ctl_project_suspend },
	{ .name = "project resume ", .prefix = 1, .fn = ctl_project_resume },
	{ .name = "web", .fn = ctl_web },
};

static int ctl_handler(const char *cmd, struct ct_buf *reply, void *arg)
{
	struct ct_daemon *d = arg;
	const struct ctl_cmd *c = NULL;
	size_t n = 0;
	int rc;

	for (size_t i = 0; i < sizeof(ctl_cmds) / sizeof(ctl_cmds[0]) && c == NULL; i++) {
		n = strlen(ctl_cmds[i].name);
		if (ctl_cmds[i].prefix ? strncmp(cmd, ctl_cmds[i].name, n) == 0
				       : strcmp(cmd, ctl_cmds[i].name) == 0)
			c = &ctl_cmds[i];
	}
	ct_daemon_lock(d);
	rc = c != NULL ? c->fn(d, c->prefix ? cmd + n : "", reply)
		       : ct_buf_appends(reply, "error unknown command\n");
	ct_daemon_unlock(d);
	return rc;
}

struct ctl_arg {
	struct ct_daemon *d;
	int fd;
};

static void *ctl_thread(void *varg)
{
	struct ctl_arg *a = varg;

	while (!a->d->stop) {
		if (got_signal) {
			ct_log_info("signal %d: stopping", (int)got_signal);
			a->d->stop = 1;
			break;
		}
		if (got_reload) {
			got_reload = 0;
			ct_daemon_lock(a->d);
			(void)ct_daemon_reload_prefs(a->d, "SIGHUP");
			ct_daemon_unlock(a->d);
		}
		if (a->d->o->exit_after > 0 &&
		    ct_clock_now(a->d->clk) - a->d->started >= a->d->o->exit_after) {
			ct_log_info("--exit-after reached: stopping");
			a->d->stop = 1;
			break;
		}
		if (ct_os_sock_wait(a->fd, 0, 200) > 0) {
			int rc = ct_ctl_serve_one(a->fd, ctl_handler, a->d);

			if (rc < 0 && rc != CT_EAGAIN)
				ct_log_debug("control socket: %s", ct_errmsg(rc));
		}
	}
	return NULL;
}

/* ---- start-up and shutdown ---- */

static int make_paths(struct ct_daemon *d)
{
	d->dir = strdup(d->o->dir);
	d->state_path = ct_cl_path(d->o->dir, CT_CL_STATE_FILE);
	d->cache_dir = ct_cl_path(d->o->dir, CT_CL_CACHE_DIR);
	d->slots_dir = ct_cl_path(d->o->dir, CT_CL_SLOTS_DIR);
	d->sock_path = ct_cl_path(d->o->dir, CT_CL_SOCKET_FILE);
	d->prefs_path = ct_cl_path(d->o->dir, CT_CL_PREFS_FILE);
	d->web_prefs_path = ct_cl_path(d->o->dir, CT_CL_WEB_PREFS_FILE);
	d->web_token_path = ct_cl_path(d->o->dir, CT_CL_WEB_TOKEN_FILE);
	if (!d->dir || !d->state_path || !d->cache_dir || !d->slots_dir || !d->sock_path ||
	    !d->prefs_path || !d->web_prefs_path || !d->web_token_path)
		return CT_ENOMEM;
	if (ct_mkdir_p(d->cache_dir, 0700) < 0 || ct_mkdir_p(d->slots_dir, 0700) < 0)
		return ct_error(CT_EIO, "cannot create %s/cache and slots", d->dir);
	return 0;
}

/* flock the lock file: one daemon per state directory. *fd stays open. */
static int take_lock(const char *dir, int *fd)
{
	int rc = ct_cl_lock_dir(dir, fd);

	if (rc == CT_EBUSY)
		return ct_error(CT_EBUSY, "another 'ctune run' uses %s", dir);
	return rc;
}

static int open_idle(struct ct_daemon *d)
{
	int rc;

	rc = ct_cpu_sampler_init(&d->cpu, NULL);
	if (rc < 0)
		return rc;
	if (d->o->idle_file != NULL)
		return ct_idle_open_file(&d->idle, d->o->idle_file);
	rc = ct_idle_open_default(&d->idle, d->clk);
	if (rc == 0 && strcmp(d->idle.name, "input") == 0 && ct_idle_input_devices(&d->idle) == 0)
		ct_log_info("idle source: none can see keyboard or mouse input (no logind, "
			    "no X display, no readable /dev/input keyboard or mouse): "
			    "counting as idle since boot");
	else if (rc == 0)
		ct_log_info("idle source: %s", d->idle.name);
	return rc;
}

static int describe_host(struct ct_daemon *d)
{
	struct ct_buf b = CT_BUF_INIT(1 << 16);
	int rc;

	ct_host_probe(&d->host, d->o->selftest);
	rc = ct_host_choose(&d->host, d->prefs.device);
	if (rc == CT_ENOTFOUND) {
		ct_log_warn("%s; computing on the CPU reference", ct_errmsg(rc));
		rc = ct_host_choose(&d->host, "cpu");
	}
	if (rc < 0)
		return rc;
	rc = ct_host_to_xml(&d->host, &b);
	if (rc == 0)
		d->host_xml = (char *)ct_buf_steal(&b, NULL);
	ct_buf_free(&b);
	ct_log_info("computing on %s (%s)", d->host.device,
		    d->host.device_conforming ? "conforming" : "not conforming");
	return rc;
}

static int start(struct ct_daemon *d, int *lock_fd, int *ctl_fd)
{
	int rc;

	rc = make_paths(d);
	if (rc == 0) rc = take_lock(d->dir, lock_fd);
	if (rc == 0) rc = ct_prefs_build(&d->prefs, d->web_prefs_path, d->prefs_path,
					 d->o->cli_prefs);
	if (rc == 0) rc = ct_state_load(d->state_path, &d->st);
	if (rc == 0) rc = ct_state_save(d->st);	/* writable? fail now, not later */
	if (rc == 0) rc = open_idle(d);
	if (rc == 0) rc = describe_host(d);
	if (rc == 0) rc = ct_ctl_listen(d->sock_path, ctl_fd);
	return rc;
}

/* Tasks that were mid-upload or mid-run when the last daemon died simply
 * continue: RUNNING resumes from its checkpoint, UPLOADING uploads again
 * (the server accepts identical bytes twice), DONE is reported again if
 * the ack was lost (the server answers DUP, which counts as accepted). */
static void recover(struct ct_daemon *d)
{
	for (size_t i = 0; i < d->st->nprojects; i++) {
		struct ct_project *p = &d->st->projects[i];

		for (size_t j = 0; j < p->ntasks; j++)
			p->tasks[j].next_try = 0;
		ct_daemon_forget_reported(d, p);
		ct_log_info("%s: %zu task(s), host id %ld", p->url, p->ntasks, p->hostid);
	}
}

static void shutdown_threads(struct ct_daemon *d, pthread_t ctl, int have_ctl)
{
	double t0 = ct_clock_mono(&ct_clock_system);

	d->stop = 1;
	ct_daemon_lock(d);
	ct_daemon_wake(d);
	while (d->nthreads > 0 && ct_clock_mono(&ct_clock_system) - t0 < 30)
		ct_daemon_wait(d, 0.2);
	ct_daemon_save(d);
	ct_daemon_unlock(d);
	if (have_ctl)
		pthread_join(ctl, NULL);
}

static void cleanup(struct ct_daemon *d)
{
	ct_state_free(d->st);
	ct_idle_close(&d->idle);
	ct_cpu_sampler_free(&d->cpu);
	ct_host_free(&d->host);
	free(d->host_xml);
	free(d->dir);
	free(d->state_path);
	free(d->cache_dir);
	free(d->slots_dir);
	free(d->sock_path);
	free(d->prefs_path);
	free(d->web_prefs_path);
	free(d->web_token_path);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->wake);
}

/* The control page when the preferences ask for it; a port in use is
 * logged, not fatal: the daemon computes without its page. */
static void start_web(struct ct_daemon *d)
{
	struct ct_web_conf c = {
		.port = d->prefs.web_port, .token_path = d->web_token_path,
		.ctl = ctl_handler, .ctl_arg = d, .cli_prefs = d->o->cli_prefs,
		.cpid = d->st->cpid,
	};
	int rc;

	if (!d->prefs.web)
		return;
	rc = ct_web_start(&c, &d->web);
	if (rc < 0)
		ct_log_error("control page not served: %s", ct_errmsg(rc));
	else
		ct_log_info("control page: %s", ct_web_url(d->web));
}

static void init_sync(struct ct_daemon *d)
{
	pthread_mutex_init(&d->lock, NULL);
	ct_os_cond_init(&d->wake);
}

int ct_daemon_run(const struct ct_daemon_opts *o)
{
	struct ct_daemon d;
	struct ctl_arg ca;
	pthread_t ctl;
	int rc, lock_fd = -1, ctl_fd = -1, have_ctl = 0;

	memset(&d, 0, sizeof(d));
	d.o = o;
	d.clk = o->clk ? o->clk : &ct_clock_system;
	ct_prefs_default(&d.prefs);
	init_sync(&d);
	ct_backoff_init(&d.backoff, o->backoff_base, o->backoff_cap, 0);
	ct_os_on_stop(on_signal);
	ct_os_on_reload(on_reload);
	ct_os_no_sigpipe();
	ct_http_init();
	rc = start(&d, &lock_fd, &ctl_fd);
	if (rc < 0) goto out;
	d.started = ct_clock_now(d.clk);
	ct_log_info("ctune %s running in %s (pid %ld)", PACKAGE_VERSION, d.dir, (long)getpid());
	ct_daemon_lock(&d);
	recover(&d);
	for (size_t i = 0; i < d.st->nprojects && rc == 0; i++)
		rc = ct_daemon_start_project(&d, d.st->projects[i].url);
	ct_daemon_unlock(&d);
	if (rc == 0)
		start_web(&d);
	ca.d = &d;
	ca.fd = ctl_fd;
	if (rc == 0 && pthread_create(&ctl, NULL, ctl_thread, &ca) == 0)
		have_ctl = 1;
	if (rc == 0)
		ct_compute_loop(&d);
	shutdown_threads(&d, ctl, have_ctl);
	ct_web_stop(d.web);
	d.web = NULL;
	ct_log_info("stopped");
out:
	if (ctl_fd >= 0) {
		ct_os_sock_close(ctl_fd);
		ct_os_local_remove(d.sock_path);
	}
	if (lock_fd >= 0)
		close(lock_fd);
	cleanup(&d);
	return rc;
}
