/*
 * web_samples.c - the per-round samples on the job page and in the JSON
 * API (see sample.h). Read from round_sample only: the assimilator wrote
 * them once per round; a page view never samples.
 */
#include "daemons/sample.h"

#include <stdlib.h>
#include <string.h>

#include "ct_chat.h"

#include "ct_err.h"
#include "data/db.h"
#include "data/dl.h"
#include "tmpl.h"
#include "web_json.h"

/* At most this many samples on a page (the base and 200 rounds). */
#define SAMPLES_MAX 201

/* One round_sample row; TEXT holds at most 65,535 bytes, so text never
 * truncates. */
struct sample_row {
	int64_t round;
	char model_sha256[65];
	char text[65536];
};

static const struct ct_dl_col sample_cols[] = {
	CT_DL_COL(struct sample_row, round), CT_DL_COL(struct sample_row, model_sha256),
	CT_DL_COL(struct sample_row, text),
};

/* The job's samples, oldest first: *row is a buffer for one (free it). */
static int query(struct ct_db *db, int64_t jobid, struct ct_db_res **res,
		 struct sample_row **row)
{
	*row = malloc(sizeof(**row));
	if (*row == NULL)
		return ct_error(CT_ENOMEM, "sample row");
	return CT_DB_QUERY(db, res, "SELECT round_idx, model_sha256, sample_text FROM "
			   "round_sample WHERE jobid=? ORDER BY round_idx LIMIT ?",
			   jobid, SAMPLES_MAX);
}

/* The next row of res into r: 1, or 0 at the end. */
static int next(struct ct_db_res *res, struct sample_row *r)
{
	if (ct_db_next(res) <= 0)
		return 0;
	ct_dl_row(res, r, sample_cols, CT_DL_NCOLS(sample_cols));
	return 1;
}

/* A chat job's sample conversation (job_text.sample_chat) into *conv,
 * NULL for text samples. */
static int sample_chat(struct ct_db *db, int64_t jobid, struct ct_jv **conv)
{
	struct ct_db_res *res = NULL;
	int rc = CT_DB_QUERY(db, &res, "SELECT sample_chat FROM job_text WHERE jobid=?",
			     jobid);

	*conv = NULL;
	if (rc == 0 && ct_db_next(res) > 0 && ct_db_str(res, 0)[0] != '\0')
		rc = ct_chat_parse_line(ct_db_str(res, 0), strlen(ct_db_str(res, 0)),
					"sample_chat", 1, conv);
	ct_db_res_free(res);
	return rc;
}

/* The conversation the replies answer, message by message. */
static int conversation_html(struct ct_buf *c, const struct ct_jv *conv)
{
	const struct ct_jv *msgs = ct_jv_get(conv, "messages");
	int rc = ct_buf_appends(c, "<h2>Replies</h2><p>What the model answers to the same "
				"conversation and seed, before fine-tuning and after each round "
				"(its chat template with the generation prompt):</p>"
				"<div id=\"sample-chat\">");

	for (size_t i = 0; rc == 0 && msgs != NULL && i < msgs->n; i++) {
		const struct ct_jv *role = ct_jv_get(&msgs->items[i], "role");
		const struct ct_jv *content = ct_jv_get(&msgs->items[i], "content");

		rc = ct_tmpl_printf(c, "<div class=\"chat-turn\" data-role=\"%s\"><b>%s</b>"
				    "<pre>%s</pre></div>", role->str, role->str,
				    content->type == CT_JV_STR ? content->str : "");
	}
	return rc == 0 ? ct_buf_appends(c, "</div>") : rc;
}

int ct_web_job_samples_html(struct ct_db *db, struct ct_buf *c, int64_t jobid)
{
	struct ct_db_res *res = NULL;
	struct sample_row *r = NULL;
	struct ct_jv *conv = NULL;
	int rc = query(db, jobid, &res, &r);

	if (rc < 0 || ct_db_nrows(res) == 0)
		goto out;
	rc = sample_chat(db, jobid, &conv);
	if (rc == 0 && conv != NULL)
		rc = conversation_html(c, conv);
	else if (rc == 0)
		rc = ct_buf_appends(c, "<h2>Samples</h2><p>What the model writes from the same "
				    "prompt and seed, before fine-tuning and after each round.</p>");
	if (rc == 0)
		rc = ct_tmpl_printf(c, "<table id=\"samples\"><thead><tr><th>Model</th><th>%s"
				    "</th></tr></thead><tbody>", conv ? "Reply" : "Sample");
	while (rc == 0 && next(res, r)) {
		if (r->round == 0)
			rc = ct_buf_appends(c, "<tr class=\"sample\" data-round=\"0\"><td>base</td>");
		else
			rc = ct_tmpl_printf(c, "<tr class=\"sample\" data-round=\"%lld\"><td>"
					    "round %lld</td>", (long long)r->round,
					    (long long)r->round);
		if (rc == 0)
			rc = ct_tmpl_printf(c, "<td><pre class=\"sample\">%s</pre></td></tr>",
					    r->text);
	}
	if (rc == 0)
		rc = ct_buf_appends(c, "</tbody></table>");
out:
	ct_jv_free(conv);
	ct_db_res_free(res);
	free(r);
	return rc;
}

int ct_web_job_samples_json(struct ct_db *db, struct ct_json *j, int64_t jobid)
{
	struct ct_db_res *res = NULL;
	struct sample_row *r = NULL;
	int rc = query(db, jobid, &res, &r);

	if (rc < 0)
		goto out;
	ct_json_key(j, "samples");
	ct_json_arr_begin(j);
	while (next(res, r)) {
		ct_json_obj_begin(j);
		ct_json_kint(j, "round", r->round);
		ct_json_kstr(j, "model_sha256", r->model_sha256);
		ct_json_kstr(j, "text", r->text);
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
out:
	ct_db_res_free(res);
	free(r);
	return rc;
}
