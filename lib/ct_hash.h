/*
 * ct_hash.h - SHA-256, HMAC-SHA256, constant-time compare, secure random
 * bytes and hex, on OpenSSL's libcrypto (EVP).
 *
 * Files are hashed by streaming them (fixed 64 KiB buffer), so a multi-GB
 * checkpoint costs no memory. Digests are raw 32-byte arrays; the *_hex
 * variants give the 64-character lowercase form used in the protocol and
 * the database.
 *
 *   unsigned char d[CT_SHA256_LEN];
 *   char hex[CT_SHA256_HEXLEN + 1];
 *   rc = ct_sha256_file(path, d); if (rc < 0) goto out;
 *   ct_hex_encode(d, sizeof(d), hex);
 */
#ifndef CT_HASH_H
#define CT_HASH_H

#include <stddef.h>

#define CT_SHA256_LEN 32
#define CT_SHA256_HEXLEN 64

/* Streaming SHA-256 state (opaque; wraps an EVP_MD_CTX). */
struct ct_sha256_ctx;

/* SHA-256 of n bytes at data into out. Cannot fail short of libcrypto being
 * broken or out of memory, in which case it logs and abort()s. */
void ct_sha256(const void *data, size_t n, unsigned char out[CT_SHA256_LEN]);

/* SHA-256 of the file at path, read in chunks. Returns 0, or CT_ENOENT /
 * CT_EPERM / CT_EIO (detail names the path). out is untouched on failure. */
int ct_sha256_file(const char *path, unsigned char out[CT_SHA256_LEN]);

/* Start a streaming hash: *ctx is allocated and owned by the caller until
 * ct_sha256_final() or ct_sha256_abort() frees it. Returns 0, CT_ENOMEM or
 * CT_ECRYPTO (*ctx set to NULL on failure). */
int ct_sha256_init(struct ct_sha256_ctx **ctx);

/* Feed n bytes. Returns 0 or CT_ECRYPTO (ctx still needs final/abort). */
int ct_sha256_update(struct ct_sha256_ctx *ctx, const void *data, size_t n);

/* Write the digest to out and free ctx (always, also on failure).
 * Returns 0 or CT_ECRYPTO. */
int ct_sha256_final(struct ct_sha256_ctx *ctx, unsigned char out[CT_SHA256_LEN]);

/* Free ctx without producing a digest. NULL is a no-op. */
void ct_sha256_abort(struct ct_sha256_ctx *ctx);

/* HMAC-SHA256(key, msg) into out. Aborts like ct_sha256() on libcrypto
 * failure. */
void ct_hmac_sha256(const void *key, size_t klen, const void *msg, size_t n,
		    unsigned char out[CT_SHA256_LEN]);

/* PBKDF2-HMAC-SHA256 (RFC 8018) of the password with salt and iters
 * iterations, writing outlen bytes to out (for stored account passwords).
 * Returns 0, CT_EINVAL (iters 0, a length over INT_MAX) or CT_ECRYPTO. */
int ct_pbkdf2_sha256(const void *pass, size_t plen, const void *salt, size_t slen,
		     unsigned iters, unsigned char *out, size_t outlen);

/* 1 if the n bytes at a and b are equal, else 0, in time that depends only
 * on n (for comparing MACs, tokens, digests). */
int ct_memeq_ct(const void *a, const void *b, size_t n);

/* Fill out with n cryptographically secure random bytes (RAND_bytes).
 * Returns 0 or CT_ECRYPTO. */
int ct_random_bytes(void *out, size_t n);

/* Lowercase hex of n bytes into out, which must hold 2n+1 chars (NUL
 * terminated). */
void ct_hex_encode(const unsigned char *in, size_t n, char *out);

/* Decode hex (upper or lower case) into exactly n bytes. hex must be a
 * NUL-terminated string of exactly 2n hex digits, else CT_EFORMAT (out may
 * be partly written). Returns 0 or CT_EFORMAT. */
int ct_hex_decode(const char *hex, unsigned char *out, size_t n);

/* SHA-256 as 64 lowercase hex chars + NUL. */
void ct_sha256_hex(const void *data, size_t n, char out[CT_SHA256_HEXLEN + 1]);

/* File SHA-256 as hex; returns like ct_sha256_file(). */
int ct_sha256_file_hex(const char *path, char out[CT_SHA256_HEXLEN + 1]);

/* 1 if s is a SHA-256 as ct_sha256_hex() writes it (exactly 64 lowercase
 * hex digits), else 0 (also for NULL). For names taken from a peer. */
int ct_sha256_hex_valid(const char *s);

#endif
