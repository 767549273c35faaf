/*
 * cmd_tokens_chat.h - chat conversations to a masked token file and back
 * (cmd_tokens_chat.c; called by cmd_tokens_text.c's encode and decode).
 */
#ifndef CMD_TOKENS_CHAT_H
#define CMD_TOKENS_CHAT_H

#include "ct_tokens.h"

/* Encode the chat JSONL file in with the template and tokenizer of tokdir
 * into the version 3 token file out (atomic). Returns 0 or an error with
 * its detail (FILE:LINE for a line). */
int ct_tokens_encode_chat(const char *tokdir, const char *in, const char *out);

/* Print t as one JSON line per conversation, {"ids": [...], "train":
 * [...]}; every id must be < vocab (CT_ERANGE naming name). */
int ct_tokens_decode_json(const struct ct_tokens *t, int vocab, const char *name);

#endif
