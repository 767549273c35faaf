/*
 * dl.c - the data layer's row mapper (see dl.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "db.h"
#include "dl.h"

void ct_dl_row(const struct ct_db_res *res, void *row, const struct ct_dl_col *cols,
	       size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *p = (char *)row + cols[i].off;
		int c = (int)i;

		switch (cols[i].type) {
		case CT_DL_I64:
			*(int64_t *)p = ct_db_int(res, c);
			break;
		case CT_DL_INT:
			*(int *)p = (int)ct_db_int(res, c);
			break;
		case CT_DL_DBL:
			*(double *)p = ct_db_double(res, c);
			break;
		case CT_DL_DBL_NAN:
			*(double *)p = ct_db_isnull(res, c) ? NAN : ct_db_double(res, c);
			break;
		case CT_DL_STR:
			snprintf(p, cols[i].cap, "%s", ct_db_str(res, c));
			break;
		}
	}
}

static int check_ncols(const struct ct_db_res *res, size_t n, const char *what)
{
	if ((size_t)ct_db_ncols(res) != n)
		return ct_error(CT_EINVAL, "%s: %d columns for a table of %zu", what,
				ct_db_ncols(res), n);
	return 0;
}

int ct_dl_one(struct ct_db_res *res, void *row, const struct ct_dl_col *cols, size_t n)
{
	int rc = check_ncols(res, n, "row");

	if (rc == 0)
		rc = ct_db_next(res) > 0 ? 0 : CT_ENOTFOUND;
	if (rc == 0)
		ct_dl_row(res, row, cols, n);
	ct_db_res_free(res);
	return rc;
}

int ct_dl_all(struct ct_db_res *res, size_t size, const struct ct_dl_col *cols,
	      size_t ncols, const char *what, void **out, size_t *n)
{
	size_t rows = ct_db_nrows(res), i = 0;
	char *a = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	rc = check_ncols(res, ncols, what);
	if (rc == 0 && rows) {
		a = calloc(rows, size);
		if (a == NULL)
			rc = ct_error(CT_ENOMEM, "%zu %s", rows, what);
	}
	while (rc == 0 && i < rows && ct_db_next(res) > 0)
		ct_dl_row(res, a + size * i++, cols, ncols);
	ct_db_res_free(res);
	*out = a;
	*n = i;
	return rc;
}

int ct_dl_query_one(struct ct_db *db, void *row, const struct ct_dl_col *cols, size_t n,
		    const char *sql, const struct ct_db_arg *a, size_t na)
{
	struct ct_db_res *res = NULL;
	int rc = ct_db_querya(db, &res, sql, a, na);

	return rc < 0 ? rc : ct_dl_one(res, row, cols, n);
}

int ct_dl_query_all(struct ct_db *db, size_t size, const struct ct_dl_col *cols,
		    size_t ncols, const char *what, void **out, size_t *n, const char *sql,
		    const struct ct_db_arg *a, size_t na)
{
	struct ct_db_res *res = NULL;
	int rc = ct_db_querya(db, &res, sql, a, na);

	*out = NULL;
	*n = 0;
	return rc < 0 ? rc : ct_dl_all(res, size, cols, ncols, what, out, n);
}

int ct_dl_query_ids(struct ct_db *db, int64_t *ids, size_t max, size_t *n, const char *sql,
		    const struct ct_db_arg *a, size_t na)
{
	static const struct ct_dl_col id_col = { .type = CT_DL_I64, .cap = sizeof(int64_t) };
	struct ct_db_res *res = NULL;
	int rc = ct_db_querya(db, &res, sql, a, na);

	*n = 0;
	if (rc < 0)
		return rc;
	rc = check_ncols(res, 1, "ids");
	while (rc == 0 && *n < max && ct_db_next(res) > 0)
		ct_dl_row(res, &ids[(*n)++], &id_col, 1);
	ct_db_res_free(res);
	return rc;
}

int ct_dl_query_rows(struct ct_db *db, void *rows, size_t size, size_t max, size_t *n,
		     const struct ct_dl_col *cols, size_t ncols, const char *sql,
		     const struct ct_db_arg *a, size_t na)
{
	struct ct_db_res *res = NULL;
	int rc = ct_db_querya(db, &res, sql, a, na);

	*n = 0;
	if (rc < 0)
		return rc;
	rc = check_ncols(res, ncols, "rows");
	for (; rc == 0 && *n < max && ct_db_next(res) > 0; (*n)++) {
		void *row = (char *)rows + *n * size;

		memset(row, 0, size);
		ct_dl_row(res, row, cols, ncols);
	}
	ct_db_res_free(res);
	return rc;
}

int ct_dl_query_list(struct ct_db *db, size_t size, void *out, size_t *n,
		     const struct ct_dl_col *cols, size_t ncols, const char *what,
		     const char *sql, const struct ct_db_arg *a, size_t na)
{
	void *rows = NULL;
	int rc = ct_dl_query_all(db, size, cols, ncols, what, &rows, n, sql, a, na);

	memcpy(out, &rows, sizeof(rows));	/* a T * has a void *'s representation */
	return rc;
}

int ct_dl_in_list(char *sql, size_t cap, const char *pre, const char *post, int n, int *m)
{
	size_t len;

	*m = n <= 4 ? 4 : n <= 8 ? 8 : n <= 16 ? 16 : CT_DL_IN_MAX;
	if (n < 1 || n > CT_DL_IN_MAX)
		return ct_error(CT_EINTERNAL, "IN list of %d values", n);
	len = (size_t)snprintf(sql, cap, "%s", pre);
	for (int i = 0; i < *m && len < cap; i++)
		len += (size_t)snprintf(sql + len, cap - len, i ? ", ?" : "?");
	if (len < cap)
		len += (size_t)snprintf(sql + len, cap - len, "%s", post);
	return len < cap ? 0 : ct_error(CT_EINTERNAL, "statement too long");
}

void ct_dl_in_ids(struct ct_db_arg *a, const int64_t *ids, int n, int m)
{
	for (int i = 0; i < m; i++)
		a[i] = ct_db_arg_l(ids[i < n ? i : n - 1]);
}

/* One statement of ct_dl_by_ids: n <= CT_DL_IN_MAX; row: a scratch row. */
static int by_ids_chunk(struct ct_db *db, const char *pre, const char *post, const int64_t *ids,
			int n, char *out, size_t size, const struct ct_dl_col *cols,
			size_t ncols, size_t id_off, long found_off, char *row)
{
	struct ct_db_arg a[CT_DL_IN_MAX];
	struct ct_db_res *res = NULL;
	char sql[2048];
	int m, rc;

	rc = ct_dl_in_list(sql, sizeof(sql), pre, post, n, &m);
	if (rc < 0)
		return rc;
	ct_dl_in_ids(a, ids, n, m);
	rc = ct_db_querya(db, &res, sql, a, (size_t)m);
	if (rc < 0)
		return rc;
	rc = check_ncols(res, ncols, "rows by id");
	while (rc == 0 && ct_db_next(res) > 0) {
		int64_t id;

		memset(row, 0, size);
		ct_dl_row(res, row, cols, ncols);
		memcpy(&id, row + id_off, sizeof(id));
		if (found_off >= 0)
			*(int *)(row + found_off) = 1;
		for (int i = 0; i < n; i++)
			if (ids[i] == id)
				memcpy(out + (size_t)i * size, row, size);
	}
	ct_db_res_free(res);
	return rc;
}

int ct_dl_by_ids(struct ct_db *db, const char *pre, const char *post, const int64_t *ids,
		 int n, void *out, size_t size, const struct ct_dl_col *cols, size_t ncols,
		 size_t id_off, long found_off)
{
	char *row = malloc(size);
	int rc = row ? 0 : CT_ENOMEM;

	for (int k = 0; rc == 0 && k < n; k += CT_DL_IN_MAX)
		rc = by_ids_chunk(db, pre, post, ids + k, n - k < CT_DL_IN_MAX ? n - k : CT_DL_IN_MAX,
				  (char *)out + (size_t)k * size, size, cols, ncols, id_off,
				  found_off, row);
	free(row);
	return rc;
}
