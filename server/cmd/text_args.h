/*
 * text_args.h - what `job submit` does with text or conversations, as
 * ct_text_submit_prepare (text_submit.h) fills it in and the tokenizer
 * (job_tokenizer.h) and conversation (chat_submit.h) steps add to it.
 */
#ifndef CT_SERVER_TEXT_ARGS_H
#define CT_SERVER_TEXT_ARGS_H

#include <stdint.h>

/* What `job submit` does with text: filled by ct_text_submit_prepare(). */
struct ct_text_submit {
	int argc;
	char **argv;		/* argv without the text options (+ temp token files) */
	char *tmp[2];		/* temporary train / eval token files (owned) */
	const char *tokenizer;	/* --tokenizer, or NULL */
	const char *prompt;	/* --sample-prompt, or "" */
	const char *chat_file;	/* --sample-chat FILE.json, or NULL */
	char *chat;		/* its conversation, checked (owned), or NULL */
	int64_t sample_seed;	/* --sample-seed, default 1 */
	int V;			/* the model's vocabulary (0: not read) */
	char *tk_path, *tk_dir;	/* a tokenizer.json kept with the job and its
				 * directory (job_tokenizer.h), owned; or NULL */
};

#endif
