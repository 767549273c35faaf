/*
 * ct_sign.h - Ed25519 signing keys on OpenSSL's libcrypto (EVP): a
 * project signs its round receipts (doc/receipts.md) and anyone checks
 * them with the 32-byte public key alone.
 *
 * A private key lives in a PEM file (PKCS#8, what `openssl genpkey
 * -algorithm ed25519` writes), mode 0600, written once and never
 * replaced. Public keys and signatures travel as raw bytes (32 and 64)
 * or their lowercase hex.
 */
#ifndef CT_SIGN_H
#define CT_SIGN_H

#include <stddef.h>

#define CT_SIGN_PUB_LEN 32
#define CT_SIGN_SIG_LEN 64

/* A private signing key (opaque; wraps an EVP_PKEY). */
struct ct_sign_key;

/* A new random key into *out (the caller frees it with ct_sign_key_free).
 * Returns 0 or CT_ECRYPTO (*out NULL). */
int ct_sign_key_generate(struct ct_sign_key **out);

/* Write k to path as PEM, mode 0600, atomically and only if path does not
 * exist: CT_EEXISTS when it does (another process made one first; load
 * that one). Returns 0, CT_EEXISTS, CT_ECRYPTO or a file error. */
int ct_sign_key_save(const struct ct_sign_key *k, const char *path);

/* Read the Ed25519 key in the PEM file at path (at most 16 KiB) into
 * *out (caller frees). Returns 0, CT_ENOENT, CT_EFORMAT (not an Ed25519
 * private key) or a file error; *out NULL on failure. */
int ct_sign_key_load(const char *path, struct ct_sign_key **out);

/* The key's public half. */
void ct_sign_key_public(const struct ct_sign_key *k, unsigned char pub[CT_SIGN_PUB_LEN]);

/* Ed25519 signature of the n bytes at msg (deterministic: the same key and
 * message give the same bytes). Returns 0 or CT_ECRYPTO. */
int ct_sign(const struct ct_sign_key *k, const void *msg, size_t n,
	    unsigned char sig[CT_SIGN_SIG_LEN]);

/* 0 when sig is pub's signature of msg, CT_EAUTH when it is not (or pub is
 * not a valid point), CT_ECRYPTO when libcrypto fails. */
int ct_sign_verify(const unsigned char pub[CT_SIGN_PUB_LEN], const void *msg, size_t n,
		   const unsigned char sig[CT_SIGN_SIG_LEN]);

/* NULL is a no-op. */
void ct_sign_key_free(struct ct_sign_key *k);

#endif
