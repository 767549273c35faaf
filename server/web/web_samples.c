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
#include "data/dl_web.h"
#include "tmpl.h"
#include "web_json.h"

/* A chat job's sample conversation (job_text.sample_chat) into *conv,
 * NULL for text samples. */
static int sample_chat(struct ct_db *db, int64_t jobid, struct ct_jv **conv)
{
	char *text = NULL;
	int rc = ct_web_sample_chat(db, jobid, &text);

	*conv = NULL;
	if (rc == 0 && text != NULL)
		rc = ct_chat_parse_line(text, strlen(text), "sample_chat", 1, conv);
	free(text);
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
	struct ct_web_samples it;
	struct ct_web_sample *r = NULL;
	struct ct_jv *conv = NULL;
	int rc = ct_web_samples_open(db, jobid, &it, &r);

	if (rc < 0 || it.n == 0)
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
	while (rc == 0 && ct_web_samples_next(&it, r)) {
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
	ct_web_samples_close(&it, r);
	return rc;
}

int ct_web_job_samples_json(struct ct_db *db, struct ct_json *j, int64_t jobid)
{
	struct ct_web_samples it;
	struct ct_web_sample *r = NULL;
	int rc = ct_web_samples_open(db, jobid, &it, &r);

	if (rc < 0)
		goto out;
	ct_json_key(j, "samples");
	ct_json_arr_begin(j);
	while (ct_web_samples_next(&it, r)) {
		ct_json_obj_begin(j);
		ct_json_kint(j, "round", r->round);
		ct_json_kstr(j, "model_sha256", r->model_sha256);
		ct_json_kstr(j, "text", r->text);
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
out:
	ct_web_samples_close(&it, r);
	return rc;
}
