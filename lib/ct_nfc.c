/*
 * ct_nfc.c - Unicode Normalization Form C (see ct_nfc.h), by the book
 * (UAX #15): each segment is decomposed canonically (Hangul by formula),
 * its combining marks put in canonical order (stable by combining class),
 * then recomposed from the left with primary composites, a mark blocked
 * by an earlier one of the same or higher class.
 */
#include "config.h"
#include "ct_nfc.h"
#include "ct_array.h"
#include "ct_err.h"
#include "ct_unicode.h"

#include <stdlib.h>
#include <string.h>

#define S_BASE 0xAC00
#define L_BASE 0x1100
#define V_BASE 0x1161
#define T_BASE 0x11A7
#define L_COUNT 19
#define V_COUNT 21
#define T_COUNT 28
#define N_COUNT (V_COUNT * T_COUNT)
#define S_COUNT (L_COUNT * N_COUNT)

static int ccc_of(uint32_t cp)
{
	int lo = 0, hi = ct_nfc_nccc - 1;

	if (cp < 0x300)
		return 0;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (ct_nfc_ccc[mid].cp == cp)
			return ct_nfc_ccc[mid].ccc;
		if (ct_nfc_ccc[mid].cp < cp)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

static const struct ct_nfc_decomp *decomp_of(uint32_t cp)
{
	int lo = 0, hi = ct_nfc_ndecomp - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (ct_nfc_decomp[mid].cp == cp)
			return &ct_nfc_decomp[mid];
		if (ct_nfc_decomp[mid].cp < cp)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/* The primary composite of a + b, or 0. */
static uint32_t compose(uint32_t a, uint32_t b)
{
	int lo = 0, hi = ct_nfc_ncomp - 1;

	if (a >= L_BASE && a < L_BASE + L_COUNT && b >= V_BASE && b < V_BASE + V_COUNT)
		return S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT;
	if (a >= S_BASE && a < S_BASE + S_COUNT && (a - S_BASE) % T_COUNT == 0 &&
	    b > T_BASE && b < T_BASE + T_COUNT)
		return a + (b - T_BASE);
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		const struct ct_nfc_comp *c = &ct_nfc_comp[mid];

		if (c->a == a && c->b == b)
			return c->c;
		if (c->a < a || (c->a == a && c->b < b))
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

static int inert(uint32_t cp)
{
	int lo = 0, hi = ct_nfc_nbusy - 1;

	if (cp < 0x300 || cp == UINT32_MAX)
		return 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (cp < ct_nfc_busy[mid][0])
			hi = mid - 1;
		else if (cp > ct_nfc_busy[mid][1])
			lo = mid + 1;
		else
			return 0;
	}
	return 1;
}

int ct_nfc_is_inert(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint32_t cp;

		if (p[i] < 0xCC) {	/* below U+0300, or a continuation byte */
			i++;
			continue;
		}
		i += ct_utf8_decode(p + i, n - i, &cp);
		if (!inert(cp))
			return 0;
	}
	return 1;
}

/* Code points of one segment, growable. */
struct cps {
	uint32_t *v;
	size_t n, cap;
};

static int cps_push(struct cps *c, uint32_t cp)
{
	int rc = ct_array_grow(&c->v, &c->cap, c->n, sizeof(*c->v), 64);

	if (rc == 0)
		c->v[c->n++] = cp;
	return rc;
}

static int decompose(struct cps *c, uint32_t cp)
{
	const struct ct_nfc_decomp *d;
	int rc = 0;

	if (cp >= S_BASE && cp < S_BASE + S_COUNT) {
		uint32_t s = cp - S_BASE;

		rc = cps_push(c, L_BASE + s / N_COUNT);
		if (rc == 0)
			rc = cps_push(c, V_BASE + (s % N_COUNT) / T_COUNT);
		if (rc == 0 && s % T_COUNT != 0)
			rc = cps_push(c, T_BASE + s % T_COUNT);
		return rc;
	}
	d = decomp_of(cp);
	if (d == NULL)
		return cps_push(c, cp);
	for (int k = 0; k < d->len && rc == 0; k++)
		rc = cps_push(c, ct_nfc_pool[d->at + k]);
	return rc;
}

/* Canonical order: a stable sort of each run of marks by class. Runs are
 * short in text; a long one is sorted by insertion all the same. */
static void reorder(uint32_t *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint32_t x = v[i];
		int cx = ccc_of(x);
		size_t j = i;

		if (cx == 0)
			continue;
		while (j > 0 && ccc_of(v[j - 1]) > cx)
			j--;
		memmove(v + j + 1, v + j, (i - j) * sizeof(*v));
		v[j] = x;
	}
}

/* Compose in place; the new length. */
static size_t recompose(uint32_t *v, size_t n)
{
	size_t starter = 0, out = 1;
	int last = ccc_of(v[0]), have = last == 0;	/* a starter to compose onto */

	for (size_t i = 1; i < n; i++) {
		int c = ccc_of(v[i]);
		uint32_t comp = have ? compose(v[starter], v[i]) : 0;

		if (comp != 0 && (last < c || last == 0)) {
			v[starter] = comp;
			continue;
		}
		if (c == 0) {
			starter = out;
			have = 1;
		}
		last = c;
		v[out++] = v[i];
	}
	return out;
}

static int append_utf8(struct ct_buf *out, const uint32_t *v, size_t n)
{
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++) {
		unsigned char u[4];

		rc = ct_buf_append(out, u, ct_utf8_encode(v[i], u));
	}
	return rc;
}

/* NFC of one segment p[0..n) (valid UTF-8 only: an invalid byte is a
 * segment of its own and never comes here). */
static int segment(const unsigned char *p, size_t n, struct cps *c, struct ct_buf *out)
{
	int rc = 0;

	c->n = 0;
	for (size_t i = 0; i < n && rc == 0;) {
		uint32_t cp;

		i += ct_utf8_decode(p + i, n - i, &cp);
		rc = decompose(c, cp);
	}
	if (rc < 0)
		return rc;
	reorder(c->v, c->n);
	return append_utf8(out, c->v, recompose(c->v, c->n));
}

int ct_nfc(const unsigned char *p, size_t n, struct ct_buf *out, uint32_t *seg)
{
	struct cps c = { 0 };
	size_t i = 0, base = out->len;
	int rc = 0;

	while (i < n && rc == 0) {
		size_t s = i, at = out->len, len;
		uint32_t cp;

		i += ct_utf8_decode(p + i, n - i, &cp);
		if (cp != UINT32_MAX)	/* the marks and joiners that follow */
			while (i < n && (len = ct_utf8_decode(p + i, n - i, &cp)) > 0 &&
			       cp != UINT32_MAX && !inert(cp))
				i += len;
		if (i - s == 1 || ct_nfc_is_inert(p + s, i - s))
			rc = ct_buf_append(out, p + s, i - s);
		else
			rc = segment(p + s, i - s, &c, out);
		if (seg != NULL && rc == 0) {
			seg[at - base] = (uint32_t)s;
			for (size_t k = at + 1; k < out->len; k++)
				seg[k - base] = UINT32_MAX;
		}
	}
	if (seg != NULL && rc == 0)
		seg[out->len - base] = (uint32_t)n;
	free(c.v);
	return rc;
}
