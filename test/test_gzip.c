/*
 * Unit tests for lib/ct_gzip: gzip and zlib round trips, the inflate cap
 * against a zip bomb (a few KB that would inflate to 16 MB), truncated,
 * corrupt and garbage streams, and the file versions (atomic output, cap,
 * interoperability with the gzip tool).
 */
#include "ct_test.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gzip.h"

#include <dirent.h>

/* Some compressible but not trivial bytes. */
static unsigned char *make_data(size_t n)
{
	unsigned char *p = malloc(n);
	uint32_t x = 12345;

	assert_non_null(p);
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (unsigned char)("crowdtune "[i % 10] ^ ((x >> 28) & 1));
	}
	return p;
}

/* Compress n bytes of data at level, check the container kind, inflate
 * back into out (a capped buffer) and compare. */
static void roundtrip_with(int (*compress)(const void *, size_t, int, struct ct_buf *),
			   int (*decompress)(const void *, size_t, struct ct_buf *),
			   int gzip, const unsigned char *data, size_t n, int level,
			   struct ct_buf *out)
{
	struct ct_buf z = CT_BUF_INIT(0);

	ct_buf_reset(out);
	assert_int_equal(compress(data, n, level, &z), 0);
	assert_int_equal(ct_gzip_is_gzip(z.data, z.len), gzip);
	assert_int_equal(decompress(z.data, z.len, out), 0);
	assert_int_equal(out->len, n);
	if (n > 0)
		assert_memory_equal(out->data, data, n);
	ct_buf_free(&z);
}

static void roundtrip(size_t n, int level)
{
	struct ct_buf out = CT_BUF_INIT(n + 1);
	unsigned char *data = make_data(n + 1);

	roundtrip_with(ct_gzip_compress, ct_gzip_decompress, 1, data, n, level, &out);
	roundtrip_with(ct_zlib_compress, ct_zlib_decompress, 0, data, n, level, &out);
	ct_buf_free(&out);
	free(data);
}

static void test_roundtrip(void **state)
{
	(void)state;
	roundtrip(0, CT_GZIP_DEFAULT_LEVEL);
	roundtrip(1, 1);
	roundtrip(1000, 0);	/* stored blocks */
	roundtrip(300000, 9);	/* several 64 KiB chunks both ways */
	roundtrip(300000, CT_GZIP_DEFAULT_LEVEL);
}

static void test_appends_and_level(void **state)
{
	struct ct_buf z = CT_BUF_INIT(0), out = CT_BUF_INIT(100);

	(void)state;
	assert_int_equal(ct_buf_appends(&z, "HDR"), 0);
	assert_int_equal(ct_gzip_compress("hello", 5, 6, &z), 0);
	assert_memory_equal(z.data, "HDR", 3);
	assert_true(ct_gzip_is_gzip(z.data + 3, z.len - 3));
	assert_int_equal(ct_buf_appends(&out, "pre:"), 0);
	assert_int_equal(ct_gzip_decompress(z.data + 3, z.len - 3, &out), 0);
	assert_string_equal(ct_buf_cstr(&out), "pre:hello");
	assert_int_equal(ct_gzip_compress("x", 1, 10, &z), CT_EINVAL);
	assert_int_equal(ct_zlib_compress("x", 1, -2, &z), CT_EINVAL);
	assert_false(ct_gzip_is_gzip("\x1f\x8b", 2));
	ct_buf_free(&z);
	ct_buf_free(&out);
}

static void test_zip_bomb(void **state)
{
	const size_t big = 16u << 20, cap = 1u << 20;
	unsigned char *zeros = calloc(1, big);
	struct ct_buf z = CT_BUF_INIT(0), out = CT_BUF_INIT(cap);
	int rc;

	(void)state;
	assert_non_null(zeros);
	assert_int_equal(ct_gzip_compress(zeros, big, 9, &z), 0);
	free(zeros);
	assert_true(z.len < 32 * 1024);	/* a few KB ... */
	rc = ct_gzip_decompress(z.data, z.len, &out);
	assert_int_equal(rc, CT_ETOOBIG);	/* ... refused past the cap */
	assert_int_equal(out.len, 0);
	assert_true(out.cap <= cap);	/* never allocated more than the cap */
	ct_buf_free(&z);

	/* Same for raw zlib. */
	zeros = calloc(1, big);
	assert_non_null(zeros);
	assert_int_equal(ct_zlib_compress(zeros, big, 9, &z), 0);
	free(zeros);
	assert_int_equal(ct_zlib_decompress(z.data, z.len, &out), CT_ETOOBIG);
	assert_true(out.cap <= cap);
	/* No cap at all is refused rather than unbounded. */
	out.max = 0;
	assert_int_equal(ct_zlib_decompress(z.data, z.len, &out), CT_EINVAL);
	ct_buf_free(&z);
	ct_buf_free(&out);
}

static void test_cap_exact(void **state)
{
	struct ct_buf z = CT_BUF_INIT(0), out = CT_BUF_INIT(1000);
	unsigned char *data = make_data(1000);

	(void)state;
	assert_int_equal(ct_gzip_compress(data, 1000, 6, &z), 0);
	assert_int_equal(ct_gzip_decompress(z.data, z.len, &out), 0);
	assert_int_equal(out.len, 1000);
	ct_buf_free(&out);
	out.max = 999;
	assert_int_equal(ct_gzip_decompress(z.data, z.len, &out), CT_ETOOBIG);
	/* The cap counts what the buffer already holds. */
	out.max = 1000;
	assert_int_equal(ct_buf_appends(&out, "x"), 0);
	assert_int_equal(ct_gzip_decompress(z.data, z.len, &out), CT_ETOOBIG);
	assert_int_equal(out.len, 1);
	ct_buf_free(&z);
	ct_buf_free(&out);
	free(data);
}

static void test_bad_streams(void **state)
{
	struct ct_buf z = CT_BUF_INIT(0), out = CT_BUF_INIT(1 << 20);
	unsigned char *data = make_data(5000);
	unsigned char junk[256];

	(void)state;
	assert_int_equal(ct_gzip_compress(data, 5000, 6, &z), 0);
	/* Truncated anywhere: in the header, the body or the trailer. */
	for (size_t cut = 0; cut < z.len; cut += (cut < 20 ? 1 : 97)) {
		assert_int_equal(ct_gzip_decompress(z.data, cut, &out), CT_EFORMAT);
		assert_int_equal(out.len, 0);
	}
	assert_int_equal(ct_gzip_decompress(z.data, z.len - 1, &out), CT_EFORMAT);
	/* Corrupt CRC32 in the trailer. */
	z.data[z.len - 6] ^= 0x55;
	assert_int_equal(ct_gzip_decompress(z.data, z.len, &out), CT_EFORMAT);
	z.data[z.len - 6] ^= 0x55;
	/* Trailing garbage after the member. */
	assert_int_equal(ct_buf_appends(&z, "garbage!"), 0);
	assert_int_equal(ct_gzip_decompress(z.data, z.len, &out), CT_EFORMAT);
	/* Pure garbage, and a zlib decoder fed gzip. */
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 37 + 11);
	assert_int_equal(ct_gzip_decompress(junk, sizeof(junk), &out), CT_EFORMAT);
	assert_int_equal(ct_zlib_decompress(junk, sizeof(junk), &out), CT_EFORMAT);
	assert_int_equal(ct_zlib_decompress(z.data, z.len, &out), CT_EFORMAT);
	assert_int_equal(out.len, 0);
	ct_buf_free(&z);
	ct_buf_free(&out);
	free(data);
}

static void test_multi_member(void **state)
{
	struct ct_buf z = CT_BUF_INIT(0), out = CT_BUF_INIT(100);

	(void)state;
	assert_int_equal(ct_gzip_compress("first,", 6, 6, &z), 0);
	assert_int_equal(ct_gzip_compress("second", 6, 1, &z), 0);
	assert_int_equal(ct_gzip_decompress(z.data, z.len, &out), 0);
	assert_string_equal(ct_buf_cstr(&out), "first,second");
	ct_buf_free(&z);
	ct_buf_free(&out);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static void test_files(void **state)
{
	char *dir = ct_test_mkdtemp();
	char src[4200], gz[4200], back[4200], cmd[8500];
	unsigned char *data = make_data(300000), *got = NULL;
	size_t len = 0;
	int rc;

	(void)state;
	assert_non_null(dir);
	snprintf(src, sizeof(src), "%s/src.bin", dir);
	snprintf(gz, sizeof(gz), "%s/src.bin.gz", dir);
	snprintf(back, sizeof(back), "%s/back.bin", dir);
	assert_int_equal(ct_file_write_atomic(src, data, 300000, 0644), 0);
	assert_int_equal(ct_gzip_file(src, gz, 6), 0);
#ifndef CT_TEST_WINDOWS	/* no sh there */
	/* Readable by the real gzip tool. */
	snprintf(cmd, sizeof(cmd), "gzip -t '%s' 2>/dev/null || ! command -v gzip >/dev/null", gz);
	assert_int_equal(system(cmd), 0);
#endif
	assert_int_equal(ct_gunzip_file(gz, back, 300000), 0);
	assert_int_equal(ct_file_read_all(back, 0, &got, &len), 0);
	assert_int_equal(len, 300000);
	assert_memory_equal(got, data, len);
	free(got);

	/* Over the cap: dst keeps its old content, no temp file left. */
	assert_int_equal(ct_file_write_atomic(back, "old", 3, 0644), 0);
	rc = ct_gunzip_file(gz, back, 299999);
	assert_int_equal(rc, CT_ETOOBIG);
	assert_non_null(strstr(ct_errmsg(rc), gz));
	assert_int_equal(ct_file_read_all(back, 0, &got, &len), 0);
	assert_int_equal(len, 3);
	free(got);
	assert_int_equal(ct_gunzip_file(gz, back, 0), CT_EINVAL);
	/* Not gzip at all; missing source. */
	assert_int_equal(ct_gunzip_file(src, back, 1 << 20), CT_EFORMAT);
	assert_int_equal(ct_gzip_file("/nonexistent/x", back, 6), CT_ENOENT);
	assert_int_equal(count_entries(dir), 3);	/* no temp file left */
	(void)cmd;

	free(data);
	ct_test_rmtree(dir);
	free(dir);
}

CT_TEST_MAIN(test_roundtrip, test_appends_and_level, test_zip_bomb, test_cap_exact,
	test_bad_streams, test_multi_member, test_files)
