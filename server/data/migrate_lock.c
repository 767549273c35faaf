/*
 * migrate_lock.c - the schema migration lock as a row (migrate_lock.h).
 */
#include "migrate_lock.h"

#include <time.h>
#include <unistd.h>

#include "ct_err.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "dl.h"

static int make_table(struct ct_db *db)
{
	int rc = ct_db_execa(db, "CREATE TABLE IF NOT EXISTS migration_lock ("
			    "id TINYINT NOT NULL PRIMARY KEY, "
			    "holder CHAR(32) NOT NULL DEFAULT '', "
			    "expires BIGINT NOT NULL DEFAULT 0, "
			    "version INT NOT NULL DEFAULT 0, "
			    "step INT NOT NULL DEFAULT 0"
			    ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4", NULL, 0);

	if (rc >= 0)
		rc = ct_db_execa(db, "INSERT IGNORE INTO migration_lock (id) VALUES (1)", NULL, 0);
	return rc < 0 ? rc : 0;
}

int ct_migrate_lock(struct ct_db *db, int wait_s, char holder[33])
{
	unsigned char raw[16];
	time_t until = time(NULL) + wait_s;
	int rc, said = 0;

	rc = make_table(db);
	if (rc < 0)
		return rc;
	rc = ct_random_bytes(raw, sizeof(raw));
	if (rc < 0)
		return rc;
	ct_hex_encode(raw, sizeof(raw), holder);
	for (;;) {
		int64_t now = (int64_t)time(NULL);
		/* autocommit: a certification conflict comes back as CT_EAGAIN
		 * after ct_db_execa's own retries; try again like a busy lock */
		rc = CT_DB_EXEC(db, "UPDATE migration_lock SET holder=?, expires=? WHERE id=1 "
				"AND (holder='' OR expires<?)", holder,
				now + CT_MIGRATE_LEASE_S, now);
		if (rc == 1)
			return 0;
		if (rc < 0 && rc != CT_EAGAIN)
			return rc;
		if (time(NULL) >= until)
			return ct_error(CT_EBUSY, "another process is migrating the database "
					"(migration_lock held)");
		if (!said++)
			ct_log_info("database: waiting for another process's migration");
		usleep(200000);
	}
}

void ct_migrate_unlock(struct ct_db *db, const char holder[33])
{
	if (CT_DB_EXEC(db, "UPDATE migration_lock SET holder='', expires=0 WHERE id=1 "
		       "AND holder=?", holder) < 0)
		ct_log_warn("database: could not release the migration lock");
}

/* The progress columns of the lock row. */
struct progress {
	int version, step;
};

static const struct ct_dl_col progress_cols[] = {
	CT_DL_COL(struct progress, version),
	CT_DL_COL(struct progress, step),
};

int ct_migrate_progress(struct ct_db *db, int *version, int *step)
{
	struct progress p = { 0, 0 };
	int rc = ct_dl_query_one(db, &p, progress_cols, CT_DL_NCOLS(progress_cols),
				 "SELECT version, step FROM migration_lock WHERE id=1", NULL, 0);

	*version = rc < 0 ? 0 : p.version;
	*step = rc < 0 ? 0 : p.step;
	return rc < 0 ? rc : 0;
}

int ct_migrate_set_progress(struct ct_db *db, int version, int step)
{
	int rc = CT_DB_EXEC(db, "UPDATE migration_lock SET version=?, step=?, expires=? "
			    "WHERE id=1", version, step,
			    (int64_t)time(NULL) + CT_MIGRATE_LEASE_S);

	return rc < 0 ? rc : 0;
}
