/*
 * ct_tokens.h - llm.c token files: the training/eval data of a work unit.
 *
 * File layout (little-endian): int32 header[256]: [0] magic 20240520,
 * [1] version 1, [2] token count n (0 <= n <= INT32_MAX), rest zero; then
 * n uint16 tokens. The file size must be exactly 1024 + 2n bytes.
 * Loading memory-maps the file (shards can be large); tokens are checked
 * against a model's vocabulary with ct_tokens_check_vocab().
 */
#ifndef CT_TOKENS_H
#define CT_TOKENS_H

#include <stddef.h>
#include <stdint.h>

#include "ct_file.h"

#define CT_TOKENS_MAGIC 20240520
#define CT_TOKENS_VERSION 1
#define CT_TOKENS_HEADER_INTS 256
#define CT_TOKENS_HEADER_BYTES (CT_TOKENS_HEADER_INTS * 4)

/* A token array, either mapped from a file or owned in memory. Zero-
 * initialise; free with ct_tokens_free(). `tok` is read-only. */
struct ct_tokens {
	const uint16_t *tok;	/* n tokens */
	uint64_t n;
	struct ct_mmap map;	/* when loaded from a file */
	uint16_t *owned;	/* when made from memory */
};

/* Map and validate a token file (magic, version, count >= 0, exact size).
 * Returns 0, CT_ENOENT / CT_EPERM / CT_EIO, CT_EFORMAT (detail names the
 * path and the problem) or CT_EUNSUPP (big-endian host); t zeroed on
 * failure. */
int ct_tokens_load(const char *path, struct ct_tokens *t);

/* Copy n tokens into t (owned). Returns 0, CT_EINVAL (n > INT32_MAX) or
 * CT_ENOMEM. */
int ct_tokens_from_array(struct ct_tokens *t, const uint16_t *tok, uint64_t n);

/* Release t (unmap or free) and zero it. A zeroed t is a no-op. */
void ct_tokens_free(struct ct_tokens *t);

/* Write n tokens to path atomically (0644). Returns 0, CT_EINVAL
 * (n > INT32_MAX) or an I/O code; nothing is left behind on failure. */
int ct_tokens_save(const char *path, const uint16_t *tok, uint64_t n);

/* 0 if every token is < V, else CT_EMISMATCH with a detail naming the
 * first offending position and token ("token 70000 at position 12 is not
 * in the model's vocabulary of 50257"). */
int ct_tokens_check_vocab(const struct ct_tokens *t, int V);

#endif
