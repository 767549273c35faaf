/*
 * gen_corpus.c - ctune-corpus: synthetic text corpora for the demo and the
 * lo-fi benchmarks, reproducible from a seed.
 *
 * crowdtune's demo needs a fine-tuning task whose effect is clear on a tiny
 * model that 2 CPU cores train in minutes, with no data downloaded. So the
 * corpora are generated: a "language" is a seeded set of pronounceable words
 * (consonant-vowel syllables) and a first-order Markov chain over them, with
 * sentences ended by '.' and paragraphs by a newline. The base model is
 * pretrained on one language; the fine-tuning job moves it to a second
 * language that keeps half of the first one's words but has new words and new
 * word order, so the base model's loss on it is clearly worse than on its
 * own language, and fine-tuning shows a clear drop.
 *
 * Text is tokenised per character: 0 = '\n', 1 = ' ', 2 = '.', 3..28 =
 * 'a'..'z' (V = 29). Output is an llm.c token file (uint16 with the 256-int
 * header), written with lib/ct_tokens.
 *
 *   ctune-corpus --lang SEED [--base-lang SEED --share F] --tokens N
 *                [--seed S] --out FILE [--text]
 */
#include "ct_err.h"
#include "ct_tokens.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CORPUS_V 29
#define NWORDS 64
#define NSUCC 4
#define MAXWLEN 8

struct rng {
	uint64_t s;
};

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

struct lang {
	char words[NWORDS][MAXWLEN + 1];
	int succ[NWORDS][NSUCC];	/* successor word indices */
	unsigned succ_w[NSUCC];		/* cumulative weights, out of 100 */
	unsigned end_pct;		/* chance (percent) a sentence ends */
};

static void make_word(struct rng *r, char *out)
{
	static const char cons[] = "bdfgklmnprstvz";
	static const char vow[] = "aeiou";
	int syl = 1 + (int)rng_below(r, 3), n = 0;

	for (int i = 0; i < syl && n + 2 <= MAXWLEN; i++) {
		out[n++] = cons[rng_below(r, sizeof(cons) - 1)];
		out[n++] = vow[rng_below(r, sizeof(vow) - 1)];
	}
	if (rng_below(r, 3) == 0 && n < MAXWLEN)
		out[n++] = "nrst"[rng_below(r, 4)];
	out[n] = '\0';
}

/* Build language `seed`; when `base` is given, the first share*NWORDS words
 * are taken from it (the rest and every transition are new). */
static void lang_build(struct lang *L, uint64_t seed, const struct lang *base, double share)
{
	struct rng r = { seed * 0x100000001b3ULL + 17 };
	int keep = base ? (int)(share * NWORDS) : 0;

	for (int w = 0; w < NWORDS; w++) {
		if (w < keep)
			memcpy(L->words[w], base->words[w], sizeof(L->words[w]));
		else
			make_word(&r, L->words[w]);
	}
	for (int w = 0; w < NWORDS; w++)
		for (int k = 0; k < NSUCC; k++)
			L->succ[w][k] = (int)rng_below(&r, NWORDS);
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

static int emit(uint16_t *out, size_t *n, size_t cap, char c)
{
	if (*n >= cap)
		return 1;
	out[(*n)++] = (uint16_t)tok_of(c);
	return 0;
}

static void generate(const struct lang *L, uint64_t seed, uint16_t *out, size_t cap)
{
	struct rng r = { seed ^ 0xa5a5a5a55a5a5a5aULL };
	size_t n = 0;
	int w = (int)rng_below(&r, NWORDS), sentences = 0;

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
			w = (int)rng_below(&r, NWORDS);
			continue;
		}
		if (emit(out, &n, cap, ' '))
			return;
		while (u >= L->succ_w[k])
			k++;
		w = L->succ[w][k];
	}
}

static void usage(FILE *f)
{
	fputs("usage: ctune-corpus --lang SEED [--base-lang SEED] [--share F]\n"
	      "                    --tokens N [--seed S] --out FILE [--text]\n"
	      "Writes N tokens of synthetic language SEED as an llm.c token file\n"
	      "(vocabulary 29: newline, space, '.', a-z). With --base-lang, the\n"
	      "language keeps the first F (default 0.5) of that language's words.\n"
	      "--text prints the first 400 characters as text to stdout.\n", f);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lang", required_argument, NULL, 'l' },
		{ "base-lang", required_argument, NULL, 'b' },
		{ "share", required_argument, NULL, 'f' },
		{ "tokens", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "out", required_argument, NULL, 'o' },
		{ "text", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t lang = 0, base_lang = 0, seed = 1;
	int have_lang = 0, have_base = 0, text = 0, c, rc;
	double share = 0.5;
	long long ntok = 0;
	const char *out = NULL;
	struct lang base, L;
	uint16_t *toks;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'l': lang = strtoull(optarg, NULL, 10); have_lang = 1; break;
		case 'b': base_lang = strtoull(optarg, NULL, 10); have_base = 1; break;
		case 'f': share = atof(optarg); break;
		case 'n': ntok = atoll(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 10); break;
		case 'o': out = optarg; break;
		case 't': text = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!have_lang || ntok <= 0 || ntok > (1LL << 31) || out == NULL ||
	    share < 0 || share > 1) {
		usage(stderr);
		return 2;
	}
	if (have_base)
		lang_build(&base, base_lang, NULL, 0);
	lang_build(&L, lang, have_base ? &base : NULL, share);
	toks = malloc((size_t)ntok * sizeof(*toks));
	if (toks == NULL) {
		fprintf(stderr, "ctune-corpus: out of memory\n");
		return 1;
	}
	generate(&L, seed, toks, (size_t)ntok);
	if (text) {
		static const char chars[] = "\n .abcdefghijklmnopqrstuvwxyz";
		for (long long i = 0; i < ntok && i < 400; i++)
			putchar(chars[toks[i]]);
		putchar('\n');
	}
	rc = ct_tokens_save(out, toks, (size_t)ntok);
	free(toks);
	if (rc < 0) {
		fprintf(stderr, "ctune-corpus: %s\n", ct_errmsg(rc));
		return 1;
	}
	return 0;
}
