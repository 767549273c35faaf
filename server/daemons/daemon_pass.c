/*
 * daemon_pass.c - the item daemons' one pass and its error policy (see
 * daemon_pass.h): claim more ids than the batch by the number backed off,
 * skip those, handle the rest one by one.
 */
#include "daemon_pass.h"

#include "ct_err.h"
#include "ct_log.h"
#include "data/db.h"
#include "data/server.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t tables_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ct_pass_backoff *tables;	/* every table a pass has used */

static void list_table(struct ct_pass_backoff *bo)
{
	pthread_mutex_lock(&tables_mu);
	if (!bo->listed) {
		bo->next = tables;
		tables = bo;
		bo->listed = 1;
	}
	pthread_mutex_unlock(&tables_mu);
}

void ct_pass_forget_all(void)
{
	pthread_mutex_lock(&tables_mu);
	for (struct ct_pass_backoff *bo = tables; bo; bo = bo->next) {
		pthread_mutex_lock(&bo->mu);
		bo->n = 0;
		pthread_mutex_unlock(&bo->mu);
	}
	pthread_mutex_unlock(&tables_mu);
}

static long find(const struct ct_pass_backoff *bo, int64_t id)
{
	for (size_t i = 0; i < bo->n; i++)
		if (bo->item[i].id == id)
			return (long)i;
	return -1;
}

static int backed_off(struct ct_pass_backoff *bo, int64_t id, int64_t now)
{
	long i;
	int off;

	pthread_mutex_lock(&bo->mu);
	i = find(bo, id);
	off = i >= 0 && bo->item[i].until > now;
	pthread_mutex_unlock(&bo->mu);
	return off;
}

/* Record a failure of `id`; returns its failures so far and sets *wait to
 * the seconds it is left out. A full table drops the entry that would be
 * retried first, so the items failing longest stay out. */
static int fail(struct ct_pass_backoff *bo, int64_t id, int64_t now, int64_t *wait)
{
	long i;
	int failures;

	pthread_mutex_lock(&bo->mu);
	i = find(bo, id);
	if (i < 0) {
		if (bo->n == CT_PASS_BACKOFF_MAX) {
			size_t soonest = 0;

			for (size_t k = 1; k < bo->n; k++)
				if (bo->item[k].until < bo->item[soonest].until)
					soonest = k;
			bo->item[soonest] = bo->item[--bo->n];
		}
		i = (long)bo->n++;
		bo->item[i].id = id;
		bo->item[i].failures = 0;
	}
	failures = ++bo->item[i].failures;
	*wait = CT_PASS_BACKOFF_FIRST;
	for (int k = 1; k < failures && *wait < CT_PASS_BACKOFF_LAST; k++)
		*wait *= 2;
	if (*wait > CT_PASS_BACKOFF_LAST)
		*wait = CT_PASS_BACKOFF_LAST;
	bo->item[i].until = now + *wait;
	pthread_mutex_unlock(&bo->mu);
	return failures;
}

static void forgive(struct ct_pass_backoff *bo, int64_t id)
{
	long i;

	pthread_mutex_lock(&bo->mu);
	i = find(bo, id);
	if (i >= 0)
		bo->item[i] = bo->item[--bo->n];
	pthread_mutex_unlock(&bo->mu);
}

int ct_pass_failures(struct ct_pass_backoff *bo, int64_t id)
{
	long i;
	int n;

	pthread_mutex_lock(&bo->mu);
	i = find(bo, id);
	n = i >= 0 ? bo->item[i].failures : 0;
	pthread_mutex_unlock(&bo->mu);
	return n;
}

int ct_pass_run(struct ct_server *srv, struct ct_db *db, const struct ct_pass *p, void *arg)
{
	size_t cap, n = 0, tried = 0;
	int64_t *ids;
	int rc, done = 0;

	list_table(p->backoff);
	pthread_mutex_lock(&p->backoff->mu);
	cap = p->batch + p->backoff->n;
	pthread_mutex_unlock(&p->backoff->mu);
	ids = calloc(cap, sizeof(*ids));
	if (ids == NULL)
		return ct_error(CT_ENOMEM, "%s: %zu ids", p->name, cap);
	rc = p->claim(srv, db, ids, cap, &n, arg);
	for (size_t i = 0; rc >= 0 && i < n && tried < p->batch && !ct_server_stopping(srv); i++) {
		int64_t now = ct_db_now(db), wait;
		int failures;

		if (backed_off(p->backoff, ids[i], now))
			continue;
		tried++;
		rc = p->handle(srv, db, ids[i], arg);
		if (rc >= 0) {
			done += rc;
			forgive(p->backoff, ids[i]);
			continue;
		}
		if (rc == CT_EAGAIN || (rc == CT_EDB && !ct_db_alive(db)))
			break;	/* the connection, not the item: the role loop reconnects */
		failures = fail(p->backoff, ids[i], now, &wait);
		ct_log_error("%s: %lld: %s (failed %d time%s; left out for %lld s)", p->name,
			     (long long)ids[i], ct_errmsg(rc), failures, failures == 1 ? "" : "s",
			     (long long)wait);
		rc = 0;
	}
	free(ids);
	return rc < 0 ? rc : done;
}
