/*
 * Unit tests for lib/ct_hash: SHA-256 against the NIST FIPS 180-2 example
 * vectors (one-shot, streaming, file), HMAC-SHA256 against RFC 4231, the
 * PBKDF2 against RFC 7914, the constant-time compare, random bytes, and hex encode/decode including the
 * malformed inputs a peer could send.
 */
#include "ct_test.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"

static const char *const ABC_HEX =
	"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
static const char *const MILLION_A_HEX =
	"cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

static void assert_digest_hex(const unsigned char d[CT_SHA256_LEN], const char *hex)
{
	char got[CT_SHA256_HEXLEN + 1];

	ct_hex_encode(d, CT_SHA256_LEN, got);
	assert_string_equal(got, hex);
}

static void test_sha256_vectors(void **state)
{
	const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char hex[CT_SHA256_HEXLEN + 1];
	unsigned char d[CT_SHA256_LEN];
	char *million = malloc(1000000);

	(void)state;
	ct_sha256_hex("", 0, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	ct_sha256_hex("abc", 3, hex);
	assert_string_equal(hex, ABC_HEX);
	ct_sha256(two_blocks, strlen(two_blocks), d);
	assert_digest_hex(d, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	assert_non_null(million);
	memset(million, 'a', 1000000);
	ct_sha256(million, 1000000, d);
	assert_digest_hex(d, MILLION_A_HEX);
	free(million);
}

static void test_sha256_streaming(void **state)
{
	struct ct_sha256_ctx *ctx = NULL;
	unsigned char d[CT_SHA256_LEN];
	char chunk[7919];
	size_t left = 1000000;

	(void)state;
	memset(chunk, 'a', sizeof(chunk));
	assert_int_equal(ct_sha256_init(&ctx), 0);
	assert_non_null(ctx);
	/* Uneven chunks, crossing 64-byte block boundaries. */
	while (left > 0) {
		size_t n = left < sizeof(chunk) ? left : sizeof(chunk);

		assert_int_equal(ct_sha256_update(ctx, chunk, n), 0);
		left -= n;
	}
	assert_int_equal(ct_sha256_final(ctx, d), 0);
	assert_digest_hex(d, MILLION_A_HEX);

	/* Abort frees without a digest; NULL is fine. */
	assert_int_equal(ct_sha256_init(&ctx), 0);
	assert_int_equal(ct_sha256_update(ctx, "abc", 3), 0);
	ct_sha256_abort(ctx);
	ct_sha256_abort(NULL);
}

static void test_sha256_file(void **state)
{
	char *dir = ct_test_mkdtemp();
	char path[4200], hex[CT_SHA256_HEXLEN + 1];
	unsigned char d[CT_SHA256_LEN];
	unsigned char *million = malloc(1000000);
	int rc;

	(void)state;
	assert_non_null(dir);
	assert_non_null(million);
	/* Bigger than the 64 KiB read chunk, not a multiple of it. */
	memset(million, 'a', 1000000);
	snprintf(path, sizeof(path), "%s/big", dir);
	assert_int_equal(ct_file_write_atomic(path, million, 1000000, 0644), 0);
	assert_int_equal(ct_sha256_file(path, d), 0);
	assert_digest_hex(d, MILLION_A_HEX);

	snprintf(path, sizeof(path), "%s/abc", dir);
	assert_int_equal(ct_file_write_atomic(path, "abc", 3, 0644), 0);
	assert_int_equal(ct_sha256_file_hex(path, hex), 0);
	assert_string_equal(hex, ABC_HEX);

	/* A missing file is an error that names the path, and out is kept. */
	snprintf(path, sizeof(path), "%s/missing", dir);
	memset(hex, 'x', sizeof(hex) - 1);
	hex[CT_SHA256_HEXLEN] = '\0';
	rc = ct_sha256_file_hex(path, hex);
	assert_int_equal(rc, CT_ENOENT);
	assert_non_null(strstr(ct_errmsg(rc), "missing"));
	assert_int_equal(hex[0], 'x');
	/* A directory cannot be hashed. */
	assert_true(ct_sha256_file(dir, d) < 0);

	free(million);
	ct_test_rmtree(dir);
	free(dir);
}

static void test_hmac_rfc4231(void **state)
{
	unsigned char key[131], msg[50], d[CT_SHA256_LEN];
	const char *big = "Test Using Larger Than Block-Size Key - Hash Key First";

	(void)state;
	memset(key, 0x0b, 20);
	ct_hmac_sha256(key, 20, "Hi There", 8, d);
	assert_digest_hex(d, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	ct_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, d);
	assert_digest_hex(d, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	memset(key, 0xaa, 20);
	memset(msg, 0xdd, 50);
	ct_hmac_sha256(key, 20, msg, 50, d);
	assert_digest_hex(d, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
	memset(key, 0xaa, 131);
	ct_hmac_sha256(key, 131, big, strlen(big), d);
	assert_digest_hex(d, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

/* RFC 7914 section 11 (PBKDF2-HMAC-SHA256), first 32 of 64 bytes checked
 * through the 64-byte call. */
static void test_pbkdf2(void **state)
{
	unsigned char dk[64];
	char hex[129];

	(void)state;
	assert_int_equal(ct_pbkdf2_sha256("passwd", 6, "salt", 4, 1, dk, 64), 0);
	ct_hex_encode(dk, 64, hex);
	assert_string_equal(hex,
			    "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
			    "49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783");
	assert_int_equal(ct_pbkdf2_sha256("Password", 8, "NaCl", 4, 80000, dk, 64), 0);
	ct_hex_encode(dk, 64, hex);
	assert_string_equal(hex,
			    "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56"
			    "a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d");
	assert_int_equal(ct_pbkdf2_sha256("p", 1, "s", 1, 0, dk, 32), CT_EINVAL);
}

static void test_memeq_ct(void **state)
{
	unsigned char a[64], b[64];

	(void)state;
	memset(a, 0x5a, sizeof(a));
	memcpy(b, a, sizeof(b));
	assert_int_equal(ct_memeq_ct(a, b, sizeof(a)), 1);
	b[63] ^= 0x80;
	assert_int_equal(ct_memeq_ct(a, b, sizeof(a)), 0);
	b[63] = a[63];
	b[0] ^= 1;
	assert_int_equal(ct_memeq_ct(a, b, sizeof(a)), 0);
	assert_int_equal(ct_memeq_ct(a, b, 0), 1);
}

static void test_random(void **state)
{
	unsigned char a[32], b[32], zero[32] = { 0 };

	(void)state;
	assert_int_equal(ct_random_bytes(a, sizeof(a)), 0);
	assert_int_equal(ct_random_bytes(b, sizeof(b)), 0);
	/* 2^-256 chance of a false failure. */
	assert_memory_not_equal(a, b, sizeof(a));
	assert_memory_not_equal(a, zero, sizeof(a));
	assert_int_equal(ct_random_bytes(a, 0), 0);
}

static void test_hex(void **state)
{
	const unsigned char raw[5] = { 0x00, 0x01, 0xab, 0xcd, 0xff };
	unsigned char back[5];
	char hex[11];

	(void)state;
	ct_hex_encode(raw, sizeof(raw), hex);
	assert_string_equal(hex, "0001abcdff");
	assert_int_equal(ct_hex_decode(hex, back, sizeof(back)), 0);
	assert_memory_equal(back, raw, sizeof(raw));
	assert_int_equal(ct_hex_decode("0001ABCDFF", back, sizeof(back)), 0);
	assert_memory_equal(back, raw, sizeof(raw));
	ct_hex_encode(raw, 0, hex);
	assert_string_equal(hex, "");
}

static void test_hex_bad(void **state)
{
	unsigned char out[4];

	(void)state;
	assert_int_equal(ct_hex_decode("0011223", out, 4), CT_EFORMAT);   /* short, odd */
	assert_int_equal(ct_hex_decode("001122", out, 4), CT_EFORMAT);    /* short */
	assert_int_equal(ct_hex_decode("0011223344", out, 4), CT_EFORMAT); /* long */
	assert_int_equal(ct_hex_decode("001122334", out, 4), CT_EFORMAT);  /* odd long */
	assert_int_equal(ct_hex_decode("00112g33", out, 4), CT_EFORMAT);   /* not hex */
	assert_int_equal(ct_hex_decode("0011 233", out, 4), CT_EFORMAT);
	assert_int_equal(ct_hex_decode("", out, 4), CT_EFORMAT);
	assert_int_equal(ct_hex_decode("", out, 0), 0);
	assert_int_equal(ct_hex_decode("00", out, 0), CT_EFORMAT);
}

/* The check for SHA-256 names taken from peers (store paths, URLs). */
static void test_sha256_hex_valid(void **state)
{
	char hex[CT_SHA256_HEXLEN + 2];

	(void)state;
	ct_sha256_hex("abc", 3, hex);
	assert_true(ct_sha256_hex_valid(hex));
	hex[5] = 'A';			/* upper case is not what we write */
	assert_false(ct_sha256_hex_valid(hex));
	hex[5] = 'g';
	assert_false(ct_sha256_hex_valid(hex));
	ct_sha256_hex("abc", 3, hex);
	hex[CT_SHA256_HEXLEN - 1] = '\0';	/* 63 digits */
	assert_false(ct_sha256_hex_valid(hex));
	ct_sha256_hex("abc", 3, hex);
	hex[CT_SHA256_HEXLEN] = 'a';		/* 65 digits */
	hex[CT_SHA256_HEXLEN + 1] = '\0';
	assert_false(ct_sha256_hex_valid(hex));
	assert_false(ct_sha256_hex_valid("../../etc/passwd"));
	assert_false(ct_sha256_hex_valid(""));
	assert_false(ct_sha256_hex_valid(NULL));
}

CT_TEST_MAIN(test_sha256_vectors, test_sha256_streaming, test_sha256_file,
	test_hmac_rfc4231, test_pbkdf2, test_memeq_ct, test_random, test_hex,
	test_hex_bad, test_sha256_hex_valid)
