/*
 * test_tokenizer.c - the tokenizers of ct_tokenizer.h: "bytes" and "gpt2".
 * Exact round trips of tricky inputs (invalid UTF-8, every byte, long
 * runs), a few ids OpenAI's encoding gives (taken from tiktoken; the full
 * comparison is test/tokenizer_gpt2.sh), invalid bytes cut like
 * punctuation, encoding in parts equal to encoding at once, the heap merge
 * equal to the scan, bad data files and bad ids refused with clear errors.
 */
#include "ct_test_engine.h"
#include "ct_bpe_int.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_tokenizer.h"
#include "ct_test_tokenizer.h"

static struct ct_tokenizer *gpt2;

static int setup(void **state)
{
	unsetenv("CTUNE_TOKENIZER_DIR");
	if (ct_test_dir_setup(state) < 0)
		return -1;
	if (ct_tokenizer_open("gpt2", &gpt2) < 0) {
		fprintf(stderr, "gpt2: %s\n", ct_errmsg(CT_ENOENT));
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	ct_tokenizer_free(gpt2);
	return ct_test_dir_teardown(state);
}

/* encode then decode gives back the bytes; returns the token count. */
static size_t roundtrip(const struct ct_tokenizer *tk, const void *s, size_t n)
{
	struct ct_tokvec ids = { 0 };
	struct ct_buf out;
	size_t count;

	ct_buf_init(&out, 0);
	assert_int_equal(ct_tokenizer_encode(tk, s, n, &ids), 0);
	for (size_t i = 0; i < ids.n; i++)
		assert_true(ids.v[i] < (uint32_t)ct_tokenizer_vocab(tk));
	assert_int_equal(ct_tokenizer_decode(tk, ids.v, ids.n, &out), 0);
	assert_int_equal(out.len, n);
	if (n > 0)
		assert_memory_equal(out.data, s, n);
	count = ids.n;
	ct_tokvec_free(&ids);
	ct_buf_free(&out);
	return count;
}

static void test_bytes(void **state)
{
	struct ct_tokenizer *tk;
	struct ct_tokvec ids = { 0 };
	struct ct_buf out;
	unsigned char all[256];
	uint32_t bad[3] = { 65, 256, 66 };

	(void)state;
	assert_int_equal(ct_tokenizer_open("bytes", &tk), 0);
	assert_string_equal(ct_tokenizer_name(tk), "bytes");
	assert_int_equal(ct_tokenizer_vocab(tk), 256);
	assert_int_equal(ct_tokenizer_eot(tk), -1);
	for (int i = 0; i < 256; i++)
		all[i] = (unsigned char)(255 - i);
	assert_int_equal(roundtrip(tk, all, 256), 256);
	assert_int_equal(ct_tokenizer_encode(tk, "hi", 2, &ids), 0);
	assert_int_equal(ids.n, 2);
	assert_int_equal(ids.v[0], 'h');
	assert_int_equal(ids.v[1], 'i');
	ct_buf_init(&out, 0);
	assert_int_equal(ct_tokenizer_decode(tk, bad, 3, &out), CT_ERANGE);
	assert_non_null(strstr(ct_errmsg(CT_ERANGE), "token 256 at position 1"));
	assert_int_equal(out.len, 1);	/* what came before the bad id */
	ct_buf_free(&out);
	ct_tokvec_free(&ids);
	ct_tokenizer_free(tk);
}

static void test_names(void **state)
{
	struct ct_tokenizer *tk = (void *)1;

	(void)state;
	assert_int_equal(ct_tokenizer_open("gpt3", &tk), CT_EINVAL);
	assert_null(tk);
	assert_non_null(strstr(ct_errmsg(CT_EINVAL), "bytes, gpt2"));
	assert_string_equal(ct_tokenizer_for_vocab(256), "bytes");
	assert_string_equal(ct_tokenizer_for_vocab(50257), "gpt2");
	assert_null(ct_tokenizer_for_vocab(1000));
}

struct known {
	const char *text;
	int n;
	uint32_t ids[12];
};

/* Ids from tiktoken's "gpt2" encoding (encode_ordinary). */
static const struct known known[] = {
	{ "Hello world", 2, { 15496, 995 } },
	{ "It's   a test\n\n 123 !!", 9,
	  { 1026, 338, 220, 220, 257, 1332, 628, 17031, 37867 } },
	{ "<|endoftext|>", 7, { 27, 91, 437, 1659, 5239, 91, 29 } },
	{ "\xf0\x9f\x98\x80 na\xc3\xafve \xe4\xb8\xad\xe6\x96\x87", 7,
	  { 47249, 222, 41492, 220, 40792, 23877, 229 } },
	{ "  \t\n  x", 6, { 220, 220, 197, 198, 220, 2124 } },
};

static void test_gpt2_known(void **state)
{
	const unsigned char *t;
	size_t len;

	(void)state;
	assert_string_equal(ct_tokenizer_name(gpt2), "gpt2");
	assert_int_equal(ct_tokenizer_vocab(gpt2), 50257);
	assert_int_equal(ct_tokenizer_eot(gpt2), 50256);
	t = ct_tokenizer_token(gpt2, 50256, &len);
	assert_int_equal(len, 13);
	assert_memory_equal(t, "<|endoftext|>", 13);
	assert_null(ct_tokenizer_token(gpt2, 50257, &len));
	assert_int_equal(len, 0);
	for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
		struct ct_tokvec ids = { 0 };

		assert_int_equal(ct_tokenizer_encode(gpt2, known[k].text,
						     strlen(known[k].text), &ids), 0);
		assert_int_equal(ids.n, known[k].n);
		assert_memory_equal(ids.v, known[k].ids, ids.n * sizeof(uint32_t));
		ct_tokvec_free(&ids);
	}
}

static const char *const tricky[] = {
	"", "a", " ", "\n", "'s", "''s", "'", "I'll we've they're 'LL",
	"   leading spaces and trailing   ", "\t\t\r\n\r\n\u3000\u00a0x\u2028",
	"1234567890 3.14159 1e-9 ٣٤٥ ½", "emoji 😀👍🏽🇩🇪👨‍👩‍👧",
	"Ελληνικά русский 中文 日本語 한국어 e\u0301", "<|endoftext|><|endoftext|>",
	"\xff", "\x80\xbf", "a\xc3", "\xc3(", "\xed\xa0\x80", "\xf4\x90\x80\x80",
	"\xe2\x82", "\xc0\xaf overlong", "ok\xfe\xffok \xf0\x9f\x98",
};

static void test_gpt2_roundtrips(void **state)
{
	unsigned char all[256], rnd[20000];
	char *runs;
	uint32_t x = 1;

	(void)state;
	for (size_t k = 0; k < sizeof(tricky) / sizeof(tricky[0]); k++)
		roundtrip(gpt2, tricky[k], strlen(tricky[k]));
	for (int i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	roundtrip(gpt2, all, 256);
	for (size_t i = 0; i < sizeof(rnd); i++) {
		x = x * 1103515245u + 12345u;
		rnd[i] = (unsigned char)(x >> 16);
	}
	roundtrip(gpt2, rnd, sizeof(rnd));
	/* Long runs are single pieces, merged by the heap; tiktoken makes
	 * 17500 tokens of this (GPT-2 has no token of several spaces). */
	runs = malloc(30000);
	assert_non_null(runs);
	memset(runs, ' ', 10000);
	memset(runs + 10000, 'a', 10000);
	memset(runs + 20000, '7', 5000);
	memset(runs + 25000, '\n', 5000);
	assert_int_equal(roundtrip(gpt2, runs, 30000), 17500);
	free(runs);
}

static void encode_str(const char *s, size_t n, struct ct_tokvec *ids)
{
	assert_int_equal(ct_tokenizer_encode(gpt2, s, n, ids), 0);
}

/* An invalid byte is one character that is neither letter, number nor
 * space: it ends a word and joins a run of punctuation. */
static void test_gpt2_invalid_utf8(void **state)
{
	struct ct_tokvec a = { 0 }, b = { 0 };

	(void)state;
	encode_str("abc\xff" "def", 7, &a);
	encode_str("abc", 3, &b);
	encode_str("\xff", 1, &b);
	encode_str("def", 3, &b);
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.v, b.v, a.n * sizeof(uint32_t));
	ct_tokvec_free(&a);
	ct_tokvec_free(&b);
	/* A lone lead byte after a space is one piece with it, as " ?[^\s\p{L}
	 * \p{N}]+" makes it, so it merges into GPT-2's token " \xe2". */
	encode_str(" \xe2x", 3, &a);
	assert_int_equal(a.n, 2);
	{
		size_t len;
		const unsigned char *t = ct_tokenizer_token(gpt2, a.v[0], &len);

		assert_int_equal(len, 2);
		assert_memory_equal(t, " \xe2", 2);
	}
	ct_tokvec_free(&a);
}

/* Feeding the text in parts of every size gives the ids of one call. */
static void test_gpt2_parts(void **state)
{
	static const char text[] =
		"Mixed  text\n\n\n  with  \u3000\u3000 runs, 12345 digits, it's "
		"'ll ünïcödé 中文 😀😀 \xff\xfe bytes\t\t\tand     end    ";
	size_t n = sizeof(text) - 1;
	struct ct_tokvec whole = { 0 };

	(void)state;
	encode_str(text, n, &whole);
	for (size_t step = 1; step <= 24; step++)
		ct_test_parts_equal_whole(gpt2, text, n, step, &whole);
	ct_tokvec_free(&whole);
}

/* n bytes made of copies of unit (a partial copy at the end), malloc'd. */
static char *repeat(const char *unit, size_t n)
{
	size_t u = strlen(unit);
	char *s = malloc(n + 1);

	assert_non_null(s);
	for (size_t i = 0; i < n; i++)
		s[i] = unit[i % u];
	s[n] = '\0';
	return s;
}

/* A pre-token longer than CT_BPE_MAX_PIECE (a run of letters, spaces,
 * 3-byte punctuation whose cut falls inside a character) is cut after
 * exactly that many bytes and matching resumes there: the ids are those
 * of the first CT_BPE_MAX_PIECE bytes followed by those of the rest; the
 * text round-trips; streaming in parts gives the same ids. */
static void test_gpt2_long_pieces(void **state)
{
	static const char *const units[] = { "a", " ", "\xe3\x80\x82" /* U+3002 */ };
	const size_t cap = CT_BPE_MAX_PIECE, n = 2 * cap + 5000;

	(void)state;
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		char *s = repeat(units[u], n);
		struct ct_tokvec whole = { 0 }, head = { 0 };

		s[n - 1] = 'x';		/* the space run ends in \S: \s+(?!\S) */
		encode_str(s, n, &whole);
		encode_str(s, cap, &head);
		assert_true(head.n < whole.n);
		assert_memory_equal(whole.v, head.v, head.n * sizeof(uint32_t));
		roundtrip(gpt2, s, n);
		ct_test_parts_equal_whole(gpt2, s, n, 4096, &whole);
		ct_test_parts_equal_whole(gpt2, s, n, cap + 3, &whole);
		ct_tokvec_free(&whole);
		ct_tokvec_free(&head);
		free(s);
	}
}

/* The heap merge (long pieces) picks the same pairs as the scan. */
static void test_gpt2_heap_equals_scan(void **state)
{
	static const char words[] = "unbelievably antidisestablishmentarianism "
		"Pneumonoultramicroscopicsilicovolcanoconiosis aaaaaaaaaaaaaaaaaaaa "
		"ééééééééé 1234567890123 !!!!!!!!!!?????? 中文中文中文 😀😀😀😀";
	struct ct_bpe *b;
	uint32_t x = 7;

	(void)state;
	assert_int_equal(ct_bpe_open_gpt2(&b), 0);
	for (int k = 0; k < 2000; k++) {
		struct ct_tokvec s = { 0 }, h = { 0 };
		size_t off, len;

		x = x * 1103515245u + 12345u;
		off = (x >> 8) % (sizeof(words) - 3);
		len = 2 + (x >> 20) % 60;
		if (off + len > sizeof(words) - 1)
			len = sizeof(words) - 1 - off;
		if (len < 2)
			continue;
		assert_int_equal(ct_bpe_merge(b, (const unsigned char *)words + off, len, &s), 0);
		assert_int_equal(ct_bpe_merge_heap(b, (const unsigned char *)words + off, len, &h), 0);
		assert_int_equal(s.n, h.n);
		assert_memory_equal(s.v, h.v, s.n * sizeof(uint32_t));
		ct_tokvec_free(&s);
		ct_tokvec_free(&h);
	}
	ct_bpe_free(b);
}

/* Copy the real data to dir/gpt2/, with `edit` applied to one file. */
static void bad_data(const char *file, const char *find, const char *repl)
{
	static const char *const names[] = { "encoder.json", "vocab.bpe" };
	char src[4200], dst[4200];

	snprintf(dst, sizeof(dst), "%s/gpt2", ct_test_dir);
	assert_int_equal(ct_mkdir_p(dst, 0755), 0);
	for (int i = 0; i < 2; i++) {
		unsigned char *d;
		size_t n;
		char *at;

		snprintf(src, sizeof(src), "%s/tokenizers/gpt2/%s", CT_SRCDATADIR, names[i]);
		assert_int_equal(ct_file_read_all(src, 0, &d, &n), 0);
		if (strcmp(names[i], file) == 0) {
			at = strstr((char *)d, find);
			assert_non_null(at);
			assert_int_equal(strlen(repl), strlen(find));
			memcpy(at, repl, strlen(repl));
		}
		snprintf(dst, sizeof(dst), "%s/gpt2/%s", ct_test_dir, names[i]);
		assert_int_equal(ct_file_write_atomic(dst, d, n, 0644), 0);
		free(d);
	}
}

static void expect_open_fails(const char *msg)
{
	struct ct_tokenizer *tk = (void *)1;

	setenv("CTUNE_TOKENIZER_DIR", ct_test_dir, 1);
	assert_int_equal(ct_tokenizer_open("gpt2", &tk), CT_EFORMAT);
	assert_null(tk);
	assert_non_null(strstr(ct_errmsg(CT_EFORMAT), msg));
	unsetenv("CTUNE_TOKENIZER_DIR");
}

static void test_gpt2_bad_data(void **state)
{
	struct ct_tokenizer *tk;

	(void)state;
	/* $CTUNE_TOKENIZER_DIR comes first: a good copy there works */
	bad_data("vocab.bpe", "#version", "#version");
	setenv("CTUNE_TOKENIZER_DIR", ct_test_dir, 1);
	assert_int_equal(ct_tokenizer_open("gpt2", &tk), 0);
	ct_tokenizer_free(tk);
	bad_data("vocab.bpe", "\u0120 t\n\u0120 a\n", "\u0120 a\n\u0120 t\n");
	expect_open_fails("vocab.bpe line 2: the merge does not make token 256");
	bad_data("encoder.json", "\"!\": 0,", "\"!\": 1,");
	expect_open_fails("id given twice");
	bad_data("encoder.json", "\"#\": 2", "\"#\"x 2");
	expect_open_fails("expected ':'");
	bad_data("encoder.json", "\"\\u0120t\"", "\"\\u0400t\"");
	expect_open_fails("outside GPT-2's byte alphabet");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_gpt2_known),
		cmocka_unit_test(test_gpt2_roundtrips),
		cmocka_unit_test(test_gpt2_invalid_utf8),
		cmocka_unit_test(test_gpt2_parts),
		cmocka_unit_test(test_gpt2_long_pieces),
		cmocka_unit_test(test_gpt2_heap_equals_scan),
		cmocka_unit_test(test_gpt2_bad_data),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
