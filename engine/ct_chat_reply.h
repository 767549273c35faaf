/*
 * ct_chat_reply.h - a chat model's reply to a conversation: the
 * conversation rendered by the model's own chat template with
 * add_generation_prompt (lib/ct_chat.h), encoded with its tokenizer.json,
 * and sampled (ct_sample.h: the same seed, the same reply on every
 * device) until the model ends its turn: the tokenizer_config.json's
 * eos_token, or the token the template closes an assistant message with
 * (<|eot_id|>, <|im_end|>; found by rendering a conversation whose reply
 * is a marker and encoding what follows it), or the token budget. Used
 * by `ctune chat` and the server's per-round chat samples.
 */
#ifndef CT_CHAT_REPLY_H
#define CT_CHAT_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "ct_buf.h"
#include "ct_chat.h"
#include "ct_gpt2.h"
#include "ct_sample.h"
#include "ct_tokenizer.h"

#define CT_CHAT_MAX_STOP 2

/* The ids that end a reply (eos_token, the template's end of turn; the
 * same id once), into ids; *n of them (0..CT_CHAT_MAX_STOP). A template
 * that fails on the marker conversation gives only eos. Returns 0 or
 * CT_ENOMEM. */
int ct_chat_stop_ids(const struct ct_chat *c, const struct ct_tokenizer *tk,
		     uint32_t ids[CT_CHAT_MAX_STOP], int *n);

/* Append to *out the text of a reply to conv (ct_chat_parse_line's form)
 * from model on device, at most sp->ntokens tokens, sampled with sp (its
 * loader too); the stop token is not part of it. on_text, when not NULL,
 * gets each token's bytes as it comes. *ended (may be NULL) is 1 when the
 * model ended its turn, 0 when the budget ran out. A rendered
 * conversation longer than the model's context (maxT - 1 tokens) is
 * refused (CT_ETOOBIG: it says how long). Returns 0 or a CT_E* code (the
 * template's, the tokenizer's, the backend's). */
int ct_chat_reply(const struct ct_gpt2 *model, const struct ct_chat *c,
		  const struct ct_tokenizer *tk, const struct ct_jv *conv,
		  const char *device, const struct ct_sample_params *sp,
		  int (*on_text)(void *arg, const unsigned char *s, size_t n), void *arg,
		  struct ct_buf *out, int *ended);

#endif
