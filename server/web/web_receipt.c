/*
 * web_receipt.c - round receipts on the web (doc/receipts.md): the file
 * itself at /job/N/round/R/receipt (text, never changes), their list in
 * the JSON API (/api/v1/job/N/receipts) and on the job page, and the
 * project's public key on the home page, each with the paragraph that
 * tells a volunteer what a receipt is and how to check one. Declared in
 * web_int.h.
 */
#include "tmpl.h"
#include "web_int.h"
#include "web_json.h"
#include "data/dl_receipt.h"
#include "data/dl_web.h"
#include "data/server.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_receipt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A decimal >= 1 with no sign or leading zero at *p, up to `end`. */
static int64_t number(const char **p)
{
	char *end;
	long long v;

	if (**p < '1' || **p > '9')
		return 0;
	errno = 0;
	v = strtoll(*p, &end, 10);
	if (errno != 0 || v < 1)
		return 0;
	*p = end;
	return v;
}

static int parse(const char *path, int64_t *job, int64_t *round)
{
	const char *p = path;

	if (strncmp(p, "/job/", 5) != 0)
		return 0;
	p += 5;
	*job = number(&p);
	if (*job == 0 || strncmp(p, "/round/", 7) != 0)
		return 0;
	p += 7;
	*round = number(&p);
	return *round > 0 && *round <= 1000000 && strcmp(p, "/receipt") == 0;
}

int ct_web_receipt_match(const char *path)
{
	int64_t j, r;

	return parse(path, &j, &r);
}

int ct_web_page_receipt(struct ct_web_req *req, struct ct_web_resp *resp)
{
	char sha[CT_SHA256_HEXLEN + 1], path[4096];
	unsigned char *data = NULL;
	int64_t job = 0, round = 0, size = 0;
	size_t len = 0;
	int rc;

	if (!parse(req->path, &job, &round))
		return ct_error(CT_ENOTFOUND, "no such receipt");
	rc = ct_dl_receipt_get(req->db, job, (int)round, sha, &size);
	if (rc == 0)
		return ct_error(CT_ENOTFOUND, "job %lld has no receipt for round %lld (yet)",
				(long long)job, (long long)round);
	if (rc > 0)
		rc = ct_server_download_path(req->srv, sha, path, sizeof(path));
	if (rc >= 0)
		rc = ct_file_read_all(path, CT_RECEIPT_MAX_BYTES, &data, &len);
	if (rc >= 0)
		rc = ct_buf_append(&resp->body, data, len);
	free(data);
	if (rc < 0)
		return rc;
	resp->content_type = "text/plain; charset=us-ascii";
	/* a receipt never changes */
	snprintf(resp->cache_control, sizeof(resp->cache_control), "public, max-age=86400");
	snprintf(resp->etag, sizeof(resp->etag), "\"%s\"", sha);
	return 0;
}

int64_t ct_web_receipt_api_match(const char *what)
{
	const char *p = what;
	int64_t job;

	if (strncmp(p, "job/", 4) != 0)
		return 0;
	p += 4;
	job = number(&p);
	return job > 0 && strcmp(p, "/receipts") == 0 ? job : 0;
}

static void key_hex(const struct ct_server *srv, char out[2 * CT_SIGN_PUB_LEN + 1])
{
	ct_hex_encode(srv->sign_pub, CT_SIGN_PUB_LEN, out);
}

int ct_web_api_receipts(struct ct_web_req *req, struct ct_json *j, int64_t jobid)
{
	struct ct_dl_receipt_row *rows = NULL;
	char key[2 * CT_SIGN_PUB_LEN + 1], url[128];
	size_t n = 0;
	int rc = ct_dl_receipt_list(req->db, jobid, &rows, &n);

	if (rc < 0)
		return rc;
	key_hex(req->srv, key);
	ct_json_obj_begin(j);
	ct_json_kint(j, "job", jobid);
	ct_json_kstr(j, "key", key);
	ct_json_key(j, "receipts");
	ct_json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		snprintf(url, sizeof(url), "/job/%lld/round/%lld/receipt", (long long)jobid,
			 (long long)rows[i].idx);
		ct_json_obj_begin(j);
		ct_json_kint(j, "round", rows[i].idx);
		ct_json_kstr(j, "sha256", rows[i].sha);
		ct_json_kint(j, "size", rows[i].size);
		ct_json_kstr(j, "url", url);
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
	ct_json_obj_end(j);
	free(rows);
	return 0;
}

int ct_web_receipt_home_html(struct ct_web_req *req, struct ct_buf *c)
{
	char key[2 * CT_SIGN_PUB_LEN + 1];

	key_hex(req->srv, key);
	return ct_tmpl_printf(c, "<p id=\"receipt-key\">Every finished round of a job has a "
		"receipt signed with this project's key, <code>%s</code> (Ed25519): "
		"anyone can check a job with <code>ctune verify</code>, no account "
		"needed. See a job's page.</p>", key);
}

/* "agree up to step 4, part at step 5" and its kin, for one pair. */
static void parting_words(const struct ct_web_parting *p, char *s, size_t cap)
{
	if (p->link < 0)
		snprintf(s, cap, "agree throughout (%lld steps)", (long long)p->steps);
	else if (p->parted == p->agreed + 1)
		snprintf(s, cap, "agree up to step %lld, part at step %lld", (long long)p->agreed,
			 (long long)p->parted);
	else
		snprintf(s, cap, "agree up to step %lld, part at one of steps %lld-%lld",
			 (long long)p->agreed, (long long)p->agreed + 1, (long long)p->parted);
}

int ct_web_partings_html(struct ct_web_req *req, struct ct_buf *c, int64_t jobid)
{
	struct ct_web_parting *p = NULL;
	char words[128];
	size_t n = 0;
	int rc = ct_web_job_partings(req->db, jobid, &p, &n);

	if (rc == 0 && n > 0)
		rc = ct_buf_appends(c, "<h2>Where replicas parted</h2><p>Every result carries "
			"a hash chain: a fingerprint of the whole training state every few "
			"steps, the last one the result's own hash. Two computers that conform "
			"to the project's arithmetic give the same chain bit for bit. A "
			"computer that does not (another GPU, another compiler) is compared "
			"by tolerance instead, and its chain shows where its run parted from "
			"the accepted one: at the last step, a rounding difference; at the "
			"first, a different computation.</p><table id=\"partings\"><thead><tr>"
			"<th class=\"num\">Round</th><th>Work unit</th><th>Accepted result"
			"</th><th>Compared by tolerance</th><th>Hash chains</th></tr></thead>"
			"<tbody>");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		parting_words(&p[i], words, sizeof(words));
		rc = ct_tmpl_printf(c, "<tr><td class=\"num\">%lld</td><td>%s</td><td>%s</td>"
			"<td>%s</td><td>%s</td></tr>", (long long)p[i].round, p[i].wu,
			p[i].canonical, p[i].other, words);
	}
	if (rc == 0 && n > 0)
		rc = ct_buf_appends(c, "</tbody></table>");
	free(p);
	return rc;
}

int ct_web_partings_json(struct ct_web_req *req, struct ct_json *j, int64_t jobid)
{
	struct ct_web_parting *p = NULL;
	size_t n = 0;
	int rc = ct_web_job_partings(req->db, jobid, &p, &n);

	if (rc < 0)
		return rc;
	ct_json_key(j, "partings");
	ct_json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		ct_json_obj_begin(j);
		ct_json_kint(j, "round", p[i].round);
		ct_json_kint(j, "shard", p[i].shard);
		ct_json_kstr(j, "wu", p[i].wu);
		ct_json_kstr(j, "canonical", p[i].canonical);
		ct_json_kstr(j, "other", p[i].other);
		ct_json_kint(j, "steps", p[i].steps);
		ct_json_kint(j, "chain_every", p[i].every);
		/* -1: the chains agree throughout */
		ct_json_kint(j, "first_link", p[i].link);
		ct_json_kint(j, "agreed_step", p[i].agreed);
		ct_json_kint(j, "parted_step", p[i].parted);
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
	free(p);
	return 0;
}

int ct_web_receipt_job_html(struct ct_web_req *req, struct ct_buf *c, int64_t jobid)
{
	struct ct_dl_receipt_row *rows = NULL;
	size_t n = 0;
	int rc = ct_dl_receipt_list(req->db, jobid, &rows, &n);

	if (rc == 0)
		rc = ct_tmpl_printf(c, "<h2>Receipts</h2><p>When a round closes, the server "
			"signs a receipt: the round's starting model, each work unit's "
			"inputs (token shard, seed, steps), the hash of the result its "
			"volunteers agreed on and who they were, the result's hash chain "
			"(a fingerprint of the training state every few steps), the model "
			"that came out, and the previous round's receipt, so the receipts "
			"chain from the base model to the final one. You do not have to "
			"trust this server: <code>ctune verify URL %lld --sample 1</code> "
			"checks the signatures and the chain, downloads the inputs and "
			"recomputes a work unit on your computer, comparing its hash chain "
			"link by link, so a difference names the first training step where "
			"your run and the stated one part (<code>--all</code> recomputes "
			"every one and the aggregate).</p><p>",
			(long long)jobid);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = ct_tmpl_printf(c, "%s<a href=\"/job/%lld/round/%lld/receipt\">round %lld</a>",
			i ? " · " : "", (long long)jobid, (long long)rows[i].idx,
			(long long)rows[i].idx);
	if (rc == 0)
		rc = ct_buf_appends(c, n ? "</p>" : "None yet.</p>");
	free(rows);
	return rc;
}
