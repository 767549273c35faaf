/*
 * web_tasks.c - the tasks (results) of one computer or one user, the page
 * BOINC volunteers open most: /tasks?host=ID or ?user=ID, filtered by
 * &state=N (enum ct_web_task_state) and paged by &page=N, its JSON twin
 * /api/v1/tasks with the same arguments, and the summary the computer's
 * and the user's pages show (counts by state, granted and pending credit,
 * the newest tasks).
 *
 * Pending credit is what the results waiting for their quorum will earn
 * when they are found valid: every valid result of a job earns the same
 * credit (doc/credit.md), so it is the job's credit per valid result so
 * far (round_stat), or before the first one the validator's own formula on
 * the job's model and shape.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_gpt2.h"
#include "data/db.h"
#include "data/lora_job.h"
#include "data/server.h"
#include "validate/credit.h"
#include "validate/lora_round.h"
#include "tmpl.h"
#include "web_int.h"

#define CONTENT_MAX (4u << 20)
#define SECTION_ROWS 10		/* tasks on a computer's or user's own page */

/* What one valid result of job `jobid` earns (ct_web_tasks' credit_of;
 * arg is the request): the job's average so far, else the validator's
 * formula (validator.c's load_inputs, lora_round.c for LoRA jobs). A job
 * whose model is gone counts 0. */
static int result_credit(int64_t jobid, void *arg, double *credit)
{
	struct ct_web_req *req = arg;
	struct ct_web_job_credit jc;
	struct ct_model_config cfg;
	struct ct_lora_spec spec;
	char path[4200];
	double flops;
	int rc;

	*credit = 0;
	rc = ct_web_get_job_credit(req->db, jobid, &jc);
	if (rc == CT_ENOTFOUND)
		return 0;
	if (rc < 0 || jc.nvalid > 0) {
		*credit = jc.nvalid > 0 ? jc.credit / (double)jc.nvalid : 0;
		return rc;
	}
	if (ct_server_download_path(req->srv, jc.model_sha256, path, sizeof(path)) < 0 ||
	    ct_gpt2_read_config(path, &cfg) < 0)
		return 0;
	rc = ct_lora_job_get(req->db, jobid, &spec);
	if (rc < 0 && rc != CT_ENOTFOUND)
		return rc;
	if (rc == 0 && spec.rank > 0)
		flops = ct_lora_wu_flops(&cfg, &spec, (int)jc.seq, (int)jc.batch, (int)jc.steps);
	else
		flops = ct_credit_wu_flops(&cfg, (int)jc.seq, (int)jc.batch, (int)jc.steps);
	*credit = ct_credit_from_flops(flops);
	return 0;
}

/* ?host=ID or ?user=ID: the kind into *kind and the id, or 0. */
static int64_t tasks_owner(const struct ct_web_req *req, const char **kind)
{
	const char *h = ct_web_arg(req, "host"), *u = ct_web_arg(req, "user");
	const char *v = h != NULL ? h : u;
	char *end;
	long long id;

	*kind = h != NULL ? "host" : "user";
	if (v == NULL)
		return 0;
	id = strtoll(v, &end, 10);
	return *end == '\0' && id > 0 ? id : 0;
}

static int tasks_state(const struct ct_web_req *req)
{
	const char *s = ct_web_arg(req, "state");
	long v = s != NULL ? strtol(s, NULL, 10) : 0;

	return v > 0 && v < CT_WEB_TASK_NSTATES ? (int)v : CT_WEB_TASK_ANY;
}

/* ---- HTML ---------------------------------------------------------------- */

static int task_row(struct ct_buf *c, const struct ct_web_task *t, int show_host)
{
	char sent[32], back[32], cr[48], run[32];
	int rc;

	ct_tmpl_datetime(sent, sizeof(sent), t->sent_time);
	ct_tmpl_datetime(back, sizeof(back), t->received_time);
	ct_tmpl_credit(cr, sizeof(cr), t->credit);
	snprintf(run, sizeof(run), t->elapsed_s < 10 ? "%.1f s" : "%.0f s", t->elapsed_s);
	rc = ct_tmpl_printf(c, "<tr data-id=\"%lld\" data-state=\"%lld\"><td>%s</td>"
		"<td><a href=\"/job/%lld\">%s</a> <span class=\"muted\">round %lld, shard "
		"%lld</span></td>", (long long)t->id, (long long)t->state, t->name,
		(long long)t->jobid, t->job_name, (long long)t->round_idx,
		(long long)t->shard);
	if (rc == 0 && show_host)
		rc = ct_tmpl_printf(c, "<td><a href=\"/host/%lld\">#%lld</a></td>",
				    (long long)t->hostid, (long long)t->hostid);
	if (rc == 0)
		rc = ct_tmpl_printf(c, "<td class=\"hide-narrow\">%s</td><td class=\"hide-narrow\">"
			"%s</td><td class=\"state-%lld\">%s</td><td class=\"num\">%s</td>",
			sent, t->state == CT_WEB_TASK_IN_PROGRESS ? "-" : back,
			(long long)t->state, ct_web_task_state_name((int)t->state), run);
	/* what a pending or running task will earn if valid, marked so */
	if (rc == 0 && (t->state == CT_WEB_TASK_PENDING || t->state == CT_WEB_TASK_IN_PROGRESS))
		rc = ct_tmpl_printf(c, "<td class=\"num muted\" data-v=\"%.6f\" title=\"if "
				    "found valid\">(%s)</td></tr>", t->credit, cr);
	else if (rc == 0)
		rc = ct_tmpl_printf(c, "<td class=\"num\" data-v=\"%.6f\">%s</td></tr>",
				    t->credit, cr);
	return rc;
}

static int tasks_table(struct ct_buf *c, const struct ct_web_task *t, size_t n, int show_host)
{
	int rc = ct_buf_appends(c, "<table class=\"board\" id=\"tasks\"><thead><tr>"
				"<th>Task</th><th>Job</th>");

	if (rc == 0 && show_host)
		rc = ct_buf_appends(c, "<th>Computer</th>");
	if (rc == 0)
		rc = ct_buf_appends(c, "<th class=\"hide-narrow\">Sent (UTC)</th><th class=\""
				    "hide-narrow\">Reported</th><th>State</th><th class=\"num\">"
				    "Run time</th><th class=\"num\">Credit</th></tr></thead><tbody>");
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = task_row(c, &t[i], show_host);
	if (rc == 0 && n == 0)
		rc = ct_buf_appends(c, "<tr><td colspan=\"8\" class=\"muted\">No task here."
				    "</td></tr>");
	if (rc == 0)
		rc = ct_buf_appends(c, "</tbody></table>");
	return rc;
}

/* The state tabs with their counts, each a link to the filtered list, and
 * the credit cards. */
static int tasks_summary(struct ct_buf *c, const char *kind, int64_t id, int on,
			 const struct ct_web_task_sum *sum)
{
	char g[48], p[48];
	int rc = ct_buf_appends(c, "<div class=\"tabs\" id=\"task-states\">");

	for (int s = 0; rc == 0 && s < CT_WEB_TASK_NSTATES; s++) {
		rc = ct_tmpl_printf(c, "<a href=\"/tasks?%s=%lld&amp;state=%d\" id=\"tasks-%d\"",
				    kind, (long long)id, s, s);
		if (rc == 0 && s == on)
			rc = ct_buf_appends(c, " class=\"on\"");
		if (rc == 0)
			rc = ct_tmpl_printf(c, ">%s <span class=\"count\">%lld</span></a>",
					    ct_web_task_state_name(s), (long long)sum->n[s]);
	}
	ct_tmpl_credit(g, sizeof(g), sum->granted);
	ct_tmpl_credit(p, sizeof(p), sum->pending);
	if (rc == 0)
		rc = ct_tmpl_printf(c, "</div><div class=\"cards\"><div class=\"card\" id=\""
			"pending-credit\"><div class=\"k\">Pending credit</div><div class=\"v\" "
			"data-v=\"%.6f\">%s</div></div><div class=\"card\"><div class=\"k\">Granted "
			"on these tasks</div><div class=\"v\" data-v=\"%.6f\">%s</div>"
			"</div></div>", sum->pending, p, sum->granted, g);
	return rc;
}

static int tasks_pager(struct ct_buf *c, const char *kind, int64_t id, int state,
		       int64_t page, int64_t total)
{
	int64_t npages = total == 0 ? 1 : (total + CT_WEB_PAGE_SIZE - 1) / CT_WEB_PAGE_SIZE;
	int rc = 0;

	if (npages <= 1)
		return 0;
	rc = ct_buf_appends(c, "<nav class=\"pager\">");
	if (rc == 0 && page > 1)
		rc = ct_tmpl_printf(c, "<a rel=\"prev\" href=\"/tasks?%s=%lld&amp;state=%d&amp;"
				    "page=%lld\">&larr; Newer</a>", kind, (long long)id, state,
				    (long long)page - 1);
	if (rc == 0)
		rc = ct_tmpl_printf(c, "<span class=\"on\">Page %lld of %lld</span>",
				    (long long)page, (long long)npages);
	if (rc == 0 && page < npages)
		rc = ct_tmpl_printf(c, "<a rel=\"next\" href=\"/tasks?%s=%lld&amp;state=%d&amp;"
				    "page=%lld\">Older &rarr;</a>", kind, (long long)id, state,
				    (long long)page + 1);
	if (rc == 0)
		rc = ct_buf_appends(c, "</nav>");
	return rc;
}

int ct_web_tasks_section(struct ct_web_req *req, struct ct_buf *c, const char *kind,
			 int64_t id)
{
	struct ct_web_task *t = NULL;
	struct ct_web_task_sum sum;
	size_t n = 0;
	int rc;

	rc = ct_web_tasks(req->db, kind, id, CT_WEB_TASK_ANY, 1, result_credit, req, &t, &n,
			  &sum);
	if (rc < 0)
		return rc;
	if (n > SECTION_ROWS)
		n = SECTION_ROWS;
	rc = ct_buf_appends(c, "<h2>Tasks</h2>");
	if (rc == 0)
		rc = tasks_summary(c, kind, id, -1, &sum);
	if (rc == 0)
		rc = tasks_table(c, t, n, kind[0] == 'u');
	if (rc == 0 && sum.n[CT_WEB_TASK_ANY] > (int64_t)n)
		rc = ct_tmpl_printf(c, "<p><a href=\"/tasks?%s=%lld\" id=\"all-tasks\">All %lld "
				    "tasks</a></p>", kind, (long long)id,
				    (long long)sum.n[CT_WEB_TASK_ANY]);
	free(t);
	return rc;
}

int ct_web_page_tasks(struct ct_web_req *req, struct ct_web_resp *resp)
{
	struct ct_buf c = CT_BUF_INIT(CONTENT_MAX);
	struct ct_web_task *t = NULL;
	struct ct_web_task_sum sum;
	const char *kind;
	int64_t id = tasks_owner(req, &kind), page = ct_web_arg_page(req);
	int state = tasks_state(req);
	char title[96], api[96];
	size_t n = 0;
	int rc;

	if (id <= 0)
		return ct_error(CT_ENOTFOUND, "tasks of whom? (?host=ID or ?user=ID)");
	rc = ct_web_tasks(req->db, kind, id, state, page, result_credit, req, &t, &n, &sum);
	if (rc < 0)
		return rc;
	snprintf(title, sizeof(title), "Tasks of %s #%lld", kind[0] == 'h' ? "computer" :
		 "participant", (long long)id);
	snprintf(api, sizeof(api), "/api/v1/tasks?%s=%lld", kind, (long long)id);
	rc = ct_tmpl_printf(&c, "<p><a href=\"/%s/%lld\">Back to the %s's page</a></p>", kind,
			    (long long)id, kind[0] == 'h' ? "computer" : "participant");
	if (rc == 0)
		rc = tasks_summary(&c, kind, id, state, &sum);
	if (rc == 0)
		rc = tasks_table(&c, t, n, kind[0] == 'u');
	if (rc == 0)
		rc = tasks_pager(&c, kind, id, state, page, sum.n[state]);
	if (rc == 0)
		rc = ct_web_render(req, resp, title, &c, api);
	free(t);
	ct_buf_free(&c);
	return rc;
}

/* ---- the JSON twin's data ------------------------------------------------ */

int ct_web_req_tasks(struct ct_web_req *req, int *state, struct ct_web_task **t, size_t *n,
		     struct ct_web_task_sum *sum)
{
	const char *kind;
	int64_t id = tasks_owner(req, &kind);

	*t = NULL;
	*n = 0;
	*state = tasks_state(req);
	if (id <= 0)
		return ct_error(CT_ENOTFOUND, "tasks of whom? (?host=ID or ?user=ID)");
	return ct_web_tasks(req->db, kind, id, *state, ct_web_arg_page(req), result_credit, req,
			    t, n, sum);
}
