/*
 * ct_chat.h - conversations and a model's chat template: the template and
 * special tokens of its tokenizer_config.json, rendered by lib/ct_jinja
 * with the variables Hugging Face passes (messages, add_generation_prompt,
 * tools and documents when the conversation has them, the special tokens
 * as strings), and the chat JSONL files people fine-tune on: one
 * conversation a line, {"messages": [{"role": ..., "content": ...}, ...]}
 * (optionally "tools", "documents") or Alpaca's {"instruction", "input",
 * "output"} (a user message, instruction then "\n\n" and input when there
 * is one, and an assistant message). See doc/chat.md.
 *
 *   struct ct_chat *c;
 *   rc = ct_chat_open("MODEL_DIR", &c);
 *   rc = ct_chat_parse_line(line, n, "data.jsonl", 7, &conv);
 *   rc = ct_chat_render(c, conv, 0, &text);
 *   ct_jv_free(conv); ct_chat_free(c);
 */
#ifndef CT_CHAT_H
#define CT_CHAT_H

#include <stddef.h>

#include "ct_buf.h"
#include "ct_jv.h"

struct ct_chat;

/* Read path's tokenizer_config.json (path is the file or its directory):
 * its chat_template (a string, or a list of {"name", "template"} of which
 * "default" is taken) parsed by ct_jinja, its special tokens. Returns 0;
 * CT_ENOENT, CT_EFORMAT (not JSON, no chat_template: the detail says so)
 * or ct_jinja_parse's errors (CT_EUNSUPP naming the construct and line).
 * *out owned by the caller (ct_chat_free); NULL on failure. */
int ct_chat_open(const char *path, struct ct_chat **out);

/* The same from a template's text and special tokens (NULL: none). */
int ct_chat_open_template(const char *tmpl, size_t n, const char *bos,
			  const char *eos, struct ct_chat **out);

void ct_chat_free(struct ct_chat *c);

/* The text of special token name ("bos_token", "eos_token", "unk_token",
 * "sep_token", "pad_token", "cls_token", "mask_token") as the template
 * sees it, or NULL when tokenizer_config.json does not set it. Valid
 * while c is. */
const char *ct_chat_special(const struct ct_chat *c, const char *name);

/* One line of a chat JSONL file (without its newline) as a conversation
 * {"messages": [...], ...}: checked strictly (an object; "messages" a
 * non-empty array of objects whose "role" is system, user, assistant or
 * tool and whose "content" is a string, or null beside "tool_calls"; or
 * Alpaca's strings, mapped to two messages), every error naming
 * name:lineno. *conv owned by the caller (ct_jv_free). Returns 0,
 * CT_EFORMAT, CT_ETOOBIG (over 64 MiB or 10^6 values) or CT_ENOMEM. */
int ct_chat_parse_line(const char *line, size_t n, const char *name, long lineno,
		       struct ct_jv **conv);

/* Render conversation conv (from ct_chat_parse_line) with c's template,
 * appending to *out. Returns 0 or ct_jinja_render's errors (CT_EINVAL
 * with the template's message for its raise_exception). */
int ct_chat_render(const struct ct_chat *c, const struct ct_jv *conv,
		   int add_generation_prompt, struct ct_buf *out);

/* Append s (n bytes) as one JSON string, quotes included, with the
 * escapes of JavaScript's JSON.stringify (\" \\ \b \t \n \f \r, other
 * control characters \u00XX; all else as it is). Returns 0 or a ct_buf
 * error. */
int ct_chat_json_str(struct ct_buf *out, const char *s, size_t n);

#endif
