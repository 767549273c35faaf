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
 * header), written with lib/ct_tokens. The languages and their text come
 * from bench/ct_corpus.[ch], shared with bench/bench_lofi.
 *
 *   ctune-corpus --lang SEED [--base-lang SEED --share F] --tokens N
 *                [--seed S] --out FILE [--text]
 */
#include "ct_corpus.h"
#include "ct_err.h"
#include "ct_tokens.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	struct ct_corpus_lang base, L;
	ct_tok *toks;

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
		ct_corpus_lang_build(&base, base_lang, NULL, 0);
	ct_corpus_lang_build(&L, lang, have_base ? &base : NULL, share);
	toks = malloc((size_t)ntok * sizeof(*toks));
	if (toks == NULL) {
		fprintf(stderr, "ctune-corpus: out of memory\n");
		return 1;
	}
	ct_corpus_generate(&L, seed, toks, (size_t)ntok);
	if (text) {
		for (long long i = 0; i < ntok && i < 400; i++)
			putchar(ct_corpus_char(toks[i]));
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
