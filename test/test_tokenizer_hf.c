/*
 * test_tokenizer_hf.c - tokenizers from a Hugging Face tokenizer.json and
 * what they need: version 2 token files (32-bit ids), Unicode NFC, and a
 * small tokenizer.json written here (the 256 bytes, a few merges whose ids
 * are not their ranks, added tokens that overlap) with each known
 * pre-tokeniser: exact ids for hand-checked
 * inputs, encoding in parts equal to encoding at once (added tokens and
 * white-space runs across the cuts), exact round trips, and every setting
 * the engine does not implement refused by name. The comparison with
 * Hugging Face's own code on real files is test/tokenizer_hf.sh.
 */
#include "ct_test_engine.h"
#include "ct_bpe_int.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_nfc.h"
#include "ct_sample.h"
#include "ct_tokenizer.h"
#include "ct_test_tokenizer.h"
#include "ct_tokens.h"

/* ---- NFC ----------------------------------------------------------------- */

static void test_nfc(void **state)
{
	static const struct {
		const char *in, *want;
	} v[] = {
		{ "plain ascii, é and 中文", "plain ascii, é and 中文" },
		{ "e\xcc\x81", "\xc3\xa9" },				/* e + acute */
		{ "\xe2\x84\xa6", "\xce\xa9" },				/* ohm sign: singleton */
		{ "x\xcc\x81\xcc\xa3", "x\xcc\xa3\xcc\x81" },		/* canonical order */
		{ "\xe1\xb8\x8b\xcc\xa3", "\xe1\xb8\x8d\xcc\x87" },	/* d dot-above + below */
		{ "\xe0\xa5\x98", "\xe0\xa4\x95\xe0\xa4\xbc" },	/* excluded composite */
		{ "\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8", "\xea\xb0\x81" },	/* Hangul L V T */
		{ "\xea\xb0\x80\xe1\x86\xa8", "\xea\xb0\x81" },	/* Hangul LV + T */
		{ "\xcc\x81" "e", "\xcc\x81" "e" },				/* leading mark stays */
		{ "a\xcc\x8a\xcc\x81", "\xc7\xbb" },			/* a ring acute */
		{ "\xff\xcc\x81" "e\xcc\x81\xc3", "\xff\xcc\x81\xc3\xa9\xc3" },	/* bad bytes kept */
	};
	uint32_t seg[64];
	struct ct_buf b;

	(void)state;
	ct_buf_init(&b, 0);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t n = strlen(v[i].in);

		ct_buf_reset(&b);
		assert_int_equal(ct_nfc((const unsigned char *)v[i].in, n, &b, seg), 0);
		if (b.len != strlen(v[i].want) || memcmp(b.data, v[i].want, b.len) != 0)
			fail_msg("NFC of vector %zu is wrong", i);
		assert_int_equal(ct_nfc_is_inert((const unsigned char *)v[i].in, n), i == 0);
		assert_int_equal(seg[0], 0);
		assert_int_equal(seg[b.len], n);
	}
	ct_buf_free(&b);
}

/* ---- version 2 token files --------------------------------------------------- */

static void test_tokens_v2(void **state)
{
	uint32_t ids[5] = { 0, 70000, 128255, 65535, 7 };
	char path[4200];
	struct ct_tokens t;
	unsigned char *d;
	size_t n;

	(void)state;
	snprintf(path, sizeof(path), "%s/v2.bin", ct_test_dir);
	assert_int_equal(ct_tokens_save_ids(path, ids, 5, 0), CT_ERANGE);	/* 70000 */
	assert_false(ct_file_exists(path));
	assert_int_equal(ct_tokens_save_ids(path, ids, 5, 1), 0);
	assert_int_equal(ct_tokens_load(path, &t), 0);	/* the engine's loader */
	assert_int_equal(t.version, 2);
	assert_memory_equal(t.tok, ids, sizeof(ids));
	ct_tokens_free(&t);
	assert_int_equal(ct_tokens_load_any(path, &t), 0);
	assert_int_equal(t.version, 2);
	assert_int_equal(t.n, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(ct_tokens_get(&t, (uint64_t)i), ids[i]);
	assert_int_equal(ct_tokens_check_vocab(&t, 128256), 0);
	assert_int_equal(ct_tokens_check_vocab(&t, 128255), CT_EMISMATCH);
	ct_tokens_free(&t);
	/* one byte short of 1024 + 4n */
	assert_int_equal(ct_file_read_all(path, 0, &d, &n), 0);
	assert_int_equal(n, 1024 + 20);
	assert_int_equal(ct_file_write_atomic(path, d, n - 1, 0644), 0);
	assert_int_equal(ct_tokens_load_any(path, &t), CT_EFORMAT);
	free(d);
	/* version 1 from 32-bit ids below 65,536 */
	ids[1] = 1;
	ids[2] = 2;
	assert_int_equal(ct_tokens_save_ids(path, ids, 5, 0), 0);
	assert_int_equal(ct_tokens_load(path, &t), 0);
	assert_int_equal(t.version, 1);
	assert_int_equal(t.tok[3], 65535);
	assert_int_equal(ct_tokens_get(&t, 4), 7);
	ct_tokens_free(&t);
}

/* ---- a small tokenizer.json ------------------------------------------------ */

static const char LLAMA3_RE[] =
	"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}|"
	" ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+";

/* GPT-2's alphabet character for byte c, as UTF-8 into out; its length. */
static int alpha(int c, char *out)
{
	int cp = c, k = 0;

	if (!((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174)) {
		for (int d = 0; d < c; d++)
			k += !((d >= 33 && d <= 126) || (d >= 161 && d <= 172) || d >= 174);
		cp = 256 + k;
	}
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	out[0] = (char)(0xC0 | cp >> 6);
	out[1] = (char)(0x80 | (cp & 0x3F));
	return 2;
}

/* Bytes 0..255 get ids 10..265 (ids 0..9 are left out, but 3 and 4 are
 * added tokens); merges, by rank: "a b" -> 300, "ab c" -> 266,
 * "Ġ t" -> 301, "Ġt h" -> 302, "1 2" -> 303 ("Ġ" stands for the space). The
 * pre-tokeniser JSON is `pre` (NULL: Llama 3's), `extra` goes into the
 * model and `added_extra` into the first added token. */
static char *hf_json(const char *pre, const char *extra, const char *added_extra)
{
	struct ct_buf b;
	char ch[4], sp[4];
	int lsp = alpha(' ', sp);

	ct_buf_init(&b, 0);
	if (pre == NULL)
		pre = "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", "
		      "\"pattern\": {\"Regex\": \"%RE%\"}, \"behavior\": \"Isolated\", "
		      "\"invert\": false}, {\"type\": \"ByteLevel\", \"add_prefix_space\": "
		      "false, \"use_regex\": false}]}";
	ct_buf_appendf(&b, "{\"version\": \"1.0\", \"added_tokens\": ["
		       "{\"id\": 3, \"content\": \"<|x|>\", \"special\": true%s}, "
		       "{\"id\": 4, \"content\": \"<|x|>y\", \"special\": false}], "
		       "\"normalizer\": null, \"pre_tokenizer\": ", added_extra);
	for (const char *p = pre; *p; p++) {
		if (strncmp(p, "%RE%", 4) == 0) {
			ct_buf_appends(&b, LLAMA3_RE);
			p += 3;
		} else {
			ct_buf_append(&b, p, 1);
		}
	}
	ct_buf_appendf(&b, ", \"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": "
		       "\"BPE\", \"unk_token\": null, \"ignore_merges\": false%s, \"vocab\": {", extra);
	for (int c = 0; c < 256; c++) {
		int l = alpha(c, ch);

		ct_buf_appends(&b, c ? ", \"" : "\"");
		if (c == '"' || c == '\\')
			ct_buf_appends(&b, "\\");
		ct_buf_append(&b, ch, (size_t)l);
		ct_buf_appendf(&b, "\": %d", 10 + c);
	}
	ct_buf_appendf(&b, ", \"ab\": 300, \"abc\": 266, \"%.*st\": 301, \"%.*sth\": 302, "
		       "\"12\": 303}, \"merges\": [\"a b\", [\"ab\", \"c\"], \"%.*s t\", "
		       "\"%.*st h\", \"1 2\"]}}", lsp, sp, lsp, sp, lsp, sp, lsp, sp);
	return (char *)ct_buf_steal(&b, NULL);
}

/* Write json to dir/name/tokenizer.json and open it (by directory). */
static int open_json(const char *name, char *json, struct ct_tokenizer **tk)
{
	char dir[4200], path[4300];
	int rc;

	snprintf(dir, sizeof(dir), "%s/%s", ct_test_dir, name);
	assert_int_equal(ct_mkdir_p(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/tokenizer.json", dir);
	assert_int_equal(ct_file_write_atomic(path, json, strlen(json), 0644), 0);
	free(json);
	rc = ct_tokenizer_open(dir, tk);
	return rc;
}

static void expect_ids(const struct ct_tokenizer *tk, const char *text, int n, ...)
{
	struct ct_tokvec ids = { 0 };
	struct ct_buf out;
	va_list ap;

	ct_buf_init(&out, 0);
	assert_int_equal(ct_tokenizer_encode(tk, text, strlen(text), &ids), 0);
	if ((int)ids.n != n) {
		fprintf(stderr, "'%s': %zu ids:", text, ids.n);
		for (size_t i = 0; i < ids.n; i++)
			fprintf(stderr, " %u", ids.v[i]);
		fprintf(stderr, "\n");
	}
	assert_int_equal(ids.n, n);
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		assert_int_equal(ids.v[i], va_arg(ap, int));
	va_end(ap);
	assert_int_equal(ct_tokenizer_decode(tk, ids.v, ids.n, &out), 0);
	assert_int_equal(out.len, strlen(text));
	assert_memory_equal(out.data, text, out.len);
	ct_tokvec_free(&ids);
	ct_buf_free(&out);
}

#define B(c) (10 + (c))

static void test_hf_small(void **state)
{
	struct ct_tokenizer *tk;
	const unsigned char *s;
	size_t len;

	(void)state;
	assert_int_equal(open_json("small", hf_json(NULL, "", ""), &tk), 0);
	assert_int_equal(ct_tokenizer_vocab(tk), 304);
	assert_int_equal(ct_tokenizer_eot(tk), -1);
	/* ranks, not ids: "ab" (rank 0) before "abc"; ignore_merges false */
	expect_ids(tk, "abc", 1, 266);
	expect_ids(tk, "abab", 2, 300, 300);
	expect_ids(tk, " the", 2, 302, B('e'));
	/* Llama 3's pieces: digits in threes, a prefix char before letters,
	 * case-insensitive contractions, the last newline of a space run */
	expect_ids(tk, "12345", 4, 303, B('3'), B('4'), B('5'));
	expect_ids(tk, "(ab", 2, B('('), 300);
	expect_ids(tk, "x'LLab", 5, B('x'), B('\''), B('L'), B('L'), 300);
	expect_ids(tk, "a \n b", 5, B('a'), B(' '), B('\n'), B(' '), B('b'));
	/* added tokens before the pre-tokeniser, leftmost then longest */
	expect_ids(tk, "ab<|x|>yab<|x|>", 4, 300, 4, 300, 3);
	expect_ids(tk, "<|x<|x|>", 4, B('<'), B('|'), B('x'), 3);
	s = ct_tokenizer_token(tk, 4, &len);
	assert_int_equal(len, 6);
	assert_memory_equal(s, "<|x|>y", 6);
	assert_null(ct_tokenizer_token(tk, 5, &len));	/* an id no one has */
	assert_null(ct_tokenizer_token(tk, 304, &len));
	ct_tokenizer_free(tk);
}

/* The other pre-tokenisers: Qwen2's single digits, SmolLM2's digits then
 * GPT-2's regex, GPT-2's alone (ByteLevel with its regex). */
static void test_hf_pretokenizers(void **state)
{
	static const char qwen[] = "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": "
		"\"Split\", \"pattern\": {\"Regex\": \"%RE%\"}, \"behavior\": \"Isolated\", "
		"\"invert\": false}, {\"type\": \"ByteLevel\", \"use_regex\": false}]}";
	static const char smol[] = "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": "
		"\"Digits\", \"individual_digits\": true}, {\"type\": \"ByteLevel\", "
		"\"add_prefix_space\": false, \"use_regex\": true}]}";
	static const char gpt2[] = "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
		"\"trim_offsets\": true}";
	char *j = hf_json(qwen, "", ""), *at = strstr(j, "{1,3}");
	struct ct_tokenizer *tk;

	(void)state;
	memmove(at, at + 5, strlen(at + 5) + 1);	/* \p{N}{1,3} -> \p{N} */
	assert_int_equal(open_json("qwen", j, &tk), 0);
	expect_ids(tk, "12", 2, B('1'), B('2'));
	expect_ids(tk, "x'Sab", 4, B('x'), B('\''), B('S'), 300);
	ct_tokenizer_free(tk);
	assert_int_equal(open_json("smol", hf_json(smol, ", \"ignore_merges\": true", ""), &tk), 0);
	expect_ids(tk, "a12b", 4, B('a'), B('1'), B('2'), B('b'));
	expect_ids(tk, " the'LL", 5, 302, B('e'), B('\''), B('L'), B('L'));
	ct_tokenizer_free(tk);
	assert_int_equal(open_json("gpt2", hf_json(gpt2, "", ""), &tk), 0);
	expect_ids(tk, "12 the's", 5, 303, 302, B('e'), B('\''), B('s'));
	ct_tokenizer_free(tk);
}

/* The small tokenizer.json of hf_json, with an NFC normalizer when nfc. */
static char *hf_json_nfc(int nfc)
{
	char *j = hf_json(NULL, "", ""), *at = strstr(j, "\"normalizer\": null");
	struct ct_buf b;

	if (!nfc)
		return j;
	ct_buf_init(&b, 0);
	ct_buf_append(&b, j, (size_t)(at - j));
	ct_buf_appendf(&b, "\"normalizer\": {\"type\": \"NFC\"}%s",
		       at + strlen("\"normalizer\": null"));
	free(j);
	return (char *)ct_buf_steal(&b, NULL);
}

/* Feeding random text in parts of many sizes gives the ids of one call:
 * added tokens, white-space runs, digits and (with NFC) combining marks
 * across every cut. */
static void parts_equal_whole(const char *name, int nfc)
{
	static const char *const bits[] = {
		"ab", "abc", " the", "<|x|>", "<|x|>y", "<|x", "|>", "  ", "\n", "\r\n", " \n ",
		"   \n\n  ", "\t", "123", "4567", "'LL", "'s", "(", "ü", "中文", "\xff", "x", "y",
		"...", "!\n", "e\xcc\x81", "\xcc\xa3", "\xcc\x81\xcc\x81", "\xe2\x84\xa6",
		"\xea\xb0\x80", "\xe1\x86\xa8", "\xe1\x84\x80\xe1\x85\xa1",
	};
	struct ct_tokenizer *tk;
	char text[6000], *j = hf_json_nfc(nfc);
	size_t n = 0;
	uint32_t x = 99;

	assert_int_equal(open_json(name, j, &tk), 0);
	while (n < sizeof(text) - 16) {
		const char *w;

		x = x * 1103515245u + 12345u;
		w = bits[(x >> 16) % (sizeof(bits) / sizeof(bits[0]))];
		memcpy(text + n, w, strlen(w));
		n += strlen(w);
	}
	for (size_t step = 1; step <= 300; step += step < 40 ? 1 : 37) {
		struct ct_tokvec whole = { 0 };

		assert_int_equal(ct_tokenizer_encode(tk, text, n, &whole), 0);
		ct_test_parts_equal_whole(tk, text, n, step, &whole);
		ct_tokvec_free(&whole);
	}
	ct_tokenizer_free(tk);
}

/* Runs longer than CT_BPE_MAX_PIECE (letters, spaces before newlines, a
 * combining mark NFC cannot cut, Hangul jamo NFC composes) are encoded in
 * parts exactly as at once, with and without NFC, and round-trip when NFC
 * leaves them alone. */
static void long_runs_equal_whole(const char *name, int nfc)
{
	static const struct { const char *unit; size_t n; } runs[] = {
		{ "a", CT_BPE_MAX_PIECE + 77 }, { " ", CT_BPE_MAX_PIECE + 5 }, { "\n", 3 },
		{ "x", 1 }, { "\xcc\x81", CT_BPE_MAX_PIECE + 1235 }, { " the ", 1 },
		{ "\xe1\x84\x80\xe1\x85\xa1", 30000 }, { "1", 70000 },
	};
	char *j = hf_json_nfc(nfc);
	struct ct_tokenizer *tk;
	struct ct_buf text;

	ct_buf_init(&text, 0);
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++)
		for (size_t k = 0; k < runs[r].n; k++)
			assert_int_equal(ct_buf_appends(&text, runs[r].unit), 0);
	assert_int_equal(open_json(name, j, &tk), 0);
	{
		static const size_t steps[] = { 4096, CT_BPE_MAX_PIECE + 5, 200000 };
		struct ct_tokvec whole = { 0 };
		struct ct_buf back;

		assert_int_equal(ct_tokenizer_encode(tk, text.data, text.len, &whole), 0);
		for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++)
			ct_test_parts_equal_whole(tk, (const char *)text.data, text.len, steps[s],
						  &whole);
		ct_buf_init(&back, 0);
		assert_int_equal(ct_tokenizer_decode(tk, whole.v, whole.n, &back), 0);
		if (!nfc) {
			assert_int_equal(back.len, text.len);
			assert_memory_equal(back.data, text.data, text.len);
		}
		ct_buf_free(&back);
		ct_tokvec_free(&whole);
	}
	ct_tokenizer_free(tk);
	ct_buf_free(&text);
}

static void test_hf_parts(void **state)
{
	(void)state;
	parts_equal_whole("parts", 0);
	parts_equal_whole("parts_nfc", 1);
	long_runs_equal_whole("long", 0);
	long_runs_equal_whole("long_nfc", 1);
}

/* Sampling with a tokenizer.json: the prompt's added token and text go
 * in, the new ids come out as text; a tokenizer bigger than the model is
 * refused. */
static void test_hf_sample(void **state)
{
	struct ct_model_config cfg = CT_TEST_TINY_CONFIG;
	struct ct_gpt2 model = { 0 };
	struct ct_sample_params sp;
	struct ct_tokenizer *tk;
	struct ct_tokvec in = { 0 }, gen = { 0 };
	struct ct_buf text, want;

	(void)state;
	cfg.V = 304;
	cfg.Vp = 320;
	ct_buf_init(&text, 0);
	assert_int_equal(ct_gpt2_alloc(&model, &cfg), 0);
	assert_int_equal(ct_gpt2_init_random(&cfg, 3, model.params), 0);
	assert_int_equal(open_json("sample", hf_json(NULL, "", ""), &tk), 0);
	ct_sample_params_default(&sp);
	sp.ntokens = 12;
	sp.top_k = 0;
	assert_int_equal(ct_sample_text(&model, tk, "cpu", "ab<|x|>y the", 12, &sp, &text), 0);
	/* the same ids by hand: prompt 300 ("ab"), 4 ("<|x|>y"), 302 e */
	assert_int_equal(ct_sample_prompt(tk, "ab<|x|>y the", 12, &in), 0);
	assert_int_equal(in.n, 4);
	assert_int_equal(in.v[1], 4);
	assert_int_equal(ct_sample_generate(&model, "cpu", in.v, in.n, &sp, NULL, NULL, &gen), 0);
	assert_int_equal(gen.n, 12);
	ct_buf_init(&want, 0);
	for (size_t i = 0; i < gen.n; i++) {
		size_t len;
		const unsigned char *b = ct_tokenizer_token(tk, (int)gen.v[i], &len);

		if (b != NULL)	/* holes (ids 0-2, 5-9) print nothing */
			ct_buf_append(&want, b, len);
	}
	assert_int_equal(text.len, want.len);
	if (want.len > 0)
		assert_memory_equal(text.data, want.data, want.len);
	ct_buf_free(&want);
	ct_tokvec_free(&in);
	ct_tokvec_free(&gen);
	ct_buf_reset(&text);
	model.cfg.V = 300;
	assert_int_equal(ct_sample_text(&model, tk, "cpu", "ab", 2, &sp, &text), CT_EMISMATCH);
	model.cfg.V = 304;
	ct_tokenizer_free(tk);
	ct_gpt2_free(&model);
	ct_buf_free(&text);
}

/* hf_json with a post_processor (JSON text) put first. */
static char *hf_json_post(const char *post)
{
	char *j = hf_json(NULL, "", ""), *out;
	size_t n = strlen(j) + strlen(post) + 32;

	out = malloc(n);
	assert_non_null(out);
	snprintf(out, n, "{\"post_processor\": %s, %s", post, j + 1);
	free(j);
	return out;
}

/* The post_processor's template: Llama 3's current file puts
 * <|begin_of_text|> before the text (Sequence of ByteLevel and
 * TemplateProcessing); documents then open with it instead of the
 * end-of-text token, and so do sampling prompts. ByteLevel alone adds
 * nothing; other types and broken templates are refused. */
static void test_hf_template(void **state)
{
	static const char tpl[] =
		"{\"type\": \"Sequence\", \"processors\": [{\"type\": \"ByteLevel\", "
		"\"add_prefix_space\": true}, {\"type\": \"TemplateProcessing\", \"single\": "
		"[{\"SpecialToken\": {\"id\": \"<|x|>\", \"type_id\": 0}}, {\"Sequence\": "
		"{\"id\": \"A\", \"type_id\": 0}}, {\"SpecialToken\": {\"id\": \"E\", "
		"\"type_id\": 0}}], \"pair\": [], \"special_tokens\": {\"<|x|>\": {\"id\": "
		"\"<|x|>\", \"ids\": [3], \"tokens\": [\"<|x|>\"]}, \"E\": {\"id\": \"E\", "
		"\"ids\": [4, 303], \"tokens\": [\"a\", \"b\"]}}}]}";
	static const char *const bad[] = {
		"{\"type\": \"RobertaProcessing\"}",
		"{\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": "
		"{\"id\": \"Q\"}}, {\"Sequence\": {\"id\": \"A\"}}], \"special_tokens\": {}}",
		"{\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": "
		"{\"id\": \"Q\"}}, {\"Sequence\": {\"id\": \"A\"}}], \"special_tokens\": "
		"{\"Q\": {\"ids\": [304]}}}",
	};
	struct ct_tokenizer *tk;
	struct ct_tokvec ids = { 0 };
	char name[16];

	(void)state;
	assert_int_equal(open_json("tpl", hf_json_post(tpl), &tk), 0);
	assert_int_equal(ct_tokenizer_doc_open(tk, &ids), 0);
	assert_int_equal(ct_tokenizer_encode(tk, "ab", 2, &ids), 0);
	assert_int_equal(ct_tokenizer_doc_close(tk, &ids), 0);
	assert_int_equal(ids.n, 4);
	assert_int_equal(ids.v[0], 3);
	assert_int_equal(ids.v[1], 300);
	assert_int_equal(ids.v[2], 4);
	assert_int_equal(ids.v[3], 303);
	ids.n = 0;
	assert_int_equal(ct_sample_prompt(tk, "ab", 2, &ids), 0);
	assert_int_equal(ids.n, 2);
	assert_int_equal(ids.v[0], 3);
	ct_tokenizer_free(tk);
	/* ByteLevel alone: no template; documents open with EOT (none here) */
	ids.n = 0;
	assert_int_equal(open_json("tplbl", hf_json_post("{\"type\": \"ByteLevel\"}"), &tk), 0);
	assert_int_equal(ct_tokenizer_doc_open(tk, &ids), 0);
	assert_int_equal(ct_tokenizer_doc_close(tk, &ids), 0);
	assert_int_equal(ids.n, 0);
	ct_tokenizer_free(tk);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(name, sizeof(name), "tplbad%zu", i);
		assert_true(open_json(name, hf_json_post(bad[i]), &tk) < 0);
		assert_null(tk);
	}
	assert_non_null(strstr(ct_errmsg(CT_EFORMAT), "304"));
	ct_tokvec_free(&ids);
}

/* What the engine does not implement is refused, by name. */
static void test_hf_refused(void **state)
{
	static const struct {
		const char *pre, *extra, *added, *word;
	} cases[] = {
		{ "{\"type\": \"Whitespace\"}", "", "", "Whitespace" },
		{ "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": "
		  "{\"Regex\": \"\\\\s+\"}, \"behavior\": \"Isolated\", \"invert\": false}, "
		  "{\"type\": \"ByteLevel\", \"use_regex\": false}]}", "", "", "\\s+" },
		{ "{\"type\": \"ByteLevel\", \"add_prefix_space\": true}", "", "", "add_prefix_space" },
		{ NULL, ", \"byte_fallback\": true", "", "byte_fallback" },
		{ NULL, ", \"continuing_subword_prefix\": \"##\"", "", "continuing_subword_prefix" },
		{ NULL, "", ", \"lstrip\": true", "lstrip" },
	};
	struct ct_tokenizer *tk;
	char name[16];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "bad%zu", i);
		assert_int_equal(open_json(name, hf_json(cases[i].pre, cases[i].extra,
							 cases[i].added), &tk), CT_EUNSUPP);
		assert_null(tk);
		if (strstr(ct_errmsg(CT_EUNSUPP), cases[i].word) == NULL)
			fail_msg("no '%s' in: %s", cases[i].word, ct_errmsg(CT_EUNSUPP));
	}
	/* a merge of tokens that are not in the vocabulary */
	{
		char *j = hf_json(NULL, "", ""), *at = strstr(j, "\"1 2\"");

		at[1] = 'q';
		assert_int_equal(open_json("badmerge", j, &tk), CT_EFORMAT);
	}
	assert_int_equal(ct_tokenizer_open("/nonexistent/tokenizer.json", &tk), CT_ENOENT);
	assert_int_equal(ct_tokenizer_open("llama3", &tk), CT_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nfc),
		cmocka_unit_test(test_tokens_v2),
		cmocka_unit_test(test_hf_small),
		cmocka_unit_test(test_hf_pretokenizers),
		cmocka_unit_test(test_hf_parts),
		cmocka_unit_test(test_hf_sample),
		cmocka_unit_test(test_hf_template),
		cmocka_unit_test(test_hf_refused),
	};

	return cmocka_run_group_tests(tests, ct_test_dir_setup, ct_test_dir_teardown);
}
