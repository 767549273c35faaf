/*
 * dl_account.c - the accounts' rows (see dl_account.h): the statements with
 * their column tables beside them.
 */
#include "dl_account.h"

#include <string.h>

#include "db.h"
#include "db_args.h"
#include "dl.h"

int ct_user_name_taken(struct ct_db *db, const char *name, int64_t except)
{
	int64_t n = 0;
	int rc = CT_DB_QUERY_INT(db, &n, "SELECT COUNT(*) FROM `user` WHERE name = ? AND id <> ?",
				 name, except);

	return rc < 0 ? rc : n > 0;
}

int ct_user_insert(struct ct_db *db, int64_t now, const char *name, const char *email,
		   const char *passwd_hash, const char *auth_hash, const char *auth_wrapped,
		   int64_t *id)
{
	int rc = CT_DB_EXEC(db, "INSERT INTO `user` (create_time, name, email, passwd_hash, "
			    "auth_hash, auth_wrapped) VALUES (?, ?, ?, ?, ?, ?)", now, name, email,
			    passwd_hash, auth_hash, auth_wrapped);

	if (rc < 0)
		return rc;
	*id = ct_db_last_id(db);
	return 0;
}

#define U struct ct_user_login
static const struct ct_dl_col login_cols[] = {
	CT_DL_COL(U, id), CT_DL_COL(U, name), CT_DL_COL(U, passwd_hash),
	CT_DL_COL(U, auth_wrapped),
};
#undef U

int ct_user_login_by_email(struct ct_db *db, const char *email, struct ct_user_login *u)
{
	memset(u, 0, sizeof(*u));
	return CT_DL_ONE(db, u, login_cols, "SELECT id, name, passwd_hash, auth_wrapped FROM "
			 "`user` WHERE email=?", email);
}

int ct_user_login_by_id(struct ct_db *db, int64_t id, struct ct_user_login *u)
{
	memset(u, 0, sizeof(*u));
	return CT_DL_ONE(db, u, login_cols, "SELECT id, name, passwd_hash, auth_wrapped FROM "
			 "`user` WHERE id=?", id);
}

int ct_user_set_password(struct ct_db *db, int64_t id, const char *passwd_hash,
			 const char *auth_wrapped, const char *auth_hash)
{
	int rc;

	if (auth_hash)
		rc = CT_DB_EXEC(db, "UPDATE `user` SET passwd_hash=?, auth_wrapped=?, auth_hash=? "
				"WHERE id=?", passwd_hash, auth_wrapped, auth_hash, id);
	else
		rc = CT_DB_EXEC(db, "UPDATE `user` SET passwd_hash=?, auth_wrapped=? WHERE id=?",
				passwd_hash, auth_wrapped, id);
	return rc < 0 ? rc : 0;
}

int ct_user_set_name(struct ct_db *db, int64_t id, const char *name)
{
	int rc = CT_DB_EXEC(db, "UPDATE `user` SET name=? WHERE id=?", name, id);

	return rc < 0 ? rc : 0;
}

int ct_user_set_email(struct ct_db *db, int64_t id, const char *email)
{
	int rc = CT_DB_EXEC(db, "UPDATE `user` SET email=? WHERE id=?", email, id);

	return rc < 0 ? rc : 0;
}

int ct_user_id_by_email(struct ct_db *db, const char *email, int64_t *id)
{
	return CT_DB_QUERY_INT(db, id, "SELECT id FROM `user` WHERE email=?", email);
}

int ct_user_reset_add(struct ct_db *db, const char *hash, int64_t userid, int64_t now,
		      int64_t expire)
{
	int rc = CT_DB_EXEC(db, "DELETE FROM password_reset WHERE expire_time <= ?", now);

	if (rc >= 0)
		rc = CT_DB_EXEC(db, "INSERT INTO password_reset (token_hash, userid, expire_time) "
				"VALUES (?, ?, ?)", hash, userid, expire);
	return rc < 0 ? rc : 0;
}

int ct_user_reset_find(struct ct_db *db, const char *hash, int64_t now, int64_t *userid)
{
	return CT_DB_QUERY_INT(db, userid, "SELECT userid FROM password_reset WHERE "
			       "token_hash=? AND expire_time > ?", hash, now);
}

int ct_user_reset_clear(struct ct_db *db, int64_t userid)
{
	int rc = CT_DB_EXEC(db, "DELETE FROM password_reset WHERE userid=?", userid);

	return rc < 0 ? rc : 0;
}
