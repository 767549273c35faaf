/*
 * test_db.c - the database layer (server/data/db.h) on the embedded server in a
 * temporary directory: schema migration, parameter and column types,
 * NULLs, affected rows of conditional updates, duplicate keys,
 * transactions, and concurrent claims from two connections never taking
 * one row twice. Also the URL parser.
 */
#include "ct_test_db.h"
#include "data/job_state.h"
#include "data/result_state.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>

#include "ct_err.h"
#include "data/db.h"
#include "data/migrate_lock.h"
#include "data/db_url.h"

static char *g_dir;
static struct ct_db *g_db;

static int setup_all(void **state)
{
	if (ct_test_db_open(&g_dir, &g_db) < 0)
		return -1;
	return ct_db_execa(g_db, "CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, "
			  "i INT, l BIGINT, d DOUBLE, s VARCHAR(100), b BLOB, n DOUBLE NULL, "
			  "state INT NOT NULL DEFAULT 0, owner INT NOT NULL DEFAULT 0, "
			  "UNIQUE KEY t_s (s)) ENGINE=InnoDB", NULL, 0) < 0 ? -1 : 0;
}

static int teardown_all(void **state)
{
	(void)state;
	return ct_test_db_close(g_dir, g_db);
}

static void test_migrate(void **state)
{
	int v = -1;

	assert_int_equal(ct_db_schema_version(g_db, &v), 0);
	assert_int_equal(v, ct_db_schema_latest());
	assert_true(v >= 1);
	/* again: nothing to do, nothing broken */
	assert_int_equal(ct_db_migrate(g_db), 0);
	assert_int_equal(ct_db_schema_version(g_db, &v), 0);
	assert_int_equal(v, ct_db_schema_latest());
}

static void test_types_round_trip(void **state)
{
	const char *evil = "x'); DROP TABLE t; --";
	const unsigned char blob[5] = { 0, 1, 2, 0, 255 };
	struct ct_db_res *res = NULL;
	double d = 0.1 + 0.2;

	assert_int_equal(CT_DB_EXEC(g_db, "INSERT INTO t (i, l, d, s, b, n) VALUES (?, ?, ?, ?, ?, ?)",
				    -7, (int64_t)INT64_MAX, d, evil, CT_DB_BLOB(blob, sizeof(blob)),
				    CT_DB_NULL), 1);
	int64_t id = ct_db_last_id(g_db);
	assert_true(id > 0);
	assert_int_equal(CT_DB_QUERY(g_db, &res, "SELECT i, l, d, s, b, n, s IS NULL FROM t "
				     "WHERE id=?", id), 0);
	assert_int_equal(ct_db_nrows(res), 1);
	assert_int_equal(ct_db_ncols(res), 7);
	assert_int_equal(ct_db_next(res), 1);
	assert_int_equal(ct_db_int(res, 0), -7);
	assert_int_equal(ct_db_int(res, 1), INT64_MAX);
	assert_memory_equal(&(double){ ct_db_double(res, 2) }, &d, sizeof(d));	/* bit-exact */
	assert_string_equal(ct_db_str(res, 3), evil);	/* stored, not executed */
	assert_int_equal(ct_db_len(res, 4), sizeof(blob));
	assert_memory_equal(ct_db_str(res, 4), blob, sizeof(blob));
	assert_true(ct_db_isnull(res, 5));
	assert_false(ct_db_isnull(res, 3));
	assert_true(ct_db_double(res, 5) == 0.0);
	assert_int_equal(ct_db_int(res, 6), 0);
	assert_string_equal(ct_db_str(res, 1), "9223372036854775807");	/* number as text */
	assert_int_equal(ct_db_int(res, 99), 0);	/* out of range column */
	assert_int_equal(ct_db_next(res), 0);
	ct_db_res_free(res);

	int64_t n = 0;
	assert_int_equal(ct_db_query_inta(g_db, &n, "SELECT COUNT(*) FROM t", NULL, 0), 0);
	assert_true(n >= 1);	/* the table survived the "injection" */
	assert_int_equal(CT_DB_QUERY_INT(g_db, &n, "SELECT id FROM t WHERE id=?",
					 (int64_t)-1), CT_ENOTFOUND);
}

static void test_statement_reuse(void **state)
{
	/* the same statement many times with different results sizes: the
	 * cached statement must not write into freed buffers */
	for (int i = 0; i < 50; i++) {
		char s[64];
		struct ct_db_res *res = NULL;
		snprintf(s, sizeof(s), "reuse-%d-%.*s", i, i, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		assert_int_equal(CT_DB_EXEC(g_db, "INSERT INTO t (s, i) VALUES (?, ?)", s, i), 1);
		assert_int_equal(ct_db_querya(g_db, &res, "SELECT s, i FROM t WHERE s LIKE 'reuse-%' "
					     "ORDER BY i", NULL, 0), 0);
		assert_int_equal(ct_db_nrows(res), (size_t)i + 1);
		for (int k = 0; k <= i; k++) {
			assert_int_equal(ct_db_next(res), 1);
			assert_int_equal(ct_db_int(res, 1), k);
		}
		assert_string_equal(ct_db_str(res, 0), s);
		ct_db_res_free(res);
	}
}

static void test_conditional_update_and_dup(void **state)
{
	assert_int_equal(CT_DB_EXEC(g_db, "INSERT INTO t (s, state) VALUES (?, 2)", "claim-me"), 1);
	int64_t id = ct_db_last_id(g_db);
	/* claim: only the first conditional update matches */
	assert_int_equal(CT_DB_EXEC(g_db, "UPDATE t SET state=4, owner=? WHERE id=? AND state=2",
				    1, id), 1);
	assert_int_equal(CT_DB_EXEC(g_db, "UPDATE t SET state=4, owner=? WHERE id=? AND state=2",
				    2, id), 0);
	assert_int_equal(CT_DB_EXEC(g_db, "INSERT INTO t (s) VALUES (?)", "claim-me"), CT_EDUP);
	/* too few or too many arguments for the placeholders */
	assert_int_equal(CT_DB_EXEC(g_db, "UPDATE t SET i=? WHERE id=?", 1), CT_EINVAL);
	assert_int_equal(CT_DB_EXEC(g_db, "UPDATE t SET i=? WHERE id=?", 1, id, 3), CT_EINVAL);
	/* bad SQL is a db error with the server's message */
	assert_int_equal(ct_db_execa(g_db, "UPDATE nosuchtable SET x=1", NULL, 0), CT_EDB);
	assert_non_null(strstr(ct_errmsg(CT_EDB), "nosuchtable"));
}

static int insert_then_fail(struct ct_db *db, void *arg)
{
	int rc = CT_DB_EXEC(db, "INSERT INTO t (s) VALUES (?)", (const char *)arg);

	return rc < 0 ? rc : CT_ESTATE;
}

static int insert_ok(struct ct_db *db, void *arg)
{
	int rc = CT_DB_EXEC(db, "INSERT INTO t (s) VALUES (?)", (const char *)arg);

	return rc < 0 ? rc : 7;
}

static void test_txn(void **state)
{
	int64_t n = -1;

	assert_int_equal(ct_db_txn(g_db, insert_then_fail, "rolled-back"), CT_ESTATE);
	assert_int_equal(CT_DB_QUERY_INT(g_db, &n, "SELECT COUNT(*) FROM t WHERE s=?",
					 "rolled-back"), 0);
	assert_int_equal(n, 0);
	assert_int_equal(ct_db_txn(g_db, insert_ok, "committed"), 7);
	assert_int_equal(CT_DB_QUERY_INT(g_db, &n, "SELECT COUNT(*) FROM t WHERE s=?",
					 "committed"), 0);
	assert_int_equal(n, 1);
}

/* Two threads, each with its own connection, claim rows with conditional
 * updates; every row must be claimed exactly once. */
struct claimer {
	int who, claimed, err;
};

static void *claim_thread(void *arg)
{
	struct claimer *c = arg;
	struct ct_db *db = NULL;

	if (ct_db_open(&db, NULL) < 0) {
		c->err = 1;
		return NULL;
	}
	for (;;) {
		struct ct_db_res *res = NULL;
		int any = 0;
		if (ct_db_querya(db, &res, "SELECT id FROM t WHERE state=2 AND s LIKE 'race-%' "
				"ORDER BY id LIMIT 8", NULL, 0) < 0) {
			c->err = 1;
			break;
		}
		while (ct_db_next(res) > 0) {
			any = 1;
			int rc = CT_DB_EXEC(db, "UPDATE t SET state=4, owner=? WHERE id=? AND state=2",
					    c->who, ct_db_int(res, 0));
			if (rc < 0)
				c->err = 1;
			c->claimed += rc > 0;
		}
		ct_db_res_free(res);
		if (!any || c->err)
			break;
	}
	ct_db_close(db);
	return NULL;
}

static void test_concurrent_claims(void **state)
{
	struct claimer a = { .who = 10 }, b = { .who = 11 };
	pthread_t ta, tb;
	int64_t n = 0;

	for (int i = 0; i < 200; i++) {
		char s[32];
		snprintf(s, sizeof(s), "race-%d", i);
		assert_int_equal(CT_DB_EXEC(g_db, "INSERT INTO t (s, state) VALUES (?, 2)", s), 1);
	}
	pthread_create(&ta, NULL, claim_thread, &a);
	pthread_create(&tb, NULL, claim_thread, &b);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	assert_int_equal(a.err + b.err, 0);
	assert_int_equal(a.claimed + b.claimed, 200);
	assert_int_equal(ct_db_query_inta(g_db, &n, "SELECT COUNT(*) FROM t WHERE s LIKE 'race-%' "
					 "AND owner IN (10, 11) AND state=4", NULL, 0), 0);
	assert_int_equal(n, 200);
}

static void test_url(void **state)
{
	struct ct_db_url u;

	assert_int_equal(ct_db_url_parse(NULL, &u), 0);
	assert_true(u.embedded);
	assert_string_equal(u.dbname, "ctune");
	ct_db_url_free(&u);
	assert_int_equal(ct_db_url_parse("mysql://bob:p%40ss@db.example:3307/crowd", &u), 0);
	assert_false(u.embedded);
	assert_string_equal(u.user, "bob");
	assert_string_equal(u.pass, "p@ss");
	assert_string_equal(u.host, "db.example");
	assert_int_equal(u.port, 3307);
	assert_string_equal(u.dbname, "crowd");
	assert_null(u.socket);
	ct_db_url_free(&u);
	assert_int_equal(ct_db_url_parse("mysql://root@localhost/ct?socket=/tmp/x.sock", &u), 0);
	assert_string_equal(u.socket, "/tmp/x.sock");
	assert_null(u.pass);
	ct_db_url_free(&u);
	const char *bad[] = { "postgres://x/y", "mysql://host", "mysql://h:99999/x",
			      "mysql://h/bad-name", "mysql://u:%zz@h/x", "mysql://h/x?user=1", NULL };
	for (int i = 0; bad[i]; i++) {
		assert_int_equal(ct_db_url_parse(bad[i], &u), CT_EINVAL);
		ct_db_url_free(&u);
	}
}

static void test_state_names(void **state)
{
	assert_string_equal(ct_rs_name(CT_RS_IN_PROGRESS), "in_progress");
	assert_string_equal(ct_ro_name(CT_RO_DIDNT_NEED), "didnt_need");
	assert_string_equal(ct_vs_name(CT_VS_INCONCLUSIVE), "inconclusive");
	assert_string_equal(ct_job_status_name(CT_JOB_CANCELED), "canceled");
	assert_string_equal(ct_rs_name(99), "?");
}

CT_TEST_MAIN_GROUP(setup_all, teardown_all, test_migrate, test_types_round_trip,
	test_statement_reuse, test_conditional_update_and_dup, test_txn,
	test_concurrent_claims, test_url, test_state_names)
