/*
 * daemon_pass.h - the one pass every item daemon runs (transitioner,
 * validator, assimilator, purge): claim a batch of ids, handle each in
 * turn, and one error policy for the items.
 *
 * The policy: an item whose handler fails is logged (daemon, id, error,
 * how many times it failed), counted, and backed off: the next passes of
 * this process leave it out for 10 s, doubling each failure up to an hour,
 * and claim that many more ids so the items behind it are still reached.
 * One item that always fails therefore costs one log line per back-off
 * and never blocks the rest. A lost connection (CT_EDB with the
 * connection not answering) or an exhausted deadlock retry (CT_EAGAIN) is
 * not the item's fault: the pass stops and returns it, and the role loop
 * reconnects (roles.h); a CT_EDB on a live connection is the item's. The back-off table
 * lives in the process (at most CT_PASS_BACKOFF_MAX items, the longest
 * waiting dropped first): after a restart a failing item is tried once
 * more and backed off again. Heartbeats are the role loop's.
 */
#ifndef CT_DAEMON_PASS_H
#define CT_DAEMON_PASS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct ct_server;
struct ct_db;

#define CT_PASS_BACKOFF_MAX 64
#define CT_PASS_BACKOFF_FIRST 10	/* seconds */
#define CT_PASS_BACKOFF_LAST 3600

/* Items of one daemon that failed: id, failures so far, and the time
 * (ct_db_now) before which passes leave them out. Static storage per
 * daemon: `static struct ct_pass_backoff bo = CT_PASS_BACKOFF_INIT;`. */
struct ct_pass_backoff {
	pthread_mutex_t mu;
	struct ct_pass_backoff *next;	/* every table used, for ct_pass_forget_all */
	int listed;
	size_t n;
	struct {
		int64_t id, until;
		int failures;
	} item[CT_PASS_BACKOFF_MAX];
};
#define CT_PASS_BACKOFF_INIT { .mu = PTHREAD_MUTEX_INITIALIZER }

struct ct_pass {
	const char *name;	/* "transitioner": the log lines' prefix */
	size_t batch;		/* items handled per pass at most */
	/* Fill ids[0..*n) with at most `cap` candidates, best first. */
	int (*claim)(struct ct_server *srv, struct ct_db *db, int64_t *ids, size_t cap,
		     size_t *n, void *arg);
	/* Handle one item: 1 (handled), 0 (nothing to do after all) or CT_E*. */
	int (*handle)(struct ct_server *srv, struct ct_db *db, int64_t id, void *arg);
	/* Optional: handle ids[0..n) (n <= group) at once, all or none (one
	 * transaction): the items handled, or CT_E*. When it fails for
	 * anything but the connection, each item is handled again alone by
	 * `handle`, so the one at fault is backed off, not its group. */
	int (*handle_many)(struct ct_server *srv, struct ct_db *db, const int64_t *ids,
			   size_t n, void *arg);
	size_t group;		/* items a handle_many call takes at most */
	struct ct_pass_backoff *backoff;
};

/* Run one pass: claim, then handle up to p->batch items that are not
 * backed off (p->group at a time with p->handle_many), until the server
 * stops. Returns the number of items handled
 * (0: nothing to do, so the role sleeps), or CT_EDB / CT_EAGAIN / the
 * claim's error. An item that succeeds leaves the back-off table. */
int ct_pass_run(struct ct_server *srv, struct ct_db *db, const struct ct_pass *p, void *arg);

/* How many times item `id` failed and is backed off now (0: not). For
 * tests and the log. */
int ct_pass_failures(struct ct_pass_backoff *bo, int64_t id);

/* Empty every daemon's back-off table: for a process that opens another
 * database (tests: each case's fresh project reuses ids). */
void ct_pass_forget_all(void);

#endif
