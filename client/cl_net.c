/*
 * cl_net.c - a project's network thread: downloads, uploads, scheduler RPC.
 *
 * Each pass picks one thing to do, copies what it needs out of the state,
 * drops the lock for the network I/O, then takes the lock again, finds the
 * task again by name (it may have been aborted meanwhile) and records the
 * outcome, saving the state before anything else relies on it.
 */
#include "cl_daemon_int.h"
#include "cl_buffer.h"
#include "cl_cache.h"
#include "cl_disk.h"
#include "cl_http.h"
#include "cl_jail.h"
#include "cl_paths.h"
#include "cl_rpc.h"
#include "ct_err.h"
#include "ct_os.h"
#include "ct_file.h"
#include "ct_log.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#define MAX_TRANSFER_FAILURES 8	/* then the task is reported as failed */
#define RPC_REFRESH_S 3600.0	/* an RPC at least this often (credit) */

static struct ct_project *project(struct ct_daemon *d, const char *url)
{
	return ct_state_find_project(d->st, url);
}

static struct ct_task *task_in(struct ct_daemon *d, const char *url, const char *name)
{
	struct ct_project *p = project(d, url);

	return p ? ct_project_find_task(p, name) : NULL;
}

static void fail_task(struct ct_task *t, int rc, const char *what)
{
	ct_log_error("%s: %s failed for good: %s", t->name, what, ct_errmsg(rc));
	t->state = CT_TASK_DONE;
	t->outcome = rc;
	ct_strset(&t->error, ct_errmsg(rc));
}

/* The first task of p in state whose retry time has come, or NULL; its
 * name is copied into name[size] (the task may go while unlocked). */
static struct ct_task *next_due(struct ct_daemon *d, struct ct_project *p,
				enum ct_task_state state, char *name, size_t size)
{
	double now = ct_clock_now(d->clk);

	for (size_t i = 0; i < p->ntasks; i++)
		if (p->tasks[i].state == state && p->tasks[i].next_try <= now) {
			snprintf(name, size, "%s", p->tasks[i].name);
			return &p->tasks[i];
		}
	return NULL;
}

/* After a failed transfer of t: back off, or give up. */
static void transfer_failed(struct ct_daemon *d, struct ct_task *t, int rc, const char *what,
			    int fatal)
{
	double delay;

	t->nfailures++;
	if (fatal || t->nfailures >= MAX_TRANSFER_FAILURES) {
		fail_task(t, rc, what);
		return;
	}
	delay = ct_backoff_delay(&d->backoff, t->nfailures);
	t->next_try = ct_clock_now(d->clk) + delay;
	ct_log_warn("%s: %s failed (%s); retry in %.1f s", t->name, what, ct_errmsg(rc), delay);
}

/* ---- downloads ---- */

/* Bytes of a file that the cache holds: all of its announced size when it
 * is there, what a partial download has fetched, or 0. */
static uint64_t bytes_cached(const struct ct_daemon *d, const struct ct_task_file *f)
{
	char part[CT_SHA256_HEXLEN + 8], *path = NULL;
	uint64_t have = 0;
	struct stat st;

	snprintf(part, sizeof(part), "%s.part", f->sha256);
	if (ct_jail_join(d->dir, d->cache_dir, f->sha256, &path) == 0 && stat(path, &st) == 0 &&
	    (uint64_t)st.st_size == f->size)
		have = f->size;
	free(path);
	path = NULL;
	if (have == 0 && ct_jail_join(d->dir, d->cache_dir, part, &path) == 0 &&
	    stat(path, &st) == 0 && (uint64_t)st.st_size <= f->size)
		have = (uint64_t)st.st_size;
	free(path);
	return have;
}

/* Whether the inputs files[0..n) fit the volunteer's disk limits
 * (cl_disk.h) once fetched; *never says they never will. */
static int inputs_fit(const struct ct_daemon *d, const struct ct_task_file *files, size_t n,
		      int *never)
{
	uint64_t need = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t more = files[i].size - bytes_cached(d, &files[i]);

		need = more > UINT64_MAX - need ? UINT64_MAX : need + more;
	}
	return ct_disk_check(d->dir, need, d->prefs.disk_max_gb, d->prefs.disk_min_free_gb,
			     never);
}

static int do_download(struct ct_daemon *d, const char *url)
{
	struct ct_project *p = project(d, url);
	struct ct_task_file *files = NULL;
	struct ct_task *t = NULL;
	struct ct_http_opts o = { .cancel = &d->stop };
	char name[128], *ca = NULL;
	size_t n = 0;
	int rc = 0, hash_bad = 0, never = 0;

	t = next_due(d, p, CT_TASK_DOWNLOADING, name, sizeof(name));
	if (t == NULL)
		return 0;
	files = calloc(t->nfiles ? t->nfiles : 1, sizeof(*files));
	if (files == NULL)
		return 0;
	for (n = 0; n < t->nfiles; n++) {
		files[n] = t->files[n];
		files[n].url = strdup(t->files[n].url ? t->files[n].url : "");
		files[n].name = strdup(t->files[n].name ? t->files[n].name : "?");
	}
	ca = p->ca_file ? strdup(p->ca_file) : NULL;
	o.ca_file = ca;
	ct_daemon_unlock(d);
	rc = inputs_fit(d, files, n, &never);
	for (size_t i = 0; i < n && rc == 0 && !d->stop; i++) {
		char cached[4200];

		/* by hash across tasks and rounds: say which are fetched */
		if (ct_path_join(cached, sizeof(cached), d->cache_dir, files[i].sha256) == 0 &&
		    access(cached, F_OK) == 0)
			ct_log_info("%s: %s in the cache (%llu bytes)", name, files[i].name,
				    (unsigned long long)files[i].size);
		else
			ct_log_info("%s: downloading %s (%llu bytes)", name, files[i].name,
				    (unsigned long long)files[i].size);
		rc = ct_http_fetch_cached(files[i].url, d->cache_dir, files[i].sha256,
					  files[i].size, &o);
		hash_bad |= rc == CT_EHASH || rc == CT_ETOOBIG;
	}
	ct_task_files_free(files, n);
	free(ca);
	ct_daemon_lock(d);
	t = task_in(d, url, name);
	if (t == NULL || t->state != CT_TASK_DOWNLOADING || d->stop)
		return 1;
	if (rc == 0) {
		for (size_t i = 0; i < t->nfiles; i++)	/* used now: LRU order */
			ct_cache_touch(d->cache_dir, t->files[i].sha256);
		t->state = CT_TASK_READY;
		t->nfailures = 0;
		ct_log_info("%s: inputs verified, ready", name);
	} else {
		/* a file that never matches its hash is the server's fault */
		transfer_failed(d, t, rc, "download", never || (hash_bad && t->nfailures >= 2));
	}
	ct_daemon_save(d);
	return 1;
}

/* ---- uploads ---- */

/* Whether an HTTP status of an upload is final (retrying cannot help). */
static int upload_fatal(long status)
{
	return status == 400 || status == 401 || status == 403 || status == 404 ||
	       status == 409 || status == 410 || status == 413;
}

/* The X-Upload-MAC header of result name's upload (doc/protocol.md) into
 * *out (NULL when out of memory). Returns 0, or CT_EINVAL when the project
 * gave no host secret yet: a retry after the next RPC, which asks for it. */
static int upload_mac_header(const struct ct_project *p, const char *name,
			     const char *sha, char **out)
{
	char mac[65];
	int rc;

	*out = NULL;
	rc = ct_rpc_upload_mac(p->host_secret, name, sha, mac);
	if (rc < 0)
		return rc;
	if (asprintf(out, "X-Upload-MAC: %s", mac) < 0)
		*out = NULL;
	return 0;
}

static int do_upload(struct ct_daemon *d, const char *url)
{
	struct ct_project *p = project(d, url);
	struct ct_buf reply = CT_BUF_INIT(1 << 16);
	struct ct_task *t = NULL;
	char name[128], *uurl = NULL, *tok = NULL, *shah = NULL, *slot = NULL, *file = NULL;
	char *ca = NULL, *mach = NULL;
	const char *hdrs[4];
	long status = 0;
	int rc, jrc, mrc;

	t = next_due(d, p, CT_TASK_UPLOADING, name, sizeof(name));
	if (t == NULL)
		return 0;
	jrc = ct_daemon_slot(d, name, &slot);
	if (asprintf(&tok, "X-Upload-Token: %s", t->upload_token ? t->upload_token : "") < 0)
		tok = NULL;
	if (asprintf(&shah, "X-Content-SHA256: %s", t->output_sha256) < 0)
		shah = NULL;
	mrc = upload_mac_header(p, name, t->output_sha256, &mach);
	file = slot != NULL ? ct_cl_path(slot, CT_CL_SLOT_RESULT) : NULL;
	uurl = t->upload_url ? strdup(t->upload_url) : NULL;
	ca = p->ca_file ? strdup(p->ca_file) : NULL;
	ct_daemon_unlock(d);
	if (jrc < 0) {
		rc = jrc;
	} else if (mrc < 0) {
		rc = mrc;
	} else if (tok == NULL || shah == NULL || mach == NULL || file == NULL || uurl == NULL) {
		rc = CT_ENOMEM;
	} else {
		struct ct_http_opts o = { .headers = hdrs, .cancel = &d->stop, .ca_file = ca };

		hdrs[0] = tok;
		hdrs[1] = shah;
		hdrs[2] = mach;
		hdrs[3] = NULL;
		ct_log_info("%s: uploading", name);
		rc = ct_http_upload(uurl, file, &o, &reply, &status);
	}
	ct_daemon_lock(d);
	t = task_in(d, url, name);
	if (t != NULL && t->state == CT_TASK_UPLOADING && !d->stop) {
		if (rc == 0) {
			t->state = CT_TASK_DONE;
			t->nfailures = 0;
			d->st->totals.results_done++;
			ct_log_info("%s: uploaded %llu bytes", name,
				    (unsigned long long)t->output_size);
		} else {
			if (rc == CT_EHTTP)
				ct_log_warn("%s: upload refused: %.300s", name, ct_buf_cstr(&reply));
			transfer_failed(d, t, rc, "upload",
					jrc < 0 || (rc == CT_EHTTP && upload_fatal(status)));
		}
		ct_daemon_save(d);
		ct_daemon_wake(d);
	}
	free(tok);
	free(shah);
	free(mach);
	free(file);
	free(slot);
	free(uurl);
	free(ca);
	ct_buf_free(&reply);
	return 1;
}

/* ---- scheduler RPC ---- */

/* 1 if now (local time) is outside the run_hours window. */
static int outside_run_hours(const struct ct_daemon *d)
{
	time_t now = (time_t)ct_clock_now(d->clk);
	struct ct_run_env e = { .idle_seconds = 1e9, .device_is_gpu = 1 };
	struct ct_prefs p = d->prefs;
	struct tm tm;

	localtime_r(&now, &tm);
	e.minute_of_day = tm.tm_hour * 60 + tm.tm_min;
	/* the window alone: the other reasons pass for a moment */
	p.gpu_only = 0;
	p.run_on_battery = 1;
	p.suspend_cpu_percent = 0;
	return ct_prefs_decide(&p, &e) == CT_SUSPEND_TIME_OF_DAY;
}

/* How many results to ask for (0: none needed): the work buffer
 * (cl_buffer.h) on the host's measured speed. */
static int work_wanted(struct ct_daemon *d, const struct ct_project *p)
{
	double tokens, wu_tokens = 0;
	int ntasks;

	if ((d->prefs.gpu_only && !d->host.device_is_gpu) || p->suspended)
		return 0;	/* could not compute it anyway, or not now */
	/* a task fetched now would wait, holding up its WU's other replica */
	if (outside_run_hours(d) || d->user_suspended) {
		if (!d->no_work_logged)
			ct_log_info("%s: asking for no work: %s", p->url, d->user_suspended ?
				    "suspended by user" : "outside run hours");
		d->no_work_logged = 1;
		return 0;
	}
	d->no_work_logged = 0;
	ct_buffer_queued(p, &ntasks, &tokens);
	for (size_t i = 0; i < p->ntasks; i++) {
		double w = ct_buffer_task_tokens(&p->tasks[i]);

		if (w > 0 && p->tasks[i].state != CT_TASK_RUNNING)
			wu_tokens = w;	/* a whole WU of this project */
	}
	if (wu_tokens == 0)
		wu_tokens = d->wu_tokens;
	/* measured per step of computing; max_cpu_percent stretches wall time */
	return ct_buffer_want(&d->prefs, ntasks, tokens,
			      d->sec_per_token * 100.0 / d->prefs.max_cpu_percent, wu_tokens);
}

/* Whether to call the scheduler now. request_delay is honoured, except
 * that it never keeps a client waiting that has a finished result to
 * report or needs work, unless the server's last answer to a request for
 * work was "none" (then polling faster would only load the server). */
static int rpc_due(struct ct_daemon *d, const struct ct_project *p, int *want)
{
	double now = ct_clock_now(d->clk);
	int report = 0;

	if (now < p->next_rpc)
		return 0;
	for (size_t i = 0; i < p->ntasks; i++)
		report |= p->tasks[i].state == CT_TASK_DONE;
	*want = work_wanted(d, p);
	if (now < p->request_delay_until &&
	    !(report || (*want > 0 && !p->no_work_until_set)))
		return 0;
	/* refused results (cl_rpc.h) are reported, but not before request_delay:
	 * a server that keeps sending them is not asked faster */
	return report || *want > 0 || p->nrefused > 0 || now - p->last_rpc >= RPC_REFRESH_S;
}

static void rpc_failed(struct ct_daemon *d, struct ct_project *p, int rc, double delay_min)
{
	double delay;

	p->nfailures++;
	delay = ct_backoff_delay(&d->backoff, p->nfailures);
	if (delay < delay_min)
		delay = delay_min;
	p->next_rpc = ct_clock_now(d->clk) + delay;
	ct_log_warn("%s: scheduler RPC failed (%s); retry in %.3f s", p->url, ct_errmsg(rc), delay);
}

static void rpc_apply(struct ct_daemon *d, struct ct_project *p, const struct ct_sched_reply *r,
		      int wanted)
{
	int nnew = 0, nrep = 0, rc;
	double now = ct_clock_now(d->clk);

	for (size_t i = 0; i < r->nacks; i++) {
		struct ct_task *t = ct_project_find_task(p, r->acks[i].name);

		nrep += t != NULL && t->state == CT_TASK_DONE;
	}
	rc = ct_rpc_apply_reply(p, r, now, &nnew);
	if (r->web_prefs != NULL)	/* the account's, from the project's web site */
		ct_daemon_web_prefs(d, r->web_prefs, r->web_prefs_time);
	if (rc < 0)
		ct_log_error("%s: applying the reply: %s", p->url, ct_errmsg(rc));
	/* asked for work and got none: wait request_delay before asking again */
	p->no_work_until_set = wanted > 0 && nnew == 0;
	d->st->totals.results_reported += nrep;
	p->nfailures = 0;
	p->next_rpc = 0;
	p->last_rpc = now;
	ct_daemon_forget_reported(d, p);
	ct_log(nrep > 0 || nnew > 0 ? CT_LOG_INFO : CT_LOG_DEBUG,
	       "%s: scheduler RPC ok: %d reported, %d new task%s, credit %.2f", p->url,
	       nrep, nnew, nnew == 1 ? "" : "s", p->credit);
}

/* Send the request in req to url's scheduler; parse into r. */
static int rpc_exchange(struct ct_daemon *d, const char *url, const char *ca,
			const struct ct_buf *req, struct ct_sched_reply *r)
{
	struct ct_buf reply = CT_BUF_INIT(CT_RPC_MAX_REPLY);
	struct ct_http_opts o = { .timeout_s = 120, .cancel = &d->stop, .ca_file = ca };
	char *rpc_url = NULL;
	long status;
	int rc;

	memset(r, 0, sizeof(*r));
	if (asprintf(&rpc_url, "%s/rpc/scheduler", url) < 0)
		return CT_ENOMEM;
	rc = ct_http_post(rpc_url, "application/xml", req->data, req->len, 1, &o, &reply,
			  &status);
	/* refusals come as XML with an <error> even with a 4xx/5xx status */
	if (rc == 0 || (rc == CT_EHTTP && reply.len > 0)) {
		int prc = ct_rpc_parse_reply(reply.data, reply.len, r);

		if (rc == 0 || (prc == 0 && r->error_code != NULL))
			rc = prc;
	}
	free(rpc_url);
	ct_buf_free(&reply);
	return rc;
}

static int do_rpc(struct ct_daemon *d, const char *url)
{
	struct ct_project *p = project(d, url);
	struct ct_buf req = CT_BUF_INIT(CT_RPC_MAX_REPLY);
	struct ct_sched_reply r;
	size_t nrefused;
	char *ca;
	int want = 0, rc;

	if (!rpc_due(d, p, &want))
		return 0;
	rc = ct_rpc_build_request(d->st, p, d->host_xml, want, &req);
	if (rc < 0) {
		ct_log_error("%s: cannot build the request: %s", url, ct_errmsg(rc));
		p->next_rpc = ct_clock_now(d->clk) + 60;
		ct_buf_free(&req);
		return 1;
	}
	nrefused = p->nrefused;	/* in this request: reported once */
	ca = p->ca_file ? strdup(p->ca_file) : NULL;
	ct_daemon_unlock(d);
	ct_log_debug("%s: scheduler RPC, asking for %d", url, want);
	rc = rpc_exchange(d, url, ca, &req, &r);
	free(ca);
	ct_daemon_lock(d);
	p = project(d, url);
	if (p == NULL || d->stop)
		goto out;
	ct_rpc_forget_refused(p, nrefused);
	if (rc == CT_EPROTO) {	/* cl_jail.h: a name that would leave our directory, ... */
		ct_log_error("%s: scheduler reply refused, nothing in it applied: %s", url,
			     ct_errmsg(rc));
		rpc_failed(d, p, rc, 0);
	} else if (rc < 0) {
		rpc_failed(d, p, rc, 0);
	} else if (r.error_code != NULL) {
		ct_log_error("%s: the server refused the request: %s: %s", url, r.error_code,
			     r.error_message ? r.error_message : "");
		rpc_failed(d, p, CT_EDENIED, r.request_delay);
	} else {
		rpc_apply(d, p, &r, want);
	}
	ct_daemon_save(d);
	ct_daemon_wake(d);
out:
	ct_sched_reply_free(&r);
	ct_buf_free(&req);
	return 1;
}

void *ct_net_thread(void *varg)
{
	struct ct_net_arg *a = varg;
	struct ct_daemon *d = a->d;

	ct_daemon_lock(d);
	while (!d->stop && project(d, a->url) != NULL) {
		if (do_download(d, a->url) || d->stop || project(d, a->url) == NULL)
			continue;
		if (do_upload(d, a->url) || d->stop || project(d, a->url) == NULL)
			continue;
		if (do_rpc(d, a->url))
			continue;
		ct_daemon_wait(d, 0.5);
	}
	d->nthreads--;
	ct_daemon_wake(d);
	ct_daemon_unlock(d);
	free(a->url);
	free(a);
	return NULL;
}
