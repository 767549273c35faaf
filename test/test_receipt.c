/*
 * Unit tests for lib/ct_sign (Ed25519 against RFC 8032's first test
 * vector, keys saved once with mode 0600 and loaded back) and
 * lib/ct_receipt (a signed receipt read back field for field; a changed
 * byte breaks the signature; every non-canonical or over-cap text is
 * refused, naming its line).
 */
#include "ct_test.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_receipt.h"
#include "ct_sign.h"

#include <sys/stat.h>

static void test_rfc8032(void **state)
{
	unsigned char pub[32], sig[64];

	(void)state;
	assert_int_equal(ct_hex_decode("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
				       pub, 32), 0);
	assert_int_equal(ct_hex_decode("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555"
				       "fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
				       sig, 64), 0);
	assert_int_equal(ct_sign_verify(pub, "", 0, sig), 0);
	assert_int_equal(ct_sign_verify(pub, "x", 1, sig), CT_EAUTH);
	sig[10] ^= 1;
	assert_int_equal(ct_sign_verify(pub, "", 0, sig), CT_EAUTH);
}

static void test_key_file(void **state)
{
	char *dir = ct_test_mkdtemp(), path[4096];
	struct ct_sign_key *k = NULL, *k2 = NULL, *other = NULL;
	unsigned char p1[32], p2[32], s1[64], s2[64];
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/signing.key", dir);
	assert_int_equal(ct_sign_key_generate(&k), 0);
	assert_int_equal(ct_sign_key_save(k, path), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* never replaced */
	assert_int_equal(ct_sign_key_generate(&other), 0);
	assert_int_equal(ct_sign_key_save(other, path), CT_EEXISTS);
	assert_int_equal(ct_sign_key_load(path, &k2), 0);
	ct_sign_key_public(k, p1);
	ct_sign_key_public(k2, p2);
	assert_memory_equal(p1, p2, 32);
	/* deterministic, and verifiable with the public half alone */
	assert_int_equal(ct_sign(k, "round", 5, s1), 0);
	assert_int_equal(ct_sign(k2, "round", 5, s2), 0);
	assert_memory_equal(s1, s2, 64);
	assert_int_equal(ct_sign_verify(p1, "round", 5, s1), 0);
	ct_sign_key_public(other, p2);
	assert_int_equal(ct_sign_verify(p2, "round", 5, s1), CT_EAUTH);
	/* not a key */
	assert_int_equal(ct_file_write_atomic(path, "hello\n", 6, 0600), 0);
	ct_sign_key_free(k2);
	assert_int_equal(ct_sign_key_load(path, &k2), CT_EFORMAT);
	assert_null(k2);
	ct_sign_key_free(k);
	ct_sign_key_free(other);
	ct_test_rmtree(dir);
	free(dir);
}

static void fill(struct ct_receipt *r, struct ct_receipt_wu *w)
{
	memset(r, 0, sizeof(*r));
	r->job = 7;
	r->round = 2;
	ct_sha256_hex("receipt 1", 9, r->prev);
	r->time = 1790000000;
	r->steps = 30, r->batch = 4, r->seq = 16;
	r->lr = 0.01, r->beta1 = 0.9, r->beta2 = 0.999, r->eps = 1e-8, r->grad_clip = 1;
	snprintf(r->encoding, sizeof(r->encoding), "lossless");
	r->lora_rank = 4, r->lora_alpha = 8;
	snprintf(r->lora_targets, sizeof(r->lora_targets), "qkv,proj");
	snprintf(r->base_format, sizeof(r->base_format), "nf4");
	snprintf(r->aggregation, sizeof(r->aggregation), "mean");
	snprintf(r->outer, sizeof(r->outer), "nesterov");
	r->outer_lr = 0.7, r->outer_momentum = 0.9;
	ct_sha256_hex("m1", 2, r->mom_in);
	ct_sha256_hex("m2", 2, r->mom_out);
	ct_sha256_hex("model", 5, r->model_sha);
	r->model_size = 123456;
	ct_sha256_hex("adapters", 8, r->lora_init_sha);
	r->lora_init_size = 4128;
	ct_sha256_hex("eval", 4, r->eval_sha);
	r->eval_tokens = 4096;
	r->nwus_round = 3, r->nwus = 2, r->wus = w;
	memset(w, 0, 2 * sizeof(*w));
	w[0].shard = 0, w[0].seed = 18446744073709551615ull;
	ct_sha256_hex("s0", 2, w[0].data_sha);
	w[0].data_size = 2048;
	ct_sha256_hex("r0", 2, w[0].result_sha);
	w[0].nhosts = 2, w[0].hosts[0] = 3, w[0].hosts[1] = 11;
	w[0].chain_every = 10;
	ct_sha256_hex("c0", 2, w[0].chain_sha);
	w[1].shard = 2, w[1].seed = 5, w[1].tolerance = 1;
	ct_sha256_hex("s2", 2, w[1].data_sha);
	w[1].data_size = 2048;
	ct_sha256_hex("out", 3, r->out_sha);
	r->out_size = 123456;
	r->eval_loss = 4.25;
}

static void test_round_trip(void **state)
{
	struct ct_receipt r, got;
	struct ct_receipt_wu w[2];
	struct ct_sign_key *k = NULL;
	struct ct_buf b = CT_BUF_INIT(0);
	unsigned char pub[32];

	(void)state;
	assert_int_equal(ct_sign_key_generate(&k), 0);
	fill(&r, w);
	assert_int_equal(ct_receipt_sign(&r, k, &b), 0);
	assert_non_null(strstr(ct_buf_cstr(&b), "\nwu 2 5 "));
	assert_non_null(strstr(ct_buf_cstr(&b), " unknown tolerance none\n"));
	assert_int_equal(ct_receipt_parse(b.data, b.len, &got), 0);
	ct_sign_key_public(k, pub);
	assert_int_equal(ct_receipt_verify(&got, pub), 0);
	assert_int_equal(got.round, 2);
	assert_int_equal(got.nwus, 2);
	assert_true(got.wus[0].seed == 18446744073709551615ull);
	assert_int_equal(got.wus[0].hosts[1], 11);
	assert_string_equal(got.wus[1].result_sha, "");
	assert_int_equal(got.version, 3);
	assert_string_equal(got.base_format, "nf4");
	assert_string_equal(got.lora_init_sha, r.lora_init_sha);
	assert_true(got.lora_init_size == 4128);
	assert_non_null(strstr(ct_buf_cstr(&b), "\nlora 4 8 qkv,proj\nbase nf4\naggregation "));
	assert_non_null(strstr(ct_buf_cstr(&b), " 123456\nlora_init "));
	assert_int_equal(got.wus[0].chain_every, 10);
	assert_string_equal(got.wus[0].chain_sha, w[0].chain_sha);
	assert_int_equal(got.wus[1].chain_every, 0);
	assert_string_equal(got.wus[1].chain_sha, "");
	assert_non_null(strstr(ct_buf_cstr(&b), " tolerance none\nchain none\n"));
	assert_true(got.lr == 0.01 && got.outer_momentum == 0.9);
	assert_string_equal(got.mom_out, r.mom_out);
	ct_receipt_free(&got);
	/* another key is named as such */
	pub[0] ^= 1;
	assert_int_equal(ct_receipt_parse(b.data, b.len, &got), 0);
	assert_int_equal(ct_receipt_verify(&got, pub), CT_EAUTH);
	ct_receipt_free(&got);
	ct_sign_key_free(k);
	ct_buf_free(&b);
}

/* b with its first occurrence of `from` replaced by `to`. */
static void edit(const struct ct_buf *b, const char *from, const char *to, struct ct_buf *out)
{
	const char *s = ct_buf_cstr(b), *at = strstr(s, from);

	assert_non_null(at);
	ct_buf_reset(out);
	assert_int_equal(ct_buf_append(out, s, (size_t)(at - s)), 0);
	assert_int_equal(ct_buf_appends(out, to), 0);
	assert_int_equal(ct_buf_appends(out, at + strlen(from)), 0);
}

static void test_tampered(void **state)
{
	struct ct_receipt r, got;
	struct ct_receipt_wu w[2];
	struct ct_sign_key *k = NULL;
	struct ct_buf b = CT_BUF_INIT(0), t = CT_BUF_INIT(0);
	static const char *const bad[][2] = {
		{ "lr 0.01", "lr  0.01" },	/* two spaces */
		{ "lr 0.01\n", "lr 0.010\n" },	/* another spelling */
		{ "steps 30", "steps 030" },
		{ "wus 2 3", "wus 2 1" },	/* more in the aggregate than opened */
		{ "wus 2 3", "wus 3 3" },	/* a WU line missing */
		{ "3,11", "11,3" },		/* hosts not ascending */
		{ "ctune-receipt 3", "ctune-receipt 4" },
		{ "ctune-receipt 3", "ctune-receipt 1" },	/* version 1 has no chains */
		{ "ctune-receipt 3", "ctune-receipt 2" },	/* nor base nor lora_init */
		{ "base nf4\n", "" },
		{ "base nf4", "base NF4" },
		{ " 4128\n", " 0\n" },	/* carried adapters have bytes */
		{ " 4128\n", "\n" },
		{ "chain 10 ", "chain 0 " },
		{ "chain 10 ", "chain 31 " },	/* an interval over the WU's 30 steps */
		{ "chain none\n", "chain 5\n" },
		{ "chain none\n", "" },		/* a WU without its chain line */
		{ "upload_encoding lossless", "upload_encoding ../x" },
		{ "\nsignature ", "\nextra 1\nsignature " },
		{ "round 2\nprev ", "round 1\nprev " },	/* round 1 has no prev */
	};

	(void)state;
	assert_int_equal(ct_sign_key_generate(&k), 0);
	fill(&r, w);
	assert_int_equal(ct_receipt_sign(&r, k, &b), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		edit(&b, bad[i][0], bad[i][1], &t);
		assert_int_equal(ct_receipt_parse(t.data, t.len, &got), CT_EFORMAT);
		ct_receipt_free(&got);
	}
	/* a changed hash parses, and the signature says no */
	char from[160], to[160];

	snprintf(from, sizeof(from), "out %s", r.out_sha);
	snprintf(to, sizeof(to), "out %c%s", r.out_sha[0] == '0' ? '1' : '0', r.out_sha + 1);
	edit(&b, from, to, &t);
	assert_int_equal(ct_receipt_parse(t.data, t.len, &got), 0);
	assert_int_equal(ct_receipt_verify(&got, NULL), CT_EAUTH);
	ct_receipt_free(&got);
	snprintf(from, sizeof(from), "lora_init %.64s", r.lora_init_sha);
	snprintf(to, sizeof(to), "lora_init %c%.63s", r.lora_init_sha[0] == '0' ? '1' : '0',
		 r.lora_init_sha + 1);
	edit(&b, from, to, &t);
	assert_int_equal(ct_receipt_parse(t.data, t.len, &got), 0);
	assert_int_equal(ct_receipt_verify(&got, NULL), CT_EAUTH);
	ct_receipt_free(&got);
	edit(&b, "eval_loss 4.25", "eval_loss 4.5", &t);
	assert_int_equal(ct_receipt_parse(t.data, t.len, &got), 0);
	assert_int_equal(ct_receipt_verify(&got, NULL), CT_EAUTH);
	ct_receipt_free(&got);
	/* truncated anywhere, bytes after the end, over the caps */
	for (size_t n = 0; n < b.len; n += 97) {
		assert_int_not_equal(ct_receipt_parse(b.data, n, &got), 0);
		ct_receipt_free(&got);
	}
	ct_buf_reset(&t);
	assert_int_equal(ct_buf_append(&t, b.data, b.len), 0);
	assert_int_equal(ct_buf_appends(&t, "x"), 0);
	assert_int_equal(ct_receipt_parse(t.data, t.len, &got), CT_EFORMAT);
	ct_receipt_free(&got);
	edit(&b, "wus 2 3", "wus 2 99999999", &t);
	assert_int_equal(ct_receipt_parse(t.data, t.len, &got), CT_ETOOBIG);
	ct_receipt_free(&got);
	ct_sign_key_free(k);
	ct_buf_free(&b);
	ct_buf_free(&t);
}

/* Version 1 receipts (before chains) read and verify as they were
 * signed; they cannot carry a chain, and cannot pass for version 2. */
static void test_version1(void **state)
{
	struct ct_receipt r, got;
	struct ct_receipt_wu w[2];
	struct ct_sign_key *k = NULL;
	struct ct_buf b = CT_BUF_INIT(0), t = CT_BUF_INIT(0);

	(void)state;
	assert_int_equal(ct_sign_key_generate(&k), 0);
	fill(&r, w);
	r.version = 1;
	r.base_format[0] = '\0', r.lora_init_sha[0] = '\0', r.lora_init_size = 0;
	assert_int_equal(ct_receipt_sign(&r, k, &b), CT_EINVAL);	/* w[0] has a chain */
	ct_buf_reset(&b);
	w[0].chain_every = 0, w[0].chain_sha[0] = '\0';
	assert_int_equal(ct_receipt_sign(&r, k, &b), 0);
	assert_int_equal(strncmp(ct_buf_cstr(&b), "ctune-receipt 1\n", 16), 0);
	assert_null(strstr(ct_buf_cstr(&b), "\nchain "));
	assert_int_equal(ct_receipt_parse(b.data, b.len, &got), 0);
	assert_int_equal(got.version, 1);
	assert_int_equal(ct_receipt_verify(&got, NULL), 0);
	ct_receipt_free(&got);
	edit(&b, "ctune-receipt 1", "ctune-receipt 2", &t);
	assert_int_equal(ct_receipt_parse(t.data, t.len, &got), CT_EFORMAT);
	ct_receipt_free(&got);
	ct_sign_key_free(k);
	ct_buf_free(&b);
	ct_buf_free(&t);
}

/* Version 2 receipts (chains; no base format, no carried adapters) read
 * and verify as they were signed, their base float32; a compact base or
 * carried adapters cannot be written in them. */
static void test_version2(void **state)
{
	struct ct_receipt r, got;
	struct ct_receipt_wu w[2];
	struct ct_sign_key *k = NULL;
	struct ct_buf b = CT_BUF_INIT(0);

	(void)state;
	assert_int_equal(ct_sign_key_generate(&k), 0);
	fill(&r, w);
	r.version = 2;
	assert_int_equal(ct_receipt_sign(&r, k, &b), CT_EINVAL);	/* nf4, lora_init */
	ct_buf_reset(&b);
	r.base_format[0] = '\0', r.lora_init_sha[0] = '\0', r.lora_init_size = 0;
	assert_int_equal(ct_receipt_sign(&r, k, &b), 0);
	assert_int_equal(strncmp(ct_buf_cstr(&b), "ctune-receipt 2\n", 16), 0);
	assert_null(strstr(ct_buf_cstr(&b), "\nbase "));
	assert_null(strstr(ct_buf_cstr(&b), "\nlora_init "));
	assert_non_null(strstr(ct_buf_cstr(&b), "\nchain "));
	assert_int_equal(ct_receipt_parse(b.data, b.len, &got), 0);
	assert_int_equal(got.version, 2);
	assert_string_equal(got.base_format, "f32");
	assert_string_equal(got.lora_init_sha, "");
	assert_int_equal(ct_receipt_verify(&got, NULL), 0);
	ct_receipt_free(&got);
	ct_sign_key_free(k);
	ct_buf_free(&b);
}

CT_TEST_MAIN(test_rfc8032, test_key_file, test_round_trip, test_tampered, test_version1,
	     test_version2)
