/*
 * ct_sign.c - see ct_sign.h.
 */
#include "ct_sign.h"
#include "ct_err.h"
#include "ct_os.h"
#include "ct_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#define KEY_FILE_MAX 16384

struct ct_sign_key {
	EVP_PKEY *pk;
	unsigned char pub[CT_SIGN_PUB_LEN];
};

/* Wrap pk (taken) with its public half. */
static int wrap(EVP_PKEY *pk, struct ct_sign_key **out)
{
	struct ct_sign_key *k = calloc(1, sizeof(*k));
	size_t n = CT_SIGN_PUB_LEN;

	*out = NULL;
	if (k == NULL) {
		EVP_PKEY_free(pk);
		return CT_ENOMEM;
	}
	k->pk = pk;
	if (EVP_PKEY_get_raw_public_key(pk, k->pub, &n) != 1 || n != CT_SIGN_PUB_LEN) {
		ct_sign_key_free(k);
		return ct_error(CT_ECRYPTO, "Ed25519: no public key");
	}
	*out = k;
	return 0;
}

int ct_sign_key_generate(struct ct_sign_key **out)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	EVP_PKEY *pk = NULL;
	int ok;

	*out = NULL;
	ok = c != NULL && EVP_PKEY_keygen_init(c) == 1 && EVP_PKEY_keygen(c, &pk) == 1;
	EVP_PKEY_CTX_free(c);
	if (!ok)
		return ct_error(CT_ECRYPTO, "Ed25519 key generation failed");
	return wrap(pk, out);
}

int ct_sign_key_save(const struct ct_sign_key *k, const char *path)
{
	BIO *b = BIO_new(BIO_s_mem());
	char tmp[4096] = "";
	char *pem = NULL;
	long n = 0;
	int rc = 0;

	if (b == NULL || PEM_write_bio_PrivateKey(b, k->pk, NULL, NULL, 0, NULL, NULL) != 1)
		rc = ct_error(CT_ECRYPTO, "Ed25519: cannot encode the key");
	if (rc == 0)
		n = BIO_get_mem_data(b, &pem);
	if (rc == 0 && snprintf(tmp, sizeof(tmp), "%s.new%ld", path, (long)getpid()) >=
			       (int)sizeof(tmp))
		rc = ct_error(CT_ETOOBIG, "%s: path too long", path);
	/* written under another name, then renamed to a name that must not
	 * exist: never replaces a key another process saved first */
	if (rc == 0)
		rc = ct_file_write_atomic(tmp, pem, (size_t)n, 0600);
	if (rc == 0 && ct_os_rename_new(tmp, path) != 0)
		rc = errno == EEXIST ? CT_EEXISTS : ct_error_errno("%s", path);
	if (tmp[0] != '\0')
		unlink(tmp);	/* left only when the rename failed */
	BIO_free(b);
	return rc;
}

int ct_sign_key_load(const char *path, struct ct_sign_key **out)
{
	unsigned char *data = NULL;
	size_t len = 0;
	EVP_PKEY *pk = NULL;
	BIO *b;
	int rc;

	*out = NULL;
	rc = ct_file_read_all(path, KEY_FILE_MAX, &data, &len);
	if (rc < 0)
		return rc;
	b = BIO_new_mem_buf(data, (int)len);
	if (b != NULL)
		pk = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
	BIO_free(b);
	OPENSSL_cleanse(data, len);
	free(data);
	if (pk == NULL || EVP_PKEY_id(pk) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(pk);
		return ct_error(CT_EFORMAT, "%s: not an Ed25519 private key", path);
	}
	return wrap(pk, out);
}

void ct_sign_key_public(const struct ct_sign_key *k, unsigned char pub[CT_SIGN_PUB_LEN])
{
	memcpy(pub, k->pub, CT_SIGN_PUB_LEN);
}

int ct_sign(const struct ct_sign_key *k, const void *msg, size_t n,
	    unsigned char sig[CT_SIGN_SIG_LEN])
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	size_t sl = CT_SIGN_SIG_LEN;
	int ok;

	ok = c != NULL && EVP_DigestSignInit(c, NULL, NULL, NULL, k->pk) == 1 &&
	     EVP_DigestSign(c, sig, &sl, msg, n) == 1 && sl == CT_SIGN_SIG_LEN;
	EVP_MD_CTX_free(c);
	return ok ? 0 : ct_error(CT_ECRYPTO, "Ed25519 signing failed");
}

int ct_sign_verify(const unsigned char pub[CT_SIGN_PUB_LEN], const void *msg, size_t n,
		   const unsigned char sig[CT_SIGN_SIG_LEN])
{
	EVP_PKEY *pk = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub,
						   CT_SIGN_PUB_LEN);
	EVP_MD_CTX *c = pk ? EVP_MD_CTX_new() : NULL;
	int rc;

	if (pk == NULL)
		return ct_error(CT_EAUTH, "not an Ed25519 public key");
	if (c == NULL || EVP_DigestVerifyInit(c, NULL, NULL, NULL, pk) != 1)
		rc = ct_error(CT_ECRYPTO, "Ed25519: cannot verify");
	else
		rc = EVP_DigestVerify(c, sig, CT_SIGN_SIG_LEN, msg, n) == 1
			     ? 0 : ct_error(CT_EAUTH, "bad Ed25519 signature");
	EVP_MD_CTX_free(c);
	EVP_PKEY_free(pk);
	return rc;
}

void ct_sign_key_free(struct ct_sign_key *k)
{
	if (k == NULL)
		return;
	EVP_PKEY_free(k->pk);
	free(k);
}
