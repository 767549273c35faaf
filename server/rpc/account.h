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

/* Create an account. name 1-64 bytes, unique (ct_account_name_taken),
 * email 3-254 with an '@' (stored lowercase), password 8-256 bytes.
 * key_out gets the account key (32 hex + NUL), *userid the id (may be
 * NULL). Returns 0, CT_EINVAL (detail says which field), CT_EEXISTS (name
 * or email taken), CT_EDB. */
int ct_account_create(struct ct_db *db, const char *name, const char *email,
		      const char *password, char key_out[CT_ACCOUNT_KEY_HEXLEN + 1],
		      int64_t *userid);

/* Look up the key of an account by email + password. Returns 0 (key_out,
 * *userid and name_out (65 bytes) set; key_out "" when the key cannot be
 * recovered since a password reset), CT_EAUTH (no such email or wrong
 * password; same cost either way) or CT_EDB. */
int ct_account_lookup(struct ct_db *db, const char *email, const char *password,
		      char key_out[CT_ACCOUNT_KEY_HEXLEN + 1], int64_t *userid,
		      char name_out[65]);

/* 1 if another account than `except` (0: none) has the display name
 * `name` (compared without case, as the column's collation does), 0 if
 * not, or a db error. Names are unique: create and rename refuse a taken
 * one with CT_EEXISTS. */
int ct_account_name_taken(struct ct_db *db, const char *name, int64_t except);

/* Changes to account `userid`. Each returns 0, CT_EINVAL (the detail says
 * which field), CT_EAUTH (wrong password), CT_EEXISTS (name or email
 * taken) or a db error; nothing changes on failure.
 *  - set_name: a new display name (1-64 bytes of UTF-8, unique);
 *  - set_email: a new email address, the password asked;
 *  - set_password: the old password asked; the account key stays wrapped
 *    under the new one, so a lookup still returns it;
 *  - new_key: a new account key (32 hex + NUL into key_out), the password
 *    asked; computers attached with the old one must attach again. */
int ct_account_set_name(struct ct_db *db, int64_t userid, const char *name);
/* 0 if `password` is account `userid`'s, CT_EAUTH if not (same cost). */
int ct_account_check_password(struct ct_db *db, int64_t userid, const char *password);
int ct_account_set_email(struct ct_db *db, int64_t userid, const char *password,
			 const char *email);
int ct_account_set_password(struct ct_db *db, int64_t userid, const char *old_password,
			    const char *new_password);
int ct_account_new_key(struct ct_db *db, int64_t userid, const char *password,
		       char key_out[CT_ACCOUNT_KEY_HEXLEN + 1]);

/* Password recovery. reset_start makes a one-time token (64 hex + NUL
 * into token_out) for the account of `email`, valid `ttl` seconds (the
 * table keeps its SHA-256 only); CT_ENOTFOUND for no such account.
 * reset_finish sets `new_password` for the token's account (*userid) and
 * voids every token of it; the account key, wrapped under the old
 * password, can no longer be looked up (computers keep it; new_key makes
 * another). CT_EAUTH for an unknown or expired token. */
int ct_account_reset_start(struct ct_db *db, const char *email, int ttl,
			   char token_out[65], int64_t *userid);
int ct_account_reset_finish(struct ct_db *db, const char *token, const char *new_password,
			    int64_t *userid);

/* The SHA-256 hex of an account key as stored in user.auth_hash. The key
 * must be 32 hex digits (CT_EAUTH otherwise). */
int ct_account_key_hash(const char *key, char out[65]);

#endif
