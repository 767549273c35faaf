/*
 * ct_corpus.h - synthetic text "languages" reproducible from a seed: the
 * data of the demo (bench/ctune-corpus) and of the lo-fi benchmark
 * (bench/bench_lofi), which share this module so both see the same text.
 *
 * A language is a seeded set of CT_CORPUS_NWORDS pronounceable words
 * (consonant-vowel syllables) and a first-order Markov chain over them
 * (CT_CORPUS_NSUCC weighted successors per word), with sentences ended by
 * '.' and every sixth sentence by a newline. A language may be derived
 * from a base language: it keeps the base's first share * NWORDS words and
 * gets new words and entirely new transitions, so a model trained on the
 * base knows some of its spelling but not its word order.
 *
 * Text is tokenised per character: 0 = '\n', 1 = ' ', 2 = '.',
 * 3..28 = 'a'..'z' (CT_CORPUS_V = 29).
 *
 * Everything is integer arithmetic on a splitmix64 stream, so the bytes are
 * the same on every platform for a given seed.
 */
#ifndef CT_CORPUS_H
#define CT_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#include "ct_tok.h"

#define CT_CORPUS_V 29
#define CT_CORPUS_NWORDS 64
#define CT_CORPUS_NSUCC 4
#define CT_CORPUS_MAXWLEN 8

/* A language (plain data; build it with ct_corpus_lang_build). */
struct ct_corpus_lang {
	char words[CT_CORPUS_NWORDS][CT_CORPUS_MAXWLEN + 1];
	int succ[CT_CORPUS_NWORDS][CT_CORPUS_NSUCC];	/* successor word indices */
	unsigned succ_w[CT_CORPUS_NSUCC];		/* cumulative weights, of 100 */
	unsigned end_pct;				/* chance (%) a sentence ends */
};

/* Build language `seed` into *L. With base != NULL, the first
 * (int)(share * NWORDS) words are copied from base (share in [0, 1]); the
 * other words and every transition are drawn from `seed`. */
void ct_corpus_lang_build(struct ct_corpus_lang *L, uint64_t seed,
			  const struct ct_corpus_lang *base, double share);

/* Fill out[0..n) with n tokens of text of language L; `seed` picks the
 * text (different seeds give independent samples of the same language,
 * e.g. a training set and a held-out set). */
void ct_corpus_generate(const struct ct_corpus_lang *L, uint64_t seed,
			ct_tok *out, size_t n);

/* The character of token tok (< CT_CORPUS_V), or '?' for anything else. */
char ct_corpus_char(unsigned tok);

#endif
