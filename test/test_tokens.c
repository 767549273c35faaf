/*
 * test_tokens.c - llm.c token files: round trip, byte layout, malformed
 * files rejected, vocabulary check naming the offending token, files
 * written as their ids arrive equal to files saved at once.
 */
#include "ct_test_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_tokens.h"

static void test_roundtrip(void **state)
{
	ct_tok tok[1000];
	uint16_t narrow[1000];
	struct ct_tokens t = { 0 };
	char path[4200];
	unsigned char *data;
	size_t len;
	int32_t hdr[4];

	(void)state;
	for (int i = 0; i < 1000; i++) {
		tok[i] = (ct_tok)(i * 37 % 50257);
		narrow[i] = (uint16_t)tok[i];
	}
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
	assert_memory_equal(data + 1024, narrow, 2000);	/* 16-bit ids on disk */
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
	h[1] = 4;
	assert_int_equal(load_bytes(img, sizeof(img), "version"), CT_EFORMAT);
	h[1] = 3;	/* ids and flags: 10 of them are 50 bytes */
	assert_int_equal(load_bytes(img, sizeof(img), "10 tokens"), CT_EFORMAT);
	h[2] = 4;	/* 16 bytes of ids, 4 flags of 0: valid */
	assert_int_equal(load_bytes(img, sizeof(img), NULL), 0);
	img[1024 + 16 + 2] = 4;	/* bits 0 (trained) and 1 (start) only */
	assert_int_equal(load_bytes(img, sizeof(img), "flags 4 at position 2"), CT_EFORMAT);
	img[1024 + 16 + 2] = 3;
	assert_int_equal(load_bytes(img, sizeof(img), NULL), 0);
	img[1024 + 16 + 2] = 0;
	h[2] = 10;
	h[1] = 2;	/* 32-bit ids: 10 of them are 40 bytes, not 20 */
	assert_int_equal(load_bytes(img, sizeof(img), "10 tokens"), CT_EFORMAT);
	h[2] = 5;
	assert_int_equal(load_bytes(img, sizeof(img), NULL), 0);
	snprintf(path, sizeof(path), "%s/none.bin", ct_test_dir);
	assert_int_equal(ct_tokens_load(path, &t), CT_ENOENT);
}

static void test_vocab(void **state)
{
	ct_tok tok[5] = { 1, 2, 64, 3, 65535 };
	struct ct_tokens t = { 0 };

	(void)state;
	assert_int_equal(ct_tokens_from_array(&t, tok, 5), 0);
	assert_int_equal(ct_tokens_check_vocab(&t, 65536), 0);
	assert_int_equal(ct_tokens_check_vocab(&t, 64), CT_EMISMATCH);
	assert_non_null(strstr(ct_errmsg(CT_EMISMATCH), "token 64 at position 2"));
	assert_int_equal(ct_tokens_check_vocab(&t, CT_VOCAB_MAX + 1), CT_EMISMATCH);
	ct_tokens_free(&t);
	assert_null(t.tok);
}

/* Version 1 loads widened, version 2 mapped; both give the same ids, and
 * the digest of ids that fit 16 bits is that of the version 1 body. */
static void test_widen_and_digest(void **state)
{
	ct_tok ids[6] = { 0, 9, 65535, 300, 7, 42 };
	uint16_t body[6];
	unsigned char d1[32], d2[32], d3[32], want[32];
	struct ct_tokens a = { 0 }, b = { 0 }, c = { 0 };
	char p1[4200], p2[4200], p3[4200];

	(void)state;
	for (int i = 0; i < 6; i++)
		body[i] = (uint16_t)ids[i];
	snprintf(p1, sizeof(p1), "%s/w1.bin", ct_test_dir);
	snprintf(p2, sizeof(p2), "%s/w2.bin", ct_test_dir);
	snprintf(p3, sizeof(p3), "%s/w3.bin", ct_test_dir);
	assert_int_equal(ct_tokens_save_ids(p1, ids, 6, 0), 0);
	assert_int_equal(ct_tokens_save_ids(p2, ids, 6, 1), 0);
	assert_int_equal(ct_tokens_load(p1, &a), 0);
	assert_int_equal(ct_tokens_load(p2, &b), 0);
	assert_int_equal(a.version, 1);
	assert_int_equal(b.version, 2);
	assert_memory_equal(a.tok, ids, sizeof(ids));
	assert_memory_equal(b.tok, ids, sizeof(ids));
	ct_sha256(body, sizeof(body), want);
	assert_int_equal(ct_tokens_sha256(&a, d1), 0);
	assert_int_equal(ct_tokens_sha256(&b, d2), 0);
	assert_memory_equal(d1, want, 32);
	assert_memory_equal(d2, want, 32);
	ct_tokens_free(&a);
	/* mapped without widening, and a range of it, stay version 1 */
	assert_int_equal(ct_tokens_load_any(p1, &a), 0);
	assert_null(a.tok);
	assert_int_equal(ct_tokens_sha256(&a, d3), 0);
	assert_memory_equal(d3, want, 32);
	assert_int_equal(ct_tokens_save_range(p3, &a, 2, 3), 0);
	assert_int_equal(ct_tokens_load(p3, &c), 0);
	assert_int_equal(c.version, 1);
	assert_int_equal(c.n, 3);
	assert_memory_equal(c.tok, ids + 2, 3 * sizeof(ct_tok));
	ct_tokens_free(&c);
	ct_tokens_free(&a);
	/* an id over 65,535: 32-bit digest, version 2 files */
	ct_tokens_free(&b);
	ids[4] = 151935;
	assert_int_equal(ct_tokens_save(p3, ids, 6), 0);
	assert_int_equal(ct_tokens_load(p3, &c), 0);
	assert_int_equal(c.version, 2);
	assert_int_equal(c.tok[4], 151935);
	assert_int_equal(ct_tokens_sha256(&c, d1), 0);
	ct_sha256(ids, sizeof(ids), want);
	assert_memory_equal(d1, want, 32);
	ct_tokens_free(&c);
}

static void test_save_fails_cleanly(void **state)
{
	ct_tok tok[3] = { 1, 2, 3 };
	char path[4200];

	(void)state;
	snprintf(path, sizeof(path), "%s/nodir/t.bin", ct_test_dir);
	assert_true(ct_tokens_save(path, tok, 3) < 0);
	assert_false(ct_file_exists(path));
}

/* A file written as ids arrive (ct_tokens_out) equals one saved at once,
 * in both versions; a 32-bit id in a version 1 file is refused and leaves
 * nothing behind. */
static void test_stream_out(void **state)
{
	ct_tok tok[5000];
	char p1[4200], p2[4200];
	unsigned char *a, *b;
	size_t la, lb;

	(void)state;
	for (int i = 0; i < 5000; i++)
		tok[i] = (ct_tok)(i * 7919 % 65536);
	snprintf(p1, sizeof(p1), "%s/once.bin", ct_test_dir);
	snprintf(p2, sizeof(p2), "%s/stream.bin", ct_test_dir);
	for (int wide = 0; wide < 2; wide++) {
		struct ct_tokens_out w = { .af = { .fd = -1 } };

		assert_int_equal(ct_tokens_save_ids(p1, tok, 5000, wide), 0);
		assert_int_equal(ct_tokens_out_open(&w, p2, wide), 0);
		for (int i = 0; i < 5000; i += 1234)	/* uneven parts */
			assert_int_equal(ct_tokens_out_write(&w, tok + i, 5000 - i < 1234 ?
							     (size_t)(5000 - i) : 1234), 0);
		assert_int_equal(ct_tokens_out_commit(&w), 0);
		assert_int_equal(ct_file_read_all(p1, 1 << 20, &a, &la), 0);
		assert_int_equal(ct_file_read_all(p2, 1 << 20, &b, &lb), 0);
		assert_int_equal(la, lb);
		assert_memory_equal(a, b, la);
		free(a);
		free(b);
	}
	{
		struct ct_tokens_out w = { .af = { .fd = -1 } };
		ct_tok big[2] = { 5, 70000 };

		snprintf(p2, sizeof(p2), "%s/big.bin", ct_test_dir);
		assert_int_equal(ct_tokens_out_open(&w, p2, 0), 0);
		assert_int_equal(ct_tokens_out_write(&w, big, 2), CT_ERANGE);
		assert_non_null(strstr(ct_errmsg(CT_ERANGE), "position 1"));
		ct_tokens_out_abort(&w);
		assert_false(ct_file_exists(p2));
	}
}

/* Version 3: ids then flags on disk; a mask of all ones is no mask (the
 * digest of the same ids in version 2); a mask changes the digest; a
 * shard keeps its flags; the streaming writer writes the same bytes. */
static void test_masked(void **state)
{
	ct_tok ids[8] = { 5, 70000, 3, 9, 11, 2, 1, 0 };
	uint8_t train[8] = { 0, 0, 1, 1, 0, 1, 1, 0 }, ones[8];
	unsigned char d2[32], d3[32], dm[32], *data, *data2;
	struct ct_tokens t = { 0 };
	struct ct_tokens_out w;
	char p2[4200], p3[4200], pm[4200], ps[4200];
	size_t len, len2;
	int32_t hdr[2];

	(void)state;
	memset(ones, 1, sizeof(ones));
	snprintf(p2, sizeof(p2), "%s/v2.bin", ct_test_dir);
	snprintf(p3, sizeof(p3), "%s/v3ones.bin", ct_test_dir);
	snprintf(pm, sizeof(pm), "%s/v3.bin", ct_test_dir);
	snprintf(ps, sizeof(ps), "%s/v3shard.bin", ct_test_dir);
	assert_int_equal(ct_tokens_save_ids(p2, ids, 8, 1), 0);
	assert_int_equal(ct_tokens_save_masked(p3, ids, ones, 8), 0);
	assert_int_equal(ct_tokens_save_masked(pm, ids, train, 8), 0);
	assert_int_equal(ct_file_read_all(pm, 0, &data, &len), 0);
	assert_int_equal(len, 1024 + 8 * 5);
	memcpy(hdr, data, sizeof(hdr));
	assert_int_equal(hdr[1], 3);
	assert_memory_equal(data + 1024, ids, sizeof(ids));
	assert_memory_equal(data + 1024 + sizeof(ids), train, 8);
	free(data);

	assert_int_equal(ct_tokens_load(p2, &t), 0);
	assert_int_equal(ct_tokens_sha256(&t, d2), 0);
	ct_tokens_free(&t);
	assert_int_equal(ct_tokens_load(p3, &t), 0);
	assert_int_equal(t.version, 3);
	assert_null(t.train);
	assert_int_equal(ct_tokens_sha256(&t, d3), 0);
	ct_tokens_free(&t);
	assert_memory_equal(d2, d3, 32);
	assert_int_equal(ct_tokens_load(pm, &t), 0);
	assert_non_null(t.train);
	assert_false(ct_tokens_trained(&t, 0));
	assert_true(ct_tokens_trained(&t, 2));
	assert_int_equal(ct_tokens_sha256(&t, dm), 0);
	assert_memory_not_equal(d2, dm, 32);
	assert_int_equal(ct_tokens_save_range(ps, &t, 2, 4), 0);
	ct_tokens_free(&t);
	assert_int_equal(ct_tokens_load(ps, &t), 0);
	assert_int_equal(t.n, 4);
	assert_memory_equal(t.tok, ids + 2, 4 * sizeof(ct_tok));
	assert_memory_equal(t.train, train + 2, 4);
	ct_tokens_free(&t);
	assert_int_equal(ct_tokens_save_masked(ps, ids, (uint8_t[8]){ 5 }, 8), CT_EINVAL);

	/* the streaming writer, in pieces, equals the file saved at once */
	assert_int_equal(ct_tokens_out_open_masked(&w, ps), 0);
	assert_int_equal(ct_tokens_out_write_masked(&w, ids, train, 3), 0);
	assert_int_equal(ct_tokens_out_write_masked(&w, ids + 3, train + 3, 5), 0);
	assert_int_equal(ct_tokens_out_commit(&w), 0);
	assert_int_equal(ct_file_read_all(pm, 0, &data, &len), 0);
	assert_int_equal(ct_file_read_all(ps, 0, &data2, &len2), 0);
	assert_int_equal(len, len2);
	assert_memory_equal(data, data2, len);
	free(data);
	free(data2);
	/* in memory */
	assert_int_equal(ct_tokens_from_array(&t, ids, 8), 0);
	assert_int_equal(ct_tokens_set_mask(&t, train), 0);
	assert_int_equal(ct_tokens_sha256(&t, d3), 0);
	assert_memory_equal(d3, dm, 32);
	assert_int_equal(ct_tokens_set_mask(&t, ones), 0);
	assert_null(t.train);
	ct_tokens_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_vocab),
		cmocka_unit_test(test_widen_and_digest),
		cmocka_unit_test(test_save_fails_cleanly),
		cmocka_unit_test(test_stream_out),
		cmocka_unit_test(test_masked),
	};

	return cmocka_run_group_tests(tests, ct_test_dir_setup,
				      ct_test_dir_teardown);
}
