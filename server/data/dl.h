/*
 * dl.h - the data layer's one mapper: a row of a result set (server/data/db.h)
 * into a plain struct, by a const table of columns. Each table's module
 * (dl_job.c, dl_workunit.c, ...; the web pages' dl_web*.c) declares its
 * row struct, the column table that maps its SELECT's columns in order to
 * the struct's members, and the SQL beside them; this file reads rows.
 *
 *   struct ct_dl_job j;
 *   static const struct ct_dl_col cols[] = {
 *           CT_DL_COL(struct ct_dl_job, id),       // SELECT id,
 *           CT_DL_COL(struct ct_dl_job, name),     //        name, ...
 *   };
 *   rc = CT_DB_QUERY(db, &res, "SELECT id, name FROM job WHERE id=?", id);
 *   if (rc == 0)
 *           rc = ct_dl_one(res, &j, cols, CT_DL_NCOLS(cols));
 *
 * A member's C type picks how its column is read (CT_DL_COL, checked by the
 * compiler): int64_t and int as integers, double, char arrays as text
 * copied and truncated to the array (NUL-terminated). CT_DL_COL_NAN reads
 * a double column whose SQL NULL means "none" as NAN. SQL NULL otherwise
 * reads as 0, 0.0 or "" (as ct_db_int and friends).
 */
#ifndef CT_DL_H
#define CT_DL_H

#include <stddef.h>
#include <stdint.h>

#include "db_args.h"

struct ct_db;
struct ct_db_res;

enum ct_dl_type { CT_DL_I64, CT_DL_INT, CT_DL_DBL, CT_DL_DBL_NAN, CT_DL_STR };

/* Where column i of a SELECT goes: the member at `off` (`cap` bytes). */
struct ct_dl_col {
	enum ct_dl_type type;
	size_t off, cap;
};

#define CT_DL__MEMBER(T, m) (((T *)0)->m)
#define CT_DL_COL(T, m) { .type = _Generic(CT_DL__MEMBER(T, m), \
	int64_t: CT_DL_I64, int: CT_DL_INT, double: CT_DL_DBL, char *: CT_DL_STR), \
	.off = offsetof(T, m), .cap = sizeof(CT_DL__MEMBER(T, m)) }
#define CT_DL_COL_NAN(T, m) { .type = _Generic(CT_DL__MEMBER(T, m), \
	double: CT_DL_DBL_NAN), .off = offsetof(T, m), .cap = sizeof(double) }
#define CT_DL_NCOLS(a) (sizeof(a) / sizeof((a)[0]))

/* The current row of `res` into `row` per cols[0..n): column i to
 * cols[i]. Columns past the result set's read as 0 / "". */
void ct_dl_row(const struct ct_db_res *res, void *row, const struct ct_dl_col *cols,
	       size_t n);

/* The next row of `res` into `row`, then frees `res` (also on error).
 * Returns 0, CT_ENOTFOUND when there is no row, CT_EINVAL when the result
 * set's column count is not n (the SQL and the table disagree). */
int ct_dl_one(struct ct_db_res *res, void *row, const struct ct_dl_col *cols, size_t n);

/* Every row of `res` into a new zeroed array of `size`-byte rows filled
 * per cols[0..ncols); frees `res` (also on error). *out is malloc'd (NULL
 * when there are no rows; free() it), *n its rows. `what` names the rows in
 * errors. Returns 0, CT_ENOMEM, or CT_EINVAL as ct_dl_one. */
int ct_dl_all(struct ct_db_res *res, size_t size, const struct ct_dl_col *cols,
	      size_t ncols, const char *what, void **out, size_t *n);

/* Run the SELECT `sql` with the arguments a[0..na) (db_args.h; NULL, 0
 * for none) and read its one row into `row` as ct_dl_one does, or every
 * row into a new array as ct_dl_all does. Returns their results, or the
 * query's error. CT_DL_ONE / CT_DL_ALL take the arguments as a list:
 *
 *   rc = CT_DL_ONE(db, &j, job_cols, "SELECT ... WHERE id=?", id);
 */
int ct_dl_query_one(struct ct_db *db, void *row, const struct ct_dl_col *cols, size_t n,
		    const char *sql, const struct ct_db_arg *a, size_t na);
int ct_dl_query_all(struct ct_db *db, size_t size, const struct ct_dl_col *cols,
		    size_t ncols, const char *what, void **out, size_t *n, const char *sql,
		    const struct ct_db_arg *a, size_t na);
/* Run the SELECT `sql` of one integer column (ids) with the arguments
 * a[0..na) and read its first `max` rows into ids[0..*n). Returns 0, the
 * query's error, or CT_EINVAL when the SELECT has not one column.
 *
 *   rc = CT_DL_IDS(db, ids, 100, &n, "SELECT id FROM workunit WHERE ...", now);
 */
int ct_dl_query_ids(struct ct_db *db, int64_t *ids, size_t max, size_t *n, const char *sql,
		    const struct ct_db_arg *a, size_t na);
/* Run the SELECT `sql` with the arguments a[0..na) and read its first
 * `max` rows into rows[0..*n) (rows of `size` bytes, each zeroed first and
 * filled per cols[0..ncols)): a caller's fixed array, no allocation.
 * Returns 0, the query's error, or CT_EINVAL as ct_dl_one. CT_DL_ROWS
 * takes the arguments as a list, the row size from the array's type:
 *
 *   struct ct_sched_held rows[16];
 *   rc = CT_DL_ROWS(db, rows, 16, &n, held_cols, "SELECT ...", hostid);
 */
int ct_dl_query_rows(struct ct_db *db, void *rows, size_t size, size_t max, size_t *n,
		     const struct ct_dl_col *cols, size_t ncols, const char *sql,
		     const struct ct_db_arg *a, size_t na);
/* ct_dl_query_all into a typed array: `out` is the address of a `T *`
 * (struct rows of T, the size taken from it), *n its rows. CT_DL_LIST takes
 * the arguments as a list:
 *
 *   struct ct_round_row *rows;
 *   rc = CT_DL_LIST(db, &rows, &n, round_cols, "rounds", "SELECT ...", jobid);
 */
int ct_dl_query_list(struct ct_db *db, size_t size, void *out, size_t *n,
		     const struct ct_dl_col *cols, size_t ncols, const char *what,
		     const char *sql, const struct ct_db_arg *a, size_t na);
/* IN lists of ids. A statement "pre?, ?, ...post" with m placeholders,
 * m = n rounded up to 4, 8, 16 or CT_DL_IN_MAX (the caller binds its last
 * value in the extra ones, ct_dl_in_ids), so that a connection's statement
 * cache holds four shapes of a statement however many values it takes.
 * ct_dl_in_list writes it into sql (cap bytes) and m into *m; returns 0,
 * or CT_EINTERNAL when it does not fit or n is not 1..CT_DL_IN_MAX. */
#define CT_DL_IN_MAX 32
int ct_dl_in_list(char *sql, size_t cap, const char *pre, const char *post, int n, int *m);
/* a[0..m) = ids[0..n), the last one repeated up to m (n >= 1). */
void ct_dl_in_ids(struct ct_db_arg *a, const int64_t *ids, int n, int m);

/* Rows by id: for ids[0..n) (any n, CT_DL_IN_MAX a statement), run the
 * SELECT "pre" + IN list + "post" (its columns per cols[0..ncols)) and
 * read each row into out[i] (rows of `size` bytes) for every i with
 * ids[i] equal to the row's int64_t member at id_off; with found_off >= 0,
 * the row's int member there is set to 1. Rows of out no row was read
 * into stay as they were. Returns 0 or a db error. */
int ct_dl_by_ids(struct ct_db *db, const char *pre, const char *post, const int64_t *ids,
		 int n, void *out, size_t size, const struct ct_dl_col *cols, size_t ncols,
		 size_t id_off, long found_off);

#define CT_DL_ONE(db, row, cols, sql, ...) ct_dl_query_one((db), (row), (cols), \
	CT_DL_NCOLS(cols), (sql), CT_DB_ARGS(__VA_ARGS__))
#define CT_DL_ALL(db, size, cols, what, out, n, sql, ...) ct_dl_query_all((db), (size), \
	(cols), CT_DL_NCOLS(cols), (what), (out), (n), (sql), CT_DB_ARGS(__VA_ARGS__))
#define CT_DL_LIST(db, out, n, cols, what, sql, ...) ct_dl_query_list((db), \
	sizeof(**(out)), (out), (n), (cols), CT_DL_NCOLS(cols), (what), (sql), \
	CT_DB_ARGS(__VA_ARGS__))
#define CT_DL_ROWS(db, rows, max, n, cols, sql, ...) ct_dl_query_rows((db), (rows), \
	sizeof(*(rows)), (max), (n), (cols), CT_DL_NCOLS(cols), (sql), \
	CT_DB_ARGS(__VA_ARGS__))
#define CT_DL_IDS(db, ids, max, n, sql, ...) ct_dl_query_ids((db), (ids), (max), (n), \
	(sql), CT_DB_ARGS(__VA_ARGS__))

#endif
