/*
 * daemon_pass.c - the item daemons' one pass and its error policy (see
 * daemon_pass.h): claim more ids than the batch by the number backed off,
 * skip those, handle the rest one by one or in groups.
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

/* The connection, not the item, failed: the pass stops. */
static int connection_lost(struct ct_db *db, int rc)
{
	return rc == CT_EAGAIN || (rc == CT_EDB && !ct_db_alive(db));
}

/* Handle ids[i] alone: its result into *done; 0 to go on, or the
 * connection's error. */
static int pass_one(struct ct_server *srv, struct ct_db *db, const struct ct_pass *p,
		    int64_t id, void *arg, int *done)
{
	int64_t now = ct_db_now(db), wait;
	int failures, rc;

	rc = p->handle(srv, db, id, arg);
	if (rc >= 0) {
		*done += rc;
		forgive(p->backoff, id);
		return 0;
	}
	if (connection_lost(db, rc))
		return rc;	/* the role loop reconnects */
	failures = fail(p->backoff, id, now, &wait);
	ct_log_error("%s: %lld: %s (failed %d time%s; left out for %lld s)", p->name,
		     (long long)id, ct_errmsg(rc), failures, failures == 1 ? "" : "s",
		     (long long)wait);
	return 0;
}

/* Handle ids[0..n) as groups of p->group, a group that fails item by item. */
static int pass_groups(struct ct_server *srv, struct ct_db *db, const struct ct_pass *p,
		       const int64_t *ids, size_t n, void *arg, int *done)
{
	int rc = 0;

	for (size_t k = 0; rc >= 0 && k < n && !ct_server_stopping(srv); k += p->group) {
		size_t m = n - k < p->group ? n - k : p->group;

		rc = p->handle_many(srv, db, ids + k, m, arg);
		if (rc >= 0) {
			*done += rc;
			for (size_t i = 0; i < m; i++)
				forgive(p->backoff, ids[k + i]);
			continue;
		}
		if (connection_lost(db, rc))
			break;
		rc = 0;
		for (size_t i = 0; rc >= 0 && i < m && !ct_server_stopping(srv); i++)
			rc = pass_one(srv, db, p, ids[k + i], arg, done);
	}
	return rc;
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
	/* the ones not backed off, up to the batch, in claim order */
	for (size_t i = 0; rc >= 0 && i < n && tried < p->batch; i++)
		if (!backed_off(p->backoff, ids[i], ct_db_now(db)))
			ids[tried++] = ids[i];
	if (rc >= 0 && p->handle_many && p->group > 1)
		rc = pass_groups(srv, db, p, ids, tried, arg, &done);
	else
		for (size_t i = 0; rc >= 0 && i < tried && !ct_server_stopping(srv); i++)
			rc = pass_one(srv, db, p, ids[i], arg, &done);
	free(ids);
	return rc < 0 ? rc : done;
}
