/*
 * job_tokenizer.h - a job's own tokenizer: the tokenizer.json of a Hugging
 * Face model directory (`job submit --model HF_DIR`, or `--tokenizer
 * PATH`), kept with the job so that the server can decode.
 *
 * GPT-2 and byte jobs name their tokenizer in job_text.tokenizer ("gpt2",
 * "bytes"), which every server can open again. A tokenizer.json is a file:
 * at submit it goes into the content store (kind "tokenizer", keep 1,
 * never deleted) together with the tokenizer_config.json,
 * special_tokens_map.json and generation_config.json beside it, each
 * listed in table job_tokenizer_file (migration 021), and job_text.tokenizer
 * is CT_JOB_TOKENIZER_JSON. The per-round samples (sample.c) open it from
 * the store; `job export --hf` copies the files into the exported
 * directory.
 */
#ifndef CT_SERVER_JOB_TOKENIZER_H
#define CT_SERVER_JOB_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "commands.h"
#include "ct_tokenizer.h"
#include "data/dl_text.h"

struct ct_server;
struct ct_db;
struct ct_text_submit;

/* Submit, before tokenising: the tokenizer of the model at model_arg.
 * When it is a Hugging Face directory, ts->V is its config.json's
 * vocab_size and, unless --tokenizer was given, its tokenizer.json is the
 * job's (ts->tk_path, ts->tk_dir set; ts->tokenizer points at tk_path). A
 * --tokenizer PATH (a tokenizer.json or its directory) is made absolute
 * the same way. text: the submit has --train-text, so a directory without
 * tokenizer.json is an error (CT_ENOENT saying what to do). Returns 0 or a
 * CT_E* code (config.json's errors, a missing --tokenizer file). */
int ct_job_tokenizer_prepare(struct ct_cmd_ctx *ctx, const char *model_arg, int text,
			     struct ct_text_submit *ts);

/* Submit, once job jobid exists: store ts->tk_path and the other tokenizer
 * files of ts->tk_dir and list them in job_tokenizer_file. First the
 * tokenizer is opened and checked against the model's vocabulary: when it
 * cannot decode for the job (unsupported, or more ids than the model) the
 * job gets no samples, a warning says why, and 1 is returned. Returns 0
 * (stored: job_text.tokenizer is CT_JOB_TOKENIZER_JSON), 1, or a CT_E*
 * store/db error. */
int ct_job_tokenizer_record(struct ct_cmd_ctx *ctx, const struct ct_text_submit *ts,
			    int64_t jobid);

/* Encode one document's text (n bytes) like ct_tokenizer_encode(), in
 * 1 MiB parts, with a progress line on standard error ("job submit: NAME:
 * MB done of total, tokens, MB/s") for texts over 16 MiB. */
int ct_job_tokenizer_encode(const struct ct_tokenizer *tk, const char *name,
			    const void *text, size_t n, struct ct_tokvec *out);

/* Keep dir/config.json (when there is one, not over the side-file cap) as
 * job jobid's CT_JOB_INPUT_CONFIG: `job submit --model HF_DIR` calls it
 * for every directory, so exports know the input's special token ids and
 * dtype. Returns 0 or a store / db error. */
int ct_job_tokenizer_keep_config(struct ct_cmd_ctx *ctx, const char *dir, int64_t jobid);

/* Copy job jobid's stored tokenizer files into directory dir (atomically,
 * each under its own name; not CT_JOB_INPUT_CONFIG); *n (may be NULL) gets
 * how many. A job without them copies nothing. Returns 0 or a CT_E* code. */
int ct_job_tokenizer_export(struct ct_server *srv, struct ct_db *db, int64_t jobid,
			    const char *dir, int *n);

#endif
