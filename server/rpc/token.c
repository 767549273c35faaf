/*
 * token.c - upload tokens (see token.h).
 */
#include "token.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_hash.h"
#include "data/server.h"

static void token_mac(const unsigned char *key, size_t klen, const char *name, int64_t hostid,
		      int64_t max_bytes, int64_t expiry, char hex[CT_SHA256_HEXLEN + 1])
{
	unsigned char mac[CT_SHA256_LEN];
	char msg[256];
	int n;

	n = snprintf(msg, sizeof(msg), "ctune-upload\n%s\n%" PRId64 "\n%" PRId64 "\n%" PRId64,
		     name, hostid, max_bytes, expiry);
	ct_hmac_sha256(key, klen, msg, (size_t)n, mac);
	ct_hex_encode(mac, sizeof(mac), hex);
}

int ct_token_make(const unsigned char *key, size_t klen, const char *result_name,
		  int64_t hostid, int64_t max_bytes, int64_t expiry, char *out, size_t cap)
{
	char hex[CT_SHA256_HEXLEN + 1];
	int n;

	if (!ct_result_name_valid(result_name) || hostid < 0 || max_bytes < 0 || expiry < 0)
		return ct_error(CT_EINVAL, "bad token fields");
	token_mac(key, klen, result_name, hostid, max_bytes, expiry, hex);
	n = snprintf(out, cap, "%" PRId64 ".%" PRId64 ".%" PRId64 ".%s", expiry, hostid,
		     max_bytes, hex);
	return n < 0 || (size_t)n >= cap ? CT_ETOOBIG : 0;
}

/* Parse a decimal int64 >= 0 ending at '.'; advances *p past the dot. */
static int take_num(const char **p, int64_t *out)
{
	const char *s = *p;
	int64_t v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (INT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (*s != '.')
		return -1;
	*p = s + 1;
	*out = v;
	return 0;
}

int ct_token_check(const unsigned char *key, size_t klen, const char *result_name,
		   const char *token, int64_t now, int64_t *hostid, int64_t *max_bytes)
{
	char want[CT_SHA256_HEXLEN + 1];
	const char *p = token;
	int64_t exp, host, max;

	if (token == NULL || strlen(token) >= CT_TOKEN_MAX || !ct_result_name_valid(result_name))
		return ct_error(CT_EAUTH, "malformed upload token");
	if (take_num(&p, &exp) < 0 || take_num(&p, &host) < 0 || take_num(&p, &max) < 0 ||
	    strlen(p) != CT_SHA256_HEXLEN)
		return ct_error(CT_EAUTH, "malformed upload token");
	token_mac(key, klen, result_name, host, max, exp, want);
	if (!ct_memeq_ct(want, p, CT_SHA256_HEXLEN))
		return ct_error(CT_EAUTH, "upload token not valid for this result");
	if (now > exp)
		return ct_error(CT_EEXPIRED, "upload token expired");
	*hostid = host;
	*max_bytes = max;
	return 0;
}

void ct_token_host_secret(const unsigned char *key, size_t klen, int64_t hostid,
			  char hex[CT_SHA256_HEXLEN + 1])
{
	unsigned char mac[CT_SHA256_LEN];
	char msg[64];
	int n;

	n = snprintf(msg, sizeof(msg), "ctune-host-secret\n%" PRId64, hostid);
	ct_hmac_sha256(key, klen, msg, (size_t)n, mac);
	ct_hex_encode(mac, sizeof(mac), hex);
}

int ct_token_check_mac(const unsigned char *key, size_t klen, int64_t hostid,
		       const char *result_name, const char *body_sha, const char *mac)
{
	char hsec[CT_SHA256_HEXLEN + 1], want[CT_SHA256_HEXLEN + 1];
	unsigned char d[CT_SHA256_LEN];
	char msg[256];
	int n;

	if (mac == NULL)
		return ct_error(CT_EAUTH, "no X-Upload-MAC header");
	if (strlen(mac) != CT_SHA256_HEXLEN || !ct_result_name_valid(result_name))
		return ct_error(CT_EAUTH, "malformed X-Upload-MAC");
	ct_token_host_secret(key, klen, hostid, hsec);
	n = snprintf(msg, sizeof(msg), "ctune-upload-mac\n%s\n%s", result_name, body_sha);
	if (n < 0 || (size_t)n >= sizeof(msg))
		return ct_error(CT_EAUTH, "malformed upload");
	ct_hmac_sha256(hsec, CT_SHA256_HEXLEN, msg, (size_t)n, d);
	ct_hex_encode(d, sizeof(d), want);
	if (!ct_memeq_ct(want, mac, CT_SHA256_HEXLEN))
		return ct_error(CT_EAUTH, "upload MAC does not match: not from the host "
				"the token was issued to");
	return 0;
}
