/*
 * dl_account.h - the `user` rows an account's sign-up, sign-in and changes
 * read and write, and `password_reset` (the data layer, dl.h). The
 * password hashing and the account key are server/rpc/account.c's.
 */
#ifndef CT_DL_ACCOUNT_H
#define CT_DL_ACCOUNT_H

#include <stdint.h>

struct ct_db;

/* What a sign-in checks. */
struct ct_user_login {
	int64_t id;
	char name[65], passwd_hash[256], auth_wrapped[65];
};

/* 1 if another account than `except` has the name (the column compares
 * without case: "Bob" takes "bob"), 0 if not, or a db error. */
int ct_user_name_taken(struct ct_db *db, const char *name, int64_t except);

/* A new account created at now, its id into *id. Returns 0, CT_EDUP (the
 * email address is taken) or a db error. */
int ct_user_insert(struct ct_db *db, int64_t now, const char *name, const char *email,
		   const char *passwd_hash, const char *auth_hash, const char *auth_wrapped,
		   int64_t *id);

/* The sign-in row of the account with email address `email` (lowercase)
 * or id `id`. Return 0, CT_ENOTFOUND or a db error. */
int ct_user_login_by_email(struct ct_db *db, const char *email, struct ct_user_login *u);
int ct_user_login_by_id(struct ct_db *db, int64_t id, struct ct_user_login *u);

/* The account's password hash and wrapped key; its key's hash too when
 * auth_hash is not NULL. Returns 0 or a db error. */
int ct_user_set_password(struct ct_db *db, int64_t id, const char *passwd_hash,
			 const char *auth_wrapped, const char *auth_hash);
/* Returns 0, CT_EDUP (set_email: the address is taken) or a db error. */
int ct_user_set_name(struct ct_db *db, int64_t id, const char *name);
int ct_user_set_email(struct ct_db *db, int64_t id, const char *email);

/* The id of the account with email address `email` into *id. Returns 0,
 * CT_ENOTFOUND or a db error. */
int ct_user_id_by_email(struct ct_db *db, const char *email, int64_t *id);

/* A password reset for account userid by token hash `hash`, valid until
 * expire (the expired ones of every account removed first). Returns 0 or
 * a db error. */
int ct_user_reset_add(struct ct_db *db, const char *hash, int64_t userid, int64_t now,
		      int64_t expire);
/* The account of the reset with token hash `hash` valid at now into
 * *userid. Returns 0, CT_ENOTFOUND or a db error. */
int ct_user_reset_find(struct ct_db *db, const char *hash, int64_t now, int64_t *userid);
/* Every reset of account userid removed. Returns 0 or a db error. */
int ct_user_reset_clear(struct ct_db *db, int64_t userid);

#endif
