/*
 * ct_bpe_load.c - reading GPT-2's data files (see ct_bpe_int.h):
 * encoder.json, a flat JSON object from token strings to ids, and
 * vocab.bpe, the merges by rank. Token strings are written in GPT-2's
 * byte-to-unicode alphabet, which gives each of the 256 bytes a printable
 * code point: bytes 33..126, 161..172 and 174..255 stand for themselves,
 * the other 68 take U+0100.. in byte order.
 */
#include "config.h"
#include "ct_bpe_int.h"
#include "ct_err.h"
#include "ct_unicode.h"

#include <stdlib.h>
#include <string.h>

#define NALPHA CT_BPE_NALPHA

void ct_bpe_alphabet(int to_byte[NALPHA])
{
	int k = 0;

	for (int c = 0; c < NALPHA; c++)
		to_byte[c] = -1;
	for (int c = 0; c < 256; c++) {
		if ((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174)
			to_byte[c] = c;
		else
			to_byte[256 + k++] = c;
	}
}

struct jp {
	const char *s;
	size_t n, i;
	int to_byte[NALPHA];
};

static void skip_ws(struct jp *j)
{
	while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\n' ||
			       j->s[j->i] == '\r' || j->s[j->i] == '\t'))
		j->i++;
}

static int bad(const struct jp *j, const char *what)
{
	return ct_error(CT_EFORMAT, "encoder.json: %s at byte %zu", what, j->i);
}

/* Four hex digits at j->i. */
static int hex4(struct jp *j, uint32_t *v)
{
	*v = 0;
	if (j->n - j->i < 4)
		return bad(j, "short \\u escape");
	for (int k = 0; k < 4; k++) {
		char c = j->s[j->i++];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (uint32_t)(c - 'A' + 10);
		else
			return bad(j, "bad \\u escape");
	}
	return 0;
}

/* One code point of a JSON string (after the opening quote). */
static int string_cp(struct jp *j, uint32_t *cp)
{
	static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
	const char *e;

	if ((unsigned char)j->s[j->i] != '\\') {
		size_t len = ct_utf8_decode((const unsigned char *)j->s + j->i,
					    j->n - j->i, cp);

		if (*cp == UINT32_MAX || *cp < 0x20)
			return bad(j, "invalid character in string");
		j->i += len;
		return 0;
	}
	if (++j->i >= j->n)
		return bad(j, "unterminated string");
	if (j->s[j->i] == 'u') {
		j->i++;
		return hex4(j, cp);	/* surrogates are not in the alphabet */
	}
	e = strchr(esc_in, j->s[j->i]);
	if (e == NULL || *e == '\0')
		return bad(j, "bad escape");
	j->i++;
	*cp = (unsigned char)esc_out[e - esc_in];
	return 0;
}

/* A token string: its bytes go to buf at *used. */
static int token_string(struct jp *j, unsigned char *buf, size_t *used)
{
	if (j->i >= j->n || j->s[j->i] != '"')
		return bad(j, "expected a string");
	j->i++;
	while (j->i < j->n && j->s[j->i] != '"') {
		uint32_t cp;
		int rc = string_cp(j, &cp);

		if (rc < 0)
			return rc;
		if (cp >= NALPHA || j->to_byte[cp] < 0)
			return bad(j, "character outside GPT-2's byte alphabet");
		buf[(*used)++] = (unsigned char)j->to_byte[cp];
	}
	if (j->i >= j->n)
		return bad(j, "unterminated string");
	j->i++;
	return 0;
}

static int token_id(struct jp *j, int V, int *id)
{
	long v = 0;
	size_t start = j->i;

	while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9' && v <= V)
		v = v * 10 + (j->s[j->i++] - '0');
	if (j->i == start || v >= V)
		return bad(j, "id missing or not below the vocabulary size");
	*id = (int)v;
	return 0;
}

/* Parse all entries into start[id] / len[id] over buf. */
static int parse_entries(struct jp *j, int V, unsigned char *buf,
			 uint32_t *start, uint32_t *len)
{
	size_t used = 0;
	int count = 0, rc;

	skip_ws(j);
	if (j->i >= j->n || j->s[j->i++] != '{')
		return bad(j, "expected '{'");
	for (;;) {
		size_t s0 = used;
		int id = 0;

		skip_ws(j);
		if ((rc = token_string(j, buf, &used)) < 0)
			return rc;
		skip_ws(j);
		if (j->i >= j->n || j->s[j->i++] != ':')
			return bad(j, "expected ':'");
		skip_ws(j);
		if ((rc = token_id(j, V, &id)) < 0)
			return rc;
		if (len[id] != UINT32_MAX)
			return bad(j, "id given twice");
		start[id] = (uint32_t)s0;
		len[id] = (uint32_t)(used - s0);
		count++;
		skip_ws(j);
		if (j->i < j->n && j->s[j->i] == ',') {
			j->i++;
			continue;
		}
		if (j->i < j->n && j->s[j->i] == '}')
			break;
		return bad(j, "expected ',' or '}'");
	}
	if (count != V)
		return ct_error(CT_EFORMAT, "encoder.json: %d tokens, want %d", count, V);
	return 0;
}

int ct_bpe_parse_encoder(int V, const char *json, size_t n,
			 unsigned char **bytes, uint32_t **off)
{
	struct jp j = { .s = json, .n = n };
	unsigned char *buf = malloc(n + 1), *packed = NULL;
	uint32_t *start = malloc((size_t)V * sizeof(*start));
	uint32_t *len = malloc((size_t)V * sizeof(*len));
	uint32_t *o = malloc(((size_t)V + 1) * sizeof(*o));
	int rc = CT_ENOMEM;

	*bytes = NULL;
	*off = NULL;
	if (buf == NULL || start == NULL || len == NULL || o == NULL)
		goto out;
	ct_bpe_alphabet(j.to_byte);
	memset(len, 0xFF, (size_t)V * sizeof(*len));
	rc = parse_entries(&j, V, buf, start, len);
	if (rc < 0)
		goto out;
	/* In id order, so that token i's bytes are off[i] .. off[i+1]. */
	packed = malloc(n + 1);
	if (packed == NULL) {
		rc = CT_ENOMEM;
		goto out;
	}
	o[0] = 0;
	for (int id = 0; id < V; id++) {
		memcpy(packed + o[id], buf + start[id], len[id]);
		o[id + 1] = o[id] + len[id];
	}
	*bytes = packed;
	*off = o;
	packed = NULL;
	o = NULL;
out:
	free(buf);
	free(start);
	free(len);
	free(o);
	free(packed);
	return rc;
}

/* Decode one side of a merge line (alphabet text) into out. */
static int merge_side(const int to_byte[NALPHA], const char *s, size_t n,
		      unsigned char *out, size_t *len)
{
	*len = 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp;

		i += ct_utf8_decode((const unsigned char *)s + i, n - i, &cp);
		if (cp >= NALPHA || to_byte[cp] < 0 || *len >= 256)
			return -1;
		out[(*len)++] = (unsigned char)to_byte[cp];
	}
	return *len > 0 ? 0 : -1;
}

int ct_bpe_check_merges(const struct ct_bpe *b, const char *text, size_t n)
{
	int to_byte[NALPHA], rank = 256, line = 0;
	unsigned char buf[512];
	size_t i = 0;

	ct_bpe_alphabet(to_byte);
	while (i < n) {
		const char *s = text + i, *nl = memchr(s, '\n', n - i), *sp;
		size_t len = nl ? (size_t)(nl - s) : n - i, la, lb;

		i += len + 1;
		line++;
		if (len == 0 || (line == 1 && s[0] == '#'))
			continue;
		sp = memchr(s, ' ', len);
		if (sp == NULL || merge_side(to_byte, s, (size_t)(sp - s), buf, &la) < 0 ||
		    merge_side(to_byte, sp + 1, len - (size_t)(sp - s) - 1, buf + la, &lb) < 0)
			return ct_error(CT_EFORMAT, "vocab.bpe line %d: not a merge", line);
		if (ct_bpe_lookup(b, buf, la + lb) != rank)
			return ct_error(CT_EFORMAT, "vocab.bpe line %d: the merge does not "
					"make token %d (merges and encoder.json disagree)",
					line, rank);
		rank++;
	}
	if (rank != ct_bpe_eot(b))
		return ct_error(CT_EFORMAT, "vocab.bpe: %d merges, want %d", rank - 256,
				ct_bpe_eot(b) - 256);
	return 0;
}
