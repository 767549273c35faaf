/*
 * account.h - accounts: creation and lookup with PBKDF2-hashed passwords,
 * account keys (128-bit, stored as SHA-256, and wrapped under the password
 * so a lookup returns the same key), and the POST /rpc/account route.
 */
#ifndef CT_ACCOUNT_H
#define CT_ACCOUNT_H

#include <stdint.h>

#include "http.h"

struct ct_db;

#define CT_ACCOUNT_KEY_HEXLEN 32
#define CT_PBKDF2_ITERATIONS 200000

extern const struct ct_http_route ct_account_routes[];

/* Create an account. name 1-64 bytes, email 3-254 with an '@' (stored
 * lowercase), password 8-256 bytes. key_out gets the account key (32 hex +
 * NUL), *userid the id (may be NULL). Returns 0, CT_EINVAL (detail says
 * which field), CT_EEXISTS (email taken), CT_EDB. */
int ct_account_create(struct ct_db *db, const char *name, const char *email,
		      const char *password, char key_out[CT_ACCOUNT_KEY_HEXLEN + 1],
		      int64_t *userid);

/* Look up the key of an account by email + password. Returns 0 (key_out,
 * *userid and name_out (65 bytes) set), CT_EAUTH (no such email or wrong
 * password; same cost either way) or CT_EDB. */
int ct_account_lookup(struct ct_db *db, const char *email, const char *password,
		      char key_out[CT_ACCOUNT_KEY_HEXLEN + 1], int64_t *userid,
		      char name_out[65]);

/* The SHA-256 hex of an account key as stored in user.auth_hash. The key
 * must be 32 hex digits (CT_EAUTH otherwise). */
int ct_account_key_hash(const char *key, char out[65]);

#endif
