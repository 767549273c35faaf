/*
 * ct_tokens.h - llm.c token files: the training/eval data of a work unit.
 *
 * File layout (little-endian): int32 header[256]: [0] magic 20240520,
 * [1] version 1, [2] token count n (0 <= n <= INT32_MAX), rest zero; then
 * n uint16 tokens. The file size must be exactly 1024 + 2n bytes.
 * Version 2 (ctune's, for vocabularies over 65,536 such as Llama 3's and
 * Qwen's) is the same with [1] = 2 and n uint32 tokens: exactly 1024 + 4n
 * bytes. Both load as 32-bit ids (ct_tok, ct_tok.h): ct_tokens_load widens
 * a version 1 file into memory; ct_tokens_load_any maps either without
 * widening (read it with ct_tokens_get). Version 3 adds a loss mask:
 * [1] = 3, n uint32 ids, then n flag bytes (bit 0, CT_TOKENS_TRAINED:
 * the token is a target the loss counts; bit 1, CT_TOKENS_START: it
 * begins a document, a conversation; other bits refused), exactly
 * 1024 + 5n bytes; flags all exactly 1 load as no mask (t->train NULL),
 * the arithmetic and the digest of a version 2 file with the same ids
 * (doc/workunit.md section 1). Loading memory-maps the file
 * (shards can be large); tokens are checked against a model's vocabulary
 * with ct_tokens_check_vocab().
 */
#ifndef CT_TOKENS_H
#define CT_TOKENS_H

#include <stddef.h>
#include <stdint.h>

#include "ct_file.h"
#include "ct_tok.h"

#define CT_TOKENS_MAGIC 20240520
#define CT_TOKENS_VERSION 1
#define CT_TOKENS_VERSION_WIDE 2
#define CT_TOKENS_VERSION_MASK 3
#define CT_TOKENS_TRAINED 1	/* flag bits of a version 3 file */
#define CT_TOKENS_START 2
#define CT_TOKENS_HEADER_INTS 256
#define CT_TOKENS_HEADER_BYTES (CT_TOKENS_HEADER_INTS * 4)

/* A token array, either mapped from a file or owned in memory. Zero-
 * initialise; free with ct_tokens_free(). `tok` is read-only. */
struct ct_tokens {
	const ct_tok *tok;	/* n ids; NULL only after ct_tokens_load_any of a
				 * version 1 file (then tok16 holds them) */
	uint64_t n;
	struct ct_mmap map;	/* when loaded from a file */
	ct_tok *owned;		/* when widened or made from memory */
	const uint16_t *tok16;	/* the mapped body of a version 1 file, else NULL */
	int version;		/* the file's version; from memory: the narrowest
				 * that holds the ids (1 when all are < 65,536) */
	const uint8_t *train;	/* n flag bytes of a version 3 file whose
				 * flags are not all 1; else NULL (every token
				 * trained) */
	uint8_t *owned_train;	/* when made from memory */
};

/* Map and validate a token file of either version (magic, version, count
 * >= 0, exact size); a version 1 file is widened into t->owned (4n bytes)
 * so that t->tok is always set. Returns 0, CT_ENOENT / CT_EPERM / CT_EIO,
 * CT_EFORMAT (detail names the path and the problem), CT_ENOMEM or
 * CT_EUNSUPP (big-endian host); t zeroed on failure. */
int ct_tokens_load(const char *path, struct ct_tokens *t);

/* The same without widening: t->tok (version 2) or t->tok16 (version 1)
 * is the mapped file. For large files that are only read token by token
 * (ct_tokens_get) or copied (ct_tokens_save_range). */
int ct_tokens_load_any(const char *path, struct ct_tokens *t);

/* Token i (< t->n) of either form. */
static inline ct_tok ct_tokens_get(const struct ct_tokens *t, uint64_t i)
{
	return t->tok != NULL ? t->tok[i] : t->tok16[i];
}

/* 1 when token i is trained (a target the loss counts). */
static inline int ct_tokens_trained(const struct ct_tokens *t, uint64_t i)
{
	return t->train == NULL || (t->train[i] & CT_TOKENS_TRAINED) != 0;
}

/* Write n 32-bit ids and their flags (train[i] of CT_TOKENS_TRAINED and
 * CT_TOKENS_START; NULL: all 1) to path atomically as a version 3 file.
 * Returns as ct_tokens_save_ids (CT_EINVAL also for another bit). */
int ct_tokens_save_masked(const char *path, const ct_tok *tok, const uint8_t *train,
			  uint64_t n);

/* Write n 32-bit ids to path atomically: version 2 when wide, else
 * version 1 (every id must then be < 65,536: CT_ERANGE names the first
 * that is not). Returns 0, CT_EINVAL (n > INT32_MAX), CT_ERANGE or an I/O
 * code; nothing is left behind on failure. */
int ct_tokens_save_ids(const char *path, const ct_tok *tok, uint64_t n, int wide);

/* A token file written as its ids arrive (ct_tokens_out_open, _write as
 * often as needed, then _commit or _abort), so that a writer's memory does
 * not follow the file: the header is written last, the file renamed into
 * place atomically on commit. Zero-initialise. */
struct ct_tokens_out {
	struct ct_afile af;
	uint64_t n;			/* ids written */
	int wide;			/* version 2 (32-bit ids) */
	int masked;			/* version 3: flags kept in mask until commit */
	uint8_t *mask;
	size_t mask_cap;
};

/* Start writing path (mode 0644): version 2 when wide, else version 1.
 * Returns 0 or an I/O code (w is then finished). */
int ct_tokens_out_open(struct ct_tokens_out *w, const char *path, int wide);

/* Start writing a version 3 file (32-bit ids and a mask; the flags are
 * held in memory, n bytes, until commit). Returns as ct_tokens_out_open. */
int ct_tokens_out_open_masked(struct ct_tokens_out *w, const char *path);

/* Append n ids with their flags (as ct_tokens_save_masked's; NULL: 1) to
 * a version 3 writer (CT_EINVAL on another). Returns as ct_tokens_out_write
 * (CT_ENOMEM when the mask cannot grow). */
int ct_tokens_out_write_masked(struct ct_tokens_out *w, const ct_tok *ids,
			       const uint8_t *train, size_t n);

/* Append n ids (all trained in a version 3 file). Returns 0, CT_ERANGE (version 1 and an id >= 65,536: the
 * detail names its position), CT_EINVAL (past INT32_MAX ids) or an I/O
 * code; after a failure only ct_tokens_out_abort remains. */
int ct_tokens_out_write(struct ct_tokens_out *w, const ct_tok *ids, size_t n);

/* Write the header, fsync and rename into place. 0 or an I/O code; w is
 * finished either way (nothing left behind on failure). */
int ct_tokens_out_commit(struct ct_tokens_out *w);

/* Give up: remove the temporary file. Harmless on a finished w. */
void ct_tokens_out_abort(struct ct_tokens_out *w);

/* Write tokens [a, a+n) of t (a + n <= t->n) to path atomically in t's
 * version (a shard of a version 1 file is a version 1 file, of a version
 * 3 file a version 3 file with the flags of those tokens). Returns as
 * ct_tokens_save_ids. */
int ct_tokens_save_range(const char *path, const struct ct_tokens *t, uint64_t a,
			 uint64_t n);

/* Copy n tokens into t (owned). Returns 0, CT_EINVAL (n > INT32_MAX) or
 * CT_ENOMEM. */
int ct_tokens_from_array(struct ct_tokens *t, const ct_tok *tok, uint64_t n);

/* Give t (n tokens) the n flags train (copied, as ct_tokens_save_masked's;
 * all 1 or NULL: no mask) and version 3. Returns 0, CT_EINVAL (another
 * bit) or CT_ENOMEM; t unchanged on failure. */
int ct_tokens_set_mask(struct ct_tokens *t, const uint8_t *train);

/* Release t (unmap or free) and zero it. A zeroed t is a no-op. */
void ct_tokens_free(struct ct_tokens *t);

/* Write n tokens to path atomically (0644) in the narrowest version that
 * holds them: version 1 when every id is < 65,536, else version 2.
 * Returns 0, CT_EINVAL (n > INT32_MAX) or an I/O code; nothing is left
 * behind on failure. */
int ct_tokens_save(const char *path, const ct_tok *tok, uint64_t n);

/* SHA-256 of the ids, packed little-endian as 16-bit words when every id
 * is < 65,536 and as 32-bit words otherwise (so a version 1 file's digest
 * is that of its body, whichever way it was loaded), followed by the n
 * flag bytes when t has a mask (t->train; an all-ones mask is none). Returns 0, CT_ENOMEM
 * or CT_ECRYPTO. */
int ct_tokens_sha256(const struct ct_tokens *t, unsigned char out[32]);

/* 0 if every token is < V, else CT_EMISMATCH with a detail naming the
 * first offending position and token ("token 70000 at position 12 is not
 * in the model's vocabulary of 50257"). */
int ct_tokens_check_vocab(const struct ct_tokens *t, int V);

#endif
