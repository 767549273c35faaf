/*
 * Unit tests for engine/ct_delta: the result upload format. Lossless round
 * trips are bit-exact (special values included) and verified by hash; int8
 * stays within half a quantisation step; every crafted or damaged file is
 * rejected without writing past the caller's array.
 */
#include "config.h"
#include "ct_test.h"
#include "ct_delta.h"
#include "ct_err.h"
#include "ct_lora.h"
#include "ct_zin.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <zlib.h>

static const struct ct_delta_model model = { 1024, 50257, 50304, 12, 12, 768 };
static const unsigned char base_sha[32] = { 0xba, 0x5e, 1, 2, 3 };

static uint64_t rng_state = 88172645463325252ull;

static double urand(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (double)(rng_state >> 11) / 9007199254740992.0;
}

static double gauss(void)
{
	double u = urand() + 1e-12, v = urand();

	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* base ~ N(0, 0.02), result = base + N(0, 0.02 * rel). */
static void make_weights(float *b, float *r, size_t n, double rel)
{
	for (size_t i = 0; i < n; i++) {
		b[i] = (float)(0.02 * gauss());
		r[i] = b[i] + (float)(0.02 * rel * gauss());
	}
}

static void test_lossless_exact(void **state)
{
	size_t n = 2 * CT_DELTA_CHUNK + 77;
	float *b = malloc(n * 4), *r = malloc(n * 4), *d = malloc((n + 1) * 4);
	struct ct_buf out = CT_BUF_INIT(0);
	struct ct_delta_info info;
	unsigned char sha[32];
	uint32_t nanbits = 0x7fc01234u;

	(void)state;
	make_weights(b, r, n, 1e-3);
	/* Values a subtraction would not give back. */
	r[0] = -0.0f;
	b[1] = 1e-38f, r[1] = 3e38f;
	r[2] = INFINITY;
	memcpy(&r[3], &nanbits, 4);
	r[4] = 1e-45f;	/* denormal */
	b[5] = -1.0f, r[5] = 1.0f;
	assert_int_equal(ct_delta_encode(b, r, n, &model, base_sha, CT_DELTA_LOSSLESS, -1, &out), 0);
	d[n] = 42.0f;
	assert_int_equal(ct_delta_decode(out.data, out.len, b, n, d, &info), 0);
	assert_memory_equal(d, r, n * 4);
	assert_true(d[n] == 42.0f);
	assert_int_equal(info.nparams, n);
	assert_int_equal(info.encoding, CT_DELTA_LOSSLESS);
	assert_memory_equal(&info.model, &model, sizeof(model));
	assert_memory_equal(info.base_sha, base_sha, 32);
	assert_int_equal(ct_delta_weights_sha(r, n, sha), 0);
	assert_memory_equal(info.weights_sha, sha, 32);
	assert_memory_equal(info.decoded_sha, sha, 32);
	assert_true(info.quant_error == 0.0);
	free(b), free(r), free(d);
	ct_buf_free(&out);
}

static void test_lossless_compresses(void **state)
{
	size_t n = 1 << 18;
	float *b = malloc(n * 4), *r = malloc(n * 4);
	struct ct_buf out = CT_BUF_INIT(0);

	(void)state;
	make_weights(b, r, n, 1e-3);
	assert_int_equal(ct_delta_encode(b, r, n, &model, base_sha, CT_DELTA_LOSSLESS, -1, &out), 0);
	/* Measured ~2.3 bytes/weight; raw float32 would be 4 (and raw
	 * weights deflate to ~3.4). */
	assert_true(out.len < n * 3);
	/* Unchanged weights cost almost nothing. */
	ct_buf_reset(&out);
	assert_int_equal(ct_delta_encode(b, b, n, &model, base_sha, CT_DELTA_LOSSLESS, -1, &out), 0);
	assert_true(out.len < n / 50);
	free(b), free(r);
	ct_buf_free(&out);
}

static void test_single_weight(void **state)
{
	float b = 0.5f, r = 0.25f, d = 0.0f;
	struct ct_buf out = CT_BUF_INIT(0);

	(void)state;
	assert_int_equal(ct_delta_encode(&b, &r, 1, &model, base_sha, CT_DELTA_LOSSLESS, 9, &out), 0);
	assert_int_equal(ct_delta_decode(out.data, out.len, &b, 1, &d, NULL), 0);
	assert_true(d == 0.25f);
	ct_buf_free(&out);
}

/* Several chunks of an unchanged model, a payload of a few hundred bytes
 * for 1 MiB of weights, a short last chunk: every chunk is delivered,
 * from memory and from a file. (LoRA results, whose chunks are single
 * adapter matrices, are covered by test_lora_round: an inflater holding
 * output after taking all the input must not read as truncated.) */
static void test_small_payload_many_chunks(void **state)
{
	size_t n = 3 * CT_DELTA_CHUNK + 300, first, m, got = 0;
	float *b = calloc(n, 4), *d = malloc(n * 4);
	struct ct_buf out = CT_BUF_INIT(0);
	struct ct_delta_reader *rd;
	char path[] = "/tmp/test_delta_XXXXXX";
	int fd = mkstemp(path), rc;

	(void)state;
	for (size_t i = 0; i < n; i++)
		b[i] = (float)(i % 97) * 0.01f;
	assert_int_equal(ct_delta_encode(b, b, n, &model, base_sha, CT_DELTA_LOSSLESS, 9, &out), 0);
	assert_true(out.len < 4096);
	assert_int_equal(ct_delta_decode(out.data, out.len, b, n, d, NULL), 0);
	assert_memory_equal(d, b, n * 4);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, out.data, out.len), (ssize_t)out.len);
	close(fd);
	assert_int_equal(ct_delta_reader_open(path, 0, n, &rd), 0);
	while ((rc = ct_delta_reader_next(rd, b + got, d + got, &first, &m)) == 1)
		got += m;
	assert_int_equal(rc, 0);
	assert_int_equal(got, n);
	assert_memory_equal(d, b, n * 4);
	ct_delta_reader_close(rd);
	unlink(path);
	ct_buf_free(&out);
	free(b), free(d);
}

static void test_int8_error_bound(void **state)
{
	size_t n = CT_DELTA_CHUNK + 100;
	float *b = malloc(n * 4), *r = malloc(n * 4), *d = malloc(n * 4);
	struct ct_buf out = CT_BUF_INIT(0);
	struct ct_delta_info info;
	unsigned char sha[32];

	(void)state;
	make_weights(b, r, n, 1e-2);
	for (size_t i = 200; i < 264; i++)	/* one block left unchanged */
		r[i] = b[i];
	assert_int_equal(ct_delta_encode(b, r, n, &model, base_sha, CT_DELTA_INT8, -1, &out), 0);
	assert_true(out.len < n * 2);
	assert_int_equal(ct_delta_decode(out.data, out.len, b, n, d, &info), 0);
	assert_int_equal(info.encoding, CT_DELTA_INT8);
	for (size_t s = 0; s < n; s += CT_DELTA_INT8_BLOCK) {
		size_t e = s + CT_DELTA_INT8_BLOCK < n ? s + CT_DELTA_INT8_BLOCK : n;
		float amax = 0.0f;

		for (size_t i = s; i < e; i++)
			amax = fmaxf(amax, fabsf(r[i] - b[i]));
		for (size_t i = s; i < e; i++) {
			double err = fabs((double)d[i] - (double)r[i]);

			/* half a step, plus the roundings of the two float ops */
			assert_true(err <= 0.5 * amax / 127.0 * 1.0001 +
					   2.0 * fabs(r[i]) * 1.2e-7);
		}
	}
	for (size_t i = 200; i < 264; i++)
		assert_true(d[i] == b[i]);
	/* the reported bound holds, and is not loose by more than ~2x */
	double e2 = 0.0;
	for (size_t i = 0; i < n; i++)
		e2 += ((double)d[i] - r[i]) * ((double)d[i] - r[i]);
	assert_true(sqrt(e2) <= info.quant_error);
	assert_true(sqrt(e2) > info.quant_error / 2.5);
	/* The header carries the true weights' hash; the decoded ones differ. */
	assert_int_equal(ct_delta_weights_sha(r, n, sha), 0);
	assert_memory_equal(info.weights_sha, sha, 32);
	assert_memory_not_equal(info.decoded_sha, sha, 32);
	free(b), free(r), free(d);
	ct_buf_free(&out);
}

static void test_encode_errors(void **state)
{
	float b[100] = { 0 }, r[100] = { 0 };
	struct ct_buf out = CT_BUF_INIT(CT_DELTA_HEADER_SIZE + 4);

	(void)state;
	r[7] = NAN;
	assert_int_equal(ct_delta_encode(b, r, 100, &model, base_sha, CT_DELTA_INT8, -1, &out),
			 CT_ENONFINITE);
	assert_int_equal(out.len, 0);
	assert_int_equal(ct_delta_encode(b, r, 0, &model, base_sha, CT_DELTA_LOSSLESS, -1, &out),
			 CT_EINVAL);
	assert_int_equal(ct_delta_encode(b, r, 100, &model, base_sha, 5, -1, &out), CT_EINVAL);
	/* The output cap holds and leaves the buffer as it was. */
	assert_int_equal(ct_buf_append(&out, "xy", 2), 0);
	for (int i = 0; i < 100; i++)
		r[i] = (float)i * 1.37f;
	assert_int_equal(ct_delta_encode(b, r, 100, &model, base_sha, CT_DELTA_LOSSLESS, -1, &out),
			 CT_ETOOBIG);
	assert_int_equal(out.len, 2);
	ct_buf_free(&out);
}

/* ---- crafted files -------------------------------------------------------- */

struct fixture {
	float b[1000], r[1000], d[1001];
	struct ct_buf file;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	make_weights(f->b, f->r, 1000, 1e-3);
	ct_buf_init(&f->file, 0);
	if (ct_delta_encode(f->b, f->r, 1000, &model, base_sha, CT_DELTA_LOSSLESS, -1, &f->file) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	ct_buf_free(&f->file);
	free(f);
	return 0;
}

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Stream-decode the file at path into d (n floats); the last rc. */
static int stream_decode(const char *path, uint64_t cap, const float *b, size_t n, float *d,
			 struct ct_delta_info *info)
{
	struct ct_delta_reader *rd = NULL;
	size_t first, m, next = 0;
	int rc;

	rc = ct_delta_reader_open(path, cap, n, &rd);
	if (rc < 0) {
		assert_null(rd);
		return rc;
	}
	while ((rc = ct_delta_reader_next(rd, b + next, d + next, &first, &m)) == 1) {
		assert_int_equal(first, next);
		assert_true(m >= 1 && m <= CT_DELTA_CHUNK);
		next += m;
	}
	if (rc == 0) {
		assert_int_equal(next, n);
		if (info != NULL)
			*info = *ct_delta_reader_info(rd);
		/* after the end it stays at the end */
		assert_int_equal(ct_delta_reader_next(rd, b, d, &first, &m), 0);
	}
	ct_delta_reader_close(rd);
	return rc;
}

static int write_tmp(const unsigned char *p, size_t len, char *path)
{
	FILE *fp;

	snprintf(path, 64, "/tmp/ct-delta-XXXXXX");
	close(mkstemp(path));
	fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(p, 1, len, fp), len);
	fclose(fp);
	return 0;
}

/* Decode a modified copy; the caller's array must stay untouched past n.
 * The streaming reader, fed the same bytes from a file, must give the
 * same verdict. */
static int decode_copy(struct fixture *f, const unsigned char *p, size_t len, size_t n)
{
	static float sd[1001];
	char path[64];
	int rc, src;

	f->d[n] = 42.0f;
	rc = ct_delta_decode(p, len, f->b, n, f->d, NULL);
	assert_true(f->d[n] == 42.0f);
	write_tmp(p, len, path);
	src = stream_decode(path, 0, f->b, n, sd, NULL);
	unlink(path);
	assert_int_equal(src, rc);
	return rc;
}

/* The streaming reader gives the same weights and info as the in-memory
 * decoder, for both encodings, and honours the size cap. */
static void test_stream_reader(void **state)
{
	size_t n = 3 * CT_DELTA_CHUNK + 11;
	float *b = malloc(n * 4), *r = malloc(n * 4), *d1 = malloc(n * 4), *d2 = malloc(n * 4);
	struct ct_delta_info i1, i2;
	char path[64];

	(void)state;
	make_weights(b, r, n, 1e-3);
	for (int enc = CT_DELTA_LOSSLESS; enc <= CT_DELTA_INT8; enc++) {
		struct ct_buf out = CT_BUF_INIT(0);

		assert_int_equal(ct_delta_encode(b, r, n, &model, base_sha, enc, -1, &out), 0);
		assert_int_equal(ct_delta_decode(out.data, out.len, b, n, d1, &i1), 0);
		write_tmp((unsigned char *)out.data, out.len, path);
		assert_int_equal(stream_decode(path, 0, b, n, d2, &i2), 0);
		assert_memory_equal(d1, d2, n * 4);
		assert_memory_equal(i1.decoded_sha, i2.decoded_sha, 32);
		assert_true(i1.quant_error == i2.quant_error);
		assert_int_equal(stream_decode(path, out.len - 1, b, n, d2, NULL), CT_ETOOBIG);
		assert_int_equal(stream_decode(path, 0, b, n - 1, d2, NULL), CT_EMISMATCH);
		unlink(path);
		ct_buf_free(&out);
	}
	assert_int_equal(stream_decode("/nonexistent/x", 0, b, n, d2, NULL), CT_ENOENT);
	free(b), free(r), free(d1), free(d2);
}

static void test_crafted_headers(void **state)
{
	struct fixture *f = *state;
	size_t len = f->file.len;
	unsigned char *p = malloc(len);

#define MUTATE(stmt, expect) do { \
		memcpy(p, f->file.data, len); \
		stmt; \
		assert_int_equal(decode_copy(f, p, len, 1000), (expect)); \
	} while (0)
	MUTATE((void)0, 0);
	MUTATE(p[0] = 'X', CT_EFORMAT);
	MUTATE(put_le(p + 8, 2, 4), CT_EUNSUPP);
	MUTATE(put_le(p + 12, 7, 4), CT_EFORMAT);
	MUTATE(put_le(p + 12, CT_DELTA_INT8, 4), CT_EFORMAT);	/* block and raw length disagree */
	MUTATE(put_le(p + 16, 0, 8), CT_EFORMAT);
	MUTATE(put_le(p + 16, (uint64_t)1 << 40, 8), CT_ETOOBIG);
	MUTATE(put_le(p + 16, 999, 8), CT_EFORMAT);		/* raw length no longer fits */
	MUTATE(put_le(p + 112, len, 8), CT_EFORMAT);		/* payload length lies */
	MUTATE(put_le(p + 120, (uint64_t)1 << 40, 8), CT_EFORMAT);
	MUTATE(p[150] = 1, CT_EFORMAT);
	MUTATE(p[90] ^= 1, CT_EHASH);				/* claimed hash altered */
#undef MUTATE
	/* A damaged payload byte: zlib's checksum or the weights hash. */
	for (size_t at = CT_DELTA_HEADER_SIZE; at < len; at += 97) {
		int rc;

		memcpy(p, f->file.data, len);
		p[at] ^= 0x55;
		rc = decode_copy(f, p, len, 1000);
		assert_true(rc == CT_ECORRUPT || rc == CT_EHASH);
	}
	assert_int_equal(decode_copy(f, f->file.data, 100, 1000), CT_EFORMAT);	/* truncated */
	assert_int_equal(decode_copy(f, f->file.data, 10, 1000), CT_EFORMAT);
	/* A file for another model size. */
	assert_int_equal(decode_copy(f, f->file.data, len, 999), CT_EMISMATCH);
	free(p);
}

/* Replace the payload of f->file by `raw` (raw_len bytes, deflated) with the
 * header's payload length fixed up; returns a malloc'd file. */
static unsigned char *with_payload(struct fixture *f, const unsigned char *raw,
				   size_t raw_len, const unsigned char *extra,
				   size_t extra_len, size_t *len_out)
{
	uLongf zl = compressBound(raw_len);
	unsigned char *p = malloc(CT_DELTA_HEADER_SIZE + zl + extra_len);

	memcpy(p, f->file.data, CT_DELTA_HEADER_SIZE);
	assert_int_equal(compress(p + CT_DELTA_HEADER_SIZE, &zl, raw, raw_len), Z_OK);
	memcpy(p + CT_DELTA_HEADER_SIZE + zl, extra, extra_len);
	put_le(p + 112, zl + extra_len, 8);
	*len_out = CT_DELTA_HEADER_SIZE + zl + extra_len;
	return p;
}

static void test_bad_payloads(void **state)
{
	struct fixture *f = *state;
	size_t big = 1 << 22, len;
	unsigned char *zeros = calloc(1, big), *p;

	/* A stream inflating to far more than the weights: stopped at 4n. */
	p = with_payload(f, zeros, big, NULL, 0, &len);
	assert_int_equal(decode_copy(f, p, len, 1000), CT_ECORRUPT);
	free(p);
	/* One byte short. */
	p = with_payload(f, zeros, 3999, NULL, 0, &len);
	assert_int_equal(decode_copy(f, p, len, 1000), CT_ECORRUPT);
	free(p);
	/* Right length but junk after the stream: 4 bytes, and 1 or 2 (which
	 * ISA-L reads ahead into its bit buffer with the stream's end). */
	for (size_t junk = 1; junk <= 4; junk++) {
		p = with_payload(f, zeros, 4000, (const unsigned char *)"junk", junk, &len);
		assert_int_equal(decode_copy(f, p, len, 1000), CT_ECORRUPT);
		free(p);
	}
	/* Right length, zero delta: decodes to the base, hash says otherwise. */
	p = with_payload(f, zeros, 4000, NULL, 0, &len);
	assert_int_equal(decode_copy(f, p, len, 1000), CT_EHASH);
	free(p);
	/* Not zlib at all. */
	memset(zeros, 0xAB, 5000);
	p = malloc(CT_DELTA_HEADER_SIZE + 5000);
	memcpy(p, f->file.data, CT_DELTA_HEADER_SIZE);
	memcpy(p + CT_DELTA_HEADER_SIZE, zeros, 5000);
	put_le(p + 112, 5000, 8);
	assert_int_equal(decode_copy(f, p, CT_DELTA_HEADER_SIZE + 5000, 1000), CT_ECORRUPT);
	free(p);
	free(zeros);
}

static void test_int8_bad_scale(void **state)
{
	struct fixture *f = *state;
	size_t nblocks = (1000 + CT_DELTA_INT8_BLOCK - 1) / CT_DELTA_INT8_BLOCK, raw_len = 1000 + 4 * nblocks, len;
	unsigned char *raw = calloc(1, raw_len), *p;
	float bad[] = { NAN, INFINITY, -1.0f };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(raw, 0, raw_len);
		memcpy(raw + (CT_DELTA_INT8_BLOCK + 4) * 3, &bad[i], 4);	/* scale of block 3 */
		p = with_payload(f, raw, raw_len, NULL, 0, &len);
		put_le(p + 12, CT_DELTA_INT8, 4);
		put_le(p + 120, raw_len, 8);
		put_le(p + 128, CT_DELTA_INT8_BLOCK, 4);
		assert_int_equal(decode_copy(f, p, len, 1000), CT_ECORRUPT);
		/* the same file with a sane scale decodes */
		memset(raw + (CT_DELTA_INT8_BLOCK + 4) * 3, 0, 4);
		free(p);
		p = with_payload(f, raw, raw_len, NULL, 0, &len);
		put_le(p + 12, CT_DELTA_INT8, 4);
		put_le(p + 120, raw_len, 8);
		put_le(p + 128, CT_DELTA_INT8_BLOCK, 4);
		assert_int_equal(decode_copy(f, p, len, 1000), 0);
		assert_memory_equal(f->d, f->b, 1000 * 4);
		free(p);
	}
	/* A scale larger than the encoder's (no |q| reaches 127) would widen
	 * the error bound the validator grants: refused. */
	memset(raw, 0, raw_len);
	float big = 1.0f;
	memcpy(raw + (CT_DELTA_INT8_BLOCK + 4) * 2, &big, 4);
	raw[(CT_DELTA_INT8_BLOCK + 4) * 2 + 4 + 5] = 3;	/* q = 3: |update| 3, claimed error 0.5 */
	p = with_payload(f, raw, raw_len, NULL, 0, &len);
	put_le(p + 12, CT_DELTA_INT8, 4);
	put_le(p + 120, raw_len, 8);
	put_le(p + 128, CT_DELTA_INT8_BLOCK, 4);
	assert_int_equal(decode_copy(f, p, len, 1000), CT_ECORRUPT);
	free(p);
	raw[(CT_DELTA_INT8_BLOCK + 4) * 2 + 4 + 5] = (unsigned char)(int8_t)-127;	/* as the encoder would */
	p = with_payload(f, raw, raw_len, NULL, 0, &len);
	put_le(p + 12, CT_DELTA_INT8, 4);
	put_le(p + 120, raw_len, 8);
	put_le(p + 128, CT_DELTA_INT8_BLOCK, 4);
	assert_int_equal(decode_copy(f, p, len, 1000), 0);
	assert_true(f->d[2 * CT_DELTA_INT8_BLOCK + 5] == f->b[2 * CT_DELTA_INT8_BLOCK + 5] - 127.0f);
	free(p);
	free(raw);
}

/* LoRA results (kind 1): the section round-trips, both encodings work on
 * adapters, each decoder refuses the other kind, a full file keeps bytes
 * 132..159 zero, and a section that is out of range or does not fit
 * nparams is refused. */
static void test_lora_kind(void **state)
{
	static const struct ct_delta_model tiny = { 16, 60, 64, 2, 2, 32 };
	struct ct_model_config cfg = { .maxT = 16, .V = 60, .L = 2, .NH = 2, .C = 32, .Vp = 64 };
	struct ct_lora_spec spec = { .rank = 4, .alpha = 8.0f, .targets = CT_LORA_ALL };
	struct ct_delta_lora sec = { .rank = 4, .targets = CT_LORA_ALL, .alpha = 8.0f,
				     .seed = 0x1234567890abcdefull };
	size_t n = ct_lora_nparams(&cfg, &spec), len;
	float *init = malloc(n * 4), *ad = malloc(n * 4), *d = malloc(n * 4);
	struct ct_buf out = CT_BUF_INIT(0), full = CT_BUF_INIT(0);
	struct ct_delta_info info;
	unsigned char *p;

	(void)state;
	assert_int_equal(n, 4 * 32 * 16 * 2);
	make_weights(init, ad, n, 1e-2);
	for (size_t i = n / 2; i < n; i++)
		init[i] = 0.0f;		/* B starts at zero */
	assert_int_equal(ct_delta_encode_lora(init, ad, n, &tiny, base_sha, &sec,
					      CT_DELTA_LOSSLESS, -1, &out), 0);
	assert_int_equal(ct_delta_decode_lora(out.data, out.len, init, n, d, &info), 0);
	assert_memory_equal(d, ad, n * 4);
	assert_int_equal(info.kind, CT_DELTA_LORA);
	assert_int_equal(info.lora.rank, 4);
	assert_int_equal(info.lora.targets, CT_LORA_ALL);
	assert_true(info.lora.alpha == 8.0f);
	assert_true(info.lora.seed == sec.seed);
	assert_memory_equal(info.base_sha, base_sha, 32);
	/* the other decoder refuses it, whatever n */
	assert_int_equal(ct_delta_decode(out.data, out.len, init, n, d, NULL), CT_EMISMATCH);
	/* int8 adapters */
	ct_buf_reset(&out);
	assert_int_equal(ct_delta_encode_lora(init, ad, n, &tiny, base_sha, &sec, CT_DELTA_INT8,
					      -1, &out), 0);
	assert_int_equal(ct_delta_decode_lora(out.data, out.len, init, n, d, &info), 0);
	assert_true(info.quant_error > 0.0);
	/* a full-weights file: zero bytes 132..159, refused by the LoRA decoder */
	assert_int_equal(ct_delta_encode(init, ad, n, &tiny, base_sha, CT_DELTA_LOSSLESS, -1,
					 &full), 0);
	for (int i = 132; i < CT_DELTA_HEADER_SIZE; i++)
		assert_int_equal(full.data[i], 0);
	assert_int_equal(ct_delta_decode_lora(full.data, full.len, init, n, d, NULL),
			 CT_EMISMATCH);
	/* a section that does not fit n, or out of range: the encoder refuses */
	sec.rank = 3;
	assert_int_equal(ct_delta_encode_lora(init, ad, n, &tiny, base_sha, &sec,
					      CT_DELTA_LOSSLESS, -1, &full), CT_EINVAL);
	sec.rank = 4;
	assert_int_equal(ct_delta_encode_lora(init, ad, n, &tiny, base_sha, NULL,
					      CT_DELTA_LOSSLESS, -1, &full), CT_EINVAL);
	/* crafted LoRA headers */
	len = out.len;
	p = malloc(len);
#define LMUTATE(stmt, expect) do { \
		memcpy(p, out.data, len); \
		stmt; \
		assert_int_equal(ct_delta_decode_lora(p, len, init, n, d, NULL), (expect)); \
	} while (0)
	LMUTATE((void)0, 0);
	LMUTATE(put_le(p + 132, 2, 4), CT_EFORMAT);		/* unknown kind */
	LMUTATE(put_le(p + 136, 0, 4), CT_EFORMAT);		/* rank 0 */
	LMUTATE(put_le(p + 136, 2000, 4), CT_EFORMAT);		/* rank over the cap */
	LMUTATE(put_le(p + 136, 8, 4), CT_EFORMAT);		/* rank 8 needs 2n floats */
	LMUTATE(put_le(p + 140, 0x7fc00000u, 4), CT_EFORMAT);	/* alpha NaN */
	LMUTATE(put_le(p + 140, 0xbf800000u, 4), CT_EFORMAT);	/* alpha -1 */
	LMUTATE(put_le(p + 144, 0x10, 4), CT_EFORMAT);		/* unknown target */
	LMUTATE(put_le(p + 144, CT_LORA_QKV, 4), CT_EFORMAT);	/* fewer targets than n */
	LMUTATE(put_le(p + 44, 1u << 20, 4), CT_EFORMAT);	/* absurd C */
	LMUTATE(p[157] = 1, CT_EFORMAT);
	LMUTATE(put_le(p + 148, 7, 8), 0);	/* seed: the caller's to compare */
#undef LMUTATE
	/* a full file with LoRA bytes set but kind 0 */
	free(p);
	p = malloc(full.len);
	memcpy(p, full.data, full.len);
	put_le(p + 136, 4, 4);
	assert_int_equal(ct_delta_decode(p, full.len, init, n, d, NULL), CT_EFORMAT);
	free(p);
	free(init), free(ad), free(d);
	ct_buf_free(&out);
	ct_buf_free(&full);
}

/* The per-tensor LoRA encoding: bit-exact for every pattern (signed
 * zeros, NaN payloads, infinities, weights that cross zero), across
 * matrices longer than a chunk (rank 8 at C=768: B of qkv is 147,456
 * floats), smaller than CT_DELTA_LOSSLESS on adapters whose B starts at
 * zero, hash-checked, and refused for full weights. */
static void test_lora_per_tensor(void **state)
{
	struct ct_model_config cfg = { .maxT = 64, .V = 60, .L = 1, .NH = 12, .C = 768, .Vp = 64 };
	struct ct_lora_spec spec = { .rank = 8, .alpha = 16.0f, .targets = CT_LORA_ALL };
	struct ct_delta_model dm = { 64, 60, 64, 1, 12, 768 };
	struct ct_delta_lora sec = { .rank = 8, .targets = CT_LORA_ALL, .alpha = 16.0f, .seed = 9 };
	static const uint32_t odd[] = { 0x80000000u, 0x00000000u, 0x7fc00001u, 0xffc00002u,
					0x7f800000u, 0xff800000u, 0x00000001u, 0x80000001u };
	size_t n = ct_lora_nparams(&cfg, &spec);
	float *init = malloc(n * 4), *ad = malloc(n * 4), *d = malloc(n * 4);
	struct ct_buf t = CT_BUF_INIT(0), plain = CT_BUF_INIT(0);
	struct ct_delta_info info;

	(void)state;
	assert_int_equal(ct_lora_init(&cfg, &spec, 9, init), 0);
	for (size_t i = 0; i < n; i++)	/* A moved a little, B away from zero */
		ad[i] = init[i] != 0.0f ? init[i] + (float)(1e-4 * gauss()) : (float)(1e-3 * gauss());
	for (size_t k = 0; k < 8; k++) {	/* special patterns over both kinds of base */
		memcpy(&ad[k], &odd[k], 4);
		memcpy(&ad[n - 1 - k], &odd[k], 4);
		memcpy(&init[n / 2 + k], &odd[7 - k], 4);
	}
	ad[100] = -init[100];			/* crosses zero */
	assert_int_equal(ct_delta_encode_lora(init, ad, n, &dm, base_sha, &sec,
					      CT_DELTA_LOSSLESS_TENSOR, -1, &t), 0);
	assert_int_equal(ct_delta_encode_lora(init, ad, n, &dm, base_sha, &sec,
					      CT_DELTA_LOSSLESS, -1, &plain), 0);
	assert_int_equal(ct_delta_decode_lora(t.data, t.len, init, n, d, &info), 0);
	assert_int_equal(info.encoding, CT_DELTA_LOSSLESS_TENSOR);
	assert_memory_equal(d, ad, n * 4);
	assert_memory_equal(info.decoded_sha, info.weights_sha, 32);
	assert_int_equal(ct_delta_decode_lora(plain.data, plain.len, init, n, d, NULL), 0);
	assert_memory_equal(d, ad, n * 4);
	assert_true(t.len < plain.len * 95 / 100);
	/* a claimed hash that is not the decoded adapters' */
	t.data[80] ^= 1;
	assert_int_equal(ct_delta_decode_lora(t.data, t.len, init, n, d, NULL), CT_EHASH);
	/* full weights: not encoded per tensor, nor accepted so */
	assert_int_equal(ct_delta_encode(init, ad, n, &dm, base_sha, CT_DELTA_LOSSLESS_TENSOR, -1,
					 &plain), CT_EINVAL);
	ct_buf_reset(&plain);
	assert_int_equal(ct_delta_encode(init, ad, n, &dm, base_sha, CT_DELTA_LOSSLESS, -1,
					 &plain), 0);
	put_le((unsigned char *)plain.data + 12, CT_DELTA_LOSSLESS_TENSOR, 4);
	assert_int_equal(ct_delta_decode(plain.data, plain.len, init, n, d, NULL), CT_EFORMAT);
	free(init), free(ad), free(d);
	ct_buf_free(&t);
	ct_buf_free(&plain);
}

/* The inflater the decoder uses is the one asked for (ct_zin.h). */
static void test_inflater(void **state)
{
	struct ct_zin z;
	const char *want = "zlib";

	(void)state;
#ifdef HAVE_ISAL
	if (getenv("CT_INFLATE") == NULL)
		want = "isa-l";
#endif
	assert_int_equal(ct_zin_init(&z), 0);
	assert_string_equal(ct_zin_impl(&z), want);
	ct_zin_end(&z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inflater),
		cmocka_unit_test(test_lossless_exact),
		cmocka_unit_test(test_lossless_compresses),
		cmocka_unit_test(test_single_weight),
		cmocka_unit_test(test_small_payload_many_chunks),
		cmocka_unit_test(test_int8_error_bound),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_stream_reader),
		cmocka_unit_test(test_lora_kind),
		cmocka_unit_test(test_lora_per_tensor),
		cmocka_unit_test_setup_teardown(test_crafted_headers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_payloads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_int8_bad_scale, setup, teardown),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);

#ifdef HAVE_ISAL
	/* the same cases again through zlib's inflate (lib/ct_zin.h) */
	setenv("CT_INFLATE", "zlib", 1);
	failed += cmocka_run_group_tests(tests, NULL, NULL);
#endif
	return failed;
}
