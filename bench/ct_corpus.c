/*
 * ct_corpus.c - synthetic languages and their text (see ct_corpus.h). The
 * algorithm is part of what makes the demo and the benchmarks reproducible:
 * changing any draw changes every generated file.
 */
#include "ct_corpus.h"

#include <string.h>

struct rng {
	uint64_t s;
};

/* splitmix64 */
static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform integer in [0, n). The tiny modulo bias does not matter here. */
static unsigned rng_below(struct rng *r, unsigned n)
{
	return (unsigned)(rng_next(r) % n);
}

static void make_word(struct rng *r, char *out)
{
	static const char cons[] = "bdfgklmnprstvz";
	static const char vow[] = "aeiou";
	int syl = 1 + (int)rng_below(r, 3), n = 0;

	for (int i = 0; i < syl && n + 2 <= CT_CORPUS_MAXWLEN; i++) {
		out[n++] = cons[rng_below(r, sizeof(cons) - 1)];
		out[n++] = vow[rng_below(r, sizeof(vow) - 1)];
	}
	if (rng_below(r, 3) == 0 && n < CT_CORPUS_MAXWLEN)
		out[n++] = "nrst"[rng_below(r, 4)];
	out[n] = '\0';
}

void ct_corpus_lang_build(struct ct_corpus_lang *L, uint64_t seed,
			  const struct ct_corpus_lang *base, double share)
{
	struct rng r = { seed * 0x100000001b3ULL + 17 };
	int keep = base ? (int)(share * CT_CORPUS_NWORDS) : 0;

	memset(L, 0, sizeof(*L));	/* no stray bytes after a word's NUL */
	for (int w = 0; w < CT_CORPUS_NWORDS; w++) {
		if (w < keep)
			memcpy(L->words[w], base->words[w], sizeof(L->words[w]));
		else
			make_word(&r, L->words[w]);
	}
	for (int w = 0; w < CT_CORPUS_NWORDS; w++)
		for (int k = 0; k < CT_CORPUS_NSUCC; k++)
			L->succ[w][k] = (int)rng_below(&r, CT_CORPUS_NWORDS);
	L->succ_w[0] = 55;
	L->succ_w[1] = 80;
	L->succ_w[2] = 93;
	L->succ_w[3] = 100;
	L->end_pct = 12;
}

static int tok_of(char c)
{
	if (c == '\n')
		return 0;
	if (c == ' ')
		return 1;
	if (c == '.')
		return 2;
	return 3 + (c - 'a');
}

char ct_corpus_char(unsigned tok)
{
	static const char chars[] = "\n .abcdefghijklmnopqrstuvwxyz";

	return tok < CT_CORPUS_V ? chars[tok] : '?';
}

/* Append c; 1 when out is full (nothing written). */
static int emit(ct_tok *out, size_t *n, size_t cap, char c)
{
	if (*n >= cap)
		return 1;
	out[(*n)++] = (ct_tok)tok_of(c);
	return 0;
}

void ct_corpus_generate(const struct ct_corpus_lang *L, uint64_t seed,
			ct_tok *out, size_t cap)
{
	struct rng r = { seed ^ 0xa5a5a5a55a5a5a5aULL };
	size_t n = 0;
	int w = (int)rng_below(&r, CT_CORPUS_NWORDS), sentences = 0;

	while (n < cap) {
		unsigned u = rng_below(&r, 100);
		int k = 0;

		for (const char *p = L->words[w]; *p; p++)
			if (emit(out, &n, cap, *p))
				return;
		if (rng_below(&r, 100) < L->end_pct) {
			if (emit(out, &n, cap, '.'))
				return;
			sentences++;
			if (emit(out, &n, cap, sentences % 6 == 0 ? '\n' : ' '))
				return;
			w = (int)rng_below(&r, CT_CORPUS_NWORDS);
			continue;
		}
		if (emit(out, &n, cap, ' '))
			return;
		while (u >= L->succ_w[k])
			k++;
		w = L->succ[w][k];
	}
}
