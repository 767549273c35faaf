/*
 * token.h - upload tokens: "<expiry>.<host id>.<max bytes>.<mac>", where mac
 * is the hex HMAC-SHA256 under the project secret of
 * "ctune-upload\n<result name>\n<host id>\n<max bytes>\n<expiry>". A token
 * authorises one host to upload at most max bytes for one result until
 * expiry (doc/protocol.md).
 */
#ifndef CT_TOKEN_H
#define CT_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "ct_hash.h"

#define CT_TOKEN_MAX 128	/* longest token, with the NUL */

/* Write the token into out (cap >= CT_TOKEN_MAX). Returns 0, CT_EINVAL
 * (negative values, bad name) or CT_ETOOBIG. */
int ct_token_make(const unsigned char *key, size_t klen, const char *result_name,
		  int64_t hostid, int64_t max_bytes, int64_t expiry, char *out, size_t cap);

/* Check token for result_name at time now. On success returns 0 and sets
 * *hostid and *max_bytes from the token. CT_EAUTH: malformed, or the MAC
 * does not match (another result, altered fields, another project);
 * CT_EEXPIRED: valid but now > expiry. */
int ct_token_check(const unsigned char *key, size_t klen, const char *result_name,
		   const char *token, int64_t now, int64_t *hostid, int64_t *max_bytes);

/* The per-host upload secret (hex, CT_SHA256_HEXLEN): HMAC-SHA256 under
 * the project secret of "ctune-host-secret\n<host id>". The server derives
 * it, so it stores nothing; it sends it once, in the reply that creates the
 * host (doc/protocol.md). */
void ct_token_host_secret(const unsigned char *key, size_t klen, int64_t hostid,
			  char hex[CT_SHA256_HEXLEN + 1]);

/* Check an upload's X-Upload-MAC: the hex HMAC-SHA256, keyed by the host
 * secret's hex string, of "ctune-upload-mac\n<result name>\n<body sha256 hex>".
 * Returns 0, or CT_EAUTH (absent, malformed or wrong: not from hostid). */
int ct_token_check_mac(const unsigned char *key, size_t klen, int64_t hostid,
		       const char *result_name, const char *body_sha, const char *mac);

#endif
