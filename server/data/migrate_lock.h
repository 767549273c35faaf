/*
 * migrate_lock.h - the schema migration lock and its progress, shared by
 * every process on one database, Galera cluster included.
 *
 * GET_LOCK() is local to one node of a Galera cluster, so two instances
 * starting on different nodes could both migrate. The lock is instead a
 * row, `migration_lock` id 1, taken by a conditional UPDATE (holder empty
 * or its lease expired): Galera certifies the write cluster-wide, so of
 * two instances that update it at once on different nodes one commits and
 * the other is aborted (deadlock, retried; then it sees the holder).
 *
 * The same row records how far the migration in progress got (version,
 * statements done), so a migration that failed half-way (DDL is not
 * transactional: a lost connection or a killed process leaves its first
 * tables made) resumes after its last completed statement on the next
 * start instead of stopping at "table exists".
 *
 * The migrations themselves (ct_db_migrate) run here too, under the lock.
 */
#ifndef CT_MIGRATE_LOCK_H
#define CT_MIGRATE_LOCK_H

struct ct_db;

/* How long a holder's lease lasts (seconds) from when it took the lock or
 * last recorded progress: a process that died holding the lock delays the
 * next migration this long at most, and one statement may take this long
 * before another process could take the lock over. */
#define CT_MIGRATE_LEASE_S 120

/* Make the lock table if needed and take the lock, waiting up to
 * wait_s seconds for another holder. holder (33 bytes) gets the random
 * token the lock was taken with. Returns 0, CT_EBUSY (still held after
 * wait_s) or a database error. */
int ct_migrate_lock(struct ct_db *db, int wait_s, char holder[33]);

/* Release the lock taken with holder (a no-op when it was lost to expiry). */
void ct_migrate_unlock(struct ct_db *db, const char holder[33]);

/* The migration in progress: *version (0 when none) and the number of its
 * statements already applied. */
int ct_migrate_progress(struct ct_db *db, int *version, int *step);

/* Record that step statements of migration version are applied, and
 * renew the lease (the holder calls it after each statement). */
int ct_migrate_set_progress(struct ct_db *db, int version, int step);

/* Bring the schema up to date: apply db/schema.sql to an empty database,
 * then each newer migration, each recorded in schema_version; takes the
 * migration lock (a row, migrate_lock.h: GET_LOCK would be local to one
 * Galera node) so two processes starting together apply each migration
 * once, and resumes a migration that failed half-way after its last
 * applied statement. Returns 0, CT_EBUSY (another process held the lock
 * too long) or CT_EDB (the detail names the migration, the statement's
 * number and the server's error). */
int ct_db_migrate(struct ct_db *db);

/* Highest schema version applied (0 for an empty database), and the
 * highest this binary knows. */
int ct_db_schema_version(struct ct_db *db, int *out);
int ct_db_schema_latest(void);

#endif
