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

static int parse_header(const void *data, size_t len, const char *path, uint64_t *n)
{
	int32_t hdr[3];
	uint64_t want;

	if (!ct_le_host())
		return ct_error(CT_EUNSUPP, "%s: big-endian hosts are not supported", path);
	if (len < CT_TOKENS_HEADER_BYTES)
		return ct_error(CT_EFORMAT, "%s: %zu bytes is too short for a token file header",
				path, len);
	memcpy(hdr, data, sizeof(hdr));
	if (hdr[0] != CT_TOKENS_MAGIC)
		return ct_error(CT_EFORMAT, "%s: bad magic %d (not a token file; want %d)",
				path, (int)hdr[0], CT_TOKENS_MAGIC);
	if (hdr[1] != CT_TOKENS_VERSION)
		return ct_error(CT_EFORMAT, "%s: token file version %d not supported (want %d)",
				path, (int)hdr[1], CT_TOKENS_VERSION);
	if (hdr[2] < 0)
		return ct_error(CT_EFORMAT, "%s: negative token count %d", path, (int)hdr[2]);
	want = CT_TOKENS_HEADER_BYTES + 2 * (uint64_t)hdr[2];
	if ((uint64_t)len != want)
		return ct_error(CT_EFORMAT, "%s: file is %zu bytes but its header says %d tokens (%llu bytes)",
				path, len, (int)hdr[2], (unsigned long long)want);
	*n = (uint64_t)hdr[2];
	return 0;
}

int ct_tokens_load(const char *path, struct ct_tokens *t)
{
	int rc;

	memset(t, 0, sizeof(*t));
	rc = ct_file_map(path, &t->map);
	if (rc < 0)
		return rc;
	rc = parse_header(t->map.addr, t->map.len, path, &t->n);
	if (rc < 0) {
		ct_tokens_free(t);
		return rc;
	}
	t->tok = (const uint16_t *)((const unsigned char *)t->map.addr +
				    CT_TOKENS_HEADER_BYTES);
	return 0;
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
	return 0;
}

void ct_tokens_free(struct ct_tokens *t)
{
	ct_file_unmap(&t->map);
	free(t->owned);
	memset(t, 0, sizeof(*t));
}

int ct_tokens_save(const char *path, const uint16_t *tok, uint64_t n)
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
	hdr[1] = CT_TOKENS_VERSION;
	hdr[2] = (int32_t)n;
	rc = ct_afile_open(&af, path, 0644);
	if (rc < 0)
		return rc;
	rc = ct_afile_write(&af, hdr, sizeof(hdr));
	if (rc == 0 && n > 0)
		rc = ct_afile_write(&af, tok, n * sizeof(uint16_t));
	if (rc < 0) {
		ct_afile_abort(&af);
		return rc;
	}
	return ct_afile_commit(&af);
}

int ct_tokens_check_vocab(const struct ct_tokens *t, int V)
{
	for (uint64_t i = 0; i < t->n; i++)
		if ((int)t->tok[i] >= V)
			return ct_error(CT_EMISMATCH,
					"token %u at position %llu is not in the model's vocabulary of %d",
					(unsigned)t->tok[i], (unsigned long long)i, V);
	return 0;
}
