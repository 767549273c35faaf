/*
 * sample.h - text out on the server: the per-round samples the
 * assimilator computes once per round (table round_sample, migration
 * db/migrations/002-text.sql, data/dl_text.h), the sampling `job sample`
 * runs (cmd/text_submit.h), and their place on the job page and in the
 * JSON API.
 *
 * A job's text settings live in table job_text: its tokenizer, and the
 * prompt and seed of its samples. Round 0 of round_sample is the base
 * model. Sampling runs with engine/ct_sample.h on the server's evaluation
 * device (eval.h: OpenCL when it conforms, else the C reference; the same
 * bits either way), each step computing only its new row
 * (temperature CT_JOB_SAMPLE_TEMPERATURE, top-k CT_JOB_SAMPLE_TOP_K,
 * daemons.sample_tokens tokens, default 64; 0 turns samples off).
 */
#ifndef CT_SERVER_SAMPLE_H
#define CT_SERVER_SAMPLE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "ct_buf.h"
#include "ct_gpt2.h"
#include "data/dl_text.h"

struct ct_db;
struct ct_json;
struct ct_server;

#define CT_JOB_SAMPLE_TEMPERATURE 0.8f
#define CT_JOB_SAMPLE_TOP_K 40
#define CT_SAMPLE_TEXT_MAX (1 << 20)	/* bytes of one sample's text */

/* What sampling needs of a job: its text settings and where its
 * tokenizer and chat template are stored. */
struct ct_sample_job {
	struct ct_job_text_row row;
	char tokenizer_sha[65];	/* a stored tokenizer.json's, or "" (dl_text.h) */
	char chat_cfg[PATH_MAX];	/* a chat sample's tokenizer_config.json */
};

/* Job jobid's sampling settings into *jt (free with ct_sample_job_free,
 * in every case). Returns 0, CT_ENOTFOUND (the job has no text settings)
 * or a db / store error. */
int ct_sample_job_load(struct ct_server *srv, struct ct_db *db, int64_t jobid,
		       struct ct_sample_job *jt);
void ct_sample_job_free(struct ct_sample_job *jt);

/* Sample `ntokens` from model with job jt's settings, prompt and seed,
 * appending clean UTF-8 to text: the prompt and its continuation, or for
 * a chat job the reply to its conversation. file: model's weights stream
 * from this file to the device (model then holds the shape only), or NULL.
 * Runs on the server's evaluation device (eval.h), on cpu if that device
 * fails. Returns 0 or a CT_E* code. */
int ct_sample_job_model(struct ct_server *srv, const struct ct_sample_job *jt,
			const struct ct_gpt2 *model, const char *file, const char *prompt,
			int ntokens, int64_t seed, struct ct_buf *text);

/* The assimilator's hook, after it averaged round round_idx of job jobid
 * into `out` (stored as out_sha; NULL or freed: loaded from the store) from
 * the model base_sha: store the round's sample and, for round 1, the base
 * model's (round 0; loaded from the store), unless stored already. out's
 * weights are freed (ct_gpt2_free) after the round's sample, before the
 * base is loaded: one model in memory at a time (plus the sampling
 * device's copy). Best effort: a failure is logged, never returned (a
 * sample must not hold a round up). Jobs without job_text get none. */
void ct_sample_after_round(struct ct_server *srv, struct ct_db *db, int64_t jobid,
			   int round_idx, const char *base_sha, const char *out_sha,
			   struct ct_gpt2 *out);

/* The job page's "Samples" section (nothing when the job has none) and
 * the JSON API's "samples" member: [{round, model_sha256, text}], round 0
 * first. Read from round_sample only. */
int ct_web_job_samples_html(struct ct_db *db, struct ct_buf *c, int64_t jobid);
int ct_web_job_samples_json(struct ct_db *db, struct ct_json *j, int64_t jobid);

/* Copy n bytes to out as valid UTF-8: each invalid byte, and each control
 * character but \n and \t, becomes U+FFFD. Returns 0 or a ct_buf error. */
int ct_sample_utf8_clean(const char *s, size_t n, struct ct_buf *out);

#endif
