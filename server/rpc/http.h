/*
 * http.h - ctune-server's HTTP front end on libmicrohttpd: a thread pool,
 * caps on headers and bodies, gzip request bodies, and routes from tables.
 *
 * Routes: a route is a row of a `const struct ct_http_route[]` table ended
 * by a row with path NULL. The server registers its own table (RPC, upload,
 * download); other parts (the web pages) register theirs with
 * ct_http_register_routes(srv, table) before the HTTP role starts. The first
 * matching row of the first matching table wins; a path ending in '*'
 * matches that prefix and req->subpath is the rest (path "/download/"
 * followed by '*', on "/download/ab12", gives "ab12").
 *
 * A plain handler runs after the whole body arrived (capped at
 * srv->max_body, gunzipped under srv->max_inflated when the request had
 * Content-Encoding: gzip; over a cap the client gets 413 and the handler
 * is not called). It fills resp and returns 0; a negative return makes a
 * plain 500 page (the error is logged).
 *
 * A streaming route (CT_HTTP_STREAM, for uploads) gets begin() when the
 * headers arrived (it may refuse by setting resp->status >= 400 and
 * returning), chunk() for each piece of the body (Content-Encoding is not
 * decoded), then end(). abort() is called instead of end() when the
 * connection dies or a callback failed; req->state is the route's own.
 *
 * Each HTTP worker thread has its own database connection, opened on first
 * use by ct_http_db(req).
 *
 * What one address may hold (conn_guard.h): http.max_conns_per_ip
 * connections (refused at accept), a header deadline and a body deadline
 * per request (a watchdog thread shuts down the socket past them). */
#ifndef CT_HTTP_H
#define CT_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "ct_buf.h"

struct ct_server;
struct ct_db;
struct MHD_Connection;

#define CT_HTTP_MAX_HEADERS 8
#define CT_HTTP_MAX_RESP (64u << 20)	/* cap on a buffered response body */

struct ct_http_req {
	struct ct_server *srv;
	const char *method;	/* "GET", "POST", ... */
	const char *path;	/* URL path without the query string */
	const char *subpath;	/* what the route's '*' matched ("" if none) */
	const char *remote_ip;	/* the client's address, text form: the peer's,
				 * or behind a proxy in http.trusted_proxies
				 * the one its header names (proxy.h) */
	const unsigned char *body;	/* plain routes: decoded body, NUL-terminated */
	size_t body_len;
	uint64_t content_length;	/* from the header; UINT64_MAX if absent */
	void *state;		/* streaming routes: theirs to use */
	struct MHD_Connection *conn;	/* private */
	struct ct_db *db_;		/* private: use ct_http_db() */
};

struct ct_http_resp {
	int status;			/* default 200 */
	const char *content_type;	/* static string; default text/html; charset=utf-8 */
	struct ct_buf body;		/* capped at CT_HTTP_MAX_RESP */
	int fd;				/* >= 0: send [fd_off, fd_off+fd_len) of this
					 * file instead of body; the server closes it */
	uint64_t fd_off, fd_len;
	int nhdr;
	char hdr_name[CT_HTTP_MAX_HEADERS][48];
	char hdr_value[CT_HTTP_MAX_HEADERS][160];
};

enum { CT_HTTP_STREAM = 1 };

struct ct_http_route {
	const char *method;	/* "GET", "POST"; "GET" also serves HEAD */
	const char *path;	/* exact, or a prefix ending in '*' */
	int flags;		/* CT_HTTP_STREAM */
	/* plain routes */
	int (*handler)(struct ct_http_req *req, struct ct_http_resp *resp);
	/* streaming routes */
	int (*begin)(struct ct_http_req *req, struct ct_http_resp *resp);
	int (*chunk)(struct ct_http_req *req, struct ct_http_resp *resp,
		     const void *data, size_t n);
	int (*end)(struct ct_http_req *req, struct ct_http_resp *resp);
	void (*abort)(struct ct_http_req *req);
};

/* Add a route table to the ones srv serves (srv->routes; kept by pointer:
 * it must be static; adding one twice is a no-op). At most
 * CT_SERVER_MAX_ROUTE_TABLES tables; call before ct_http_start(). Returns
 * 0 or CT_ETOOBIG. */
int ct_http_register_routes(struct ct_server *srv, const struct ct_http_route *table);

/* Value of request header `name` (case-insensitive), or NULL. Owned by the
 * connection. */
const char *ct_http_header(struct ct_http_req *req, const char *name);

/* Value of query-string argument `name` (decoded), or NULL. */
const char *ct_http_query(struct ct_http_req *req, const char *name);

/* This thread's database connection (opened on first use, reopened after
 * it broke). Returns NULL when the database cannot be reached (logged). */
struct ct_db *ct_http_db(struct ct_http_req *req);

/* Tell ct_http_db() to reopen this thread's connection before next use
 * (call after a CT_EDB that may mean the connection is dead). */
void ct_http_db_reset(struct ct_http_req *req);

/* Add a response header (name and value copied; value printf-style).
 * Returns 0, CT_ETOOBIG (too many or too long). */
int ct_http_resp_header(struct ct_http_resp *resp, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Start listening on `listen` ("ADDR:PORT"; port 0 picks a free one) with
 * the registered routes. TLS when the config has http.tls_cert and
 * http.tls_key. *bound_port (may be NULL) gets the port. Returns 0,
 * CT_EINVAL (bad address), CT_ENET (bind failed), CT_ECONFIG (TLS files).
 * The server object goes into srv->http. */
int ct_http_start(struct ct_server *srv, const char *listen, int *bound_port);

/* Stop accepting, finish running requests, free srv->http. */
void ct_http_stop(struct ct_server *srv);

/* An XML error document <root><error><code/><message/></error></root>
 * (with <request_delay> first when request_delay >= 0) as the response, with
 * HTTP status `status`. code is a CT_E* code. Returns 0 or CT_ETOOBIG. */
int ct_http_xml_error(struct ct_http_resp *resp, int status, const char *root,
		      int code, const char *message, int request_delay);

#endif
