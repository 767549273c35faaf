/*
 * test_job_tokenizer.c - server/cmd/job_tokenizer.c without a database: which
 * tokenizer a submit takes from a Hugging Face directory (and the errors),
 * and that encoding a long text in parts with progress gives exactly the
 * ids of one ct_tokenizer_encode. The store, samples and export run in
 * test/llama_text.sh with a real server.
 */
#include "ct_test.h"

#include <sys/stat.h>

#include "ct_err.h"
#include "ct_file.h"
#include "cmd/job_tokenizer.h"
#include "cmd/text_submit.h"

static const char config[] =
	"{\"model_type\": \"llama\", \"hidden_size\": 32, \"intermediate_size\": 64,\n"
	" \"num_hidden_layers\": 1, \"num_attention_heads\": 4, \"num_key_value_heads\": 2,\n"
	" \"vocab_size\": 300, \"max_position_embeddings\": 64, \"hidden_act\": \"silu\"}\n";

static void put(const char *dir, const char *name, const char *text)
{
	char path[4096];

	assert_int_equal(ct_path_join(path, sizeof(path), dir, name), 0);
	assert_int_equal(ct_file_write_atomic(path, text, strlen(text), 0644), 0);
}

static void test_prepare(void **state)
{
	char *dir = ct_test_mkdtemp(), want[4096];
	struct ct_cmd_ctx ctx = { .cwd = dir };
	struct ct_text_submit ts = { .tokenizer = NULL };

	(void)state;
	assert_non_null(dir);
	assert_int_equal(mkdir(strcat(strcpy(want, dir), "/hf"), 0755), 0);
	put(want, "config.json", config);
	/* a checkpoint file (or nothing) is left alone */
	assert_int_equal(ct_job_tokenizer_prepare(&ctx, NULL, 1, &ts), 0);
	assert_null(ts.tk_path);
	/* no tokenizer.json: fine for token files, an error for text */
	assert_int_equal(ct_job_tokenizer_prepare(&ctx, "hf", 0, &ts), 0);
	assert_int_equal(ts.V, 300);
	assert_null(ts.tk_path);
	assert_int_equal(ct_job_tokenizer_prepare(&ctx, "hf", 1, &ts), CT_ENOENT);
	assert_non_null(strstr(ct_errmsg(CT_ENOENT), "has no tokenizer.json"));
	/* with one: the job's, found relative to the command's directory */
	put(want, "tokenizer.json", "{}");
	assert_int_equal(ct_job_tokenizer_prepare(&ctx, "hf", 1, &ts), 0);
	strcat(want, "/tokenizer.json");
	assert_string_equal(ts.tk_path, want);
	assert_ptr_equal(ts.tokenizer, ts.tk_path);
	*strrchr(want, '/') = 0;
	assert_string_equal(ts.tk_dir, want);
	ct_text_submit_free(&ts);
	/* --tokenizer NAME stays; --tokenizer DIR means DIR/tokenizer.json */
	memset(&ts, 0, sizeof(ts));
	ts.tokenizer = "gpt2";
	assert_int_equal(ct_job_tokenizer_prepare(&ctx, "hf", 1, &ts), 0);
	assert_string_equal(ts.tokenizer, "gpt2");
	assert_null(ts.tk_path);
	ts.tokenizer = "hf/";
	assert_int_equal(ct_job_tokenizer_prepare(&ctx, NULL, 1, &ts), 0);
	assert_non_null(ts.tk_path);
	assert_non_null(strstr(ts.tk_path, "/hf/tokenizer.json"));
	ct_text_submit_free(&ts);
	memset(&ts, 0, sizeof(ts));
	ts.tokenizer = "missing/tokenizer.json";
	assert_int_equal(ct_job_tokenizer_prepare(&ctx, "hf", 1, &ts), CT_ENOENT);
	assert_non_null(strstr(ct_errmsg(CT_ENOENT), "--tokenizer"));
	ct_text_submit_free(&ts);
	/* a broken config.json is named */
	put(want, "config.json", "{\"model_type\": \"llama\"}");
	memset(&ts, 0, sizeof(ts));
	assert_true(ct_job_tokenizer_prepare(&ctx, "hf", 1, &ts) < 0);
	ct_text_submit_free(&ts);
	ct_test_rmtree(dir);
	free(dir);
}

/* 17 MiB of varied text (words, digit runs, white space runs, UTF-8, a
 * stray byte) with one piece of 1.5 MiB, longer than a part. */
static char *long_text(size_t *n)
{
	static const char *const words[] = { "The ", "licence", " 2026", "\n\n", "  ",
					     "caf\xc3\xa9 ", "'s ", "\xe6\x97\xa5\xe6\x9c\xac",
					     "\xff", "1234567", "!?", "\t" };
	size_t cap = (size_t)17 << 20, k = 0;
	char *t = malloc(cap);
	uint64_t x = 7;

	assert_non_null(t);
	while (k + 16 < cap) {
		const char *w;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		w = words[(x >> 33) % (sizeof(words) / sizeof(words[0]))];
		memcpy(t + k, w, strlen(w));
		k += strlen(w);
		if (k > cap / 2 && k < cap / 2 + 64) {	/* one long piece of letters */
			memset(t + k, 'a', (size_t)3 << 19);
			k += (size_t)3 << 19;
		}
	}
	*n = k;
	return t;
}

static void test_encode_parts(void **state)
{
	struct ct_tokenizer *tk = NULL;
	struct ct_tokvec a = { 0 }, b = { 0 };
	size_t n;
	char *text;

	(void)state;
	if (ct_tokenizer_open("gpt2", &tk) < 0) {
		fprintf(stderr, "skipped: no gpt2 data files\n");
		skip();
	}
	text = long_text(&n);
	assert_int_equal(ct_tokenizer_encode(tk, text, n, &a), 0);
	assert_int_equal(ct_job_tokenizer_encode(tk, "long.txt", text, n, &b), 0);
	assert_true(a.n > n / 8);
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.v, b.v, a.n * sizeof(a.v[0]));
	ct_tokvec_free(&a);
	ct_tokvec_free(&b);
	free(text);
	ct_tokenizer_free(tk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prepare),
		cmocka_unit_test(test_encode_parts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
