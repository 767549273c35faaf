/*
 * ct_tokens.c - llm.c token files: mapped read with validation, atomic
 * write, vocabulary check (see ct_tokens.h).
 */
#include "config.h"
#include "ct_tokens.h"
#include "ct_err.h"
#include "ct_hash.h"
#include "ct_le.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_header(const void *data, size_t len, const char *path, uint64_t *n,
			int *version)
{
	int32_t hdr[3];
	uint64_t want;
	int width;

	if (!ct_le_host())
		return ct_error(CT_EUNSUPP, "%s: big-endian hosts are not supported", path);
	if (len < CT_TOKENS_HEADER_BYTES)
		return ct_error(CT_EFORMAT, "%s: %zu bytes is too short for a token file header",
				path, len);
	memcpy(hdr, data, sizeof(hdr));
	if (hdr[0] != CT_TOKENS_MAGIC)
		return ct_error(CT_EFORMAT, "%s: bad magic %d (not a token file; want %d)",
				path, (int)hdr[0], CT_TOKENS_MAGIC);
	if (hdr[1] != CT_TOKENS_VERSION && hdr[1] != CT_TOKENS_VERSION_WIDE &&
	    hdr[1] != CT_TOKENS_VERSION_MASK)
		return ct_error(CT_EFORMAT, "%s: token file version %d not supported (want %d, "
				"%d or %d)", path, (int)hdr[1], CT_TOKENS_VERSION,
				CT_TOKENS_VERSION_WIDE, CT_TOKENS_VERSION_MASK);
	if (hdr[2] < 0)
		return ct_error(CT_EFORMAT, "%s: negative token count %d", path, (int)hdr[2]);
	/* bytes per token: 16-bit ids; 32-bit ids; 32-bit ids and a flag */
	width = hdr[1] == CT_TOKENS_VERSION ? 2 : hdr[1] == CT_TOKENS_VERSION_WIDE ? 4 : 5;
	want = CT_TOKENS_HEADER_BYTES + (uint64_t)width * (uint64_t)hdr[2];
	if ((uint64_t)len != want)
		return ct_error(CT_EFORMAT, "%s: file is %zu bytes but its header says %d tokens (%llu bytes)",
				path, len, (int)hdr[2], (unsigned long long)want);
	*n = (uint64_t)hdr[2];
	*version = hdr[1];
	return 0;
}

/* Version 1 ids widened into t->owned. */
static int widen(struct ct_tokens *t, const char *path)
{
	t->owned = malloc(t->n ? t->n * sizeof(ct_tok) : 1);
	if (t->owned == NULL)
		return ct_error(CT_ENOMEM, "%s: out of memory widening %llu tokens", path,
				(unsigned long long)t->n);
	for (uint64_t i = 0; i < t->n; i++)
		t->owned[i] = t->tok16[i];
	t->tok = t->owned;
	return 0;
}

/* 1 when every flag is exactly 1; CT_EFORMAT (a file) or CT_EINVAL naming
 * the first with a bit other than CT_TOKENS_TRAINED and CT_TOKENS_START. */
static int mask_ones(const uint8_t *train, uint64_t n, const char *path)
{
	int ones = 1;

	for (uint64_t i = 0; i < n; i++) {
		if (train[i] & ~(CT_TOKENS_TRAINED | CT_TOKENS_START))
			return ct_error(path ? CT_EFORMAT : CT_EINVAL,
					"%s: token flags %u at position %llu (only bits 0 and 1 "
					"are defined)",
					path ? path : "token mask", train[i],
					(unsigned long long)i);
		ones &= train[i] == 1;
	}
	return ones;
}

static int load(const char *path, struct ct_tokens *t, int wide)
{
	const unsigned char *body;
	int rc;

	memset(t, 0, sizeof(*t));
	rc = ct_file_map(path, &t->map);
	if (rc < 0)
		return rc;
	rc = parse_header(t->map.addr, t->map.len, path, &t->n, &t->version);
	if (rc < 0) {
		ct_tokens_free(t);
		return rc;
	}
	body = (const unsigned char *)t->map.addr + CT_TOKENS_HEADER_BYTES;
	if (t->version == CT_TOKENS_VERSION)
		t->tok16 = (const uint16_t *)body;
	else
		t->tok = (const ct_tok *)body;
	if (t->version == CT_TOKENS_VERSION_MASK) {
		const uint8_t *train = body + t->n * sizeof(ct_tok);

		rc = mask_ones(train, t->n, path);
		t->train = rc == 0 ? train : NULL;	/* all ones: no mask */
		rc = rc < 0 ? rc : 0;
	}
	if (rc == 0)
		rc = t->tok == NULL && wide ? widen(t, path) : 0;
	if (rc < 0)
		ct_tokens_free(t);
	return rc;
}

int ct_tokens_load(const char *path, struct ct_tokens *t)
{
	return load(path, t, 1);
}

int ct_tokens_load_any(const char *path, struct ct_tokens *t)
{
	return load(path, t, 0);
}

/* 1 when every id is < 65,536. */
static int narrow_ok(const ct_tok *tok, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (tok[i] > UINT16_MAX)
			return 0;
	return 1;
}

int ct_tokens_from_array(struct ct_tokens *t, const ct_tok *tok, uint64_t n)
{
	memset(t, 0, sizeof(*t));
	if (n > INT32_MAX)
		return ct_error(CT_EINVAL, "%llu tokens is over the file format's limit",
				(unsigned long long)n);
	t->owned = malloc(n ? n * sizeof(ct_tok) : 1);
	if (t->owned == NULL)
		return ct_error(CT_ENOMEM, "out of memory for %llu tokens",
				(unsigned long long)n);
	if (n)
		memcpy(t->owned, tok, n * sizeof(ct_tok));
	t->tok = t->owned;
	t->n = n;
	t->version = narrow_ok(tok, n) ? CT_TOKENS_VERSION : CT_TOKENS_VERSION_WIDE;
	return 0;
}

int ct_tokens_set_mask(struct ct_tokens *t, const uint8_t *train)
{
	uint8_t *copy = NULL;
	int rc = train != NULL ? mask_ones(train, t->n, NULL) : 1;

	if (rc < 0)
		return rc;
	if (rc == 0) {
		copy = malloc(t->n ? t->n : 1);
		if (copy == NULL)
			return ct_error(CT_ENOMEM, "out of memory for %llu trained flags",
					(unsigned long long)t->n);
		memcpy(copy, train, t->n);
	}
	free(t->owned_train);
	t->owned_train = copy;
	t->train = copy;
	t->version = CT_TOKENS_VERSION_MASK;
	return 0;
}

void ct_tokens_free(struct ct_tokens *t)
{
	ct_file_unmap(&t->map);
	free(t->owned);
	free(t->owned_train);
	memset(t, 0, sizeof(*t));
}

/* The n flags of a version 3 body (NULL: all ones). */
static int write_flags(struct ct_afile *af, const uint8_t *train, uint64_t n)
{
	uint8_t ones[4096];
	int rc = 0;

	if (train != NULL)
		return n > 0 ? ct_afile_write(af, train, n) : 0;
	memset(ones, 1, sizeof(ones));
	for (uint64_t i = 0; i < n && rc == 0; i += sizeof(ones))
		rc = ct_afile_write(af, ones, n - i < sizeof(ones) ? (size_t)(n - i) : sizeof(ones));
	return rc;
}

/* Write the header and n tokens of `width` bytes from tok (version 1
 * from 32-bit ids: narrowed in blocks). */
static int save(const char *path, const void *tok, const uint8_t *train, uint64_t n,
		int version, int narrow)
{
	int32_t hdr[CT_TOKENS_HEADER_INTS];
	struct ct_afile af = { .fd = -1 };
	int rc;

	if (!ct_le_host())
		return ct_error(CT_EUNSUPP, "%s: big-endian hosts are not supported", path);
	if (n > INT32_MAX)
		return ct_error(CT_EINVAL, "%s: %llu tokens is over the format's limit",
				path, (unsigned long long)n);
	memset(hdr, 0, sizeof(hdr));
	hdr[0] = CT_TOKENS_MAGIC;
	hdr[1] = version;
	hdr[2] = (int32_t)n;
	rc = ct_afile_open(&af, path, 0644);
	if (rc < 0)
		return rc;
	rc = ct_afile_write(&af, hdr, sizeof(hdr));
	if (narrow) {
		const uint32_t *w = tok;
		uint16_t blk[4096];

		for (uint64_t i = 0; i < n && rc == 0; i += 4096) {
			size_t k = n - i < 4096 ? (size_t)(n - i) : 4096;

			for (size_t q = 0; q < k; q++)
				blk[q] = (uint16_t)w[i + q];
			rc = ct_afile_write(&af, blk, k * sizeof(uint16_t));
		}
	} else if (rc == 0 && n > 0) {
		rc = ct_afile_write(&af, tok, n * (version == CT_TOKENS_VERSION ? 2 : 4));
	}
	if (rc == 0 && version == CT_TOKENS_VERSION_MASK)
		rc = write_flags(&af, train, n);
	if (rc < 0) {
		ct_afile_abort(&af);
		return rc;
	}
	return ct_afile_commit(&af);
}

int ct_tokens_save(const char *path, const ct_tok *tok, uint64_t n)
{
	if (narrow_ok(tok, n))
		return save(path, tok, NULL, n, CT_TOKENS_VERSION, 1);
	return save(path, tok, NULL, n, CT_TOKENS_VERSION_WIDE, 0);
}

int ct_tokens_save_masked(const char *path, const ct_tok *tok, const uint8_t *train,
			  uint64_t n)
{
	int rc = train != NULL ? mask_ones(train, n, NULL) : 0;

	if (rc < 0)
		return rc;
	return save(path, tok, train, n, CT_TOKENS_VERSION_MASK, 0);
}

int ct_tokens_save_ids(const char *path, const ct_tok *tok, uint64_t n, int wide)
{
	if (wide)
		return save(path, tok, NULL, n, CT_TOKENS_VERSION_WIDE, 0);
	for (uint64_t i = 0; i < n; i++)
		if (tok[i] > UINT16_MAX)
			return ct_error(CT_ERANGE, "%s: token %u at position %llu does not fit a "
					"version 1 token file (16-bit ids)", path, tok[i],
					(unsigned long long)i);
	return save(path, tok, NULL, n, CT_TOKENS_VERSION, 1);
}

int ct_tokens_out_open(struct ct_tokens_out *w, const char *path, int wide)
{
	int32_t hdr[CT_TOKENS_HEADER_INTS];
	int rc;

	memset(w, 0, sizeof(*w));
	w->af.fd = -1;
	w->wide = wide;
	if (!ct_le_host())
		return ct_error(CT_EUNSUPP, "%s: big-endian hosts are not supported", path);
	rc = ct_afile_open(&w->af, path, 0644);
	if (rc < 0)
		return rc;
	memset(hdr, 0, sizeof(hdr));	/* the real one comes at commit */
	rc = ct_afile_write(&w->af, hdr, sizeof(hdr));
	if (rc < 0)
		ct_afile_abort(&w->af);
	return rc;
}

int ct_tokens_out_open_masked(struct ct_tokens_out *w, const char *path)
{
	int rc = ct_tokens_out_open(w, path, 1);

	w->masked = 1;
	return rc;
}

/* Room for n more flags in w->mask (doubling; n fits since w->n + n is
 * at most INT32_MAX). */
static int mask_grow(struct ct_tokens_out *w, size_t n)
{
	size_t want = (size_t)w->n + n, cap = w->mask_cap ? w->mask_cap : 4096;
	uint8_t *m;

	if (want <= w->mask_cap)
		return 0;
	while (cap < want)
		cap *= 2;
	m = realloc(w->mask, cap);
	if (m == NULL)
		return ct_error(CT_ENOMEM, "%s: out of memory for %zu trained flags",
				w->af.path, cap);
	w->mask = m;
	w->mask_cap = cap;
	return 0;
}

int ct_tokens_out_write_masked(struct ct_tokens_out *w, const ct_tok *ids,
			       const uint8_t *train, size_t n)
{
	int rc;

	if (!w->masked)
		return ct_error(CT_EINVAL, "%s: trained flags on a version %d token file",
				w->af.path, w->wide ? 2 : 1);
	if (n > INT32_MAX - w->n)
		return ct_error(CT_EINVAL, "%s: over %d tokens, the format's limit", w->af.path,
				INT32_MAX);
	rc = train != NULL ? mask_ones(train, n, NULL) : 0;
	if (rc >= 0)
		rc = mask_grow(w, n);
	if (rc >= 0 && n > 0)
		rc = ct_afile_write(&w->af, ids, n * sizeof(*ids));
	if (rc < 0)
		return rc;
	if (train != NULL)
		memcpy(w->mask + w->n, train, n);
	else
		memset(w->mask + w->n, 1, n);
	w->n += n;
	return 0;
}

int ct_tokens_out_write(struct ct_tokens_out *w, const ct_tok *ids, size_t n)
{
	uint16_t blk[4096];
	int rc = 0;

	if (w->masked)
		return ct_tokens_out_write_masked(w, ids, NULL, n);
	if (n > INT32_MAX - w->n)
		return ct_error(CT_EINVAL, "%s: over %d tokens, the format's limit", w->af.path,
				INT32_MAX);
	if (w->wide) {
		rc = n > 0 ? ct_afile_write(&w->af, ids, n * sizeof(*ids)) : 0;
		w->n += rc == 0 ? n : 0;
		return rc;
	}
	for (size_t i = 0; i < n && rc == 0; i += 4096) {
		size_t k = n - i < 4096 ? n - i : 4096;

		for (size_t q = 0; q < k; q++) {
			if (ids[i + q] > UINT16_MAX)
				return ct_error(CT_ERANGE, "%s: token %u at position %llu "
						"does not fit 16-bit ids (version 1)", w->af.path,
						ids[i + q], (unsigned long long)(w->n + i + q));
			blk[q] = (uint16_t)ids[i + q];
		}
		rc = ct_afile_write(&w->af, blk, k * sizeof(uint16_t));
	}
	w->n += rc == 0 ? n : 0;
	return rc;
}

int ct_tokens_out_commit(struct ct_tokens_out *w)
{
	int32_t hdr[CT_TOKENS_HEADER_INTS];

	memset(hdr, 0, sizeof(hdr));
	hdr[0] = CT_TOKENS_MAGIC;
	hdr[1] = w->masked ? CT_TOKENS_VERSION_MASK
		 : w->wide ? CT_TOKENS_VERSION_WIDE : CT_TOKENS_VERSION;
	hdr[2] = (int32_t)w->n;
	if (w->masked && w->n > 0) {
		int rc = ct_afile_write(&w->af, w->mask, (size_t)w->n);

		if (rc < 0) {
			ct_tokens_out_abort(w);
			return rc;
		}
	}
	if (pwrite(w->af.fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
		int rc = ct_error_errno("%s: writing the header", w->af.path);

		ct_tokens_out_abort(w);
		return rc;
	}
	free(w->mask);
	w->mask = NULL;
	w->mask_cap = 0;
	return ct_afile_commit(&w->af);
}

void ct_tokens_out_abort(struct ct_tokens_out *w)
{
	free(w->mask);
	w->mask = NULL;
	w->mask_cap = 0;
	ct_afile_abort(&w->af);
}

int ct_tokens_save_range(const char *path, const struct ct_tokens *t, uint64_t a,
			 uint64_t n)
{
	if (t->tok16 != NULL)
		return save(path, t->tok16 + a, NULL, n, CT_TOKENS_VERSION, 0);
	if (t->version == CT_TOKENS_VERSION_MASK)
		return save(path, t->tok + a, t->train ? t->train + a : NULL, n,
			    CT_TOKENS_VERSION_MASK, 0);
	return ct_tokens_save_ids(path, t->tok + a, n, t->version == CT_TOKENS_VERSION_WIDE);
}

/* Feed the ids into ctx packed as ct_tokens_sha256 says. */
static int ids_stream(const struct ct_tokens *t, struct ct_sha256_ctx *ctx)
{
	int rc = 0;

	if (t->tok == NULL)	/* a mapped version 1 body */
		return t->n ? ct_sha256_update(ctx, t->tok16, t->n * sizeof(uint16_t)) : 0;
	if (!narrow_ok(t->tok, t->n))
		return t->n ? ct_sha256_update(ctx, t->tok, t->n * sizeof(ct_tok)) : 0;
	for (uint64_t i = 0; i < t->n && rc == 0; i += 4096) {
		uint16_t blk[4096];
		size_t k = t->n - i < 4096 ? (size_t)(t->n - i) : 4096;

		for (size_t q = 0; q < k; q++)
			blk[q] = (uint16_t)t->tok[i + q];
		rc = ct_sha256_update(ctx, blk, k * sizeof(uint16_t));
	}
	return rc;
}

int ct_tokens_sha256(const struct ct_tokens *t, unsigned char out[32])
{
	struct ct_sha256_ctx *ctx = NULL;
	int rc = ct_sha256_init(&ctx);

	if (rc < 0)
		return rc;
	rc = ids_stream(t, ctx);
	/* a mask follows the ids in the same stream (doc/workunit.md, 1) */
	if (rc == 0 && t->train != NULL && t->n > 0)
		rc = ct_sha256_update(ctx, t->train, (size_t)t->n);
	if (rc < 0) {
		ct_sha256_abort(ctx);
		return rc;
	}
	return ct_sha256_final(ctx, out);
}

int ct_tokens_check_vocab(const struct ct_tokens *t, int V)
{
	if (V < 1 || V > CT_VOCAB_MAX)
		return ct_error(CT_EMISMATCH, "a vocabulary of %d is outside 1..%d", V,
				CT_VOCAB_MAX);
	for (uint64_t i = 0; i < t->n; i++)
		if (ct_tokens_get(t, i) >= (uint32_t)V)
			return ct_error(CT_EMISMATCH,
					"token %u at position %llu is not in the model's vocabulary of %d",
					(unsigned)ct_tokens_get(t, i), (unsigned long long)i, V);
	return 0;
}
