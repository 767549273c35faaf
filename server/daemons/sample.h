/*
 * sample.h - text in, text out on the server: `job submit --train-text`
 * (tokenise before anything is stored), the per-round samples the
 * assimilator computes once per round (table round_sample, migration
 * db/migrations/002-text.sql), `job sample`, and their place on the job
 * page and in the JSON API.
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

#include <getopt.h>

#include <stddef.h>
#include <stdint.h>

#include "cmd/commands.h"
#include "ct_buf.h"
#include "ct_gpt2.h"

struct ct_json;

#define CT_JOB_SAMPLE_TEMPERATURE 0.8f
#define CT_JOB_SAMPLE_TOP_K 40
#define CT_JOB_SAMPLE_MAX_PROMPT 255	/* bytes (job_text.sample_prompt) */

/* What `job submit` does with text: filled by ct_text_submit_prepare(). */
struct ct_text_submit {
	int argc;
	char **argv;		/* argv without the text options (+ temp token files) */
	char *tmp[2];		/* temporary train / eval token files (owned) */
	const char *tokenizer;	/* --tokenizer, or NULL */
	const char *prompt;	/* --sample-prompt, or "" */
	int64_t sample_seed;	/* --sample-seed, default 1 */
	int V;			/* the model's vocabulary (0: not read) */
	char *tk_path, *tk_dir;	/* a tokenizer.json kept with the job and its
				 * directory (job_tokenizer.h), owned; or NULL */
};

/* Take the text options out of submit's argv:
 *   --train-text FILE... (files up to the next option), --eval-text FILE,
 *   --eval-fraction F (0 < F <= 0.5: the last F of the training text's
 *   tokens are held out), --tokenizer NAME, --sample-prompt TEXT,
 *   --sample-seed S.
 * With --train-text the text is tokenised (tokenizer: --tokenizer NAME or
 * PATH, else a Hugging Face --model directory's tokenizer.json, else the
 * one of the model's vocabulary) into temporary token files under the
 * project's upload directory, and "--train TMP --eval TMP" are appended to
 * ts->argv. A --train/--eval file that is text rather than a token file
 * gets CT_EFORMAT with a hint. argv is borrowed (ts->argv points into it).
 * Returns 0 or CT_EUSAGE / CT_EFORMAT / CT_EINVAL / file errors; call
 * ct_text_submit_free() in every case. */
int ct_text_submit_prepare(struct ct_cmd_ctx *ctx, int argc, char **argv,
			   struct ct_text_submit *ts);

/* Record job jobid's text settings (job_text). Returns 0 or a db error. */
int ct_text_submit_record(struct ct_cmd_ctx *ctx, const struct ct_text_submit *ts,
			  int64_t jobid);

/* Remove the temporary files and free ts->argv. */
void ct_text_submit_free(struct ct_text_submit *ts);

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

/* `ctune-server job sample DIR ID [--round R] [--prompt TEXT] [--tokens N]
 * [--seed S]`: print a sample of round R's model (0 = base; default: the
 * newest averaged one) with the job's tokenizer, prompt and seed; its
 * options are ct_job_sample_opts. */
int ct_cmd_job_sample(struct ct_cmd_ctx *ctx, int argc, char **argv);
extern const struct option ct_job_sample_opts[];

/* The job page's "Samples" section (nothing when the job has none) and
 * the JSON API's "samples" member: [{round, model_sha256, text}], round 0
 * first. Read from round_sample only. */
int ct_web_job_samples_html(struct ct_db *db, struct ct_buf *c, int64_t jobid);
int ct_web_job_samples_json(struct ct_db *db, struct ct_json *j, int64_t jobid);

/* Copy n bytes to out as valid UTF-8: each invalid byte, and each control
 * character but \n and \t, becomes U+FFFD. Returns 0 or a ct_buf error. */
int ct_sample_utf8_clean(const char *s, size_t n, struct ct_buf *out);

#endif
