/*
 * text_submit.h - `job submit --train-text` and `--train-chat` (tokenise
 * before anything is stored: the text or conversations become the job's
 * token files; its tokenizer and sample settings are kept with it,
 * data/dl_text.h) and `job sample` (a sample of any round's model,
 * daemons/sample.h).
 */
#ifndef CT_SERVER_TEXT_SUBMIT_H
#define CT_SERVER_TEXT_SUBMIT_H

#include <getopt.h>
#include <stdint.h>

#include "commands.h"
#include "text_args.h"

/* Take the text options out of submit's argv:
 *   --train-text FILE... (files up to the next option), --eval-text FILE,
 *   --eval-fraction F (0 < F <= 0.5: the last F of the training text's
 *   tokens are held out), --tokenizer NAME, --sample-prompt TEXT,
 *   --sample-seed S, --sample-chat FILE.json (one conversation, as a line
 *   of a chat JSONL file, ct_chat.h; needs a --model HF_DIR with a chat
 *   template: it must render before anything is stored; samples are then
 *   the model's reply to it, as `ctune chat` gives).
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

/* `ctune-server job sample DIR ID [--round R] [--prompt TEXT] [--tokens N]
 * [--seed S]`: print a sample of round R's model (0 = base; default: the
 * newest averaged one) with the job's tokenizer, prompt and seed; its
 * options are ct_job_sample_opts. */
int ct_cmd_job_sample(struct ct_cmd_ctx *ctx, int argc, char **argv);
extern const struct option ct_job_sample_opts[];

#endif
