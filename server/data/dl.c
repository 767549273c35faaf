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

int ct_dl_query_list(struct ct_db *db, size_t size, void *out, size_t *n,
		     const struct ct_dl_col *cols, size_t ncols, const char *what,
		     const char *sql, const struct ct_db_arg *a, size_t na)
{
	void *rows = NULL;
	int rc = ct_dl_query_all(db, size, cols, ncols, what, &rows, n, sql, a, na);

	memcpy(out, &rows, sizeof(rows));	/* a T * has a void *'s representation */
	return rc;
}
