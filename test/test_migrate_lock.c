/*
 * test_migrate_lock.c - the schema migration lock and resumable migrations
 * (server/data/migrate_lock.h, ct_db_migrate) on the embedded server:
 *  - the lock is a row: a second connection cannot take it while it is
 *    held, takes it once released, and takes over an expired lease;
 *  - a migration that fails half-way (here: a table in the way of
 *    schema.sql's role_heartbeat) records how far it got, and the next
 *    ct_db_migrate, once the cause is gone, resumes there; a statement
 *    that was applied but not recorded (a crash between the two) is
 *    tolerated when the resumed run starts with it.
 */
#include "ct_test_db.h"

#include <string.h>
#include <time.h>

#include "ct_err.h"
#include "data/db.h"
#include "data/migrate_lock.h"

static char *g_dir;
static struct ct_db *g_db, *g_db2;	/* ct_db_close ends the thread's library
					 * state: both close at the end */

static int setup_all(void **state)
{
	(void)state;
	return ct_test_db_open(&g_dir, &g_db);
}

static int teardown_all(void **state)
{
	(void)state;
	ct_db_close(g_db2);
	ct_db_close(g_db);
	ct_db_global_end();
	ct_test_rmtree(g_dir);
	free(g_dir);
	return 0;
}

static int64_t q_int(const char *sql)
{
	int64_t v = -1;

	assert_int_equal(ct_db_query_inta(g_db, &v, sql, NULL, 0), 0);
	return v;
}

static void test_lock_is_a_row(void **state)
{
	struct ct_db *db2;
	char h1[33], h2[33];

	(void)state;
	assert_int_equal(ct_db_open(&g_db2, NULL), 0);
	db2 = g_db2;
	assert_int_equal(ct_migrate_lock(g_db, 5, h1), 0);
	assert_int_equal(strlen(h1), 32);
	assert_int_equal(ct_migrate_lock(db2, 1, h2), CT_EBUSY);
	ct_migrate_unlock(g_db, h1);
	assert_int_equal(ct_migrate_lock(db2, 1, h2), 0);
	assert_string_not_equal(h1, h2);
	/* a holder that died: its lease runs out and another takes over */
	assert_int_equal(CT_DB_EXEC(g_db, "UPDATE migration_lock SET expires=? WHERE id=1",
				    (int64_t)time(NULL) - 1), 1);
	assert_int_equal(ct_migrate_lock(g_db, 1, h1), 0);
	/* each recorded statement renews the lease: a long migration keeps it */
	assert_int_equal(CT_DB_EXEC(g_db, "UPDATE migration_lock SET expires=? WHERE id=1",
				    (int64_t)time(NULL) + 1), 1);
	assert_int_equal(ct_migrate_set_progress(g_db, 0, 0), 0);
	assert_true(q_int("SELECT expires FROM migration_lock WHERE id=1") >=
		    (int64_t)time(NULL) + CT_MIGRATE_LEASE_S - 5);
	ct_migrate_unlock(db2, h2);		/* not its lock any more: no-op */
	assert_int_equal(q_int("SELECT COUNT(*) FROM migration_lock WHERE holder<>''"), 1);
	ct_migrate_unlock(g_db, h1);
	assert_int_equal(q_int("SELECT COUNT(*) FROM migration_lock WHERE holder<>''"), 0);
}

/* Drop every table but the lock's: an empty database again. */
static void drop_all(void)
{
	struct ct_db_res *res = NULL;
	char sql[200];

	assert_int_equal(ct_db_querya(g_db, &res, "SELECT table_name FROM "
				     "information_schema.tables WHERE table_schema=DATABASE() "
				     "AND table_name<>'migration_lock'", NULL, 0), 0);
	while (ct_db_next(res)) {
		snprintf(sql, sizeof(sql), "DROP TABLE `%s`", ct_db_str(res, 0));
		assert_true(ct_db_execa(g_db, sql, NULL, 0) >= 0);
	}
	ct_db_res_free(res);
}

static void test_resume_after_failure(void **state)
{
	int ver = 0, pver = -1, pstep = -1, failed_at;
	int64_t n_versions = q_int("SELECT COUNT(*) FROM schema_version");

	(void)state;
	drop_all();
	assert_int_equal(ct_db_schema_version(g_db, &ver), 0);
	assert_int_equal(ver, 0);
	/* something in the way of a late statement of schema.sql */
	assert_true(ct_db_execa(g_db, "CREATE TABLE role_heartbeat (x INT PRIMARY KEY)", NULL, 0) >= 0);
	/* tables but no schema_version and no migration of ours in progress */
	assert_int_equal(ct_db_migrate(g_db), CT_EDB);
	assert_non_null(strstr(ct_errmsg(CT_EDB), "not a crowdtune database"));

	/* as if schema 1 had been started: it fails at role_heartbeat */
	assert_int_equal(ct_migrate_set_progress(g_db, 1, 0), 0);
	assert_int_equal(ct_db_migrate(g_db), CT_EDB);
	assert_non_null(strstr(ct_errmsg(CT_EDB), "migration 1 (schema), statement "));
	assert_int_equal(ct_migrate_progress(g_db, &pver, &pstep), 0);
	assert_int_equal(pver, 1);
	assert_true(pstep > 5);
	failed_at = pstep + 1;
	assert_int_equal(q_int("SELECT COUNT(*) FROM information_schema.tables WHERE "
			       "table_schema=DATABASE() AND table_name='credit_event'"), 1);
	assert_int_equal(q_int("SELECT COUNT(*) FROM migration_lock WHERE holder<>''"), 0);

	/* the cause removed; and say the statement before the failed one
	 * (CREATE TABLE credit_event) was applied but not recorded */
	assert_true(ct_db_execa(g_db, "DROP TABLE role_heartbeat", NULL, 0) >= 0);
	assert_int_equal(ct_migrate_set_progress(g_db, 1, failed_at - 2), 0);
	assert_int_equal(ct_db_migrate(g_db), 0);
	assert_int_equal(ct_db_schema_version(g_db, &ver), 0);
	assert_int_equal(ver, ct_db_schema_latest());
	assert_int_equal(ct_migrate_progress(g_db, &pver, &pstep), 0);
	assert_int_equal(pver, 0);
	assert_int_equal(pstep, 0);
	assert_int_equal(q_int("SELECT COUNT(*) FROM schema_version"), n_versions);
	/* role_heartbeat is schema.sql's now (with migration 7's columns) */
	assert_true(ct_db_execa(g_db, "INSERT INTO role_heartbeat (role, instance, start_time, "
			       "beat_time, host, pid) VALUES ('r', 'i', 1, 1, 'h', 2)", NULL, 0) == 1);
	/* and a second run has nothing to do */
	assert_int_equal(ct_db_migrate(g_db), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lock_is_a_row),
		cmocka_unit_test(test_resume_after_failure),
	};
	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
