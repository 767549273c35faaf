/*
 * ct_chat_mask.h - a conversation as the token ids a model trains on and,
 * per token, whether the loss counts it: the ids of the conversation's
 * text rendered by its chat template (ct_chat.h) and encoded by its
 * tokenizer (ct_tokenizer.h), exactly what Hugging Face's
 * apply_chat_template(tokenize=True) gives; trained are the tokens of
 * each assistant message and the end-of-turn token that closes it,
 * found as SFT libraries find them, by rendering the conversation's
 * prefixes (doc/chat.md, "Which tokens are trained"). The flags are
 * those of a version 3 token file (ct_tokens.h).
 *
 *   rc = ct_chat_encode(chat, tk, conv, "data.jsonl", 7, &ids, &flags);
 */
#ifndef CT_CHAT_MASK_H
#define CT_CHAT_MASK_H

#include <stddef.h>

#include "ct_buf.h"
#include "ct_chat.h"
#include "ct_jv.h"
#include "ct_tokenizer.h"

/* Append conversation conv's ids to *ids and one flag byte per id to
 * *flags: CT_TOKENS_TRAINED on the tokens that overlap an assistant
 * reply (from where the template's generation prompt ends to the end of
 * the end-of-turn text after the reply, white space after it excluded),
 * CT_TOKENS_START on the first (never trained). name:lineno label the
 * errors. Returns 0; CT_EINVAL naming the message when the template
 * renders a reply's prefix differently from the whole conversation (its
 * span cannot be found) or the tokenizer changes the text (a normaliser);
 * ct_chat_render's errors; CT_ENOMEM / CT_ETOOBIG. On failure *ids and
 * *flags keep what they had before the call. */
int ct_chat_encode(const struct ct_chat *c, const struct ct_tokenizer *tk,
		   const struct ct_jv *conv, const char *name, long lineno,
		   struct ct_tokvec *ids, struct ct_buf *flags);

/* One encoded conversation of a chat JSONL file: its line, its n ids and
 * flags (valid during the call). A non-zero return stops the walk. */
typedef int (*ct_chat_conv_fn)(void *arg, long lineno, const uint32_t *ids,
			       const uint8_t *flags, size_t n);

/* Parse and encode every line of a chat JSONL text (n bytes; lines of
 * white space only are skipped; a line is at most 64 MiB) in order,
 * handing each conversation to fn. Returns 0, the first error
 * (ct_chat_parse_line's or ct_chat_encode's, naming name:line) or fn's
 * return. */
int ct_chat_encode_lines(const struct ct_chat *c, const struct ct_tokenizer *tk,
			 const char *text, size_t n, const char *name,
			 ct_chat_conv_fn fn, void *arg);

#endif
