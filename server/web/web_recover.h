/*
 * web_recover.h - the work of a password-recovery request, done after the
 * forgot page has answered (web_settings.c).
 *
 * Looking the address up, making a link for a known one (a random token,
 * its hash written to the database) and handing the mail to web_mail.h
 * took about a millisecond more for a known address than for an unknown
 * one, so the page's answer time said which addresses have accounts. The
 * page now only queues the address (the same few copies for any address)
 * and answers; one worker thread per server, with its own database
 * connection, does the rest in order. The queue holds at most
 * CT_RECOVER_QUEUE requests (the per-address and per-IP rate limits come
 * before it); one that does not fit is dropped and logged, the page's
 * answer staying the same.
 */
#ifndef CT_WEB_RECOVER_H
#define CT_WEB_RECOVER_H

#define CT_RECOVER_QUEUE 64

struct ct_server;
struct ct_web_recover;

/* Queue a link for `email` (lowercase, checked by the caller, at most
 * CT_MAIL_ADDR_MAX bytes), valid ttl seconds, for srv's worker, which the
 * first call starts. Returns 0, CT_EBUSY (the queue is full: dropped),
 * CT_ENOMEM, or CT_EINTERNAL (no thread); the caller's answer must not
 * depend on it. */
int ct_web_recover_queue(struct ct_server *srv, const char *email, long ttl);

/* Wait until every queued request is done (tests; at most timeout_s
 * seconds). 0, or CT_ETIMEOUT. */
int ct_web_recover_drain(struct ct_server *srv, double timeout_s);

/* Stop srv's worker after the request it is on (the rest are dropped and
 * logged), close its connection and free it; srv->recover becomes NULL.
 * Call before ct_db_global_end(). No worker: a no-op. */
void ct_web_recover_stop(struct ct_server *srv);

#endif
