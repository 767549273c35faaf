/*
 * ct_hash.c - SHA-256, HMAC-SHA256, random bytes and hex on libcrypto's EVP
 * interface (see ct_hash.h).
 */
#include "ct_hash.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_log.h"
#include "ct_os.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#define FILE_CHUNK (64u * 1024)

struct ct_sha256_ctx {
	EVP_MD_CTX *md;
};

/* libcrypto failing on SHA-256 of memory means it is broken or out of
 * memory; the void one-shot calls have no way to report it. */
static void crypto_fatal(const char *what)
{
	ct_log_error("libcrypto failure in %s", what);
	abort();
}

int ct_sha256_init(struct ct_sha256_ctx **ctx)
{
	struct ct_sha256_ctx *c;

	*ctx = NULL;
	c = malloc(sizeof(*c));
	if (c == NULL)
		return CT_ENOMEM;
	c->md = EVP_MD_CTX_new();
	if (c->md == NULL) {
		free(c);
		return CT_ENOMEM;
	}
	if (EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1) {
		ct_sha256_abort(c);
		return ct_error(CT_ECRYPTO, "SHA-256 init failed");
	}
	*ctx = c;
	return 0;
}

int ct_sha256_update(struct ct_sha256_ctx *ctx, const void *data, size_t n)
{
	if (n == 0)
		return 0;
	if (EVP_DigestUpdate(ctx->md, data, n) != 1)
		return ct_error(CT_ECRYPTO, "SHA-256 update failed");
	return 0;
}

int ct_sha256_final(struct ct_sha256_ctx *ctx, unsigned char out[CT_SHA256_LEN])
{
	unsigned int len = 0;
	int rc = 0;

	if (EVP_DigestFinal_ex(ctx->md, out, &len) != 1 || len != CT_SHA256_LEN)
		rc = ct_error(CT_ECRYPTO, "SHA-256 final failed");
	ct_sha256_abort(ctx);
	return rc;
}

void ct_sha256_abort(struct ct_sha256_ctx *ctx)
{
	if (ctx == NULL)
		return;
	EVP_MD_CTX_free(ctx->md);
	free(ctx);
}

void ct_sha256(const void *data, size_t n, unsigned char out[CT_SHA256_LEN])
{
	unsigned int len = 0;

	if (EVP_Digest(data, n, out, &len, EVP_sha256(), NULL) != 1 || len != CT_SHA256_LEN)
		crypto_fatal("SHA-256");
}

/* Hash the open fd to EOF into ctx. */
static int hash_fd(int fd, const char *path, struct ct_sha256_ctx *ctx, unsigned char *buf)
{
	for (;;) {
		ssize_t r = ct_file_read_some(fd, path, buf, FILE_CHUNK);
		int rc;

		if (r < 0)
			return (int)r;
		if (r == 0)
			return 0;
		rc = ct_sha256_update(ctx, buf, (size_t)r);
		if (rc < 0)
			return rc;
	}
}

int ct_sha256_file(const char *path, unsigned char out[CT_SHA256_LEN])
{
	struct ct_sha256_ctx *ctx = NULL;
	unsigned char *buf = NULL;
	unsigned char d[CT_SHA256_LEN];
	int fd, rc;

	fd = ct_os_open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ct_error_errno("%s: cannot open", path);
	buf = malloc(FILE_CHUNK);
	if (buf == NULL) {
		rc = CT_ENOMEM;
		goto out;
	}
	rc = ct_sha256_init(&ctx);
	if (rc < 0)
		goto out;
	rc = hash_fd(fd, path, ctx, buf);
	if (rc < 0)
		goto out;
	rc = ct_sha256_final(ctx, d);
	ctx = NULL;
	if (rc < 0)
		goto out;
	for (size_t i = 0; i < CT_SHA256_LEN; i++)
		out[i] = d[i];
out:
	ct_sha256_abort(ctx);
	free(buf);
	close(fd);
	return rc;
}

void ct_hmac_sha256(const void *key, size_t klen, const void *msg, size_t n,
		    unsigned char out[CT_SHA256_LEN])
{
	unsigned int len = 0;
	static const unsigned char empty = 0;

	if (klen > INT_MAX)
		crypto_fatal("HMAC-SHA256 (key too long)");
	/* HMAC() treats a NULL key as "reuse the last one"; pass a real
	 * pointer for an empty key. */
	if (key == NULL)
		key = &empty;
	if (HMAC(EVP_sha256(), key, (int)klen, msg, n, out, &len) == NULL ||
	    len != CT_SHA256_LEN)
		crypto_fatal("HMAC-SHA256");
}

int ct_pbkdf2_sha256(const void *pass, size_t plen, const void *salt, size_t slen,
		     unsigned iters, unsigned char *out, size_t outlen)
{
	static const unsigned char empty = 0;

	if (iters == 0 || iters > INT_MAX || plen > INT_MAX || slen > INT_MAX ||
	    outlen > INT_MAX)
		return ct_error(CT_EINVAL, "PBKDF2: bad iteration count or length");
	if (pass == NULL)
		pass = &empty;
	if (salt == NULL)
		salt = &empty;
	if (PKCS5_PBKDF2_HMAC(pass, (int)plen, salt, (int)slen, (int)iters, EVP_sha256(),
			      (int)outlen, out) != 1)
		return ct_error(CT_ECRYPTO, "PBKDF2-HMAC-SHA256 failed");
	return 0;
}

int ct_memeq_ct(const void *a, const void *b, size_t n)
{
	const volatile unsigned char *x = a;
	const volatile unsigned char *y = b;
	unsigned char diff = 0;

	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(x[i] ^ y[i]);
	/* (diff - 1) >> 8 is all ones only when diff == 0: no branch. */
	return (int)((((unsigned int)diff - 1u) >> 8) & 1u);
}

int ct_random_bytes(void *out, size_t n)
{
	unsigned char *p = out;

	while (n > 0) {
		int chunk = n > (size_t)INT_MAX ? INT_MAX : (int)n;

		if (RAND_bytes(p, chunk) != 1)
			return ct_error(CT_ECRYPTO, "RAND_bytes failed");
		p += chunk;
		n -= (size_t)chunk;
	}
	return 0;
}

void ct_hex_encode(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int ct_hex_decode(const char *hex, unsigned char *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int hi, lo;

		/* Checking hi before reading lo stops at the NUL of a short
		 * string. */
		hi = hex_val(hex[2 * i]);
		if (hi < 0)
			return ct_error(CT_EFORMAT, "bad hex: expected %zu hex digits", 2 * n);
		lo = hex_val(hex[2 * i + 1]);
		if (lo < 0)
			return ct_error(CT_EFORMAT, "bad hex: expected %zu hex digits", 2 * n);
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	if (hex[2 * n] != '\0')
		return ct_error(CT_EFORMAT, "bad hex: longer than %zu hex digits", 2 * n);
	return 0;
}

void ct_sha256_hex(const void *data, size_t n, char out[CT_SHA256_HEXLEN + 1])
{
	unsigned char d[CT_SHA256_LEN];

	ct_sha256(data, n, d);
	ct_hex_encode(d, sizeof(d), out);
}

int ct_sha256_file_hex(const char *path, char out[CT_SHA256_HEXLEN + 1])
{
	unsigned char d[CT_SHA256_LEN];
	int rc = ct_sha256_file(path, d);

	if (rc < 0)
		return rc;
	ct_hex_encode(d, sizeof(d), out);
	return 0;
}

int ct_sha256_hex_valid(const char *s)
{
	if (s == NULL || strlen(s) != CT_SHA256_HEXLEN)
		return 0;
	for (int i = 0; i < CT_SHA256_HEXLEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}
