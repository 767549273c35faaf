/*
 * cl_web_json.c - the control page's state document (GET /api/state, see
 * cl_web.h): the daemon's status as parsed by cl_status.c, its preferences
 * in force, the keys the command line forces. Written straight into a
 * ct_buf; the first failed append is the result.
 */
#include "cl_status.h"
#include "cl_web.h"
#include "ct_conf.h"
#include "ct_err.h"
#include "ct_utf8.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A JSON string: controls, quotes, backslashes and <>& escaped (the text
 * could end up in HTML), bytes that are not UTF-8 as U+FFFD. */
int ct_web_json_str(struct ct_buf *b, const char *s)
{
	size_t n = strlen(s);
	int rc = ct_buf_appends(b, "\"");

	for (size_t i = 0; i < n && rc == 0;) {
		unsigned char c = (unsigned char)s[i];
		size_t len = ct_utf8_char_len(s + i, n - i);

		if (len == 0) {
			rc = ct_buf_appends(b, "\\ufffd");
			i++;
		} else if (len > 1 || (c >= 0x20 && c != 0x7f && !strchr("\"\\<>&", c))) {
			rc = ct_buf_append(b, s + i, len);
			i += len;
		} else {
			rc = ct_buf_appendf(b, "\\u%04x", c);
			i++;
		}
	}
	return rc == 0 ? ct_buf_appends(b, "\"") : rc;
}

/* One "key": value member; the comma goes before every member but the
 * first of an object (*first tracks it). */
struct obj {
	struct ct_buf *b;
	int first;
	int rc;
};

static void key(struct obj *o, const char *k)
{
	if (o->rc == 0 && !o->first) o->rc = ct_buf_appends(o->b, ",");
	o->first = 0;
	if (o->rc == 0) o->rc = ct_web_json_str(o->b, k);
	if (o->rc == 0) o->rc = ct_buf_appends(o->b, ":");
}

static void m_str(struct obj *o, const char *k, const char *v)
{
	key(o, k);
	if (o->rc == 0) o->rc = v ? ct_web_json_str(o->b, v) : ct_buf_appends(o->b, "null");
}

static void num(struct ct_buf *b, double v, int *rc)
{
	if (*rc == 0)
		*rc = isfinite(v) ? ct_buf_appendf(b, "%.9g", v) : ct_buf_appends(b, "null");
}

static void m_num(struct obj *o, const char *k, double v)
{
	key(o, k);
	num(o->b, v, &o->rc);
}

static void m_bool(struct obj *o, const char *k, int v)
{
	key(o, k);
	if (o->rc == 0) o->rc = ct_buf_appends(o->b, v ? "true" : "false");
}

static void open_obj(struct obj *o, struct ct_buf *b, int *rc)
{
	o->b = b;
	o->first = 1;
	o->rc = *rc;
	if (o->rc == 0) o->rc = ct_buf_appends(b, "{");
}

static void close_obj(struct obj *o, int *rc)
{
	if (o->rc == 0) o->rc = ct_buf_appends(o->b, "}");
	*rc = o->rc;
}

static void task_json(struct ct_buf *b, const struct ct_status_task *t, int *rc)
{
	struct obj o;

	open_obj(&o, b, rc);
	m_str(&o, "name", t->name);
	m_str(&o, "state", t->state);
	m_num(&o, "progress", t->progress);
	m_num(&o, "step", (double)t->step);
	m_num(&o, "steps", (double)t->steps);
	m_num(&o, "last_loss", t->last_loss);
	m_str(&o, "job", t->job[0] ? t->job : NULL);
	m_str(&o, "round", t->round[0] ? t->round : NULL);
	m_str(&o, "error", t->error[0] ? t->error : NULL);
	close_obj(&o, rc);
}

static void project_json(struct ct_buf *b, const struct ct_status_project *p, int *rc)
{
	struct obj o;

	open_obj(&o, b, rc);
	m_str(&o, "url", p->url);
	m_str(&o, "user_name", p->user_name);
	m_num(&o, "hostid", (double)p->hostid);
	m_num(&o, "credit", p->credit);
	m_num(&o, "rac", p->rac);
	m_num(&o, "rank", (double)p->rank);
	m_num(&o, "pending_results", (double)p->pending_results);
	m_num(&o, "eta_task_s", p->eta_task_s);
	m_num(&o, "eta_queue_s", p->eta_queue_s);
	m_num(&o, "queued_tasks", (double)p->queued_tasks);
	m_num(&o, "nfailures", (double)p->nfailures);
	m_bool(&o, "suspended", p->suspended);
	m_num(&o, "next_rpc_in", p->next_rpc_in);
	key(&o, "tasks");
	if (o.rc == 0) o.rc = ct_buf_appends(b, "[");
	for (int i = 0; i < p->ntasks && o.rc == 0; i++) {
		if (i > 0) o.rc = ct_buf_appends(b, ",");
		task_json(b, &p->tasks[i], &o.rc);
	}
	if (o.rc == 0) o.rc = ct_buf_appends(b, "]");
	close_obj(&o, rc);
}

static void status_members(struct obj *o, const struct ct_status *s)
{
	m_str(o, "version", s->version);
	m_num(o, "pid", (double)s->pid);
	m_str(o, "device", s->device);
	m_str(o, "device_name", s->device_name);
	m_bool(o, "conforming", s->conforming);
	m_str(o, "activity", s->activity);
	m_str(o, "reason", s->reason);
	m_bool(o, "user_suspended", s->user_suspended);
	m_num(o, "idle_seconds", s->idle_seconds);
	m_num(o, "tokens_per_s", s->tokens_per_s);
	m_str(o, "running", s->running[0] ? s->running : NULL);
	m_num(o, "uptime", s->uptime);
	m_num(o, "results_done", (double)s->results_done);
	m_num(o, "results_reported", (double)s->results_reported);
	m_num(o, "seconds", s->seconds);
	m_num(o, "tokens", s->tokens);
}

/* "prefs": {key: value} in force, "forced": [keys the command line sets] */
static void prefs_members(struct obj *o, const struct ct_conf *prefs, const struct ct_conf *cli)
{
	struct obj p;
	int n = 0;

	key(o, "prefs");
	open_obj(&p, o->b, &o->rc);
	for (size_t i = 0; i < ct_conf_count(prefs); i++)
		m_str(&p, ct_conf_key_at(prefs, i), ct_conf_get(prefs, ct_conf_key_at(prefs, i)));
	close_obj(&p, &o->rc);
	key(o, "forced");
	if (o->rc == 0) o->rc = ct_buf_appends(o->b, "[");
	for (size_t i = 0; cli != NULL && i < ct_conf_count(cli) && o->rc == 0; i++) {
		if (n++ > 0) o->rc = ct_buf_appends(o->b, ",");
		if (o->rc == 0) o->rc = ct_web_json_str(o->b, ct_conf_key_at(cli, i));
	}
	if (o->rc == 0) o->rc = ct_buf_appends(o->b, "]");
}

int ct_web_state_json(const struct ct_status *s, const struct ct_conf *prefs,
		      const struct ct_conf *cli, struct ct_buf *out)
{
	struct obj o;
	int rc = 0;

	open_obj(&o, out, &rc);
	status_members(&o, s);
	key(&o, "projects");
	if (o.rc == 0) o.rc = ct_buf_appends(out, "[");
	for (int i = 0; i < s->nprojects && o.rc == 0; i++) {
		if (i > 0) o.rc = ct_buf_appends(out, ",");
		project_json(out, &s->projects[i], &o.rc);
	}
	if (o.rc == 0) o.rc = ct_buf_appends(out, "]");
	key(&o, "losses");
	if (o.rc == 0) o.rc = ct_buf_appends(out, "[");
	for (int i = 0; i < s->nlosses && o.rc == 0; i++) {
		if (i > 0) o.rc = ct_buf_appends(out, ",");
		num(out, s->losses[i], &o.rc);
	}
	if (o.rc == 0) o.rc = ct_buf_appends(out, "]");
	prefs_members(&o, prefs, cli);
	close_obj(&o, &rc);
	if (rc == 0) rc = ct_buf_appends(out, "\n");
	return rc;
}
