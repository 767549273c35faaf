/*
 * migrate_lock.c - the schema migration lock as a row (migrate_lock.h).
 */
#include "migrate_lock.h"

#include <mysqld_error.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ct_err.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "db.h"
#include "dl.h"

/* from the generated db_sql.c */
struct ct_sql_migration {
	int version;
	const char *name;
	const char *sql;
};
extern const struct ct_sql_migration ct_sql_migrations[];
extern const int ct_sql_nmigrations;

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

/* ---- the migrations -------------------------------------------------------- */

static int already_applied(unsigned err)
{
	return err == ER_TABLE_EXISTS_ERROR || err == ER_DUP_FIELDNAME ||
	       err == ER_DUP_KEYNAME || err == ER_CANT_DROP_FIELD_OR_KEY ||
	       err == ER_TRG_ALREADY_EXISTS || err == ER_TRG_DOES_NOT_EXIST ||
	       err == ER_BAD_TABLE_ERROR;
}

/* Run each statement of a script (cut at ';' ending a line), the first
 * `done` ones excepted (applied before an earlier attempt failed), and
 * record the progress after each in migration_lock (migrate_lock.h). */
static int run_script(struct ct_db *db, const struct ct_sql_migration *m, int done)
{
	const char *p = m->sql;
	char *stmt = NULL, msg[512];
	unsigned err = 0;
	int rc = 0, idx = 0, resumed = done > 0;

	while (*p) {
		const char *end = strstr(p, ";\n");
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *q = p;

		/* skip chunks that are only blank lines and comments */
		while (q < p + n) {
			while (q < p + n && (*q == ' ' || *q == '\n' || *q == '\t' || *q == '\r'))
				q++;
			if (q + 1 < p + n && q[0] == '-' && q[1] == '-') {
				while (q < p + n && *q != '\n')
					q++;
				continue;
			}
			break;
		}
		if (q < p + n && idx++ >= done) {
			stmt = strndup(p, n);
			if (stmt == NULL)
				return CT_ENOMEM;
			rc = ct_db_exec_script(db, stmt, &err, msg, sizeof(msg));
			free(stmt);
			if (rc < 0 && resumed && already_applied(err))
				rc = 0;
			resumed = 0;
			if (rc < 0)
				return ct_error(CT_EDB, "migration %d (%s), statement %d: %s (%u)",
						m->version, m->name, idx, msg, err);
			rc = ct_migrate_set_progress(db, m->version, idx);
			if (rc < 0)
				return rc;
		}
		p += n;
		if (end)
			p += 2;
	}
	return 0;
}

int ct_db_schema_latest(void)
{
	return ct_sql_nmigrations > 0 ? ct_sql_migrations[ct_sql_nmigrations - 1].version : 0;
}

int ct_db_schema_version(struct ct_db *db, int *out)
{
	int64_t n = 0;
	int rc;

	*out = 0;
	rc = ct_db_query_inta(db, &n, "SELECT COUNT(*) FROM information_schema.tables "
			     "WHERE table_schema = DATABASE() AND table_name = 'schema_version'", NULL, 0);
	if (rc < 0 || n == 0)
		return rc;
	rc = ct_db_query_inta(db, &n, "SELECT COALESCE(MAX(version), 0) FROM schema_version", NULL, 0);
	if (rc < 0)
		return rc;
	*out = (int)n;
	return 0;
}

static int migrate_locked(struct ct_db *db)
{
	int64_t ntables = 0;
	int cur, rc, pver, pstep;

	rc = ct_db_schema_version(db, &cur);
	if (rc == 0)
		rc = ct_migrate_progress(db, &pver, &pstep);
	if (rc < 0)
		return rc;
	if (cur == 0 && pver != 1) {	/* not a half-made schema of ours */
		rc = ct_db_query_inta(db, &ntables, "SELECT COUNT(*) FROM information_schema.tables "
				     "WHERE table_schema = DATABASE() AND "
				     "table_name <> 'migration_lock'", NULL, 0);
		if (rc < 0)
			return rc;
		if (ntables > 0)
			return ct_error(CT_EDB, "the database has tables but no schema_version: "
					"not a crowdtune database?");
	}
	if (cur > ct_db_schema_latest())
		return ct_error(CT_EDB, "database schema %d is newer than this program's (%d)",
				cur, ct_db_schema_latest());
	for (int i = 0; i < ct_sql_nmigrations; i++) {
		const struct ct_sql_migration *m = &ct_sql_migrations[i];
		if (m->version <= cur)
			continue;
		int done = pver == m->version ? pstep : 0;
		if (done > 0)
			ct_log_info("database: resuming schema %d (%s) after statement %d",
				    m->version, m->name, done);
		else
			ct_log_info("database: applying schema %d (%s)", m->version, m->name);
		rc = run_script(db, m, done);
		if (rc < 0)
			return rc;
		rc = CT_DB_EXEC(db, "INSERT INTO schema_version (version, name, applied_at) "
				"VALUES (?, ?, ?)", m->version, m->name, ct_db_now(db));
		if (rc >= 0)
			rc = ct_migrate_set_progress(db, 0, 0);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int ct_db_migrate(struct ct_db *db)
{
	char holder[33];
	int rc;

	/* a row lock, not GET_LOCK: that is local to one Galera node */
	rc = ct_migrate_lock(db, CT_MIGRATE_LEASE_S + 30, holder);
	if (rc < 0)
		return rc;
	rc = migrate_locked(db);
	ct_migrate_unlock(db, holder);
	return rc;
}
