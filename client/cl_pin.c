/*
 * cl_pin.c - the key pin of a self-signed project (cl_pin.h): one HEAD
 * request with verification off and curl's certificate info on, the
 * leaf certificate's PEM parsed by libcrypto, its SubjectPublicKeyInfo
 * hashed with SHA-256 and written in base64.
 */
#include "config.h"

#include "cl_pin.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "ct_err.h"

#define PIN_B64_LEN 44	/* base64 of 32 bytes */

int ct_pin_is(const char *s)
{
	size_t n = strlen(CT_PIN_PREFIX);

	if (s == NULL || strncmp(s, CT_PIN_PREFIX, n) != 0 || strlen(s + n) != PIN_B64_LEN)
		return 0;
	return strspn(s + n, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
	       == PIN_B64_LEN;
}

/* The pin of the PEM certificate pem. */
static int pin_of_pem(const char *pem, char pin[CT_PIN_MAX])
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	unsigned char *der = NULL, md[32], b64[PIN_B64_LEN + 4];
	unsigned int mdlen = 0;
	int n = x ? i2d_X509_PUBKEY(X509_get_X509_PUBKEY(x), &der) : -1;
	int rc = CT_ECRYPTO;

	if (n > 0 && EVP_Digest(der, (size_t)n, md, &mdlen, EVP_sha256(), NULL) &&
	    mdlen == sizeof(md) && EVP_EncodeBlock(b64, md, (int)mdlen) == PIN_B64_LEN) {
		snprintf(pin, CT_PIN_MAX, "%s%s", CT_PIN_PREFIX, (char *)b64);
		rc = 0;
	}
	OPENSSL_free(der);
	X509_free(x);
	BIO_free(b);
	return rc == 0 ? 0 : ct_error(rc, "the server's certificate does not parse");
}

/* The "Cert:" PEM of the first (leaf) certificate curl saw on c. */
static const char *leaf_pem(CURL *c)
{
	struct curl_certinfo *ci = NULL;

	if (curl_easy_getinfo(c, CURLINFO_CERTINFO, &ci) != CURLE_OK || ci == NULL ||
	    ci->num_of_certs < 1)
		return NULL;
	for (struct curl_slist *s = ci->certinfo[0]; s != NULL; s = s->next)
		if (strncmp(s->data, "Cert:", 5) == 0)
			return s->data + 5;
	return NULL;
}

int ct_pin_fetch(const char *url, char pin[CT_PIN_MAX])
{
	CURL *c;
	CURLcode cc;
	const char *pem;
	int rc;

	if (strncmp(url, "https://", 8) != 0)
		return ct_error(CT_EINVAL, "%s: only an https URL has a key to pin", url);
	c = curl_easy_init();
	if (c == NULL)
		return CT_ENOMEM;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 30000L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);	/* only to read the key */
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	curl_easy_setopt(c, CURLOPT_CERTINFO, 1L);
	cc = curl_easy_perform(c);
	pem = cc == CURLE_OK ? leaf_pem(c) : NULL;
	if (cc != CURLE_OK)
		rc = ct_error(CT_ENET, "%s: %s", url, curl_easy_strerror(cc));
	else if (pem == NULL)
		rc = ct_error(CT_ENET, "%s: the server showed no certificate", url);
	else
		rc = pin_of_pem(pem, pin);
	curl_easy_cleanup(c);
	return rc;
}
