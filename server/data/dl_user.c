/*
 * dl_user.c - what the web side reads and writes of a user's own rows:
 * sign-in sessions (web_session), the account found by its key, the
 * computing preferences saved on the web (user_prefs) and the public
 * profile (see dl_web.h).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "db.h"
#include "dl.h"
#include "dl_web.h"

/* ---- computing preferences ------------------------------------------------ */

struct prefs_row {
	char text[2049];
	int64_t mod_time;
};

static const struct ct_dl_col prefs_cols[] = {
	CT_DL_COL(struct prefs_row, text), CT_DL_COL(struct prefs_row, mod_time),
};

int ct_web_get_prefs(struct ct_db *db, int64_t userid, char *text, size_t cap,
		     int64_t *mod_time)
{
	struct prefs_row r = { "", 0 };
	int rc = CT_DL_ONE(db, &r, prefs_cols, "SELECT prefs, mod_time FROM user_prefs "
			   "WHERE userid = ?", userid);

	if (rc == CT_ENOTFOUND)
		rc = 0;
	snprintf(text, cap, "%s", rc == 0 ? r.text : "");
	*mod_time = rc == 0 ? r.mod_time : 0;
	return rc;
}

int ct_web_put_prefs(struct ct_db *db, int64_t userid, const char *text)
{
	int64_t now = ct_db_now(db);
	int rc;

	if (strlen(text) > 2048)
		return ct_error(CT_ETOOBIG, "web: preferences of %zu bytes", strlen(text));
	rc = CT_DB_EXEC(db, "INSERT INTO user_prefs (userid, prefs, mod_time) VALUES (?, ?, ?) "
			"ON DUPLICATE KEY UPDATE prefs = VALUES(prefs), mod_time = "
			"GREATEST(VALUES(mod_time), mod_time + 1)", userid, text, now);
	return rc < 0 ? rc : 0;
}


int ct_web_set_profile(struct ct_db *db, int64_t id, const char *country, const char *text)
{
	int rc;

	if (!ct_web_text_ok(text, 0, 1024, 1))
		return ct_error(CT_EINVAL, "the profile text must be at most 1024 bytes of text");
	rc = CT_DB_EXEC(db, "UPDATE `user` SET country = ?, profile = ? WHERE id = ?",
			country, text, id);
	return rc < 0 ? rc : 0;
}

/* ---- sessions -------------------------------------------------------------- */

#define SU struct ct_web_session_user
static const struct ct_dl_col session_cols[] = {
	CT_DL_COL(SU, userid), CT_DL_COL(SU, name), CT_DL_COL(SU, teamid),
};
#undef SU

int ct_web_session_get(struct ct_db *db, const char *token_hash, int64_t now,
		       struct ct_web_session_user *u)
{
	return CT_DL_ONE(db, u, session_cols, "SELECT u.id, u.name, u.teamid FROM "
		"web_session s JOIN `user` u ON u.id = s.userid "
		"WHERE s.token_hash = ? AND s.expire_time > ?", token_hash, now);
}

int ct_web_session_add(struct ct_db *db, const char *token_hash, int64_t userid,
		       int64_t now, int64_t expire_time)
{
	/* expired sessions of this user go when a new one starts */
	int rc = CT_DB_EXEC(db, "DELETE FROM web_session WHERE userid = ? AND "
			    "expire_time <= ?", userid, now);

	if (rc >= 0)
		rc = CT_DB_EXEC(db, "INSERT INTO web_session (token_hash, "
			"userid, create_time, expire_time) VALUES (?, ?, ?, ?)",
			token_hash, userid, now, expire_time);
	return rc < 0 ? rc : 0;
}

int ct_web_session_delete(struct ct_db *db, const char *token_hash)
{
	int rc = CT_DB_EXEC(db, "DELETE FROM web_session WHERE token_hash = ?", token_hash);

	return rc < 0 ? rc : 0;
}

int ct_web_session_purge(struct ct_db *db, int64_t now)
{
	int rc = CT_DB_EXEC(db, "DELETE FROM web_session WHERE expire_time <= ?", now);

	return rc < 0 ? rc : 0;
}

int ct_web_session_end_user(struct ct_db *db, int64_t userid)
{
	int rc = CT_DB_EXEC(db, "DELETE FROM web_session WHERE userid = ?", userid);

	return rc < 0 ? rc : 0;
}

int ct_web_user_by_auth_hash(struct ct_db *db, const char *key_hash, int64_t *userid)
{
	return CT_DB_QUERY_INT(db, userid, "SELECT id FROM `user` WHERE auth_hash = ?",
			       key_hash);
}
