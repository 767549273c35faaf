/*
 * db.h - ctune-server's database layer: one API over MariaDB's embedded
 * server (libmariadbd, data in PROJECT/db) and a real MySQL/MariaDB server
 * (mysql://user:pass@host:port/name, or ...?socket=/path), with prepared
 * statements only, materialised result sets, transactions with deadlock
 * retry, and schema migrations. The state codes of each state column live
 * with its owner (job_state.h, result_state.h, wu_state.h): a file that
 * binds or reads them includes that header itself.
 *
 * Threads: call ct_db_global_init() once per process before any thread
 * opens a connection. A struct ct_db is one connection used by ONE thread:
 * open it, use it and close it in the same thread (each role thread and
 * each HTTP worker has its own).
 *
 * Statements: SQL text with '?' placeholders and one value per placeholder,
 * each bound by its C type (db_args.h: CT_DB_EXEC, CT_DB_QUERY,
 * CT_DB_QUERY_INT, CT_DB_QUERY_DOUBLE; ct_db_execa and friends for a
 * statement without parameters or an argument array built at run time).
 * Rows are read into structs by column tables (dl.h). Each connection
 * caches its prepared statements by SQL text (up to 160, oldest evicted),
 * so preparing costs nothing after the first call: keep SQL text constant
 * and pass values as parameters.
 *
 *   rc = CT_DB_EXEC(db, "UPDATE result SET server_state=?, hostid=? "
 *                   "WHERE id=? AND server_state=?",
 *                   CT_RS_IN_PROGRESS, hostid, resultid, CT_RS_UNSENT);
 *   if (rc < 0) goto out;          // error
 *   if (rc == 0) ...               // lost the race: someone else claimed it
 *
 *   struct ct_db_res *res = NULL;
 *   rc = CT_DB_QUERY(db, &res, "SELECT id, name FROM workunit "
 *                    "WHERE need_validate=1 LIMIT ?", 100);
 *   if (rc < 0) goto out;
 *   while ((rc = ct_db_next(res)) > 0)       // (or: for (;;) { rc = ...)
 *       use(ct_db_int(res, 0), ct_db_str(res, 1));
 *   ct_db_res_free(res);
 *
 * Errors: CT_EDB with the server's message as the detail (ct_errmsg), and
 * CT_EAGAIN for a deadlock or lock wait timeout (the transaction was rolled
 * back by the server: retry it; ct_db_txn() does so), CT_EDUP for a
 * duplicate key on INSERT/UPDATE (unique constraint hit).
 *
 * Schema: db/schema.sql + db/migrations/NNN-*.sql are compiled in;
 * ct_db_migrate() (migrate_lock.h) brings a database up to date (ctune-server does it at
 * init and at every start).
 *
 * Names: the tables `user`, `round` and `file` must be backquoted in SQL.
 * Locking rule: a transaction that changes results of a WU first locks the
 * WU row: "SELECT id FROM workunit WHERE id=? FOR UPDATE" (lock order
 * workunit -> result). Sessions run at READ COMMITTED.
 */
#ifndef CT_DB_H
#define CT_DB_H

#include <stddef.h>
#include <stdint.h>

#include "db_args.h"	/* the statements: CT_DB_EXEC, CT_DB_QUERY... */
#include "db_url.h"	/* CT_DB_EMBEDDED_NAME */

/* ---- process-wide setup ------------------------------------------------- */

/* Initialise the client library once per process. url is the database
 * this process will use: NULL, "" or "embedded" starts MariaDB's embedded
 * server with its data in `datadir` (created if missing; only one process
 * at a time may hold it: a second one gets CT_EBUSY at once, not a hang),
 * and `logdir` gets mariadb.log (may be NULL: the log goes to datadir).
 * A mysql:// url initialises the client side only (a private scratch
 * directory under datadir's parent is used and removed again). Returns 0,
 * CT_EBUSY, CT_EDB, CT_EINVAL (bad url) or a file error. Not thread-safe:
 * call it before starting threads. */
int ct_db_global_init(const char *url, const char *datadir, const char *logdir);

/* Shut the library (and the embedded server) down after every connection
 * was closed. Safe to call when ct_db_global_init() failed or was not
 * called. */
void ct_db_global_end(void);

/* 1 if ct_db_global_init() started the embedded server. */
int ct_db_global_is_embedded(void);

/* ---- connections -------------------------------------------------------- */

struct ct_db;
struct ct_clock;

/* Connect, in the calling thread, to the database ct_db_global_init() was
 * given (the embedded database is created on first use). Sets utf8mb4,
 * READ COMMITTED and autocommit on. clock (NULL: the system clock; not
 * owned, must outlive the connection) is what ct_db_now(db) reads: pass the
 * server's (srv->clock). *out is owned by the caller (close with
 * ct_db_close() in the same thread). Returns 0, CT_EDB (detail says why:
 * bad credentials, server down...), CT_ENOMEM; *out = NULL on failure. */
int ct_db_open(struct ct_db **out, const struct ct_clock *clock);

/* Close the connection and free its statement cache. NULL is a no-op. */
void ct_db_close(struct ct_db *db);

/* ---- statements --------------------------------------------------------- */

/* The statements themselves (ct_db_execa, ct_db_querya, CT_DB_EXEC...)
 * are in db_args.h. */

/* AUTO_INCREMENT id of the row the last INSERT on this connection made. */
int64_t ct_db_last_id(struct ct_db *db);

/* Result of a query, read completely into memory when the query ran (so
 * the connection is free for other statements while rows are read). */
struct ct_db_res;

/* Advance to the next row: 1 if there is one, 0 at the end. */
int ct_db_next(struct ct_db_res *res);

/* Number of rows and columns of the result set. */
size_t ct_db_nrows(const struct ct_db_res *res);
int ct_db_ncols(const struct ct_db_res *res);

/* Column `col` (0-based) of the current row. NULL cells read as 0, 0.0 and
 * "" (and ct_db_isnull() says 1). A text cell read as a number is parsed
 * (0 if it is not one); a numeric cell read as text is formatted ("%lld",
 * "%.17g"). Strings are owned by the result set. Out-of-range col -> 0/"". */
int64_t ct_db_int(const struct ct_db_res *res, int col);
double ct_db_double(const struct ct_db_res *res, int col);
const char *ct_db_str(const struct ct_db_res *res, int col);
size_t ct_db_len(const struct ct_db_res *res, int col);	/* bytes of text/blob */
int ct_db_isnull(const struct ct_db_res *res, int col);

/* Free a result set; NULL is a no-op. */
void ct_db_res_free(struct ct_db_res *res);

/* 1 if the connection answers a query now, 0 if not: tells a statement
 * that failed for its data (CT_EDB, the connection fine) from a lost
 * connection. */
int ct_db_alive(struct ct_db *db);

/* ---- transactions ------------------------------------------------------- */

/* START TRANSACTION / COMMIT / ROLLBACK. Returns 0 or an error as
 * ct_db_execa() (ct_db_commit may return CT_EAGAIN: retry the whole
 * transaction). ct_db_rollback never fails from the caller's view (a
 * failure is logged). */
int ct_db_begin(struct ct_db *db);
int ct_db_commit(struct ct_db *db);
void ct_db_rollback(struct ct_db *db);

/* Run fn(db, arg) inside a transaction: commit when it returns >= 0 (and
 * return that value), roll back when it returns < 0. A CT_EAGAIN (deadlock,
 * lock wait timeout, Galera certification failure) from fn or from the
 * commit rolls back and runs fn again after an exponential backoff with
 * jitter (1 ms doubling, at most CT_DB_TXN_MAX_WAIT_US, plus up to as much
 * again), up to CT_DB_TXN_TRIES times in all (5 to 10 s), so fn must have
 * no side effects outside the database (or make them idempotent). */
#define CT_DB_TXN_TRIES 30
#define CT_DB_TXN_MAX_WAIT_US 200000u
int ct_db_txn(struct ct_db *db, int (*fn)(struct ct_db *db, void *arg), void *arg);

/* ---- schema ------------------------------------------------------------- */

/* Run one statement of a migration script as text (no parameters, not
 * prepared; a result set it makes is dropped). Returns 0 or CT_EDB; *err
 * gets the server's error number (0 on success) and msg (cap bytes) its
 * message. Only migrate_lock.c's migrations use it. */
int ct_db_exec_script(struct ct_db *db, const char *sql, unsigned *err, char *msg, size_t cap);

/* ---- small helpers ------------------------------------------------------ */

/* Seconds since the epoch on this connection's clock (the time every row
 * uses): the clock given to ct_db_open(), which the server takes from its
 * context (struct ct_server.clock) and tests replace with a fake one to
 * make deadlines pass. */
int64_t ct_db_now(const struct ct_db *db);

#endif
