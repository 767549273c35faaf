/*
 * dl_team.c - team membership as the web forms change it: joining,
 * leaving and founding a team, each keeping team.nusers right (see
 * dl_team.h).
 */
#include <stdint.h>

#include "ct_err.h"
#include "db.h"
#include "dl_team.h"

struct team_move {
	int64_t userid, to;	/* to = 0: leave */
};

/* Move a user to team `to` (or out of any): the user's row, then the
 * team's, locked in that order. 1 (commit) or an error. */
static int team_move_txn(struct ct_db *db, void *arg)
{
	struct team_move *m = arg;
	int64_t from = 0, exists = 0;
	int rc;

	rc = CT_DB_QUERY_INT(db, &from, "SELECT teamid FROM `user` WHERE id = ? "
			     "FOR UPDATE", m->userid);
	if (rc < 0)
		return rc;
	if (from == m->to)
		return 0;
	if (m->to > 0) {
		rc = CT_DB_QUERY_INT(db, &exists, "SELECT id FROM team WHERE id = ? "
				     "FOR UPDATE", m->to);
		if (rc < 0)
			return rc;
	}
	rc = CT_DB_EXEC(db, "UPDATE `user` SET teamid = ? WHERE id = ?",
			m->to, m->userid);
	if (rc >= 0 && from > 0)
		rc = CT_DB_EXEC(db, "UPDATE team SET nusers = GREATEST(nusers - 1, 0) "
				"WHERE id = ?", from);
	if (rc >= 0 && m->to > 0)
		rc = CT_DB_EXEC(db, "UPDATE team SET nusers = nusers + 1 WHERE id = ?",
				m->to);
	return rc < 0 ? rc : 1;
}

int ct_team_move(struct ct_db *db, int64_t userid, int64_t teamid)
{
	struct team_move m = { .userid = userid, .to = teamid };

	return ct_db_txn(db, team_move_txn, &m);
}

struct team_new {
	int64_t userid, id;
	const char *name, *description;
};

static int team_create_txn(struct ct_db *db, void *arg)
{
	struct team_new *t = arg;
	struct team_move m = { .userid = t->userid };
	int rc;

	rc = CT_DB_EXEC(db, "INSERT INTO team (create_time, name, userid, "
		"description) VALUES (?, ?, ?, ?)", ct_db_now(db), t->name,
		t->userid, t->description);
	if (rc < 0)
		return rc;
	t->id = ct_db_last_id(db);
	m.to = t->id;
	return team_move_txn(db, &m);
}

int ct_team_create(struct ct_db *db, int64_t userid, const char *name,
		   const char *description, int64_t *id)
{
	struct team_new t = { .userid = userid, .name = name, .description = description };
	int rc = ct_db_txn(db, team_create_txn, &t);

	*id = rc < 0 ? 0 : t.id;
	return rc;
}
