/*
 * ct_test_db.h - what the database unit tests (test_db, test_dl, test_sched,
 * test_wg, test_wu_state) share: the embedded server on a fresh temporary directory with
 * the project's schema migrated, alone or under a project. Header-only
 * (static inline).
 */
#ifndef CT_TEST_DB_H
#define CT_TEST_DB_H

#include "ct_test.h"
#include "data/db.h"
#include "data/migrate_lock.h"
#include "cmd/server_open.h"
#include "data/server.h"

/* A new temporary directory (*dir, malloc'd; the caller removes and frees
 * it) holding the embedded server's data ("db") and logs, one connection
 * to it (*db) and the migrated schema. Returns 0, or -1 (cmocka's setup
 * failure) with what was made left for the caller's teardown. */
static inline int ct_test_db_open(char **dir, struct ct_db **db)
{
	char data[4200];

	*dir = ct_test_mkdtemp();
	if (*dir == NULL)
		return -1;
	snprintf(data, sizeof(data), "%s/db", *dir);
	if (ct_db_global_init(NULL, data, *dir) < 0 || ct_db_open(db, NULL) < 0)
		return -1;
	return ct_db_migrate(*db) < 0 ? -1 : 0;
}

/* Undo ct_test_db_open: close `db`, stop the embedded server, remove and
 * free `dir`. Returns 0 (a cmocka teardown's success). */
static inline int ct_test_db_close(char *dir, struct ct_db *db)
{
	ct_db_close(db);
	ct_db_global_end();
	ct_test_rmtree(dir);
	free(dir);
	return 0;
}

/* For a test file that needs nothing more: the directory and connection
 * its group fixtures below open (ct_test_dbs()->db in the tests). */
struct ct_test_dbs {
	char *dir;
	struct ct_db *db;
};

static inline struct ct_test_dbs *ct_test_dbs(void)
{
	static struct ct_test_dbs s;

	return &s;
}

static inline int ct_test_db_setup(void **state)
{
	(void)state;
	return ct_test_db_open(&ct_test_dbs()->dir, &ct_test_dbs()->db);
}

static inline int ct_test_db_teardown(void **state)
{
	(void)state;
	return ct_test_db_close(ct_test_dbs()->dir, ct_test_dbs()->db);
}

/* The same with a project: *dir holds the project "proj" made with *o and
 * loaded into *srv, whose embedded database ("proj/db") is open in *db on
 * the server's clock with the schema migrated. Returns 0, or -1 with what
 * was made left for the caller's teardown. */
static inline int ct_test_project_open(const struct ct_project_opts *o, char **dir,
				       struct ct_server *srv, struct ct_db **db)
{
	char p[4200];

	*dir = ct_test_mkdtemp();
	if (*dir == NULL)
		return -1;
	snprintf(p, sizeof(p), "%s/proj", *dir);
	if (ct_project_init(p, o) < 0 || ct_server_load(srv, p, NULL) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/proj/db", *dir);
	if (ct_db_global_init(NULL, p, *dir) < 0 || ct_db_open(db, srv->clock) < 0)
		return -1;
	return ct_db_migrate(*db) < 0 ? -1 : 0;
}

#endif
