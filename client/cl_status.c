/*
 * cl_status.c - see cl_status.h.
 */
#include "cl_status.h"
#include "ct_err.h"
#include "ct_xml.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- parsing ---- */

static void get_s(xmlNodePtr n, const char *tag, char *out, size_t cap)
{
	char *s = NULL;

	out[0] = '\0';
	if (ct_xml_get_str(n, tag, 4096, &s) == 0)
		snprintf(out, cap, "%s", s);
	free(s);
}

static double get_d(xmlNodePtr n, const char *tag, double def)
{
	double v;

	return ct_xml_get_double(n, tag, -1e300, 1e300, &v) == 0 ? v : def;
}

static long get_l(xmlNodePtr n, const char *tag, long def)
{
	long v;

	return ct_xml_get_long(n, tag, LONG_MIN, LONG_MAX, &v) == 0 ? v : def;
}

static void parse_task(xmlNodePtr n, struct ct_status_task *t)
{
	get_s(n, "name", t->name, sizeof(t->name));
	get_s(n, "state", t->state, sizeof(t->state));
	t->progress = get_d(n, "progress", 0);
	t->step = get_l(n, "step", 0);
	t->steps = get_l(n, "steps", 0);
	t->last_loss = get_d(n, "last_loss", NAN);
	get_s(n, "job", t->job, sizeof(t->job));
	get_s(n, "round", t->round, sizeof(t->round));
	get_s(n, "error", t->error, sizeof(t->error));
}

static void credit_str(double v, char *out, size_t n);

static void dur(double s, char *buf, size_t n)
{
	if (s < 0 || !isfinite(s))
		snprintf(buf, n, "?");
	else if (s < 90)
		snprintf(buf, n, "%.0f s", s);
	else if (s < 5400)
		snprintf(buf, n, "%.0f min", s / 60);
	else
		snprintf(buf, n, "%.1f h", s / 3600);
}

void ct_status_eta_line(const struct ct_status_project *p, char *buf, size_t n)
{
	char task[32], queue[32], cr[32];

	dur(p->eta_task_s, task, sizeof(task));
	dur(p->eta_queue_s, queue, sizeof(queue));
	credit_str(p->credit, cr, sizeof(cr));
	snprintf(buf, n, "ETA this WU %s, queue %s (%ld task%s); credit granted %s, "
		 "%ld result%s pending validation", task, queue, p->queued_tasks,
		 p->queued_tasks == 1 ? "" : "s", cr, p->pending_results,
		 p->pending_results == 1 ? "" : "s");
}

static void parse_project(xmlNodePtr n, struct ct_status_project *p)
{
	get_s(n, "url", p->url, sizeof(p->url));
	get_s(n, "user_name", p->user_name, sizeof(p->user_name));
	p->hostid = get_l(n, "hostid", 0);
	p->credit = get_d(n, "credit", 0);
	p->rac = get_d(n, "rac", 0);
	p->rank = get_l(n, "rank", 0);
	p->pending_results = get_l(n, "pending_results", 0);
	p->eta_task_s = get_d(n, "eta_task_s", -1);
	p->eta_queue_s = get_d(n, "eta_queue_s", -1);
	p->queued_tasks = get_l(n, "queued_tasks", 0);
	p->nfailures = get_l(n, "nfailures", 0);
	p->next_rpc_in = get_d(n, "next_rpc_in", 0);
	for (xmlNodePtr c = ct_xml_child(n, "task"); c && p->ntasks < CT_STATUS_MAX_TASKS;
	     c = ct_xml_next(c, "task"))
		parse_task(c, &p->tasks[p->ntasks++]);
}

int ct_status_parse(const void *data, size_t n, struct ct_status *s)
{
	xmlDocPtr doc = NULL;
	xmlNodePtr root, c;
	int rc;

	memset(s, 0, sizeof(*s));
	rc = ct_xml_parse(data, n, 4u << 20, 8, &doc);
	if (rc < 0)
		return rc;
	root = xmlDocGetRootElement(doc);
	if (xmlStrcmp(root->name, BAD_CAST "status") != 0) {
		xmlFreeDoc(doc);
		return ct_error(CT_EPROTO, "not a status document");
	}
	s->pid = get_l(root, "pid", 0);
	get_s(root, "version", s->version, sizeof(s->version));
	get_s(root, "device", s->device, sizeof(s->device));
	get_s(root, "device_name", s->device_name, sizeof(s->device_name));
	s->conforming = (int)get_l(root, "conforming", 0);
	get_s(root, "activity", s->activity, sizeof(s->activity));
	get_s(root, "reason", s->reason, sizeof(s->reason));
	s->idle_seconds = get_d(root, "idle_seconds", 0);
	s->tokens_per_s = get_d(root, "tokens_per_s", 0);
	get_s(root, "running", s->running, sizeof(s->running));
	s->uptime = get_d(root, "uptime", 0);
	c = ct_xml_child(root, "totals");
	if (c != NULL) {
		s->results_done = get_l(c, "results_done", 0);
		s->results_reported = get_l(c, "results_reported", 0);
		s->seconds = get_d(c, "seconds", 0);
		s->tokens = get_d(c, "tokens", 0);
	}
	for (c = ct_xml_child(root, "project"); c && s->nprojects < CT_STATUS_MAX_PROJECTS;
	     c = ct_xml_next(c, "project"))
		parse_project(c, &s->projects[s->nprojects++]);
	c = ct_xml_child(root, "losses");
	for (c = c ? ct_xml_child(c, "l") : NULL; c && s->nlosses < CT_STATUS_MAX_LOSSES;
	     c = ct_xml_next(c, "l")) {
		xmlChar *v = xmlNodeGetContent(c);

		s->losses[s->nlosses++] = v ? strtof((const char *)v, NULL) : NAN;
		xmlFree(v);
	}
	xmlFreeDoc(doc);
	return 0;
}

const struct ct_status_task *ct_status_running(const struct ct_status *s,
					       const struct ct_status_project **proj)
{
	if (s->running[0] == '\0')
		return NULL;
	for (int i = 0; i < s->nprojects; i++)
		for (int j = 0; j < s->projects[i].ntasks; j++)
			if (strcmp(s->projects[i].tasks[j].name, s->running) == 0) {
				if (proj != NULL)
					*proj = &s->projects[i];
				return &s->projects[i].tasks[j];
			}
	return NULL;
}

/* ---- rendering ---- */

static const char *const eighths[9] = {
	" ", "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
	"\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88",
};

int ct_status_bar(struct ct_buf *b, double f, int width)
{
	int full, rc = 0;

	if (!(f >= 0))
		f = 0;
	if (f > 1)
		f = 1;
	full = (int)(f * width + 0.5);
	rc = ct_buf_appends(b, "[");
	for (int i = 0; i < width && rc == 0; i++)
		rc = ct_buf_appends(b, i < full ? "#" : "-");
	if (rc == 0)
		rc = ct_buf_appends(b, "]");
	return rc;
}

static void human(double v, char *out, size_t n)
{
	if (v >= 1e9)
		snprintf(out, n, "%.2fG", v / 1e9);
	else if (v >= 1e6)
		snprintf(out, n, "%.2fM", v / 1e6);
	else if (v >= 1e4)
		snprintf(out, n, "%.1fk", v / 1e3);
	else
		snprintf(out, n, "%.0f", v);
}

/* Credit: tiny jobs earn fractions of a cobblestone, so keep 4 digits. */
static void credit_str(double v, char *out, size_t n)
{
	if (v >= 100 || v == 0)
		snprintf(out, n, "%.2f", v);
	else
		snprintf(out, n, "%.4g", v);
}

static int render_task(struct ct_buf *b, const struct ct_status_task *t)
{
	int rc;

	rc = ct_buf_appendf(b, "  %-24s %-11s ", t->name, t->state);
	if (rc == 0) rc = ct_status_bar(b, t->progress, 20);
	if (rc == 0) rc = ct_buf_appendf(b, " %3.0f%%", 100 * (t->progress >= 0 ? t->progress : 0));
	if (rc == 0 && t->steps > 0) rc = ct_buf_appendf(b, "  step %ld/%ld", t->step, t->steps);
	if (rc == 0 && !isnan(t->last_loss)) rc = ct_buf_appendf(b, "  loss %.4f", t->last_loss);
	if (rc == 0 && t->error[0]) rc = ct_buf_appendf(b, "  error: %s", t->error);
	if (rc == 0) rc = ct_buf_appends(b, "\n");
	return rc;
}

int ct_status_render_text(const struct ct_status *s, struct ct_buf *b)
{
	char tps[32], tok[32];
	int rc;

	human(s->tokens_per_s, tps, sizeof(tps));
	human(s->tokens, tok, sizeof(tok));
	rc = ct_buf_appendf(b, "ctune %s (pid %ld), up %.0f s\n", s->version, s->pid, s->uptime);
	if (rc == 0) rc = ct_buf_appendf(b, "device:   %s, %s (%s)\n", s->device, s->device_name,
					 s->conforming ? "conforming" : "not conforming");
	if (rc == 0) rc = ct_buf_appendf(b, "activity: %s%s%s, %s tokens/s\n", s->activity,
					 strcmp(s->activity, "suspended") == 0 ? ": " : "",
					 strcmp(s->activity, "suspended") == 0 ? s->reason : "", tps);
	if (rc == 0) rc = ct_buf_appendf(b, "totals:   %ld results done, %ld reported, %.0f s "
					 "computing, %s tokens\n", s->results_done,
					 s->results_reported, s->seconds, tok);
	for (int i = 0; i < s->nprojects && rc == 0; i++) {
		const struct ct_status_project *p = &s->projects[i];
		char cr[32], rac[32];

		credit_str(p->credit, cr, sizeof(cr));
		credit_str(p->rac, rac, sizeof(rac));
		rc = ct_buf_appendf(b, "\nproject %s  user %s  host %ld\n  credit %s (recent "
				    "%s)", p->url, p->user_name[0] ? p->user_name : "?",
				    p->hostid, cr, rac);
		if (rc == 0 && p->rank > 0) rc = ct_buf_appendf(b, "  rank #%ld", p->rank);
		if (rc == 0) {
			char line[256];

			ct_status_eta_line(p, line, sizeof(line));
			rc = ct_buf_appendf(b, "\n  %s", line);
		}
		if (rc == 0) rc = ct_buf_appendf(b, "  next contact in %.0f s", p->next_rpc_in);
		if (rc == 0 && p->nfailures > 0)
			rc = ct_buf_appendf(b, " (%ld failed attempts)", p->nfailures);
		if (rc == 0) rc = ct_buf_appends(b, "\n");
		if (rc == 0 && p->ntasks == 0) rc = ct_buf_appends(b, "  no tasks\n");
		for (int j = 0; j < p->ntasks && rc == 0; j++)
			rc = render_task(b, &p->tasks[j]);
	}
	if (rc == 0 && s->nprojects == 0)
		rc = ct_buf_appends(b, "\nnot attached to any project: ctune attach URL --key KEY\n");
	return rc;
}

/* The loss curve: h rows of w columns of eighth blocks, newest on the right. */
static int render_curve(const struct ct_status *s, int w, int h, struct ct_buf *b)
{
	float lo = INFINITY, hi = -INFINITY;
	int n = s->nlosses < w ? s->nlosses : w, first = s->nlosses - n, rc = 0;

	for (int i = first; i < s->nlosses; i++) {
		lo = fminf(lo, s->losses[i]);
		hi = fmaxf(hi, s->losses[i]);
	}
	if (n == 0)
		return ct_buf_appends(b, "  (no loss values yet)\n");
	if (!(hi > lo))
		hi = lo + 1;
	for (int r = 0; r < h && rc == 0; r++) {
		if (r == 0 || r == h - 1)
			rc = ct_buf_appendf(b, "%8.3f \xe2\x94\x82", r == 0 ? (double)hi : (double)lo);
		else
			rc = ct_buf_appends(b, "         \xe2\x94\x82");
		for (int c = 0; c < n && rc == 0; c++) {
			int level = (int)((s->losses[first + c] - lo) / (hi - lo) * (h * 8 - 1)) + 1;
			int cell = level - (h - 1 - r) * 8;

			rc = ct_buf_appends(b, eighths[cell < 0 ? 0 : cell > 8 ? 8 : cell]);
		}
		if (rc == 0) rc = ct_buf_appends(b, "\x1b[K\n");
	}
	return rc;
}

/* Copy in to b cutting every line to at most cols cells (escape sequences
 * take none, a UTF-8 character one), so small terminals do not wrap. */
static int clip_lines(const char *in, int cols, struct ct_buf *b)
{
	int width = 0, rc = 0;

	for (const char *p = in; *p && rc == 0; p++) {
		if (*p == '\x1b') {
			const char *e = p + 1;

			while (*e && !((*e >= 'A' && *e <= 'Z') || (*e >= 'a' && *e <= 'z')))
				e++;
			rc = ct_buf_append(b, p, (size_t)(e - p) + (*e != '\0'));
			p = *e ? e : e - 1;
			continue;
		}
		if (*p == '\n')
			width = 0;
		else if ((*p & 0xc0) != 0x80 && ++width > cols)
			continue;
		else if ((*p & 0xc0) == 0x80 && width > cols)
			continue;
		rc = ct_buf_append(b, p, 1);
	}
	return rc;
}

static int render_saver(const struct ct_status *s, int cols, int rows, struct ct_buf *b);

int ct_status_render_saver(const struct ct_status *s, int cols, int rows, struct ct_buf *b)
{
	struct ct_buf raw = CT_BUF_INIT(0);
	int rc = render_saver(s, cols, rows, &raw);

	if (rc == 0)
		rc = clip_lines(ct_buf_cstr(&raw), cols, b);
	ct_buf_free(&raw);
	return rc;
}

static int render_saver(const struct ct_status *s, int cols, int rows, struct ct_buf *b)
{
	const struct ct_status_project *p = NULL;
	const struct ct_status_task *t = ct_status_running(s, &p);
	char tps[32];
	int rc, h = rows - 11, w = cols - 12;	/* 11 lines around the curve */

	if (h < 1) h = 1;
	if (w < 10) w = 10;
	if (p == NULL && s->nprojects > 0)
		p = &s->projects[0];
	human(s->tokens_per_s, tps, sizeof(tps));
	rc = ct_buf_appends(b, "\x1b[H\x1b[1m crowdtune\x1b[0m \xe2\x80\x94 training a language "
			    "model while you are away\x1b[K\n\x1b[K\n");
	if (rc == 0 && t != NULL)
		rc = ct_buf_appendf(b, " job %s \xc2\xb7 round %s \xc2\xb7 %s \xc2\xb7 step %ld/%ld  ",
				    t->job[0] ? t->job : "?", t->round[0] ? t->round : "?",
				    t->name, t->step, t->steps);
	else if (rc == 0)
		rc = ct_buf_appendf(b, " %s%s%s  ", s->activity,
				    strcmp(s->activity, "suspended") == 0 ? ": " : "",
				    strcmp(s->activity, "suspended") == 0 ? s->reason : "");
	if (rc == 0 && t != NULL) rc = ct_status_bar(b, t->progress, 20);
	if (rc == 0) rc = ct_buf_appends(b, "\x1b[K\n\x1b[K\n");
	if (rc == 0) rc = render_curve(s, w, h, b);
	if (rc == 0 && t != NULL && !isnan(t->last_loss))
		rc = ct_buf_appendf(b, "\x1b[K\n loss %.4f\x1b[K\n", t->last_loss);
	else if (rc == 0)
		rc = ct_buf_appends(b, "\x1b[K\n loss -\x1b[K\n");
	if (rc == 0) rc = ct_buf_appendf(b, " %s tokens/s on %s (%s)\x1b[K\n", tps, s->device,
					 s->device_name);
	if (rc == 0 && p != NULL) {
		char rank[32] = "-", cr[32], rac[32];

		if (p->rank > 0)
			snprintf(rank, sizeof(rank), "#%ld", p->rank);
		credit_str(p->credit, cr, sizeof(cr));
		credit_str(p->rac, rac, sizeof(rac));
		rc = ct_buf_appendf(b, " credit %s \xc2\xb7 recent %s \xc2\xb7 rank %s "
				    "\xc2\xb7 %s\x1b[K\n", cr, rac, rank,
				    p->user_name[0] ? p->user_name : "");
		if (rc == 0) {
			char line[256];

			ct_status_eta_line(p, line, sizeof(line));
			rc = ct_buf_appendf(b, " %s\x1b[K\n", line);
		}
	}
	if (rc == 0) rc = ct_buf_appends(b, "\x1b[K\n press any key to exit\x1b[K\x1b[J");
	return rc;
}
