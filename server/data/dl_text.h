/*
 * dl_text.h - text in, text out, in the database: a job's text settings
 * (table job_text, db/migrations/002-text.sql), the tokenizer files kept
 * with it (job_tokenizer_file, 021) and its per-round samples
 * (round_sample, 002): their rows and named reads and writes (the data
 * layer, dl.h). `job submit` writes them (cmd/text_submit.h,
 * cmd/job_tokenizer.h), the assimilator's samples and `job sample` read
 * them (daemons/sample.h).
 */
#ifndef CT_DL_TEXT_H
#define CT_DL_TEXT_H

#include <stddef.h>
#include <stdint.h>

struct ct_db;
struct ct_server;
struct ct_tokenizer;

/* job_text.tokenizer of a job that keeps its own tokenizer.json. */
#define CT_JOB_TOKENIZER_JSON "tokenizer.json"

/* The input directory's config.json, kept beside the tokenizer files under
 * this name (its bos/eos_token_id go back out with `job export --hf`) and
 * never copied out as it is. */
#define CT_JOB_INPUT_CONFIG "input-config.json"

#define CT_JOB_SAMPLE_MAX_PROMPT 255	/* bytes (job_text.sample_prompt) */
#define CT_JOB_SAMPLE_MAX_CHAT 65535	/* bytes of --sample-chat (job_text.sample_chat) */

/* A job's text settings. */
struct ct_job_text_row {
	char tokenizer[17];	/* a tokenizer's name, or CT_JOB_TOKENIZER_JSON */
	char prompt[CT_JOB_SAMPLE_MAX_PROMPT + 1];
	int64_t seed;
	char *chat;		/* the sample conversation (owned), "" for text */
};

/* Job jobid's text settings into *row (free its chat with
 * ct_job_text_row_free, in every case). Returns 0, CT_ENOTFOUND (the job
 * has none), CT_ENOMEM or a db error. */
int ct_job_text_get(struct ct_db *db, int64_t jobid, struct ct_job_text_row *row);
void ct_job_text_row_free(struct ct_job_text_row *row);

/* Record job jobid's text settings (chat: NULL for none). Returns 0 or a
 * db error. */
int ct_job_text_put(struct ct_db *db, int64_t jobid, const char *tokenizer,
		    const char *prompt, int64_t seed, const char *chat);

/* One file kept with a job: its name and the hash it is stored under. */
struct ct_kept_file {
	char name[260], sha[65];
};

/* List job jobid's kept file `name` (stored as sha), replacing an earlier
 * one of that name. Returns 0 or a db error. */
int ct_kept_file_put(struct ct_db *db, int64_t jobid, const char *name, const char *sha);

/* Every file kept with job jobid, by name, into a malloc'd array *files
 * (free() it; NULL when none) of *n. Returns 0, CT_ENOMEM or a db error. */
int ct_kept_file_list(struct ct_db *db, int64_t jobid, struct ct_kept_file **files,
		      size_t *n);

/* The tokenizer of a job whose job_text.tokenizer is `name`: for
 * CT_JOB_TOKENIZER_JSON, the hash of the job's stored tokenizer.json into
 * sha (65 bytes); "" for any other name. Returns 0, CT_ENOTFOUND (the job
 * lists no tokenizer.json) or a db error. */
int ct_job_tokenizer_find(struct ct_db *db, int64_t jobid, const char *name, char sha[65]);

/* Open a job's tokenizer: the stored file of hash sha when sha is not
 * empty, else the tokenizer called name. *tk as ct_tokenizer_open(). */
int ct_job_tokenizer_open(const struct ct_server *srv, const char *name, const char *sha,
			  struct ct_tokenizer **tk);

/* The store path of job jobid's kept file `name` into path (cap bytes):
 * 0, CT_ENOTFOUND (not kept) or a db error. */
int ct_job_tokenizer_kept(struct ct_server *srv, struct ct_db *db, int64_t jobid,
			  const char *name, char *path, size_t cap);

/* Whether round idx of job jobid has its sample: *have 0 or 1. Returns 0
 * or a db error. */
int ct_round_sample_have(struct ct_db *db, int64_t jobid, int idx, int *have);

/* Store the sample text of round idx's model sha (kept if one is there
 * already). Returns 0 or a db error. */
int ct_round_sample_put(struct ct_db *db, int64_t jobid, int idx, const char *sha,
			const char *text);

#endif
