/*
 * ct_bpe_split.c - GPT-2's pre-tokeniser, the regular expression
 *
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *
 * written out as code (first alternative that matches wins, each run is
 * greedy), and the encode loop over its pieces. \p{L}, \p{N} and \s are
 * Unicode's letters, numbers and White_Space (ct_unicode.h). A byte that
 * is not part of well-formed UTF-8 counts as one character that is none of
 * the three, so invalid input is cut and encoded like punctuation and
 * still round-trips.
 */
#include "config.h"
#include "ct_bpe.h"
#include "ct_bpe_int.h"
#include "ct_unicode.h"

/* Streaming: a piece is final once this many bytes follow it, more than
 * any decision about its end looks ahead (a 3-byte space, then a 4-byte
 * character). */
#define SPLIT_MARGIN 8

static const unsigned char ascii_cls[128] = {
	['\t'] = CT_UCLS_SPACE, ['\n'] = CT_UCLS_SPACE, ['\v'] = CT_UCLS_SPACE,
	['\f'] = CT_UCLS_SPACE, ['\r'] = CT_UCLS_SPACE, [' '] = CT_UCLS_SPACE,
	['0' ... '9'] = CT_UCLS_NUMBER,
	['A' ... 'Z'] = CT_UCLS_LETTER, ['a' ... 'z'] = CT_UCLS_LETTER,
};

/* Class of the character at p[i] (i < n); *len its bytes. */
static inline enum ct_ucls cls_at(const unsigned char *p, size_t n, size_t i,
				  size_t *len)
{
	uint32_t cp;

	if (p[i] < 0x80) {
		*len = 1;
		return (enum ct_ucls)ascii_cls[p[i]];
	}
	*len = ct_utf8_decode(p + i, n - i, &cp);
	return cp == UINT32_MAX ? CT_UCLS_OTHER : ct_unicode_class(cp);
}

/* End of the run of class c that starts at i. */
static inline size_t run_end(const unsigned char *p, size_t n, size_t i,
			     enum ct_ucls c)
{
	size_t len;

	while (i < n && cls_at(p, n, i, &len) == c)
		i += len;
	return i;
}

/* 's 't 'm 'd 're 've 'll at p[i] == '\'': the length, or 0. */
static size_t contraction(const unsigned char *p, size_t n, size_t i)
{
	unsigned char a = i + 1 < n ? p[i + 1] : 0, b = i + 2 < n ? p[i + 2] : 0;

	if (a == 's' || a == 't' || a == 'm' || a == 'd')
		return 2;
	if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
		return 3;
	return 0;
}

size_t ct_bpe_split_gpt2(const unsigned char *p, size_t n, size_t i)
{
	size_t len, k, last;
	enum ct_ucls c;

	if (p[i] == '\'' && (k = contraction(p, n, i)) > 0)
		return i + k;
	if (p[i] == ' ' && i + 1 < n) {
		/* " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+" with the space */
		c = cls_at(p, n, i + 1, &len);
		if (c != CT_UCLS_SPACE)
			return run_end(p, n, i + 1 + len, c);
	}
	c = cls_at(p, n, i, &len);
	if (c != CT_UCLS_SPACE)
		return run_end(p, n, i + len, c);
	/* "\s+(?!\S)": all of a run that ends the text, else all but its last
	 * character; "\s+" when that leaves nothing. */
	last = i;
	k = i + len;
	while (k < n && cls_at(p, n, k, &len) == CT_UCLS_SPACE) {
		last = k;
		k += len;
	}
	if (k == n || last == i)
		return k;
	return last;
}

static int encode_part(const struct ct_bpe *b, const unsigned char *p,
		       size_t n, int final, struct ct_tokvec *out, size_t *used)
{
	size_t i = 0;
	int rc = 0;

	while (i < n) {
		size_t e = ct_bpe_split_gpt2(p, n, i);

		if (!final && n - e < SPLIT_MARGIN)
			break;
		rc = ct_bpe_merge(b, p + i, e - i, out);
		if (rc < 0)
			break;
		i = e;
	}
	if (used != NULL)
		*used = i;
	return rc;
}

int ct_bpe_encode(const struct ct_bpe *b, const unsigned char *text, size_t n,
		  struct ct_tokvec *out)
{
	return encode_part(b, text, n, 1, out, NULL);
}

int ct_bpe_encode_part(const struct ct_bpe *b, const unsigned char *text,
		       size_t n, int final, struct ct_tokvec *out, size_t *used)
{
	return encode_part(b, text, n, final, out, used);
}
