/*
 * Unit tests for server/mean_stream: the streamed mean of K result files
 * has ct_avg's bits (against the weights ct_delta_decode gives) for any
 * number of threads, with more results than one group holds and a model
 * of several chunks and spans; a damaged, missing or foreign result and a short
 * base file are errors, never a mean.
 */
#include "ct_test.h"
#include "ct_avg.h"
#include "ct_delta.h"
#include "ct_err.h"
#include "ct_gpt2.h"
#include "daemons/mean_stream.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N ((size_t)5 * CT_DELTA_CHUNK + 123)	/* 6 chunks, the last short: 2 spans */
#define K (CT_MEAN_GROUP + 3)			/* two passes */

static const struct ct_delta_model dm = { 64, 60, 64, 2, 2, 32 };
static char dir[] = "/tmp/ct_mean_XXXXXX";
static char paths[K][4200], base_path[4200];
static float *base, *res[K];

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static float frand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (float)((double)(rng >> 11) / 9007199254740992.0 - 0.5);
}

static void write_file(const char *path, const void *a, size_t na, const void *b, size_t nb)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(a, 1, na, f), na);
	if (nb > 0)
		assert_int_equal(fwrite(b, 1, nb, f), nb);
	assert_int_equal(fclose(f), 0);
}

/* A base checkpoint (the header's bytes are not read) and K results that
 * move it by various amounts, encoded as clients do. */
static int setup(void **state)
{
	static unsigned char hdr[CT_GPT2_HEADER_BYTES];
	unsigned char sha[32] = { 1 };

	(void)state;
	assert_non_null(mkdtemp(dir));
	base = malloc(N * sizeof(float));
	for (size_t i = 0; i < N; i++)
		base[i] = 0.05f * frand();
	snprintf(base_path, sizeof(base_path), "%s/base.bin", dir);
	write_file(base_path, hdr, sizeof(hdr), base, N * sizeof(float));
	for (int k = 0; k < K; k++) {
		struct ct_buf out = CT_BUF_INIT(0);

		res[k] = malloc(N * sizeof(float));
		for (size_t i = 0; i < N; i++)
			res[k][i] = base[i] + (float)(k + 1) * 1e-3f * frand();
		assert_int_equal(ct_delta_encode(base, res[k], N, &dm, sha, CT_DELTA_LOSSLESS, -1,
						 &out), 0);
		snprintf(paths[k], sizeof(paths[k]), "%s/r%d", dir, k);
		write_file(paths[k], out.data, out.len, NULL, 0);
		ct_buf_free(&out);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int k = 0; k < K; k++) {
		unlink(paths[k]);
		free(res[k]);
	}
	unlink(base_path);
	rmdir(dir);
	free(base);
	return 0;
}

static void test_same_bits_as_ct_avg(void **state)
{
	const char *pp[K];
	float *want = malloc(N * sizeof(float)), *got = malloc(N * sizeof(float));
	static const int threads[] = { 1, 2, 3, 64 };

	(void)state;
	for (int k = 0; k < K; k++)
		pp[k] = paths[k];
	for (int kk = 1; kk <= K; kk += K - 1) {	/* one result, and all of them */
		assert_int_equal(ct_avg(want, (const float *const *)res, (size_t)kk, N,
					CT_AVG_MEAN, 0), 0);
		for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
			memset(got, 0xff, N * sizeof(float));
			assert_int_equal(ct_mean_stream(base_path, N, pp, kk, threads[t], got), 0);
			assert_memory_equal(got, want, N * sizeof(float));
		}
	}
	/* the mean is not some other function of the inputs: result 0 alone
	 * differs from it */
	assert_true(memcmp(want, res[0], N * sizeof(float)) != 0);
	free(want);
	free(got);
}

static void test_errors(void **state)
{
	const char *pp[K];
	float *got = malloc(N * sizeof(float));
	char bad[4300], missing[4300];
	FILE *f;
	long len;
	unsigned char *buf;

	(void)state;
	for (int k = 0; k < K; k++)
		pp[k] = paths[k];
	/* result 17 (second group) damaged in its payload */
	f = fopen(paths[17], "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc((size_t)len);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	buf[len / 2] ^= 0x40;
	snprintf(bad, sizeof(bad), "%s/bad", dir);
	write_file(bad, buf, (size_t)len, NULL, 0);
	pp[17] = bad;
	for (int t = 1; t <= 2; t++) {
		int rc = ct_mean_stream(base_path, N, pp, K, t, got);

		assert_true(rc == CT_ECORRUPT || rc == CT_EHASH);
	}
	/* missing */
	snprintf(missing, sizeof(missing), "%s/none", dir);
	pp[17] = missing;
	assert_int_equal(ct_mean_stream(base_path, N, pp, K, 2, got), CT_ENOENT);
	pp[17] = paths[17];
	/* for another model size */
	assert_int_equal(ct_mean_stream(base_path, N - 1, pp, K, 2, got), CT_EMISMATCH);
	/* a base file shorter than N weights */
	write_file(bad, buf, 100, NULL, 0);
	assert_int_equal(ct_mean_stream(bad, N, pp, K, 2, got), CT_EFORMAT);
	assert_int_equal(ct_mean_stream(base_path, N, pp, 0, 2, got), CT_EINVAL);
	unlink(bad);
	free(buf);
	free(got);
}

CT_TEST_MAIN_GROUP(setup, teardown, test_same_bits_as_ct_avg, test_errors)
