/*
 * Unit tests for bench/ct_corpus: the synthetic languages behind the demo's
 * data (ctune-corpus) and bench_lofi. What users rely on: the same seed
 * gives the same text forever (the demo and the published benchmark numbers
 * are reproducible), tokens fit the 29-symbol vocabulary, the text is made
 * of the language's words, and a derived language shares exactly the
 * promised part of its base's words.
 */
#include "ct_test.h"
#include "ct_corpus.h"

/* n tokens of language L's text `seed`, as characters (malloc'd string). */
static char *text_of(const struct ct_corpus_lang *L, uint64_t seed, size_t n)
{
	ct_tok *tok = malloc(n * sizeof(*tok));
	char *s = malloc(n + 1);

	assert_non_null(tok);
	assert_non_null(s);
	ct_corpus_generate(L, seed, tok, n);
	for (size_t i = 0; i < n; i++) {
		assert_true(tok[i] < CT_CORPUS_V);
		s[i] = ct_corpus_char(tok[i]);
	}
	s[n] = '\0';
	free(tok);
	return s;
}

static int is_word_of(const struct ct_corpus_lang *L, const char *w, size_t len)
{
	for (int i = 0; i < CT_CORPUS_NWORDS; i++)
		if (strlen(L->words[i]) == len && memcmp(L->words[i], w, len) == 0)
			return 1;
	return 0;
}

/* Pinned output: changing the generator changes the demo's data and every
 * published number, so it must be a deliberate act that updates this. */
static void test_golden_text(void **state)
{
	struct ct_corpus_lang a, b;
	char *s;

	(void)state;
	ct_corpus_lang_build(&a, 1, NULL, 0);
	s = text_of(&a, 1, 65);
	assert_string_equal(s, "vu su za ditebu. sumu zevege va sukit vifon lali su tiki vo mibin");
	free(s);
	ct_corpus_lang_build(&b, 2, &a, 0.5);
	s = text_of(&b, 7, 52);
	assert_string_equal(s, "katili ma. ton baba sit von bekar bus pa ton va pigo");
	free(s);
}

/* Every word of a long text is one of the language's words; sentences end
 * with '.' then a space or a newline; no empty words. */
static void test_text_is_made_of_words(void **state)
{
	struct ct_corpus_lang L;
	size_t n = 100000, start = 0, words = 0, newlines = 0;
	char *s;

	(void)state;
	ct_corpus_lang_build(&L, 42, NULL, 0);
	s = text_of(&L, 3, n);
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c >= 'a' && c <= 'z')
			continue;
		if (c == '.') {
			assert_true(i + 1 == n || s[i + 1] == ' ' || s[i + 1] == '\n');
		} else {
			assert_true(c == ' ' || c == '\n');
			newlines += c == '\n';
		}
		if (i > start) {
			assert_true(is_word_of(&L, s + start, i - start));
			words++;
		} else {
			/* only right after a '.' may a separator follow no word */
			assert_true(i > 0 && s[i - 1] == '.');
		}
		start = i + 1;
	}
	assert_true(words > n / 10);
	assert_true(newlines > 0);
	free(s);
}

static void test_derived_language_shares_words(void **state)
{
	struct ct_corpus_lang a, b;
	int keep = CT_CORPUS_NWORDS / 2, same_succ = 0, old = 0;

	(void)state;
	ct_corpus_lang_build(&a, 5, NULL, 0);
	ct_corpus_lang_build(&b, 6, &a, 0.5);
	for (int w = 0; w < keep; w++)
		assert_string_equal(b.words[w], a.words[w]);
	/* The other half are new words (a short one may collide by chance). */
	for (int w = keep; w < CT_CORPUS_NWORDS; w++)
		old += is_word_of(&a, b.words[w], strlen(b.words[w]));
	assert_true(old < 8);
	for (int w = 0; w < CT_CORPUS_NWORDS; w++)
		for (int k = 0; k < CT_CORPUS_NSUCC; k++) {
			assert_in_range(b.succ[w][k], 0, CT_CORPUS_NWORDS - 1);
			same_succ += b.succ[w][k] == a.succ[w][k];
		}
	/* new word order: at most chance agreement (1/64 of 256) plus slack */
	assert_true(same_succ < 20);
}

static void test_seeds(void **state)
{
	struct ct_corpus_lang L, L2;
	char *x, *y, *z;

	(void)state;
	ct_corpus_lang_build(&L, 9, NULL, 0);
	ct_corpus_lang_build(&L2, 9, NULL, 0);
	assert_memory_equal(&L, &L2, sizeof(L));
	x = text_of(&L, 1, 5000);
	y = text_of(&L2, 1, 1000);
	z = text_of(&L, 2, 5000);
	/* a shorter text is a prefix of a longer one with the same seed */
	assert_memory_equal(x, y, 1000);
	assert_true(strcmp(x, z) != 0);
	free(x);
	free(y);
	free(z);
}

static void test_chars(void **state)
{
	(void)state;
	assert_int_equal(ct_corpus_char(0), '\n');
	assert_int_equal(ct_corpus_char(1), ' ');
	assert_int_equal(ct_corpus_char(2), '.');
	assert_int_equal(ct_corpus_char(3), 'a');
	assert_int_equal(ct_corpus_char(28), 'z');
	assert_int_equal(ct_corpus_char(29), '?');
	assert_int_equal(ct_corpus_char(65535), '?');
}

CT_TEST_MAIN(test_golden_text, test_text_is_made_of_words,
	test_derived_language_shares_words, test_seeds, test_chars)
