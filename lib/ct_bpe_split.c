/*
 * ct_bpe_split.c - GPT-2's pre-tokeniser, the regular expression
 *
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *
 * written out as code (first alternative that matches wins, each run is
 * greedy), the same for Llama 3's and Qwen2's regexes (ct_bpe_split_llama3)
 * and SmolLM2's digits-then-GPT-2, and the encode loop: added tokens of a
 * tokenizer.json first, then the pre-tokeniser's pieces, each merged. \p{L}, \p{N} and \s are
 * Unicode's letters, numbers and White_Space (ct_unicode.h). A byte that
 * is not part of well-formed UTF-8 counts as one character that is none of
 * the three, so invalid input is cut and encoded like punctuation and
 * still round-trips.
 */
#include "config.h"
#include "ct_bpe.h"
#include "ct_bpe_int.h"
#include "ct_err.h"
#include "ct_nfc.h"
#include "ct_unicode.h"

#include <stdlib.h>
#include <string.h>

/* Streaming: a piece is final once this many bytes follow it, more than
 * any decision about its end looks ahead (a 3-byte space, then a 4-byte
 * character). */
#define SPLIT_MARGIN 8

/* A pre-token is at most CT_BPE_MAX_PIECE bytes (ct_bpe.h): the regex is
 * matched at i as if the text ended CT_BPE_MAX_PIECE bytes later (a longer
 * match, such as 100 MB of spaces, one piece for GPT-2's regex, is cut
 * there, even inside a UTF-8 character: byte-level BPE encodes any bytes
 * and they decode back the same), and matching resumes where the piece
 * ended. A piece is then decided by the CT_BPE_MAX_PIECE bytes from its
 * start alone, the same for a stream as for the whole text, and merging
 * it costs memory in proportion to that, whatever the input. */
static size_t piece_lim(size_t i, size_t n)
{
	return n - i <= CT_BPE_MAX_PIECE ? n : i + CT_BPE_MAX_PIECE;
}

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

/* Llama 3's contractions, case-insensitive as the regex engine folds
 * them: 's 't 'm 'd 're 've 'll, and 'ſ (U+017F folds to s). The length
 * at p[i] == '\'', or 0. */
static size_t contraction_ci(const unsigned char *p, size_t n, size_t i)
{
	unsigned char a = i + 1 < n ? p[i + 1] | 0x20 : 0, b = i + 2 < n ? p[i + 2] | 0x20 : 0;

	if (a == 's' || a == 't' || a == 'm' || a == 'd')
		return 2;
	if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
		return 3;
	if (i + 2 < n && p[i + 1] == 0xC5 && p[i + 2] == 0xBF)
		return 3;
	return 0;
}

static inline int is_crlf(unsigned char c)
{
	return c == '\r' || c == '\n';
}

/* The regex, alternatives in order:
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}{1,D} |
 *    ?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+
 * with D = 3 (Llama 3) or 1 (Qwen2). */
size_t ct_bpe_split_llama3(const unsigned char *p, size_t n, size_t i,
			   int max_digits)
{
	size_t len, len1 = 0, k, last, nl_end = 0;
	enum ct_ucls c = cls_at(p, n, i, &len), c1;

	if (p[i] == '\'' && (k = contraction_ci(p, n, i)) > 0)
		return i + k;
	if (c == CT_UCLS_LETTER)
		return run_end(p, n, i + len, c);
	if (c != CT_UCLS_NUMBER && !is_crlf(p[i]) && i + len < n &&
	    cls_at(p, n, i + len, &len1) == CT_UCLS_LETTER)
		return run_end(p, n, i + len + len1, CT_UCLS_LETTER);
	if (c == CT_UCLS_NUMBER) {
		k = i + len;
		for (int d = 1; d < max_digits && k < n &&
		     cls_at(p, n, k, &len1) == CT_UCLS_NUMBER; d++)
			k += len1;
		return k;
	}
	c1 = p[i] == ' ' && i + 1 < n ? cls_at(p, n, i + 1, &len1) : CT_UCLS_SPACE;
	if (c == CT_UCLS_OTHER || c1 == CT_UCLS_OTHER) {
		k = run_end(p, n, c == CT_UCLS_OTHER ? i + len : i + 1 + len1, CT_UCLS_OTHER);
		while (k < n && is_crlf(p[k]))
			k++;
		return k;
	}
	/* white space: up to the run's last CR/LF; else \s+(?!\S), \s+ */
	last = i;
	k = i + len;
	if (is_crlf(p[i]))
		nl_end = k;
	while (k < n && cls_at(p, n, k, &len1) == CT_UCLS_SPACE) {
		last = k;
		k += len1;
		if (is_crlf(p[last]))
			nl_end = k;
	}
	if (nl_end > 0)
		return nl_end;
	if (k == n || last == i)
		return k;
	return last;
}

/* Streaming: pieces ending at or before this point of the segment
 * p[i..n) are cut the same whatever text follows n. GPT-2's regex looks
 * at most SPLIT_MARGIN bytes ahead of a piece; Llama 3's `\s*[\r\n]+`
 * looks to the end of a run of white space, so its pieces must also end
 * before a character that is not white space. */
static size_t safe_end(const struct ct_bpe *b, const unsigned char *p, size_t i,
		       size_t n)
{
	size_t s, len;

	if (n - i < SPLIT_MARGIN)
		return i;
	s = n - SPLIT_MARGIN;
	if (b->pre != CT_BPE_PRE_LLAMA3 && b->pre != CT_BPE_PRE_QWEN2)
		return s;
	for (; s > i; s--)	/* a byte that is no continuation starts a character */
		if ((p[s] & 0xC0) != 0x80 && cls_at(p, n, s, &len) != CT_UCLS_SPACE)
			return s;
	return i;
}

/* Encode the pre-tokeniser's pieces of the segment p[i..n) (between added
 * tokens). Unless final, stop before the first piece that could change
 * with text past n; *done says where encoding stopped. With cut (NFC
 * text, not final) it stops only where cut[e] marks a place the original
 * text can be cut, dropping the ids of pieces after it. */
static int encode_segment(const struct ct_bpe *b, const unsigned char *p,
			  size_t i, size_t n, int final, const uint32_t *cut,
			  struct ct_tokvec *out, size_t *done)
{
	size_t safe = final ? n : safe_end(b, p, i, n), run = 0, len, e;
	size_t keep_n = out->n, keep_i = i;
	int rc = 0;

	while (i < n) {
		size_t lim = piece_lim(i, n);

		switch (b->pre) {
		case CT_BPE_PRE_LLAMA3:
			e = ct_bpe_split_llama3(p, lim, i, 3);
			break;
		case CT_BPE_PRE_QWEN2:
			e = ct_bpe_split_llama3(p, lim, i, 1);
			break;
		case CT_BPE_PRE_DIGITS_GPT2:	/* each digit alone, GPT-2 between */
			if (cls_at(p, n, i, &len) == CT_UCLS_NUMBER) {
				e = i + len;
				break;
			}
			if (run <= i)
				for (run = i; run < n && cls_at(p, n, run, &len) != CT_UCLS_NUMBER;)
					run += len;
			e = ct_bpe_split_gpt2(p, run < lim ? run : lim, i);
			break;
		default:
			e = ct_bpe_split_gpt2(p, lim, i);
		}
		if (e > safe && lim == n)	/* else decided by p[i..lim) alone */
			break;
		rc = ct_bpe_merge(b, p + i, e - i, out);
		if (rc < 0)
			break;
		i = e;
		if (cut != NULL && cut[e] != UINT32_MAX) {
			keep_n = out->n;
			keep_i = e;
		}
	}
	if (cut != NULL && !final && rc == 0) {
		out->n = keep_n;
		i = keep_i;
	}
	*done = i;
	return rc;
}

/* Whether an NFC segment starts at p[k] (k < n): an inert character,
 * judged from the bytes before n (ct_nfc.h). */
static int segment_starts(const unsigned char *p, size_t k, size_t n)
{
	return (p[k] & 0xC0) != 0x80 && ct_nfc_is_inert(p + k, 1 + (n - k > 3 ? 3 : n - k - 1));
}

/* NFC's own cuts are its segments, and a segment is as long as the run of
 * characters NFC may change (combining marks, ...) that follows an inert
 * one: unbounded (100 MB of U+0301 is one). So that normalising costs
 * memory in proportion to CT_BPE_MAX_PIECE whatever the input, a run of
 * more than CT_BPE_MAX_PIECE bytes with no segment start is also cut, at
 * the character start at or before CT_BPE_MAX_PIECE bytes past the last
 * cut (a "forced" cut; doc/tokenizers.md), and NFC is applied to the text
 * between forced cuts on its own. The cuts ("anchors") follow one another
 * from any anchor alike, so a stream resumed at one cuts the same as the
 * whole text. The next anchor after a in p[a..n): *forced says which kind;
 * n when the text ends before it is known. */
static size_t next_anchor(const unsigned char *p, size_t a, size_t n, int *forced)
{
	size_t k, lim = n - a > CT_BPE_MAX_PIECE ? a + CT_BPE_MAX_PIECE : n;

	*forced = 0;
	for (k = a + 1; k <= lim && k < n; k++)
		if (segment_starts(p, k, n))
			return k;
	if (lim == n)
		return n;
	*forced = 1;
	for (k = lim; k > a + 1 && (p[k] & 0xC0) == 0x80 && lim - k < 3; k--)
		;
	return k;
}

/* The last anchor of p[i..n) before n (i itself when none), for a stream:
 * NFC before it does not depend on the text after n. */
static size_t nfc_last_cut(const unsigned char *p, size_t i, size_t n)
{
	size_t a = i, k;
	int forced;

	while ((k = next_anchor(p, a, n, &forced)) < n)
		a = k;
	return a;
}

/* NFC of p[i..stop) appended to nb, each stretch between forced cuts
 * normalised alone; cut (NULL, or 3 (stop - i) + 1 entries) gets ct_nfc's
 * segment marks with offsets from i, a forced cut marked like a segment. */
static int nfc_stretches(const unsigned char *p, size_t i, size_t stop, struct ct_buf *nb,
			 uint32_t *cut)
{
	size_t a = i, at, e;
	int rc = 0, forced = 0;

	while (rc == 0 && a < stop) {
		e = a;
		do
			e = next_anchor(p, e, stop, &forced);
		while (e < stop && !forced);
		at = nb->len;
		rc = ct_nfc(p + a, e - a, nb, cut != NULL ? cut + at : NULL);
		for (size_t k = at; rc == 0 && cut != NULL && k <= nb->len; k++)
			if (cut[k] != UINT32_MAX)
				cut[k] += (uint32_t)(a - i);
		a = e;
	}
	return rc;
}

/* encode_segment, after NFC when the tokenizer asks for it and the text
 * is not already NFC; *done is in the caller's text. */
static int encode_text(const struct ct_bpe *b, const unsigned char *p, size_t i,
		       size_t n, int final, struct ct_tokvec *out, size_t *done)
{
	struct ct_buf nb;
	uint32_t *cut = NULL;
	size_t stop = n, d = 0;
	int rc;

	if (!b->nfc || ct_nfc_is_inert(p + i, n - i))
		return encode_segment(b, p, i, n, final, NULL, out, done);
	if (!final)
		stop = nfc_last_cut(p, i, n);
	*done = i;
	if (stop <= i)
		return 0;
	cut = final ? NULL : malloc((3 * (stop - i) + 1) * sizeof(*cut));
	if (!final && cut == NULL)
		return CT_ENOMEM;
	ct_buf_init(&nb, 0);
	rc = nfc_stretches(p, i, stop, &nb, cut);
	if (rc == 0)
		rc = encode_segment(b, nb.data, 0, nb.len, final, cut, out, &d);
	if (rc == 0)
		*done = final ? n : i + cut[d];
	ct_buf_free(&nb);
	free(cut);
	return rc;
}

/* The leftmost added token starting in p[i..lim), longest there (its end
 * at most n): *at and its id, or 0 when none. */
static int find_added(const struct ct_bpe *b, const unsigned char *p, size_t i,
		      size_t lim, size_t n, size_t *at, uint32_t *id)
{
	if (b->nadded == 0)
		return 0;
	for (size_t j = i; j < lim; j++) {
		size_t best = 0;

		if (!b->added_first[p[j]])
			continue;
		for (int a = 0; a < b->nadded; a++) {
			uint32_t t = b->added[a];
			size_t len = b->off[t + 1] - b->off[t];

			if (len > best && len <= n - j &&
			    memcmp(p + j, b->bytes + b->off[t], len) == 0) {
				best = len;
				*id = t;
			}
		}
		if (best > 0) {
			*at = j;
			return 1;
		}
	}
	return 0;
}

/* Added tokens first (as Hugging Face does), the pre-tokeniser and BPE
 * between them. Unless final, added tokens are looked for only where the
 * longest fits before n, and the text after the last one is a segment
 * that ends there, so nothing past n can change what was encoded. */
static int encode_part(const struct ct_bpe *b, const unsigned char *p,
		       size_t n, int final, struct ct_tokvec *out, size_t *used)
{
	size_t i = 0, lim = n, at = 0;
	uint32_t id = 0;
	int rc = 0;

	if (!final)
		lim = n > b->added_max ? n - b->added_max : 0;
	while (i < n && rc == 0) {
		if (!find_added(b, p, i, lim, n, &at, &id)) {
			if ((final ? n : lim) > i)
				rc = encode_text(b, p, i, final ? n : lim, final, out, &i);
			break;
		}
		rc = encode_text(b, p, i, at, 1, out, &i);
		if (rc == 0)
			rc = ct_tokvec_push(out, id);
		i = at + (b->off[id + 1] - b->off[id]);
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
