/*
 * ct_bpe.h - byte-level BPE (the "gpt2" tokenizer of ct_tokenizer.h and
 * those read from a Hugging Face tokenizer.json; ct_tokenizer.h is the
 * interface to use, this is their engine).
 *
 * GPT-2's data: encoder.json (token string -> id, in GPT-2's
 * byte-to-unicode alphabet) and vocab.bpe (merges, one "a b" pair per
 * line, by rank). tokenizer.json: see ct_bpe_open_hf.
 */
#ifndef CT_BPE_H
#define CT_BPE_H

#include <stddef.h>

#include "ct_tokenizer.h"

struct ct_bpe;

/* Load GPT-2's data files (search order in ct_tokenizer_open). Returns 0
 * or CT_ENOENT / CT_EFORMAT / CT_ENOMEM / CT_EUNSUPP; *out NULL on
 * failure; free with ct_bpe_free (NULL is a no-op). */
int ct_bpe_open_gpt2(struct ct_bpe **out);
void ct_bpe_free(struct ct_bpe *b);

/* Load a Hugging Face tokenizer.json (at most 64 MiB): a BPE model over
 * GPT-2's byte alphabet, no normalizer or NFC (see doc/tokenizers.md), a
 * pre-tokeniser this engine knows (GPT-2's, Llama 3's or Qwen2's regex,
 * SmolLM2's digits + GPT-2), added tokens without strip options. Anything
 * else is CT_EUNSUPP with a detail naming it. Returns 0 or CT_ENOENT /
 * CT_EFORMAT / CT_EUNSUPP / CT_ETOOBIG / CT_ENOMEM; *out NULL on failure. */
int ct_bpe_open_hf(const char *path, struct ct_bpe **out);

int ct_bpe_vocab(const struct ct_bpe *b);
int ct_bpe_eot(const struct ct_bpe *b);
/* 1 when id is one of a tokenizer.json's added tokens. */
int ct_bpe_is_added(const struct ct_bpe *b, uint32_t id);

/* The post_processor template of a tokenizer.json: 1 with the ids it puts
 * before (*pre, *npre) and after (*post, *npost) the text of a sequence,
 * or 0 when there is none (GPT-2, a ByteLevel post_processor). The arrays
 * stay valid while b is open. */
int ct_bpe_template(const struct ct_bpe *b, const uint32_t **pre, int *npre,
		    const uint32_t **post, int *npost);

/* The longest pre-token: a match of the pre-tokeniser's regex longer than
 * this many bytes (100 MB of spaces is one for GPT-2's) is cut after this
 * many, and matching resumes there (doc/tokenizers.md). Ordinary text has
 * no such piece, so its ids are exactly the reference's. */
#define CT_BPE_MAX_PIECE 65536

/* As ct_tokenizer_encode / ct_tokenizer_encode_part / ct_tokenizer_token. */
int ct_bpe_encode(const struct ct_bpe *b, const unsigned char *text, size_t n,
		  struct ct_tokvec *out);
int ct_bpe_encode_part(const struct ct_bpe *b, const unsigned char *text,
		       size_t n, int final, struct ct_tokvec *out, size_t *used);
const unsigned char *ct_bpe_token(const struct ct_bpe *b, int id, size_t *len);

#endif
