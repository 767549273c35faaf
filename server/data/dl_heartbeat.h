/*
 * dl_heartbeat.h - table role_heartbeat: one row per (role, instance), the
 * beat each daemon thread writes after its passes (daemons/instance.h),
 * read to split the work between live instances and by the status page.
 */
#ifndef CT_DL_HEARTBEAT_H
#define CT_DL_HEARTBEAT_H

#include <stddef.h>
#include <stdint.h>

struct ct_db;

/* Who is beating: the instance's name, its host and process. */
struct ct_beat_id {
	const char *instance, *host;
	int64_t pid;
};

/* Write role's beat for instance id at time now: nruns passes, nitems items
 * so far, err the last error ("" or NULL: none; a process's earlier error
 * stays until it reports another). A row left by another process (pid or
 * host differ) restarts its start_time. Returns 0 or a db error. */
int ct_beat_put(struct ct_db *db, const char *role, const struct ct_beat_id *id, int64_t now,
		int64_t nruns, int64_t nitems, const char *err);

/* Delete the rows of instance id->instance left by another process. */
int ct_beat_clear_stale(struct ct_db *db, const struct ct_beat_id *id);

/* Delete role's row of this process. */
int ct_beat_forget(struct ct_db *db, const char *role, const struct ct_beat_id *id);

/* How many other instances of role beat at or after `since` (*live), and
 * how many of those sort below id->instance (*below). Returns 0 or a db
 * error. */
int ct_beat_count(struct ct_db *db, const char *role, const struct ct_beat_id *id,
		  int64_t since, int64_t *live, int64_t *below);

/* A row of role_heartbeat. */
struct ct_beat_row {
	char role[132], instance[516];
	int64_t beat_time, nitems;
	char last_error[1024], host[260];
	int64_t pid;
};

/* Every row, by instance and role, into a malloc'd *rows (free() it; NULL
 * when none) of *n. Returns 0, CT_ENOMEM or a db error. */
int ct_beat_list(struct ct_db *db, struct ct_beat_row **rows, size_t *n);

#endif
