/*
 * db_args.h - typed parameters for db.h's statements, checked by the
 * compiler: each argument's C type picks its binding (_Generic), so there
 * is no type string to get wrong.
 *
 *   rc = CT_DB_EXEC(db, "UPDATE job SET status=? WHERE id=? AND status=?",
 *                   CT_JOB_DONE, jobid, CT_JOB_RUNNING);
 *   rc = CT_DB_QUERY(db, &res, "SELECT id FROM result WHERE name=?", name);
 *
 * int, unsigned, long, long long (int64_t) and size_t bind as BIGINT,
 * float and double as DOUBLE, char * / const char * as text (NULL binds SQL
 * NULL), CT_DB_BLOB(p, n) as a blob and CT_DB_NULL as SQL NULL. An argument
 * of any other type (a struct, a pointer to int...) does not compile. At
 * least one argument, at most 40; a statement without parameters uses
 * ct_db_execa(db, sql, NULL, 0) (ct_db_querya, ...).
 */
#ifndef CT_DB_ARGS_H
#define CT_DB_ARGS_H

#include <stddef.h>
#include <stdint.h>

struct ct_db;
struct ct_db_res;

/* One bound value; `type` is the db.h letter it binds as. */
struct ct_db_arg {
	char type;
	union {
		int64_t l;
		double d;
		const char *s;
		struct {
			const void *p;
			size_t n;
		} b;
	} v;
};

/* Run a statement that returns no rows (INSERT/UPDATE/DELETE/DDL) with
 * the arguments a[0..n) (NULL, 0 for none). Returns the number of affected
 * rows (>= 0; clamped to INT32_MAX; an UPDATE that matched a row but
 * changed no value counts as affected, as the connection uses
 * CLIENT_FOUND_ROWS), or CT_EDB / CT_EAGAIN / CT_EDUP / CT_EINVAL (n is not
 * the number of placeholders). Outside a transaction (autocommit), a
 * deadlock or a Galera certification failure (error 1213) is retried with
 * ct_db_txn's backoff and bound before CT_EAGAIN comes back (a lock wait
 * timeout is not); inside one (ct_db_begin) it comes back at once, for
 * ct_db_txn to run the whole again. */
int ct_db_execa(struct ct_db *db, const char *sql, const struct ct_db_arg *a, size_t n);
/* Run a query with the arguments a[0..n). On success *out is a result set
 * positioned before the first row; the caller frees it with
 * ct_db_res_free(). Errors as ct_db_execa(); *out = NULL on failure.
 * Result sets are capped at 1,000,000 cells: use LIMIT. */
int ct_db_querya(struct ct_db *db, struct ct_db_res **out, const char *sql,
		 const struct ct_db_arg *a, size_t n);
/* One-value shortcuts: run the query and read column 0 of the first row.
 * Returns 0, CT_ENOTFOUND (no row), or an error as ct_db_execa(). A NULL
 * value gives 0 / 0.0. */
int ct_db_query_inta(struct ct_db *db, int64_t *out, const char *sql,
		     const struct ct_db_arg *a, size_t n);
int ct_db_query_doublea(struct ct_db *db, double *out, const char *sql,
			const struct ct_db_arg *a, size_t n);

/* Call fn(arg, sql, a, n) before each prepared statement this connection
 * runs from now on (fn NULL: stop); a and its strings are the caller's,
 * valid during the call only. For tests and tools that look at what a
 * request runs (test/test_sched_scan.c EXPLAINs each statement). */
typedef void ct_db_trace_fn(void *arg, const char *sql, const struct ct_db_arg *a, size_t n);
void ct_db_set_trace(struct ct_db *db, ct_db_trace_fn *fn, void *arg);

/* Prepare `sql` (it stays in the connection's cache) and return its number
 * of '?' placeholders, or CT_EDB (the detail says why it does not prepare)
 * / CT_ENOMEM. For tests that check every statement of the server. */
int ct_db_param_count(struct ct_db *db, const char *sql);

static inline struct ct_db_arg ct_db_arg_l(long long x)
{
	return (struct ct_db_arg){ .type = 'l', .v.l = (int64_t)x };
}

static inline struct ct_db_arg ct_db_arg_u(unsigned long long x)
{
	return (struct ct_db_arg){ .type = 'l', .v.l = (int64_t)x };
}

static inline struct ct_db_arg ct_db_arg_d(double x)
{
	return (struct ct_db_arg){ .type = 'd', .v.d = x };
}

static inline struct ct_db_arg ct_db_arg_s(const char *x)
{
	return (struct ct_db_arg){ .type = 's', .v.s = x };
}

static inline struct ct_db_arg ct_db_arg_self(struct ct_db_arg x)
{
	return x;
}

#define CT_DB_BLOB(p, n) ((struct ct_db_arg){ .type = 'b', .v.b = { (p), (n) } })
#define CT_DB_NULL ((struct ct_db_arg){ .type = 'n' })

/* The binding of one value, chosen by its type. */
#define CT_DB_ARG(x) _Generic((x), \
	_Bool: ct_db_arg_l, char: ct_db_arg_l, signed char: ct_db_arg_l, \
	short: ct_db_arg_l, int: ct_db_arg_l, long: ct_db_arg_l, \
	long long: ct_db_arg_l, unsigned char: ct_db_arg_u, \
	unsigned short: ct_db_arg_u, unsigned: ct_db_arg_u, \
	unsigned long: ct_db_arg_u, unsigned long long: ct_db_arg_u, \
	float: ct_db_arg_d, double: ct_db_arg_d, \
	char *: ct_db_arg_s, const char *: ct_db_arg_s, \
	struct ct_db_arg: ct_db_arg_self)(x)

/* ---- argument lists (internal) ------------------------------------------ */
#define CT_DB__NTH(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, _35, _36, _37, _38, _39, _40, N, ...) N
#define CT_DB__NARG(...) CT_DB__NTH(__VA_ARGS__, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define CT_DB__CAT(a, b) CT_DB__CAT2(a, b)
#define CT_DB__CAT2(a, b) a##b
#define CT_DB__M1(x) CT_DB_ARG(x)
#define CT_DB__M2(x, ...) CT_DB_ARG(x), CT_DB__M1(__VA_ARGS__)
#define CT_DB__M3(x, ...) CT_DB_ARG(x), CT_DB__M2(__VA_ARGS__)
#define CT_DB__M4(x, ...) CT_DB_ARG(x), CT_DB__M3(__VA_ARGS__)
#define CT_DB__M5(x, ...) CT_DB_ARG(x), CT_DB__M4(__VA_ARGS__)
#define CT_DB__M6(x, ...) CT_DB_ARG(x), CT_DB__M5(__VA_ARGS__)
#define CT_DB__M7(x, ...) CT_DB_ARG(x), CT_DB__M6(__VA_ARGS__)
#define CT_DB__M8(x, ...) CT_DB_ARG(x), CT_DB__M7(__VA_ARGS__)
#define CT_DB__M9(x, ...) CT_DB_ARG(x), CT_DB__M8(__VA_ARGS__)
#define CT_DB__M10(x, ...) CT_DB_ARG(x), CT_DB__M9(__VA_ARGS__)
#define CT_DB__M11(x, ...) CT_DB_ARG(x), CT_DB__M10(__VA_ARGS__)
#define CT_DB__M12(x, ...) CT_DB_ARG(x), CT_DB__M11(__VA_ARGS__)
#define CT_DB__M13(x, ...) CT_DB_ARG(x), CT_DB__M12(__VA_ARGS__)
#define CT_DB__M14(x, ...) CT_DB_ARG(x), CT_DB__M13(__VA_ARGS__)
#define CT_DB__M15(x, ...) CT_DB_ARG(x), CT_DB__M14(__VA_ARGS__)
#define CT_DB__M16(x, ...) CT_DB_ARG(x), CT_DB__M15(__VA_ARGS__)
#define CT_DB__M17(x, ...) CT_DB_ARG(x), CT_DB__M16(__VA_ARGS__)
#define CT_DB__M18(x, ...) CT_DB_ARG(x), CT_DB__M17(__VA_ARGS__)
#define CT_DB__M19(x, ...) CT_DB_ARG(x), CT_DB__M18(__VA_ARGS__)
#define CT_DB__M20(x, ...) CT_DB_ARG(x), CT_DB__M19(__VA_ARGS__)
#define CT_DB__M21(x, ...) CT_DB_ARG(x), CT_DB__M20(__VA_ARGS__)
#define CT_DB__M22(x, ...) CT_DB_ARG(x), CT_DB__M21(__VA_ARGS__)
#define CT_DB__M23(x, ...) CT_DB_ARG(x), CT_DB__M22(__VA_ARGS__)
#define CT_DB__M24(x, ...) CT_DB_ARG(x), CT_DB__M23(__VA_ARGS__)
#define CT_DB__M25(x, ...) CT_DB_ARG(x), CT_DB__M24(__VA_ARGS__)
#define CT_DB__M26(x, ...) CT_DB_ARG(x), CT_DB__M25(__VA_ARGS__)
#define CT_DB__M27(x, ...) CT_DB_ARG(x), CT_DB__M26(__VA_ARGS__)
#define CT_DB__M28(x, ...) CT_DB_ARG(x), CT_DB__M27(__VA_ARGS__)
#define CT_DB__M29(x, ...) CT_DB_ARG(x), CT_DB__M28(__VA_ARGS__)
#define CT_DB__M30(x, ...) CT_DB_ARG(x), CT_DB__M29(__VA_ARGS__)
#define CT_DB__M31(x, ...) CT_DB_ARG(x), CT_DB__M30(__VA_ARGS__)
#define CT_DB__M32(x, ...) CT_DB_ARG(x), CT_DB__M31(__VA_ARGS__)
#define CT_DB__M33(x, ...) CT_DB_ARG(x), CT_DB__M32(__VA_ARGS__)
#define CT_DB__M34(x, ...) CT_DB_ARG(x), CT_DB__M33(__VA_ARGS__)
#define CT_DB__M35(x, ...) CT_DB_ARG(x), CT_DB__M34(__VA_ARGS__)
#define CT_DB__M36(x, ...) CT_DB_ARG(x), CT_DB__M35(__VA_ARGS__)
#define CT_DB__M37(x, ...) CT_DB_ARG(x), CT_DB__M36(__VA_ARGS__)
#define CT_DB__M38(x, ...) CT_DB_ARG(x), CT_DB__M37(__VA_ARGS__)
#define CT_DB__M39(x, ...) CT_DB_ARG(x), CT_DB__M38(__VA_ARGS__)
#define CT_DB__M40(x, ...) CT_DB_ARG(x), CT_DB__M39(__VA_ARGS__)
#define CT_DB__MAP(...) CT_DB__CAT(CT_DB__M, CT_DB__NARG(__VA_ARGS__))(__VA_ARGS__)

/* The argument list of a statement: an array and its length. */
#define CT_DB_ARGS(...) (const struct ct_db_arg[]){ CT_DB__MAP(__VA_ARGS__) }, \
	(size_t)CT_DB__NARG(__VA_ARGS__)

#define CT_DB_EXEC(db, sql, ...) ct_db_execa((db), (sql), CT_DB_ARGS(__VA_ARGS__))
#define CT_DB_QUERY(db, out, sql, ...) ct_db_querya((db), (out), (sql), \
	CT_DB_ARGS(__VA_ARGS__))
#define CT_DB_QUERY_INT(db, out, sql, ...) ct_db_query_inta((db), (out), (sql), \
	CT_DB_ARGS(__VA_ARGS__))
#define CT_DB_QUERY_DOUBLE(db, out, sql, ...) ct_db_query_doublea((db), (out), (sql), \
	CT_DB_ARGS(__VA_ARGS__))

#endif
