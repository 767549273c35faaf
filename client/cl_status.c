/*
 * cl_status.c - see cl_status.h.
 */
#include "cl_status.h"
#include "ct_err.h"
#include "ct_xml.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
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

/* The document's fields, each an element named after its member; absent or
 * malformed ones get the default (strings ""), long strings are cut. */
enum vtype { V_STR, V_DBL, V_LONG, V_INT };

struct vfield {
	const char *tag;
	enum vtype type;
	size_t off;
	size_t size;	/* V_STR: the char array's size */
	double def;	/* V_DBL */
};

#define VS(s, m) { #m, V_STR, offsetof(struct s, m), sizeof(((struct s *)0)->m), 0 }
#define VD(s, m, def) { #m, V_DBL, offsetof(struct s, m), 0, def }
#define VL(s, m) { #m, V_LONG, offsetof(struct s, m), 0, 0 }
#define VI(s, m) { #m, V_INT, offsetof(struct s, m), 0, 0 }
#define NV(a) (sizeof(a) / sizeof((a)[0]))

static const struct vfield status_fields[] = {
	VL(ct_status, pid), VS(ct_status, version), VS(ct_status, device),
	VS(ct_status, device_name), VI(ct_status, conforming), VS(ct_status, activity),
	VS(ct_status, reason), VD(ct_status, idle_seconds, 0), VD(ct_status, tokens_per_s, 0),
	VS(ct_status, running), VD(ct_status, uptime, 0), VI(ct_status, user_suspended),
	VS(ct_status, web_url),
};

static const struct vfield totals_fields[] = {
	VL(ct_status, results_done), VL(ct_status, results_reported),
	VD(ct_status, seconds, 0), VD(ct_status, tokens, 0),
};

static const struct vfield project_fields[] = {
	VS(ct_status_project, url), VS(ct_status_project, user_name),
	VL(ct_status_project, hostid), VD(ct_status_project, credit, 0),
	VD(ct_status_project, rac, 0), VL(ct_status_project, rank),
	VL(ct_status_project, pending_results), VD(ct_status_project, eta_task_s, -1),
	VD(ct_status_project, eta_queue_s, -1), VL(ct_status_project, queued_tasks),
	VL(ct_status_project, nfailures), VD(ct_status_project, next_rpc_in, 0),
	VI(ct_status_project, suspended),
};

static const struct vfield task_fields[] = {
	VS(ct_status_task, name), VS(ct_status_task, state),
	VD(ct_status_task, progress, 0), VL(ct_status_task, step), VL(ct_status_task, steps),
	VD(ct_status_task, last_loss, NAN), VS(ct_status_task, job),
	VS(ct_status_task, round), VS(ct_status_task, error),
};

static void get_fields(xmlNodePtr n, void *obj, const struct vfield *f, size_t nf)
{
	char *base = obj;

	for (size_t i = 0; i < nf; i++) {
		void *p = base + f[i].off;

		switch (f[i].type) {
		case V_STR: get_s(n, f[i].tag, p, f[i].size); break;
		case V_DBL: *(double *)p = get_d(n, f[i].tag, f[i].def); break;
		case V_LONG: *(long *)p = get_l(n, f[i].tag, 0); break;
		case V_INT: *(int *)p = (int)get_l(n, f[i].tag, 0); break;
		}
	}
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
	get_fields(n, p, project_fields, NV(project_fields));
	for (xmlNodePtr c = ct_xml_child(n, "task"); c && p->ntasks < CT_STATUS_MAX_TASKS;
	     c = ct_xml_next(c, "task"))
		get_fields(c, &p->tasks[p->ntasks++], task_fields, NV(task_fields));
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
	get_fields(root, s, status_fields, NV(status_fields));
	c = ct_xml_child(root, "totals");
	if (c != NULL)
		get_fields(c, s, totals_fields, NV(totals_fields));
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
	if (rc == 0 && s->web_url[0])
		rc = ct_buf_appendf(b, "control page: %s\n", s->web_url);
	for (int i = 0; i < s->nprojects && rc == 0; i++) {
		const struct ct_status_project *p = &s->projects[i];
		char cr[32], rac[32];

		credit_str(p->credit, cr, sizeof(cr));
		credit_str(p->rac, rac, sizeof(rac));
		rc = ct_buf_appendf(b, "\nproject %s  user %s  host %ld%s\n  credit %s (recent "
				    "%s)", p->url, p->user_name[0] ? p->user_name : "?",
				    p->hostid, p->suspended ? "  (suspended)" : "", cr, rac);
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
