/*
 * cl_compute.c - the daemon's compute loop: decide, pick a task, run its WU
 * step by step, checkpoint, suspend, finish.
 *
 * The engine state is checkpointed (atomically) every checkpoint_seconds of
 * computing, on every suspend and at exit; the client state records the
 * checkpoint after it exists. The WU's files are read under the lock (the
 * task entry may move when the network thread adds tasks); the steps run
 * without it.
 */
#include "cl_daemon_int.h"
#include "cl_paths.h"
#include "cl_task.h"
#include "ct_err.h"
#include "ct_os.h"
#include "ct_file.h"
#include "ct_log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_STEP_FAILURES 3

struct running {
	struct ct_task_run run;
	char url[1024];
	char name[128];
	char *slot;
	double last_ckpt;		/* monotonic time of the last checkpoint */
	double ckpt_every;		/* seconds between checkpoints (prefs) */
	double tok_per_step;
};

static struct ct_task *cur_task(struct ct_daemon *d, const struct running *r)
{
	struct ct_project *p = ct_state_find_project(d->st, r->url);

	return p ? ct_project_find_task(p, r->name) : NULL;
}

/* The run decision from prefs, idle source, battery and clock (no lock). */
static enum ct_suspend_reason decide(struct ct_daemon *d, double *idle)
{
	struct ct_run_env e = { 0 };
	struct ct_prefs prefs;
	time_t now = (time_t)ct_clock_now(d->clk);
	struct tm tm;
	int rc;

	/* a reload (web, SIGHUP) writes them under the lock */
	ct_daemon_lock(d);
	prefs = d->prefs;
	ct_daemon_unlock(d);
	if (prefs.always) {
		e.idle_seconds = 1e9;
	} else {
		rc = ct_idle_get(&d->idle, &e.idle_seconds);
		if (rc < 0) {
			/* not knowing is not idle: never compute over a user */
			ct_log_debug("idle source %s: %s", d->idle.name, ct_errmsg(rc));
			e.idle_seconds = 0;
		}
	}
	*idle = e.idle_seconds;
	e.on_battery = prefs.run_on_battery ? 0 : ct_prefs_on_battery(NULL);
	localtime_r(&now, &tm);
	e.minute_of_day = tm.tm_hour * 60 + tm.tm_min;
	e.device_is_gpu = d->host.device_is_gpu;
	if (prefs.suspend_cpu_percent > 0 && ct_clock_mono(d->clk) - d->cpu_sampled >= 2.0) {
		/* over >= 2 s: shorter samples are mostly tick noise */
		(void)ct_cpu_other_percent(&d->cpu, &d->cpu_other);
		d->cpu_sampled = ct_clock_mono(d->clk);
	}
	e.other_cpu_percent = d->cpu_other;
	return ct_prefs_decide(&prefs, &e);
}

/* Save the engine state and record it (lock not held on entry). */
static int checkpoint(struct ct_daemon *d, struct running *r)
{
	int rc = ct_task_checkpoint(&r->run, r->slot);
	struct ct_task *t;

	ct_daemon_lock(d);
	t = cur_task(d, r);
	if (rc < 0) {
		ct_log_error("%s: checkpoint failed: %s", r->name, ct_errmsg(rc));
	} else if (t != NULL) {
		ct_strset(&t->checkpoint, CT_CL_SLOT_STATE);
		t->step = ct_wu_steps_done(r->run.wu);
		ct_daemon_save(d);
	}
	ct_daemon_unlock(d);
	r->last_ckpt = ct_clock_mono(d->clk);
	return rc;
}

static void close_running(struct ct_daemon *d, struct running *r)
{
	ct_task_close(&r->run);
	free(r->slot);
	r->slot = NULL;
	ct_daemon_lock(d);
	d->running_task[0] = d->running_project[0] = '\0';
	d->tokens_per_s = 0;
	ct_daemon_unlock(d);
	r->name[0] = '\0';
}

/* Task failed for good: report the error (lock held). */
static void task_error(struct ct_daemon *d, struct ct_task *t, int rc)
{
	ct_log_error("%s: %s", t->name, ct_errmsg(rc));
	t->state = CT_TASK_DONE;
	t->outcome = rc;
	ct_strset(&t->error, ct_errmsg(rc));
	ct_daemon_save(d);
	ct_daemon_wake(d);
}

/* Choose the next task: one already RUNNING, else the READY one with the
 * earliest deadline, of a project that is not suspended. Lock held. */
static struct ct_task *pick(struct ct_daemon *d, struct ct_project **owner)
{
	struct ct_task *best = NULL;

	for (size_t i = 0; i < d->st->nprojects; i++) {
		struct ct_project *p = &d->st->projects[i];

		for (size_t j = 0; j < p->ntasks && !p->suspended; j++) {
			struct ct_task *t = &p->tasks[j];

			if (t->state != CT_TASK_RUNNING && t->state != CT_TASK_READY)
				continue;
			if (best == NULL ||
			    (t->state == CT_TASK_RUNNING && best->state != CT_TASK_RUNNING) ||
			    (t->state == best->state && t->deadline < best->deadline)) {
				best = t;
				*owner = p;
			}
		}
	}
	return best;
}

/* Open the next task's WU into r. Returns 1 if one is running now. */
static int start_task(struct ct_daemon *d, struct running *r)
{
	struct ct_project *p = NULL;
	struct ct_task *t;
	double state;
	int rc;

	ct_daemon_lock(d);
	t = pick(d, &p);
	if (t == NULL) {
		ct_daemon_unlock(d);
		return 0;
	}
	snprintf(r->url, sizeof(r->url), "%s", p->url);
	snprintf(r->name, sizeof(r->name), "%s", t->name);
	rc = ct_daemon_slot(d, t->name, &r->slot);
	if (rc == 0)
		rc = ct_mkdir_p(r->slot, 0700);
	if (rc == 0)
		rc = ct_task_open(&r->run, t, d->cache_dir, r->slot, d->host.device);
	if (rc == CT_ENOENT) {
		/* an input vanished from the cache: fetch it again */
		ct_log_warn("%s: %s; downloading the inputs again", t->name, ct_errmsg(rc));
		t->state = CT_TASK_DOWNLOADING;
		ct_daemon_save(d);
		ct_daemon_wake(d);
	} else if (rc < 0) {
		task_error(d, t, rc);
	}
	if (rc < 0) {
		ct_daemon_unlock(d);
		free(r->slot);
		r->slot = NULL;
		return 0;
	}
	ct_log_info("%s: %s on %s at step %d of %d", t->name,
		    r->run.resumed ? "resuming" : "starting", d->host.device,
		    ct_wu_steps_done(r->run.wu), r->run.hp.steps);
	if (!ct_task_chain_trim(&r->run, &t->chain) && r->run.chain_every > 0 && r->run.resumed)
		ct_log_warn("%s: the hash chain before step %d is lost; the result goes "
			    "without one", t->name, ct_wu_steps_done(r->run.wu));
	t->state = CT_TASK_RUNNING;
	t->steps = r->run.hp.steps;
	t->conforming = d->host.device_conforming;
	ct_strset(&t->device, d->host.device);
	snprintf(d->running_project, sizeof(d->running_project), "%s", r->url);
	snprintf(d->running_task, sizeof(d->running_task), "%s", r->name);
	d->nlosses = 0;
	r->tok_per_step = ct_task_tokens_per_step(&r->run);
	d->wu_tokens = r->tok_per_step * r->run.hp.steps;	/* for the work buffer */
	state = ct_wu_state_bytes(r->run.wu);
	r->ckpt_every = ct_prefs_checkpoint_interval(&d->prefs, state);
	if (r->ckpt_every > d->prefs.checkpoint_seconds)
		ct_log_info("%s: checkpoints every %.0f s (a %.0f MiB state, at most %ld MiB "
			    "an hour)", t->name, r->ckpt_every, state / 1048576.0,
			    d->prefs.checkpoint_mb_per_hour);
	ct_daemon_save(d);
	ct_daemon_unlock(d);
	r->last_ckpt = ct_clock_mono(d->clk);
	return 1;
}

/* The WU is complete: write the upload file, hand the task to the network. */
static void finish_task(struct ct_daemon *d, struct running *r)
{
	char sha[CT_SHA256_HEXLEN + 1];
	uint64_t size = 0, max;
	struct ct_task *t;
	int rc;

	ct_daemon_lock(d);
	t = cur_task(d, r);
	max = t ? t->upload_max : 0;
	ct_daemon_unlock(d);
	rc = ct_task_write_result(&r->run, r->slot, max, sha, &size);
	ct_daemon_lock(d);
	t = cur_task(d, r);
	if (t != NULL && t->state == CT_TASK_RUNNING) {
		if (rc < 0) {
			task_error(d, t, rc);
		} else {
			memcpy(t->output_sha256, sha, sizeof(sha));
			t->output_size = size;
			t->progress = 1;
			t->state = CT_TASK_UPLOADING;
			t->nfailures = 0;
			t->next_try = 0;
			ct_log_info("%s: done, final loss %.6f, result %s (%llu bytes)", t->name,
				    t->last_loss, sha, (unsigned long long)size);
			ct_daemon_save(d);
			ct_daemon_wake(d);
		}
	}
	ct_daemon_unlock(d);
	close_running(d, r);
}

/* Record one step and its chain link, if any (lock not held). Returns
 * 0, or 1 if the task is gone. */
static int record_step(struct ct_daemon *d, struct running *r, float loss, double dt,
		       const char *link)
{
	struct ct_task *t;
	int gone = 0;

	ct_daemon_lock(d);
	t = cur_task(d, r);
	if (t == NULL || t->state != CT_TASK_RUNNING) {
		ct_log_info("%s: aborted; dropping its work", r->name);
		gone = 1;
	} else {
		/* links are recorded from the first: a lost one (trim) stays lost */
		if (link[0] != '\0' && (t->chain != NULL ||
					 ct_wu_steps_done(r->run.wu) <= r->run.chain_every) &&
		    ct_task_chain_append(&t->chain, link) < 0) {
			free(t->chain);
			t->chain = NULL;
		}
		t->live_step = ct_wu_steps_done(r->run.wu);
		t->progress = t->steps > 0 ? (double)t->live_step / t->steps : 0;
		t->last_loss = loss;
		t->elapsed += dt;
		d->st->totals.seconds += dt;
		d->st->totals.tokens += r->tok_per_step;
		if (dt > 0 && r->tok_per_step > 0)	/* the work buffer's speed */
			d->sec_per_token = d->sec_per_token > 0
				? 0.8 * d->sec_per_token + 0.2 * dt / r->tok_per_step
				: dt / r->tok_per_step;
		if (dt > 0)
			d->tokens_per_s = d->tokens_per_s > 0
				? 0.7 * d->tokens_per_s + 0.3 * r->tok_per_step / dt
				: r->tok_per_step / dt;
		if (d->nlosses == CT_LOSS_HISTORY) {
			memmove(d->losses, d->losses + 1, (CT_LOSS_HISTORY - 1) * sizeof(float));
			d->nlosses--;
		}
		d->losses[d->nlosses++] = loss;
	}
	ct_daemon_unlock(d);
	return gone;
}

/* One step of the running WU. */
static void step(struct ct_daemon *d, struct running *r)
{
	double t0 = ct_clock_mono(d->clk), dt, pause;
	char link[65];
	float loss;
	int rc;

	rc = ct_wu_step(r->run.wu, &loss);
	if (rc == 0)
		rc = ct_task_chain_link(&r->run, link);
	dt = ct_clock_mono(d->clk) - t0;
	if (rc < 0) {
		struct ct_task *t;

		ct_log_error("%s: step failed: %s", r->name, ct_errmsg(rc));
		ct_daemon_lock(d);
		t = cur_task(d, r);
		if (t != NULL && ++t->nfailures >= MAX_STEP_FAILURES)
			task_error(d, t, rc);
		ct_daemon_unlock(d);
		close_running(d, r);	/* resumes from the checkpoint */
		return;
	}
	if (record_step(d, r, loss, dt, link)) {
		close_running(d, r);
		return;
	}
	if (ct_task_done(&r->run)) {
		finish_task(d, r);
		return;
	}
	if (ct_clock_mono(d->clk) - r->last_ckpt >= r->ckpt_every)
		checkpoint(d, r);
	ct_daemon_lock(d);
	pause = ct_prefs_throttle_sleep(&d->prefs, dt);
	ct_daemon_unlock(d);
	if (pause > 0)
		ct_clock_sleep(d->clk, pause);
}

/* Whether the running task's project was suspended by the user (or is
 * gone: then record_step drops the task). */
static int project_suspended(struct ct_daemon *d, const struct running *r)
{
	const struct ct_project *p;
	int on;

	ct_daemon_lock(d);
	p = ct_state_find_project(d->st, r->url);
	on = p != NULL && p->suspended;
	ct_daemon_unlock(d);
	return on;
}

static void suspend(struct ct_daemon *d, struct running *r, enum ct_suspend_reason why)
{
	ct_log_info("%s: suspending (%s) at step %d", r->name, ct_suspend_reason_str(why),
		    ct_wu_steps_done(r->run.wu));
	checkpoint(d, r);
	close_running(d, r);
}

/* The decision, re-evaluated at most every DECIDE_EVERY seconds while a WU
 * runs (reading the idle source and /sys for every step of a tiny model
 * would cost more than the step), at every pass otherwise. */
#define DECIDE_EVERY 0.5

void ct_compute_loop(struct ct_daemon *d)
{
	struct running r;
	enum ct_suspend_reason why = CT_RUN_OK, last = CT_RUN_OK;
	double idle, decided = -1e9;

	memset(&r, 0, sizeof(r));
	while (!d->stop) {
		if (r.run.wu == NULL || ct_clock_mono(d->clk) - decided >= DECIDE_EVERY) {
			why = decide(d, &idle);
			decided = ct_clock_mono(d->clk);
			ct_daemon_lock(d);
			if (d->user_suspended)
				why = CT_SUSPEND_USER_REQUEST;
			d->reason = why;
			d->idle_seconds = idle;
			ct_daemon_unlock(d);
			if (why != last)
				ct_log_info("compute: %s", ct_suspend_reason_str(why));
			last = why;
			if (why == CT_RUN_OK && r.run.wu != NULL && project_suspended(d, &r)) {
				ct_log_info("%s: its project is suspended; checkpointing at step %d",
					    r.name, ct_wu_steps_done(r.run.wu));
				checkpoint(d, &r);
				close_running(d, &r);	/* pick() passes it by */
			}
		}
		if (why != CT_RUN_OK) {
			if (r.run.wu != NULL)
				suspend(d, &r, why);
			ct_clock_sleep(d->clk, 0.25);
			continue;
		}
		if (r.run.wu == NULL && !start_task(d, &r)) {
			ct_clock_sleep(d->clk, 0.25);
			continue;
		}
		step(d, &r);
	}
	if (r.run.wu != NULL) {
		ct_log_info("%s: checkpointing at step %d before exit", r.name,
			    ct_wu_steps_done(r.run.wu));
		checkpoint(d, &r);
		close_running(d, &r);
	}
}
