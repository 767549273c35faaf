/*
 * dl_team.h - team membership as the web forms change it (the data layer,
 * dl.h): one transaction each, team.nusers kept equal to the members.
 */
#ifndef CT_DL_TEAM_H
#define CT_DL_TEAM_H

#include <stdint.h>

struct ct_db;

/* Move user `userid` into team `teamid`, or out of any team for 0.
 * Returns 0 or 1 (ct_db_txn's: nothing to change, changed) or an error. */
int ct_team_move(struct ct_db *db, int64_t userid, int64_t teamid);

/* Found team `name` (with `description`) led by `userid`, who joins it;
 * its id in *id (0 on failure). Returns >= 0, CT_EDUP when the name is
 * taken, or a db error. */
int ct_team_create(struct ct_db *db, int64_t userid, const char *name,
		   const char *description, int64_t *id);

#endif
