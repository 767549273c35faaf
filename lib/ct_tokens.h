/*
 * ct_tokens.h - llm.c token files: the training/eval data of a work unit.
 *
 * File layout (little-endian): int32 header[256]: [0] magic 20240520,
 * [1] version 1, [2] token count n (0 <= n <= INT32_MAX), rest zero; then
 * n uint16 tokens. The file size must be exactly 1024 + 2n bytes.
 * Version 2 (ctune's, for vocabularies over 65,536 such as Llama 3's and
 * Qwen's) is the same with [1] = 2 and n uint32 tokens: exactly 1024 + 4n
 * bytes. The training engine takes version 1 only (ct_tokens_load refuses
 * version 2 by name); `ctune tokens` reads both (ct_tokens_load_any).
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
#define CT_TOKENS_VERSION_WIDE 2
#define CT_TOKENS_HEADER_INTS 256
#define CT_TOKENS_HEADER_BYTES (CT_TOKENS_HEADER_INTS * 4)

/* A token array, either mapped from a file or owned in memory. Zero-
 * initialise; free with ct_tokens_free(). `tok` is read-only. */
struct ct_tokens {
	const uint16_t *tok;	/* n tokens (version 1; NULL for version 2) */
	uint64_t n;
	struct ct_mmap map;	/* when loaded from a file */
	uint16_t *owned;	/* when made from memory */
	const uint32_t *tok32;	/* n tokens of a version 2 file, else NULL */
	int version;		/* 1 or 2 */
};

/* Map and validate a version 1 token file (magic, version, count >= 0,
 * exact size). Returns 0, CT_ENOENT / CT_EPERM / CT_EIO, CT_EFORMAT
 * (detail names the path and the problem) or CT_EUNSUPP (big-endian
 * host; a version 2 file, which the engine's 16-bit ids cannot hold); t
 * zeroed on failure. */
int ct_tokens_load(const char *path, struct ct_tokens *t);

/* The same, taking version 1 (t->tok) or version 2 (t->tok32). */
int ct_tokens_load_any(const char *path, struct ct_tokens *t);

/* Token i (< t->n) of either version. */
static inline uint32_t ct_tokens_get(const struct ct_tokens *t, uint64_t i)
{
	return t->tok32 != NULL ? t->tok32[i] : t->tok[i];
}

/* Write n 32-bit ids to path atomically: version 2 when wide, else
 * version 1 (every id must then be < 65,536: CT_ERANGE names the first
 * that is not). Returns 0, CT_EINVAL (n > INT32_MAX), CT_ERANGE or an I/O
 * code; nothing is left behind on failure. */
int ct_tokens_save_ids(const char *path, const uint32_t *tok, uint64_t n, int wide);

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
