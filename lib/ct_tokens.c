/*
 * ct_tokens.c - llm.c token files: mapped read with validation, atomic
 * write, vocabulary check (see ct_tokens.h).
 */
#include "config.h"
#include "ct_tokens.h"
#include "ct_err.h"
#include "ct_le.h"

#include <stdlib.h>
#include <string.h>

static int parse_header(const void *data, size_t len, const char *path, int wide_ok,
			uint64_t *n, int *version)
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
	if (hdr[1] == CT_TOKENS_VERSION_WIDE && !wide_ok)
		return ct_error(CT_EUNSUPP, "%s: a version 2 token file (32-bit ids, for "
				"vocabularies over 65,536); training takes version 1 files "
				"(16-bit ids) only", path);
	if (hdr[1] != CT_TOKENS_VERSION && hdr[1] != CT_TOKENS_VERSION_WIDE)
		return ct_error(CT_EFORMAT, "%s: token file version %d not supported (want %d)",
				path, (int)hdr[1], CT_TOKENS_VERSION);
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

static int load(const char *path, struct ct_tokens *t, int wide_ok)
{
	const unsigned char *body;
	int rc;

	memset(t, 0, sizeof(*t));
	rc = ct_file_map(path, &t->map);
	if (rc < 0)
		return rc;
	rc = parse_header(t->map.addr, t->map.len, path, wide_ok, &t->n, &t->version);
	if (rc < 0) {
		ct_tokens_free(t);
		return rc;
	}
	body = (const unsigned char *)t->map.addr + CT_TOKENS_HEADER_BYTES;
	if (t->version == CT_TOKENS_VERSION_WIDE)
		t->tok32 = (const uint32_t *)body;
	else
		t->tok = (const uint16_t *)body;
	return 0;
}

int ct_tokens_load(const char *path, struct ct_tokens *t)
{
	return load(path, t, 0);
}

int ct_tokens_load_any(const char *path, struct ct_tokens *t)
{
	return load(path, t, 1);
}

int ct_tokens_from_array(struct ct_tokens *t, const uint16_t *tok, uint64_t n)
{
	memset(t, 0, sizeof(*t));
	if (n > INT32_MAX)
		return ct_error(CT_EINVAL, "%llu tokens is over the file format's limit",
				(unsigned long long)n);
	t->owned = malloc(n ? n * sizeof(uint16_t) : 1);
	if (t->owned == NULL)
		return ct_error(CT_ENOMEM, "out of memory for %llu tokens",
				(unsigned long long)n);
	if (n)
		memcpy(t->owned, tok, n * sizeof(uint16_t));
	t->tok = t->owned;
	t->n = n;
	t->version = CT_TOKENS_VERSION;
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

int ct_tokens_save(const char *path, const uint16_t *tok, uint64_t n)
{
	return save(path, tok, n, CT_TOKENS_VERSION, 0);
}

int ct_tokens_save_ids(const char *path, const uint32_t *tok, uint64_t n, int wide)
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

int ct_tokens_check_vocab(const struct ct_tokens *t, int V)
{
	for (uint64_t i = 0; i < t->n; i++)
		if (ct_tokens_get(t, i) >= (uint32_t)V)
			return ct_error(CT_EMISMATCH,
					"token %u at position %llu is not in the model's vocabulary of %d",
					(unsigned)ct_tokens_get(t, i), (unsigned long long)i, V);
	return 0;
}
