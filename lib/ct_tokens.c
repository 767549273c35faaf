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
	if (hdr[1] != CT_TOKENS_VERSION && hdr[1] != CT_TOKENS_VERSION_WIDE)
		return ct_error(CT_EFORMAT, "%s: token file version %d not supported (want %d "
				"or %d)", path, (int)hdr[1], CT_TOKENS_VERSION,
				CT_TOKENS_VERSION_WIDE);
	if (hdr[2] < 0)
		return ct_error(CT_EFORMAT, "%s: negative token count %d", path, (int)hdr[2]);
	width = hdr[1] == CT_TOKENS_VERSION_WIDE ? 4 : 2;
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
	if (t->version == CT_TOKENS_VERSION_WIDE)
		t->tok = (const ct_tok *)body;
	else
		t->tok16 = (const uint16_t *)body;
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

void ct_tokens_free(struct ct_tokens *t)
{
	ct_file_unmap(&t->map);
	free(t->owned);
	memset(t, 0, sizeof(*t));
}

/* Write the header and n tokens of `width` bytes from tok (version 1
 * from 32-bit ids: narrowed in blocks). */
static int save(const char *path, const void *tok, uint64_t n, int version,
		int narrow)
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
		rc = ct_afile_write(&af, tok, n * (version == CT_TOKENS_VERSION_WIDE ? 4 : 2));
	}
	if (rc < 0) {
		ct_afile_abort(&af);
		return rc;
	}
	return ct_afile_commit(&af);
}

int ct_tokens_save(const char *path, const ct_tok *tok, uint64_t n)
{
	if (narrow_ok(tok, n))
		return save(path, tok, n, CT_TOKENS_VERSION, 1);
	return save(path, tok, n, CT_TOKENS_VERSION_WIDE, 0);
}

int ct_tokens_save_ids(const char *path, const ct_tok *tok, uint64_t n, int wide)
{
	if (wide)
		return save(path, tok, n, CT_TOKENS_VERSION_WIDE, 0);
	for (uint64_t i = 0; i < n; i++)
		if (tok[i] > UINT16_MAX)
			return ct_error(CT_ERANGE, "%s: token %u at position %llu does not fit a "
					"version 1 token file (16-bit ids)", path, tok[i],
					(unsigned long long)i);
	return save(path, tok, n, CT_TOKENS_VERSION, 1);
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

int ct_tokens_out_write(struct ct_tokens_out *w, const ct_tok *ids, size_t n)
{
	uint16_t blk[4096];
	int rc = 0;

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
	hdr[1] = w->wide ? CT_TOKENS_VERSION_WIDE : CT_TOKENS_VERSION;
	hdr[2] = (int32_t)w->n;
	if (pwrite(w->af.fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
		int rc = ct_error_errno("%s: writing the header", w->af.path);

		ct_afile_abort(&w->af);
		return rc;
	}
	return ct_afile_commit(&w->af);
}

void ct_tokens_out_abort(struct ct_tokens_out *w)
{
	ct_afile_abort(&w->af);
}

int ct_tokens_save_range(const char *path, const struct ct_tokens *t, uint64_t a,
			 uint64_t n)
{
	if (t->tok16 != NULL)
		return save(path, t->tok16 + a, n, CT_TOKENS_VERSION, 0);
	return ct_tokens_save_ids(path, t->tok + a, n, t->version == CT_TOKENS_VERSION_WIDE);
}

int ct_tokens_sha256(const struct ct_tokens *t, unsigned char out[32])
{
	struct ct_sha256_ctx *ctx = NULL;
	int narrow = t->tok == NULL || narrow_ok(t->tok, t->n);
	int rc;

	if (t->tok == NULL) {	/* a mapped version 1 body */
		ct_sha256(t->tok16, t->n * sizeof(uint16_t), out);
		return 0;
	}
	if (!narrow) {
		ct_sha256(t->tok, t->n * sizeof(ct_tok), out);
		return 0;
	}
	rc = ct_sha256_init(&ctx);
	for (uint64_t i = 0; i < t->n && rc == 0; i += 4096) {
		uint16_t blk[4096];
		size_t k = t->n - i < 4096 ? (size_t)(t->n - i) : 4096;

		for (size_t q = 0; q < k; q++)
			blk[q] = (uint16_t)t->tok[i + q];
		rc = ct_sha256_update(ctx, blk, k * sizeof(uint16_t));
	}
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
