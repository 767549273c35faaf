/*
 * ct_tokenizer.h - text <-> token ids, by tokenizer name.
 *
 * Tokenizers:
 *   "bytes"  one token per byte, id = byte value (V = 256); for small
 *            models trained from scratch. Every byte string round-trips.
 *   "gpt2"   GPT-2's byte-level BPE (V = 50257, <|endoftext|> = 50256),
 *            byte-identical to OpenAI's encoding; its encoder.json and
 *            vocab.bpe are read from the tokenizer data directory (see
 *            ct_tokenizer_open).
 *   PATH     a Hugging Face tokenizer.json (a name ending in ".json" or
 *            holding a '/'; a directory means DIR/tokenizer.json): the
 *            byte-level BPE of GPT-2, Llama 3, Qwen2/3, SmolLM2 and the
 *            like, ids as Hugging Face's tokenizers give them. Its added
 *            tokens ("<|begin_of_text|>", ...) ARE recognised in the text,
 *            as Hugging Face does; nothing is added around the text (no
 *            BOS: the caller adds what its model expects).
 * Encoding never fails on content: invalid UTF-8 is encoded byte by byte
 * like any other text, and decode(encode(x)) == x for every byte string
 * (except text NFC would change, for a tokenizer.json whose normalizer is
 * NFC: see doc/tokenizers.md).
 *
 *   struct ct_tokenizer *tk;
 *   struct ct_tokvec ids = { 0 };
 *   rc = ct_tokenizer_open("gpt2", &tk);          if (rc < 0) goto out;
 *   rc = ct_tokenizer_encode(tk, text, n, &ids);  if (rc < 0) goto out;
 *   ...
 *   ct_tokvec_free(&ids);
 *   ct_tokenizer_free(tk);
 *
 * A tokenizer is read-only after open: one may be shared by threads.
 */
#ifndef CT_TOKENIZER_H
#define CT_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "ct_buf.h"

/* A growable array of token ids (owned; free with ct_tokvec_free). Ids
 * are 32-bit: Llama 3's and Qwen's vocabularies pass 65,536. */
struct ct_tokvec {
	uint32_t *v;
	size_t n, cap;
};

/* Append one id. CT_ENOMEM, or CT_ETOOBIG past INT32_MAX ids (the most a
 * token file holds). */
int ct_tokvec_push(struct ct_tokvec *tv, uint32_t id);

/* Release the memory and zero tv. */
void ct_tokvec_free(struct ct_tokvec *tv);

struct ct_tokenizer;

/* Open a tokenizer by name ("bytes", "gpt2") or tokenizer.json path.
 * Data files of "gpt2" are looked up in $CTUNE_TOKENIZER_DIR/gpt2/, then
 * the installed data directory (CT_DATADIR/tokenizers/gpt2/), then the
 * source tree's copy. Returns 0, CT_EINVAL (unknown name: the detail
 * lists the known ones), CT_ENOENT (data files not found: the detail
 * names where it looked), CT_EFORMAT (bad data file), CT_EUNSUPP (a
 * tokenizer.json this engine does not implement: the detail names what)
 * or CT_ENOMEM. *out owned by the caller (ct_tokenizer_free); NULL on
 * failure. */
int ct_tokenizer_open(const char *name, struct ct_tokenizer **out);

/* 1 when ct_tokenizer_open takes name as a tokenizer.json path (it ends
 * in ".json" or holds a '/'), else 0. */
int ct_tokenizer_is_path(const char *name);

/* Release tk; NULL is a no-op. */
void ct_tokenizer_free(struct ct_tokenizer *tk);

/* "bytes", "gpt2", or the tokenizer.json path it was opened with. */
const char *ct_tokenizer_name(const struct ct_tokenizer *tk);

/* Vocabulary size V: every id the tokenizer produces is < V. */
int ct_tokenizer_vocab(const struct ct_tokenizer *tk);

/* The end-of-text id (gpt2: 50256; tokenizer.json: the added token
 * <|endoftext|>, <|end_of_text|> or </s>, first found), or -1 when the
 * tokenizer has none. */
int ct_tokenizer_eot(const struct ct_tokenizer *tk);

/* 1 when id is the end-of-text id or one of a tokenizer.json's added
 * tokens (<|eot_id|>, <|im_end|>, ...), else 0. */
int ct_tokenizer_is_special(const struct ct_tokenizer *tk, uint32_t id);

/* Documents of training text (`tokens encode`, `job submit --train-text`):
 * ct_tokenizer_doc_open appends the ids that start one. When the
 * tokenizer.json's post_processor has a template that adds tokens (Llama
 * 3's current file: <|begin_of_text|> before the text), they are the
 * template's, so that a document is exactly Hugging Face's encode(text)
 * with special tokens added (what its run_clm.py trains on); otherwise
 * the end-of-text token (llm.c's convention), or nothing when there is
 * none. ct_tokenizer_doc_close appends the template's ids after the text
 * (usually none). Return 0 or CT_ENOMEM. */
int ct_tokenizer_doc_open(const struct ct_tokenizer *tk, struct ct_tokvec *out);
int ct_tokenizer_doc_close(const struct ct_tokenizer *tk, struct ct_tokvec *out);

/* 1 when tk is a tokenizer.json with such a template, else 0. */
int ct_tokenizer_has_template(const struct ct_tokenizer *tk);

/* Encode n bytes of text, appending the ids to *out. For "gpt2" special
 * tokens are NOT recognised in the text ("<|endoftext|>" is encoded as
 * plain text, as tiktoken's encode_ordinary does); a tokenizer.json's
 * added tokens are. Returns 0, CT_ENOMEM or CT_ETOOBIG. */
int ct_tokenizer_encode(const struct ct_tokenizer *tk, const void *text,
			size_t n, struct ct_tokvec *out);

/* Encode text that arrives in parts (a large file, standard input):
 * like ct_tokenizer_encode, but unless final is set it stops before the
 * last pieces of text whose cut could depend on bytes past n, and *used
 * says how many bytes it encoded. The caller passes the rest again with
 * more text behind it, and the last part with final = 1; the ids are then
 * exactly those of one ct_tokenizer_encode over the whole text. *used may
 * be 0 when n is small (a few bytes, or one long piece): pass more. */
int ct_tokenizer_encode_part(const struct ct_tokenizer *tk, const void *text,
			     size_t n, int final, struct ct_tokvec *out,
			     size_t *used);

/* The bytes of one id (*len of them), valid while tk is open; NULL with
 * *len = 0 for an id outside the vocabulary (or one a tokenizer.json
 * leaves unassigned). The end-of-text id decodes to "<|endoftext|>", an
 * added token to its text. */
const unsigned char *ct_tokenizer_token(const struct ct_tokenizer *tk,
					int id, size_t *len);

/* Append the bytes of n ids to out. Returns 0, CT_ETOOBIG (out's cap),
 * CT_ENOMEM, or CT_ERANGE for an id outside the vocabulary (the detail
 * names the position and the id; out keeps what was decoded before it). */
int ct_tokenizer_decode(const struct ct_tokenizer *tk, const uint32_t *ids,
			size_t n, struct ct_buf *out);

/* The tokenizer a model of vocabulary V uses when nothing else says so:
 * "bytes" for V = 256, "gpt2" for V = 50257, NULL otherwise. */
const char *ct_tokenizer_for_vocab(int V);

#endif
