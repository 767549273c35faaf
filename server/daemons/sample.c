/*
 * sample.c - the per-round samples and the sampling `job sample` uses (see
 * sample.h).
 */
#include "sample.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_base.h"
#include "ct_chat.h"
#include "ct_chat_reply.h"
#include "ct_err.h"
#include "ct_log.h"
#include "ct_sample.h"
#include "ct_tokenizer.h"
#include "ct_utf8.h"
#include "data/db.h"
#include "data/dl_text.h"
#include "data/server.h"
#include "eval.h"

int ct_sample_utf8_clean(const char *s, size_t n, struct ct_buf *out)
{
	return ct_utf8_clean(s, n, out);
}

int ct_sample_job_load(struct ct_server *srv, struct ct_db *db, int64_t jobid,
		       struct ct_sample_job *jt)
{
	int rc;

	jt->chat_cfg[0] = '\0';
	jt->tokenizer_sha[0] = '\0';
	rc = ct_job_text_get(db, jobid, &jt->row);
	if (rc == 0)
		rc = ct_job_tokenizer_find(db, jobid, jt->row.tokenizer, jt->tokenizer_sha);
	if (rc == 0 && jt->row.chat[0] != '\0')
		rc = ct_job_tokenizer_kept(srv, db, jobid, "tokenizer_config.json", jt->chat_cfg,
					   sizeof(jt->chat_cfg));
	return rc;
}

void ct_sample_job_free(struct ct_sample_job *jt)
{
	ct_job_text_row_free(&jt->row);
}

/* The text of one sample into raw: the reply to the job's conversation
 * (ct_chat_reply.h), or the continuation of prompt. */
static int generate(const struct ct_sample_job *jt, const struct ct_gpt2 *model,
		    const struct ct_tokenizer *tk, const char *dev, const char *prompt,
		    const struct ct_sample_params *sp, struct ct_buf *raw)
{
	const char *chat = jt->row.chat;
	struct ct_chat *c = NULL;
	struct ct_jv *conv = NULL;
	int rc;

	if (chat[0] == '\0')
		return ct_sample_text(model, tk, dev, prompt, strlen(prompt), sp, raw);
	rc = ct_chat_open(jt->chat_cfg, &c);
	if (rc == 0)
		rc = ct_chat_parse_line(chat, strlen(chat), "sample_chat", 1, &conv);
	if (rc == 0)
		rc = ct_chat_reply(model, c, tk, conv, dev, sp, NULL, NULL, raw, NULL);
	ct_jv_free(conv);
	ct_chat_free(c);
	return rc;
}

int ct_sample_job_model(struct ct_server *srv, const struct ct_sample_job *jt,
			const struct ct_gpt2 *model, const char *file, const char *prompt,
			int ntokens, int64_t seed, struct ct_buf *text)
{
	struct ct_seval_file f = { file, model->lay.total };
	const char *dev = ct_seval_device(srv);	/* same bits on every device */
	struct ct_tokenizer *tk = NULL;
	struct ct_sample_params sp;
	struct ct_buf raw;
	int rc;

	ct_sample_params_default(&sp);
	sp.ntokens = ntokens;
	sp.temperature = CT_JOB_SAMPLE_TEMPERATURE;
	sp.top_k = CT_JOB_SAMPLE_TOP_K < model->cfg.V ? CT_JOB_SAMPLE_TOP_K : 0;
	sp.seed = (uint64_t)seed;
	if (file != NULL) {	/* the weights go from the file to the device */
		sp.load = ct_seval_load_file;
		sp.load_arg = &f;
	}
	ct_buf_init(&raw, CT_SAMPLE_TEXT_MAX);
	rc = ct_job_tokenizer_open(srv, jt->row.tokenizer, jt->tokenizer_sha, &tk);
	if (rc == 0)
		rc = generate(jt, model, tk, dev, prompt, &sp, &raw);
	if ((rc == CT_ECL || rc == CT_EDEVNOMEM || rc == CT_EUNSUPP) && strcmp(dev, "cpu") != 0) {
		ct_log_warn("sample: %s failed (%s); sampling on cpu", dev, ct_errmsg(rc));
		ct_buf_reset(&raw);
		rc = generate(jt, model, tk, "cpu", prompt, &sp, &raw);
	}
	if (rc == 0 && jt->row.chat[0] == '\0')	/* a chat sample is the reply alone */
		rc = ct_sample_utf8_clean(prompt, strlen(prompt), text);
	if (rc == 0)
		rc = ct_sample_utf8_clean((const char *)raw.data, raw.len, text);
	ct_buf_free(&raw);
	ct_tokenizer_free(tk);
	return rc;
}

/* Sample the model of hash sha (model: it in memory, or NULL: loaded from
 * the store here) unless round idx has its sample already. */
static int store_sample(struct ct_server *srv, struct ct_db *db,
			const struct ct_sample_job *jt, int64_t jobid, int idx, const char *sha,
			const struct ct_gpt2 *model, int ntokens)
{
	struct ct_gpt2 shape = { 0 };
	struct ct_buf text;
	char path[PATH_MAX] = "";
	int have = 0;
	int rc;

	rc = ct_round_sample_have(db, jobid, idx, &have);
	if (rc < 0 || have)
		return rc;
	if (model == NULL || model->params == NULL) {
		/* the shape here; the weights stream from the store to the
		 * sampling device (eval.h): never in this process's memory */
		rc = ct_server_download_path(srv, sha, path, sizeof(path));
		if (rc == 0)
			rc = ct_base_read_config(path, &shape.cfg, NULL);
		if (rc < 0)
			return rc;
		ct_gpt2_layout(&shape.cfg, &shape.lay);
		model = &shape;
	}
	ct_buf_init(&text, CT_SAMPLE_TEXT_MAX);
	rc = ct_sample_job_model(srv, jt, model, path[0] != '\0' ? path : NULL, jt->row.prompt,
				 ntokens, jt->row.seed, &text);
	if (rc == 0)
		rc = ct_round_sample_put(db, jobid, idx, sha, ct_buf_cstr(&text));
	ct_buf_free(&text);
	return rc;
}

void ct_sample_after_round(struct ct_server *srv, struct ct_db *db, int64_t jobid,
			   int round_idx, const char *base_sha, const char *out_sha,
			   struct ct_gpt2 *out)
{
	struct ct_sample_job jt;
	long ntok = 64;
	int rc;

	rc = ct_conf_get_int(srv->conf, "daemons.sample_tokens", 64, 0, CT_SAMPLE_MAX_TOKENS,
			     &ntok);
	if (rc < 0 || ntok == 0)
		return;
	rc = ct_sample_job_load(srv, db, jobid, &jt);
	if (rc == CT_ENOTFOUND) {
		ct_sample_job_free(&jt);
		return;
	}
	if (rc == 0)
		rc = store_sample(srv, db, &jt, jobid, round_idx, out_sha, out, (int)ntok);
	if (out != NULL)	/* not with the base's weights below */
		ct_gpt2_free(out);
	if (rc == 0 && round_idx == 1)
		rc = store_sample(srv, db, &jt, jobid, 0, base_sha, NULL, (int)ntok);
	if (rc < 0)
		ct_log_warn("assimilator: job %lld round %d: no sample: %s", (long long)jobid,
			    round_idx, ct_errmsg(rc));
	ct_sample_job_free(&jt);
}
