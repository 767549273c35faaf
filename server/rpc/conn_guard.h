/*
 * conn_guard.h - what one address may hold of the HTTP front end: a count
 * of open connections per address (http.max_conns_per_ip), and a deadline
 * for every connection that is sending a request, so that a peer who
 * trickles a header line every few seconds (libmicrohttpd's timeout only
 * counts idle time) is cut off all the same.
 *
 * A connection is in one of three phases:
 *   headers   from accept, or from the end of its previous request, until
 *             the request's headers are in: at most header_ms;
 *   body      from then until the body is in: at most body_ms plus the
 *             time the bytes received so far take at min_rate bytes a
 *             second (a large upload on a slow line goes on as long as
 *             it moves; a trickle does not);
 *   response  the handler runs and the reply is sent: no deadline (the
 *             idle timeout still applies, downloads take what they take).
 * ct_guard_sweep() hands every connection past its deadline to a kill
 * callback once (http.c shuts the socket down; libmicrohttpd then closes
 * it and ct_guard_close() follows).
 *
 * Exempt connections (from a trusted proxy: it holds the slow clients and
 * sends whole requests) are neither counted nor given deadlines. Behind a
 * proxy the address is the client's, known only once headers are in:
 * ct_guard_acquire() counts such a request against its client's address
 * like a connection of its own.
 *
 * An IPv6 address counts as its /64 (what one subscriber gets).
 *
 * Time is milliseconds of a monotonic clock, passed in (tests pass their
 * own). Thread-safe: one mutex. test/test_conn_guard.c.
 */
#ifndef CT_CONN_GUARD_H
#define CT_CONN_GUARD_H

#include <stddef.h>
#include <stdint.h>

#include "proxy.h"

struct ct_guard_opts {
	int max_conns;		/* connections tracked at once (the server's cap) */
	int per_addr;		/* per address, connections + proxied requests */
	int64_t header_ms;	/* headers phase deadline */
	int64_t body_ms;	/* body phase grace */
	int64_t min_rate;	/* body bytes a second after the grace; > 0 */
};

enum ct_guard_phase { CT_GUARD_HEADERS, CT_GUARD_BODY, CT_GUARD_RESPONSE };

struct ct_guard;
struct ct_guard_conn;

/* A guard for o->max_conns connections (a copy of *o is kept). Returns 0
 * with *out (free with ct_guard_free), CT_EINVAL (a value <= 0), CT_ENOMEM;
 * *out NULL on failure. */
int ct_guard_new(const struct ct_guard_opts *o, struct ct_guard **out);
void ct_guard_free(struct ct_guard *g);

/* 1 when a connection from a may be accepted now (its address is under
 * per_addr and the table has room), else 0. Checking and counting are two
 * steps (accept, then open), so concurrent accepts from one address may
 * pass the limit by the number of accepting threads. */
int ct_guard_admit(struct ct_guard *g, const struct ct_addr *a);

/* Track a new connection with socket fd from a (counted unless exempt),
 * in its headers phase from now_ms. Returns the entry (ct_guard_close
 * frees it) or NULL when the table is full (the connection is then not
 * guarded; ct_guard_admit refuses before that happens). */
struct ct_guard_conn *ct_guard_open(struct ct_guard *g, const struct ct_addr *a, int exempt,
				    int fd, int64_t now_ms);

/* The connection is gone: uncount it and free the entry (NULL: no-op). */
void ct_guard_close(struct ct_guard *g, struct ct_guard_conn *c);

/* Enter phase p at now_ms (body phase: the byte count starts at 0). */
void ct_guard_phase(struct ct_guard *g, struct ct_guard_conn *c, enum ct_guard_phase p,
		    int64_t now_ms);

/* n more body bytes arrived. */
void ct_guard_body(struct ct_guard *g, struct ct_guard_conn *c, size_t n);

/* Count a proxied request of client address a: 1 when it is under
 * per_addr (counted: ct_guard_release() it when done), 0 when refused. */
int ct_guard_acquire(struct ct_guard *g, const struct ct_addr *a);
void ct_guard_release(struct ct_guard *g, const struct ct_addr *a);

/* Connections and requests counted for a now (an IPv6 address counts
 * with the rest of its /64). */
int ct_guard_count(struct ct_guard *g, const struct ct_addr *a);

/* Call kill(cls, fd) for each guarded connection past its deadline at
 * now_ms that was not killed before, with the guard locked (so fd is
 * still the connection's: ct_guard_close waits; kill must not call back
 * into the guard). Returns how many were killed. */
int ct_guard_sweep(struct ct_guard *g, int64_t now_ms, void (*kill)(void *cls, int fd),
		   void *cls);

#endif
