/*
 * web_recover.c - see web_recover.h: a bounded queue of recovery requests
 * and the worker thread that makes and mails their links.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_buf.h"
#include "ct_err.h"
#include "ct_log.h"
#include "ct_os.h"
#include "data/db.h"
#include "data/server.h"
#include "rpc/account.h"
#include "web_int.h"
#include "web_mail.h"
#include "web_recover.h"

struct request {
	char email[CT_MAIL_ADDR_MAX + 1];
	long ttl;
};

struct ct_web_recover {
	struct ct_server *srv;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake, idle;
	struct request q[CT_RECOVER_QUEUE];	/* a ring: head, n */
	size_t head, n;
	int busy;			/* the worker is on a request */
	int stop;
};

/* srv->recover is made by the first request of any thread */
static pthread_mutex_t make_lock = PTHREAD_MUTEX_INITIALIZER;

/* Mail account `email`'s new reset link; a failure is logged only. */
static void send_link(struct ct_server *srv, const char *email, const char *token, long ttl)
{
	const char *name = ct_web_project_name(srv);
	struct ct_buf body = CT_BUF_INIT(8192);
	struct ct_mail_conf mc;
	char url[600], subject[220];
	int ascii = strlen(name) <= 120;
	int rc;

	for (const char *p = name; *p; p++)
		ascii &= *p >= 0x20 && *p < 0x7f;
	ct_web_project_url(srv, url, sizeof(url));
	snprintf(subject, sizeof(subject), "Your password%s%s", ascii ? " on " : "",
		 ascii ? name : "");
	rc = ct_mail_conf_load(srv->conf, &mc);
	if (rc == 0)
		rc = ct_buf_appendf(&body, "Someone, probably you, asked for a new password for "
			"the account of this address on %s.\n\nTo choose one, open this link within "
			"%ld minutes (it works once):\n\n%s/account/reset?token=%s\n\nIf you did not "
			"ask, ignore this mail: your password stays as it is. Your computers keep "
			"working either way.\n", name, ttl / 60, url, token);
	if (rc == 0)
		rc = ct_mail_send_async(&mc, email, subject, ct_buf_cstr(&body));
	if (rc < 0)
		ct_log_warn("web: a recovery mail was not sent: %s", ct_errmsg(rc));
	ct_buf_free(&body);
}

/* One request: a link for a known address, nothing for an unknown one. */
static void serve(struct ct_web_recover *r, struct ct_db **db, const struct request *rq)
{
	char token[65];
	int64_t userid = 0;
	int rc = *db != NULL ? 0 : ct_db_open(db, r->srv->clock);

	if (rc == 0)
		rc = ct_account_reset_start(*db, rq->email, (int)rq->ttl, token, &userid);
	if (rc == 0) {
		send_link(r->srv, rq->email, token, rq->ttl);
		ct_log_info("web: user %lld: a recovery link was mailed", (long long)userid);
	} else if (rc != CT_ENOTFOUND) {
		ct_log_warn("web: a recovery request failed: %s", ct_errmsg(rc));
		if (*db != NULL && !ct_db_alive(*db)) {
			ct_db_close(*db);	/* opened again for the next one */
			*db = NULL;
		}
	}
}

static void *worker(void *arg)
{
	struct ct_web_recover *r = arg;
	struct ct_db *db = NULL;
	struct request rq;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (r->n == 0 && !r->stop)
			pthread_cond_wait(&r->wake, &r->lock);
		if (r->stop)
			break;
		rq = r->q[r->head];
		r->head = (r->head + 1) % CT_RECOVER_QUEUE;
		r->n--;
		r->busy = 1;
		pthread_mutex_unlock(&r->lock);
		serve(r, &db, &rq);
		pthread_mutex_lock(&r->lock);
		r->busy = 0;
		pthread_cond_broadcast(&r->idle);
	}
	if (r->n > 0)
		ct_log_warn("web: %zu recovery request(s) dropped at shutdown", r->n);
	r->n = 0;
	pthread_cond_broadcast(&r->idle);
	pthread_mutex_unlock(&r->lock);
	ct_db_close(db);
	return NULL;
}

/* srv's worker, started now if it is not yet (make_lock held). */
static int worker_of(struct ct_server *srv, struct ct_web_recover **out)
{
	struct ct_web_recover *r = srv->recover;

	if (r == NULL) {
		r = calloc(1, sizeof(*r));
		if (r == NULL)
			return CT_ENOMEM;
		r->srv = srv;
		pthread_mutex_init(&r->lock, NULL);
		pthread_cond_init(&r->wake, NULL);
		ct_os_cond_init(&r->idle);
		if (pthread_create(&r->thread, NULL, worker, r) != 0) {
			pthread_mutex_destroy(&r->lock);
			pthread_cond_destroy(&r->wake);
			pthread_cond_destroy(&r->idle);
			free(r);
			return ct_error(CT_EINTERNAL, "web: cannot start the recovery thread");
		}
		srv->recover = r;
	}
	*out = r;
	return 0;
}

int ct_web_recover_queue(struct ct_server *srv, const char *email, long ttl)
{
	struct ct_web_recover *r = NULL;
	int rc;

	if (strlen(email) > CT_MAIL_ADDR_MAX)
		return ct_error(CT_EINVAL, "web: a recovery address over %d bytes",
				CT_MAIL_ADDR_MAX);
	pthread_mutex_lock(&make_lock);
	rc = worker_of(srv, &r);
	pthread_mutex_unlock(&make_lock);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&r->lock);
	if (r->n == CT_RECOVER_QUEUE) {
		rc = ct_error(CT_EBUSY, "web: %d recovery requests queued", CT_RECOVER_QUEUE);
	} else {
		struct request *rq = &r->q[(r->head + r->n) % CT_RECOVER_QUEUE];

		snprintf(rq->email, sizeof(rq->email), "%s", email);
		rq->ttl = ttl;
		r->n++;
		pthread_cond_signal(&r->wake);
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

int ct_web_recover_drain(struct ct_server *srv, double timeout_s)
{
	struct ct_web_recover *r;
	struct timespec ts;
	int rc = 0;

	pthread_mutex_lock(&make_lock);
	r = srv->recover;
	pthread_mutex_unlock(&make_lock);
	if (r == NULL)
		return 0;
	ct_os_cond_deadline(timeout_s, &ts);
	pthread_mutex_lock(&r->lock);
	while ((r->n > 0 || r->busy) && rc == 0)
		if (pthread_cond_timedwait(&r->idle, &r->lock, &ts) != 0 && (r->n > 0 || r->busy))
			rc = ct_error(CT_ETIMEOUT, "web: recovery requests still queued");
	pthread_mutex_unlock(&r->lock);
	return rc;
}

void ct_web_recover_stop(struct ct_server *srv)
{
	struct ct_web_recover *r;

	pthread_mutex_lock(&make_lock);
	r = srv->recover;
	srv->recover = NULL;
	pthread_mutex_unlock(&make_lock);
	if (r == NULL)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = 1;
	pthread_cond_signal(&r->wake);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->wake);
	pthread_cond_destroy(&r->idle);
	free(r);
}
