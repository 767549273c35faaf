/*
 * tls_cert.c - the self-signed certificate of `ctune-server init --tls`
 * (tls_cert.h), made with OpenSSL's libcrypto: an EC P-256 key (GnuTLS,
 * which libmicrohttpd serves with, takes it as PKCS#8 PEM), a random
 * 128-bit serial, subject CN and one subjectAltName entry for the host.
 */
#include "config.h"

#include "tls_cert.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "ct_err.h"
#include "ct_file.h"

#define HOST_MAX 253
#define PEM_MAX (64 * 1024)

static int crypto_fail(const char *what)
{
	char e[256];

	ERR_error_string_n(ERR_get_error(), e, sizeof(e));
	return ct_error(CT_ECRYPTO, "%s: %s", what, e);
}

static int is_ip(const char *host)
{
	unsigned char a[16];

	return inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1;
}

/* Subject, issuer (the same: self-signed), serial, validity, SAN. */
static int fill_cert(X509 *x, EVP_PKEY *k, const char *host, int days)
{
	char san[HOST_MAX + 8];
	X509_NAME *n = X509_get_subject_name(x);
	X509_EXTENSION *ext;
	X509V3_CTX ctx;
	BIGNUM *bn = BN_new();
	int ok;

	snprintf(san, sizeof(san), "%s:%s", is_ip(host) ? "IP" : "DNS", host);
	ok = bn && BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) &&
	     BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
	BN_free(bn);
	ok = ok && X509_set_version(x, 2) &&
	     X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
	     X509_gmtime_adj(X509_getm_notAfter(x), (long)days * 86400) &&
	     X509_set_pubkey(x, k) &&
	     X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
					(const unsigned char *)host, -1, -1, 0) &&
	     X509_set_issuer_name(x, n);
	if (!ok)
		return crypto_fail("certificate");
	X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, san);
	ok = ext != NULL && X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	if (ok && X509_sign(x, k, EVP_sha256()) > 0)
		return 0;
	return crypto_fail("certificate extension or signature");
}

/* A new EC P-256 key (OpenSSL 1.1 and 3), or NULL. */
static EVP_PKEY *p256_key(void)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
	EVP_PKEY *k = NULL;

	if (c == NULL || EVP_PKEY_keygen_init(c) <= 0 ||
	    EVP_PKEY_CTX_set_ec_paramgen_curve_nid(c, NID_X9_62_prime256v1) <= 0 ||
	    EVP_PKEY_keygen(c, &k) <= 0)
		k = NULL;
	EVP_PKEY_CTX_free(c);
	return k;
}

/* Write what write_pem puts into a memory BIO to path, atomically. */
static int write_bio(BIO *b, const char *path, int mode)
{
	char *p = NULL;
	long n = BIO_get_mem_data(b, &p);

	if (n <= 0 || n > PEM_MAX)
		return ct_error(CT_ECRYPTO, "%s: no PEM output", path);
	return ct_file_write_atomic(path, p, (size_t)n, mode);
}

static int write_pems(X509 *x, EVP_PKEY *k, const char *cert_path, const char *key_path)
{
	BIO *cb = BIO_new(BIO_s_mem()), *kb = BIO_new(BIO_s_mem());
	int rc;

	if (cb == NULL || kb == NULL || !PEM_write_bio_X509(cb, x) ||
	    !PEM_write_bio_PrivateKey(kb, k, NULL, NULL, 0, NULL, NULL))
		rc = crypto_fail("PEM");
	else
		rc = write_bio(kb, key_path, 0600);
	if (rc == 0)
		rc = write_bio(cb, cert_path, 0644);
	BIO_free(cb);
	BIO_free(kb);
	return rc;
}

int ct_tls_make_self_signed(const char *cert_path, const char *key_path,
			    const char *host, int days)
{
	EVP_PKEY *k = NULL;
	X509 *x = NULL;
	int rc;

	if (host == NULL || host[0] == 0 || strlen(host) > HOST_MAX ||
	    strpbrk(host, ",/\\\"' \t\n") != NULL || days <= 0 || days > 36500)
		return ct_error(CT_EINVAL, "bad host '%s' or days %d for a certificate",
				host ? host : "", days);
	k = p256_key();
	x = X509_new();
	if (k == NULL || x == NULL)
		rc = crypto_fail("EC P-256 key");
	else
		rc = fill_cert(x, k, host, days);
	if (rc == 0)
		rc = write_pems(x, k, cert_path, key_path);
	X509_free(x);
	EVP_PKEY_free(k);
	return rc;
}

int ct_tls_url_host(const char *url, char *host, size_t cap)
{
	const char *p = strstr(url, "://"), *end;

	p = p ? p + 3 : url;
	if (*p == '[') {
		end = strchr(++p, ']');
	} else {
		end = p + strcspn(p, ":/?#");
	}
	if (end == NULL || end == p || (size_t)(end - p) >= cap)
		return ct_error(CT_EINVAL, "no host in URL '%s'", url);
	snprintf(host, cap, "%.*s", (int)(end - p), p);
	return 0;
}
