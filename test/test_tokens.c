/*
 * test_tokens.c - llm.c token files: round trip, byte layout, malformed
 * files rejected, vocabulary check naming the offending token.
 */
#include "ct_test_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_tokens.h"

static void test_roundtrip(void **state)
{
	uint16_t tok[1000];
	struct ct_tokens t = { 0 };
	char path[4200];
	unsigned char *data;
	size_t len;
	int32_t hdr[4];

	(void)state;
	for (int i = 0; i < 1000; i++)
		tok[i] = (uint16_t)(i * 37 % 50257);
	snprintf(path, sizeof(path), "%s/t.bin", ct_test_dir);
	assert_int_equal(ct_tokens_save(path, tok, 1000), 0);
	assert_int_equal(ct_tokens_load(path, &t), 0);
	assert_int_equal(t.n, 1000);
	assert_memory_equal(t.tok, tok, sizeof(tok));
	assert_int_equal(ct_tokens_check_vocab(&t, 50257), 0);
	ct_tokens_free(&t);
	assert_int_equal(ct_file_read_all(path, 0, &data, &len), 0);
	assert_int_equal(len, 1024 + 2000);
	memcpy(hdr, data, sizeof(hdr));
	assert_int_equal(hdr[0], 20240520);
	assert_int_equal(hdr[1], 1);
	assert_int_equal(hdr[2], 1000);
	assert_int_equal(hdr[3], 0);
	assert_memory_equal(data + 1024, tok, 2000);
	free(data);
	/* an empty file is valid */
	assert_int_equal(ct_tokens_save(path, tok, 0), 0);
	assert_int_equal(ct_tokens_load(path, &t), 0);
	assert_int_equal(t.n, 0);
	ct_tokens_free(&t);
}

static int load_bytes(const void *p, size_t n, const char *msg)
{
	struct ct_tokens t = { 0 };
	char path[4200];
	int rc;

	snprintf(path, sizeof(path), "%s/bad.bin", ct_test_dir);
	assert_int_equal(ct_file_write_atomic(path, p, n, 0644), 0);
	rc = ct_tokens_load(path, &t);
	if (rc < 0) {
		assert_null(t.tok);
		if (msg)
			assert_non_null(strstr(ct_errmsg(rc), msg));
	}
	ct_tokens_free(&t);
	return rc;
}

static void test_malformed(void **state)
{
	unsigned char img[1024 + 20] = { 0 };
	int32_t *h = (int32_t *)img;
	struct ct_tokens t = { 0 };
	char path[4200];

	(void)state;
	h[0] = 20240520;
	h[1] = 1;
	h[2] = 10;
	assert_int_equal(load_bytes(img, sizeof(img), NULL), 0);
	assert_int_equal(load_bytes(img, sizeof(img) - 1, "10 tokens"), CT_EFORMAT);
	assert_int_equal(load_bytes(img, 500, "too short"), CT_EFORMAT);
	h[2] = 11;
	assert_int_equal(load_bytes(img, sizeof(img), "11 tokens"), CT_EFORMAT);
	h[2] = -1;
	assert_int_equal(load_bytes(img, sizeof(img), "negative"), CT_EFORMAT);
	h[2] = 10;
	h[0] = 20240326;	/* a model file is not a token file */
	assert_int_equal(load_bytes(img, sizeof(img), "bad magic"), CT_EFORMAT);
	h[0] = 20240520;
	h[1] = 3;
	assert_int_equal(load_bytes(img, sizeof(img), "version"), CT_EFORMAT);
	h[1] = 2;	/* 32-bit ids: the engine's loader refuses them by name */
	assert_int_equal(load_bytes(img, sizeof(img), "version 2"), CT_EUNSUPP);
	snprintf(path, sizeof(path), "%s/none.bin", ct_test_dir);
	assert_int_equal(ct_tokens_load(path, &t), CT_ENOENT);
}

static void test_vocab(void **state)
{
	uint16_t tok[5] = { 1, 2, 64, 3, 65535 };
	struct ct_tokens t = { 0 };

	(void)state;
	assert_int_equal(ct_tokens_from_array(&t, tok, 5), 0);
	assert_int_equal(ct_tokens_check_vocab(&t, 65536), 0);
	assert_int_equal(ct_tokens_check_vocab(&t, 64), CT_EMISMATCH);
	assert_non_null(strstr(ct_errmsg(CT_EMISMATCH), "token 64 at position 2"));
	ct_tokens_free(&t);
	assert_null(t.tok);
}

static void test_save_fails_cleanly(void **state)
{
	uint16_t tok[3] = { 1, 2, 3 };
	char path[4200];

	(void)state;
	snprintf(path, sizeof(path), "%s/nodir/t.bin", ct_test_dir);
	assert_true(ct_tokens_save(path, tok, 3) < 0);
	assert_false(ct_file_exists(path));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_vocab),
		cmocka_unit_test(test_save_fails_cleanly),
	};

	return cmocka_run_group_tests(tests, ct_test_dir_setup,
				      ct_test_dir_teardown);
}
