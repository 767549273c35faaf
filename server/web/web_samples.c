/*
 * web_samples.c - the per-round samples on the job page and in the JSON
 * API (see sample.h). Read from round_sample only: the assimilator wrote
 * them once per round; a page view never samples.
 */
#include "sample.h"

#include <stdlib.h>

#include "ct_err.h"
#include "db.h"
#include "tmpl.h"
#include "web_json.h"

/* At most this many samples on a page (the base and 200 rounds). */
#define SAMPLES_MAX 201

static int query(struct ct_db *db, int64_t jobid, struct ct_db_res **res)
{
	return ct_db_query(db, res, "SELECT round_idx, model_sha256, sample_text FROM "
			   "round_sample WHERE jobid=? ORDER BY round_idx LIMIT ?", "li",
			   jobid, SAMPLES_MAX);
}

int ct_web_job_samples_html(struct ct_db *db, struct ct_buf *c, int64_t jobid)
{
	struct ct_db_res *res = NULL;
	int rc = query(db, jobid, &res);

	if (rc < 0 || ct_db_nrows(res) == 0) {
		ct_db_res_free(res);
		return rc;
	}
	rc = ct_buf_appends(c, "<h2>Samples</h2><p>What the model writes from the same "
			    "prompt and seed, before fine-tuning and after each round.</p>"
			    "<table id=\"samples\"><thead><tr><th>Model</th><th>Sample</th>"
			    "</tr></thead><tbody>");
	while (rc == 0 && ct_db_next(res) > 0) {
		int64_t idx = ct_db_int(res, 0);

		if (idx == 0)
			rc = ct_buf_appends(c, "<tr class=\"sample\" data-round=\"0\"><td>base</td>");
		else
			rc = ct_tmpl_printf(c, "<tr class=\"sample\" data-round=\"%lld\"><td>"
					    "round %lld</td>", (long long)idx, (long long)idx);
		if (rc == 0)
			rc = ct_tmpl_printf(c, "<td><pre class=\"sample\">%s</pre></td></tr>",
					    ct_db_str(res, 2));
	}
	if (rc == 0)
		rc = ct_buf_appends(c, "</tbody></table>");
	ct_db_res_free(res);
	return rc;
}

int ct_web_job_samples_json(struct ct_db *db, struct ct_json *j, int64_t jobid)
{
	struct ct_db_res *res = NULL;
	int rc = query(db, jobid, &res);

	if (rc < 0)
		return rc;
	ct_json_key(j, "samples");
	ct_json_arr_begin(j);
	while (ct_db_next(res) > 0) {
		ct_json_obj_begin(j);
		ct_json_kint(j, "round", ct_db_int(res, 0));
		ct_json_kstr(j, "model_sha256", ct_db_str(res, 1));
		ct_json_kstr(j, "text", ct_db_str(res, 2));
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
	ct_db_res_free(res);
	return 0;
}
