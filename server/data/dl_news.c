/*
 * dl_news.c - the news items the operator posts (`ctune-server news add`)
 * and the pages and feed read (see dl_web.h).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "db.h"
#include "dl.h"
#include "dl_web.h"

/* ---- news ----------------------------------------------------------------- */

int ct_web_news_add(struct ct_db *db, const char *title, const char *body, int64_t *id)
{
	int rc;

	if (!ct_web_text_ok(title, 1, CT_WEB_NEWS_TITLE_MAX, 0))
		return ct_error(CT_EINVAL, "news: a title of 1 to %d bytes of text, one line",
				CT_WEB_NEWS_TITLE_MAX);
	if (!ct_web_text_ok(body, 0, CT_WEB_NEWS_BODY_MAX, 1))
		return ct_error(CT_EINVAL, "news: a text of at most %d bytes", CT_WEB_NEWS_BODY_MAX);
	rc = CT_DB_EXEC(db, "INSERT INTO news (create_time, title, body) VALUES (?, ?, ?)",
			ct_db_now(db), title, body);
	if (rc < 0)
		return rc;
	*id = ct_db_last_id(db);
	return 0;
}

#define NW struct ct_web_news
static const struct ct_dl_col news_cols[] = {
	CT_DL_COL(NW, id), CT_DL_COL(NW, create_time), CT_DL_COL(NW, title), CT_DL_COL(NW, body),
};
#undef NW

int ct_web_news(struct ct_db *db, size_t max, struct ct_web_news **items, size_t *n)
{
	void *rows = NULL;
	int rc = CT_DL_ALL(db, sizeof(**items), news_cols, "news", &rows, n, "SELECT id, "
			   "create_time, title, body FROM news ORDER BY id DESC LIMIT ?",
			   (int64_t)max);

	*items = rows;
	return rc;
}
