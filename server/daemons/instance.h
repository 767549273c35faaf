/*
 * instance.h - the instance a `ctune-server run` process is, and what
 * several instances on one project share out.
 *
 * Every `run` process has an instance name (`--instance NAME`, else the
 * config's `instance` key, else the host name up to the first dot). One
 * process per name and project: ct_instance_setup() holds
 * DIR/run-NAME.lock with flock() for the life of the process. The
 * default instance (no --instance, or the name the default would be)
 * keeps DIR/admin.sock and DIR/server.url; any other uses
 * DIR/admin-NAME.sock and DIR/server-NAME.url.
 *
 * Role threads beat into role_heartbeat under (role, instance name) and
 * delete their row when they stop cleanly, so `status` lists what runs
 * now and what died. Daemons share their work with the live instances
 * of their role by `id mod N` (ct_instance_share()). One process holds
 * one instance: the state here is process-wide.
 */
#ifndef CT_INSTANCE_H
#define CT_INSTANCE_H

#include <stddef.h>
#include <stdint.h>

struct ct_server;
struct ct_db;

#define CT_INSTANCE_MAX 64	/* longest instance name */
#define CT_INSTANCE_LIVE_S 60	/* a role whose beat is older is not live */

/* Pick this process's instance name (name may be NULL: the default) and
 * take its lock under srv->dir. Returns 0; CT_EINVAL (a name with other
 * than [A-Za-z0-9._-] or longer than CT_INSTANCE_MAX); CT_EBUSY when
 * another process holds the instance (the detail names its PID); file
 * errors. */
int ct_instance_setup(struct ct_server *srv, const char *name);

/* Drop the lock (the file stays: unlinking it would race a starter). */
void ct_instance_release(void);

/* This process's instance name; "" before ct_instance_setup(). */
const char *ct_instance_name(void);

/* out = dir/base+ext for the default instance (or before setup), else
 * dir/base-NAME+ext ("admin", ".sock" -> admin-NAME.sock). Returns 0 or
 * CT_ETOOBIG. */
int ct_instance_file(const char *dir, const char *base, const char *ext, char *out,
		     size_t cap);

/* Write the heartbeat of role (this thread's, see ct_instance_set_role())
 * in this instance: totals nruns/nitems, err (NULL: keep the last one).
 * Returns 0 or a database error. */
int ct_instance_beat(struct ct_db *db, const char *role, int64_t nruns, int64_t nitems,
		     const char *err);

/* Delete the heartbeats this instance's earlier processes left (killed,
 * not stopped: the roles it ran then may not be the ones it runs now).
 * Call once after ct_instance_setup(); opens its own connection. Returns
 * 0 or a database error. */
int ct_instance_clear_stale(void);

/* Delete role's heartbeat in this instance (a clean stop). */
int ct_instance_forget(struct ct_db *db, const char *role);

/* Name the role the calling thread runs (for ct_instance_share()). */
void ct_instance_set_role(const char *role);

/* This thread's part of its role's work: WU ids with id mod *n == *i,
 * where n is the number of live instances of the role (beat within
 * CT_INSTANCE_LIVE_S, this one counted) and i this instance's rank among
 * them by name. Outside a role thread (tests, commands) *n = 1, *i = 0.
 * While instances come and go two of them may briefly hold the same
 * share; the daemons' conditional updates keep that correct. Returns 0 or
 * a database error. */
int ct_instance_share(struct ct_db *db, int64_t *n, int64_t *i);

#endif
