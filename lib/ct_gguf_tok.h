/*
 * ct_gguf_tok.h - a Hugging Face tokenizer in a GGUF file: the
 * tokenizer.* keys llama.cpp reads, from a model directory's
 * tokenizer.json and tokenizer_config.json.
 *
 *   tokenizer.ggml.model       "gpt2" (byte-level BPE: GPT-2, Llama 3,
 *                              Qwen2/3, SmolLM2; the only kind taken)
 *   tokenizer.ggml.pre         the pre-tokenizer, told by its pattern:
 *                              "llama-bpe" (Llama 3's split, digits in
 *                              threes), "qwen2" (the same, digits one by
 *                              one), "smollm" (digits one by one, then
 *                              GPT-2's byte level), "gpt2"; else "default"
 *   tokenizer.ggml.tokens      V strings, id order, as tokenizer.json
 *                              spells them (byte-level: "Ġthe"); ids it
 *                              leaves unassigned and the model's rows past
 *                              its vocabulary are "[PAD<id>]"
 *   tokenizer.ggml.token_type  V int32: 1 normal, 3 control (an added
 *                              token marked special), 4 user-defined (an
 *                              added token that is not), 5 unused (padding)
 *   tokenizer.ggml.merges      the merges, "a b" each
 *   tokenizer.ggml.bos_token_id / eos_token_id / padding_token_id /
 *   unknown_token_id           of tokenizer_config.json's bos_token, ...
 *                              (strings or AddedToken objects), when set
 *                              and in the vocabulary
 *   tokenizer.ggml.add_bos_token  tokenizer_config.json's add_bos_token,
 *                              else true when tokenizer.json's
 *                              post_processor template puts BOS first
 *   tokenizer.chat_template    the chat_template (or the one named
 *                              "default" of a list)
 * Caps: tokenizer.json 256 MiB and 2^24 JSON values, ids below
 * CT_VOCAB_MAX, tokenizer_config.json 64 MiB.
 */
#ifndef CT_GGUF_TOK_H
#define CT_GGUF_TOK_H

#include "ct_gguf.h"

/* Add the keys above for the tokenizer in directory dir to g, for a model
 * of V token rows (the tokenizer's ids must all be below V: CT_EMISMATCH
 * otherwise). *pre (may be NULL) gets the pre-tokenizer name written (a
 * static string). Returns 0, CT_ENOENT (no tokenizer.json), CT_EUNSUPP
 * (not byte-level BPE: the detail says what it is), CT_EFORMAT (naming
 * the file and member) or the writer's errors. */
int ct_gguf_add_tokenizer(struct ct_gguf *g, const char *dir, int V, const char **pre);

#endif
