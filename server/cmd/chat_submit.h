/*
 * chat_submit.h - `job submit --train-chat`: conversations from chat JSONL
 * files turned into the job's training and evaluation token files before
 * anything is stored (called by text_submit.c's ct_text_submit_prepare).
 *
 * Each conversation is rendered with the chat template of the --model
 * directory's tokenizer_config.json and encoded with its tokenizer.json,
 * with the loss mask of lib/ct_chat_mask.h (the assistant replies and
 * their end-of-turn tokens trained). Conversations are packed whole, in
 * file order, into rows of --seq tokens (a row is one sequence of a
 * batch), each row padded with the tokenizer's end-of-text id (never
 * trained) where the next conversation does not fit; the file ends with
 * one more pad, the target of the last row's last position. The work
 * generator cuts such a file between rows (wg.c), so no conversation
 * is ever split across two sequences or two shards. See doc/chat.md.
 */
#ifndef CT_SERVER_CHAT_SUBMIT_H
#define CT_SERVER_CHAT_SUBMIT_H

#include "commands.h"
#include "text_args.h"

struct ct_chat_submit_args {
	const char *model;	/* --model HF_DIR */
	const char *train;	/* --train-chat FILE */
	const char *eval;	/* --eval-chat FILE, or NULL */
	double fraction;	/* --eval-fraction (0 with --eval-chat) */
	int truncate;		/* --truncate: cut conversations to --seq tokens */
	int T;			/* --seq */
};

/* Encode and pack a->train (and a->eval, or the last max(1, F * n) of
 * the training conversations as the evaluation set) into two temporary
 * version 3 token files under the upload directory, appending "--train
 * TMP --eval TMP" to ts->argv (ts->tmp owns the paths). A malformed line,
 * a conversation the template refuses, or one longer than --seq without
 * --truncate is refused with FILE:LINE. Returns 0, CT_EUSAGE, CT_EFORMAT,
 * CT_EINVAL or file errors. */
int ct_chat_submit_prepare(struct ct_cmd_ctx *ctx, struct ct_text_submit *ts,
			   const struct ct_chat_submit_args *a);

#endif
