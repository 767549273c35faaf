/*
 * http.c - the HTTP front end on libmicrohttpd (see http.h).
 *
 * MHD runs a pool of threads, each with its own epoll loop; the access
 * handler below is called once when the headers arrived, then for each
 * piece of the body, then once more with no data. Per-request state lives
 * in struct conn_state, freed by the request-completed callback (which also
 * aborts unfinished streaming routes). Handlers block (database, disk),
 * so the pool size (http.threads) bounds concurrent requests.
 *
 * What one address may hold (conn_guard.h): the accept policy refuses a
 * connection from an address that has http.max_conns_per_ip open, the
 * connection notifier tracks each connection's phase, and a watchdog
 * thread shuts down the socket of one past its header or body deadline
 * (libmicrohttpd's own timeout counts idle time only, so a header line
 * every few seconds would hold a connection forever). Behind a trusted
 * proxy (proxy.h) the request's address is the client's from the proxy's
 * header, and that address is what the handlers, the logs and the
 * per-address limits see.
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "ct_err.h"
#include "ct_file.h"
#include "ct_gzip.h"
#include "ct_log.h"
#include "ct_xml.h"
#include "conn_guard.h"
#include "data/db.h"
#include "proxy.h"
#include "data/server.h"

#define MAX_HEADER_BYTES (16u << 10)
#define MAX_DISCARD (16u << 20)	/* body bytes read and dropped after a refusal */
#define TRIM_AFTER (1u << 20)	/* give memory back after a request this big */
/* malloc's mmap threshold: above the 2 MiB blocks the embedded database
 * allocates and frees in many statements (join buffers, the temporary
 * tables of derived tables), which from mmap cost a map, a zeroing page
 * fault a page and an unmap (a TLB shootdown on every core) each time */
#define MMAP_AFTER (4u << 20)
#define WATCH_TICK_MS 250
#define REFUSED_LOG_TICKS 40	/* refusals are summed in the log every 10 s */
#define FD_RESERVE 256		/* descriptors kept for the database, files, logs */

struct ct_http {
	struct ct_server *srv;
	struct MHD_Daemon *d;
	char *tls_cert, *tls_key;
	struct ct_guard *guard;
	struct ct_proxy_list proxies;
	enum ct_proxy_header fwd_kind;
	const char *fwd_name;	/* the header's name */
	pthread_t watch;
	int watching;
	pthread_mutex_t watch_lock;
	pthread_cond_t watch_cond;
	int watch_stop;
	atomic_long refused;	/* connections over max_conns_per_ip since the last log */
};

struct conn_state {
	struct ct_http_req req;
	struct ct_http_resp resp;
	const struct ct_http_route *route;
	struct ct_buf raw;	/* body of a plain route */
	struct ct_buf decoded;	/* gunzipped body */
	uint64_t discarded;
	int failed;		/* resp holds an error: drop the body */
	int finished;		/* end() or handler ran */
	char *path;
	char ip[CT_ADDR_STRLEN];
	struct ct_addr addr;	/* the client's (behind a trusted proxy: its header's) */
	int counted;		/* proxied: addr counted in the guard, release it */
	struct ct_guard_conn *gc;	/* the connection's guard entry, or NULL */
};

/* Process-wide on purpose: a thread-exit destructor must be a key made
 * before the database library's own (see db_key_early), whatever server
 * object the thread served. */
static pthread_key_t g_db_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

int ct_http_register_routes(struct ct_server *srv, const struct ct_http_route *table)
{
	for (int i = 0; i < srv->nroutes; i++)
		if (srv->routes[i] == table)
			return 0;
	if (srv->nroutes == CT_SERVER_MAX_ROUTE_TABLES)
		return ct_error(CT_ETOOBIG, "too many route tables");
	srv->routes[srv->nroutes++] = table;
	return 0;
}

/* ---- per-thread database connection ------------------------------------ */

static void db_key_destroy(void *p)
{
	ct_db_close(p);
}

static void db_key_make(void)
{
	pthread_key_create(&g_db_key, db_key_destroy);
}

/* Thread-exit destructors run in key order, and the database library frees
 * its own per-thread state in a destructor of a key it makes when it
 * starts: make ours first (at program start) so the connection is closed
 * while the library still knows the thread. */
__attribute__((constructor)) static void db_key_early(void)
{
	pthread_once(&g_key_once, db_key_make);
}

struct ct_db *ct_http_db(struct ct_http_req *req)
{
	struct ct_db *db;
	int rc;

	if (req->db_)
		return req->db_;
	pthread_once(&g_key_once, db_key_make);
	db = pthread_getspecific(g_db_key);
	if (db == NULL) {
		rc = ct_db_open(&db, req->srv->clock);
		if (rc < 0) {
			ct_log_error("http: database: %s", ct_errmsg(rc));
			return NULL;
		}
		pthread_setspecific(g_db_key, db);
	}
	req->db_ = db;
	return db;
}

void ct_http_db_reset(struct ct_http_req *req)
{
	struct ct_db *db;

	pthread_once(&g_key_once, db_key_make);
	db = pthread_getspecific(g_db_key);
	if (db) {
		pthread_setspecific(g_db_key, NULL);
		ct_db_close(db);
	}
	req->db_ = NULL;
}

/* ---- helpers for handlers ---------------------------------------------- */

const char *ct_http_header(struct ct_http_req *req, const char *name)
{
	return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

const char *ct_http_query(struct ct_http_req *req, const char *name)
{
	return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

int ct_http_resp_header(struct ct_http_resp *resp, const char *name, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (resp->nhdr == CT_HTTP_MAX_HEADERS || strlen(name) >= sizeof(resp->hdr_name[0]))
		return ct_error(CT_ETOOBIG, "too many response headers");
	va_start(ap, fmt);
	n = vsnprintf(resp->hdr_value[resp->nhdr], sizeof(resp->hdr_value[0]), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(resp->hdr_value[0]))
		return ct_error(CT_ETOOBIG, "response header too long");
	strcpy(resp->hdr_name[resp->nhdr], name);
	resp->nhdr++;
	return 0;
}

int ct_http_xml_error(struct ct_http_resp *resp, int status, const char *root,
		      int code, const char *message, int request_delay)
{
	struct ct_buf *b = &resp->body;
	int rc;

	ct_buf_reset(b);
	resp->status = status;
	resp->content_type = "application/xml";
	rc = ct_xml_open(b, root);
	if (rc == 0 && request_delay >= 0)
		rc = ct_xml_elem_long(b, "request_delay", request_delay);
	if (rc == 0)
		rc = ct_xml_open(b, "error");
	if (rc == 0)
		rc = ct_xml_elem_str(b, "code", ct_errname(code));
	if (rc == 0)
		rc = ct_xml_elem_str(b, "message", message);
	if (rc == 0)
		rc = ct_xml_close(b, "error");
	if (rc == 0)
		rc = ct_xml_close(b, root);
	return rc;
}

static void plain_error(struct ct_http_resp *resp, int status, const char *text)
{
	ct_buf_reset(&resp->body);
	resp->status = status;
	resp->content_type = "text/plain; charset=utf-8";
	ct_buf_appendf(&resp->body, "%d %s\n", status, text);
}

/* ---- routing ----------------------------------------------------------- */

static int method_ok(const char *want, const char *got)
{
	if (strcmp(want, got) == 0)
		return 1;
	return strcmp(want, "GET") == 0 && strcmp(got, "HEAD") == 0;
}

/* The route for method+path; *path_matched says a route had the path. */
static const struct ct_http_route *find_route(const struct ct_server *srv, const char *method,
					      const char *path, const char **subpath,
					      int *path_matched)
{
	*path_matched = 0;
	for (int t = 0; t < srv->nroutes; t++)
		for (const struct ct_http_route *r = srv->routes[t]; r->path; r++) {
			size_t n = strlen(r->path);
			int hit;
			if (n > 0 && r->path[n - 1] == '*') {
				hit = strncmp(path, r->path, n - 1) == 0;
				if (hit)
					*subpath = path + n - 1;
			} else {
				hit = strcmp(path, r->path) == 0;
				if (hit)
					*subpath = "";
			}
			if (!hit)
				continue;
			*path_matched = 1;
			if (method_ok(r->method, method))
				return r;
		}
	return NULL;
}

/* ---- responses --------------------------------------------------------- */

static int accepts_gzip(struct MHD_Connection *c)
{
	const char *ae = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_ACCEPT_ENCODING);

	return ae && strstr(ae, "gzip") != NULL;
}

static int compressible(const char *type)
{
	return type && (strncmp(type, "text/", 5) == 0 || strstr(type, "xml") ||
			strstr(type, "json") || strstr(type, "javascript"));
}

static struct MHD_Response *make_response(struct conn_state *st, struct MHD_Connection *c)
{
	struct ct_http_resp *r = &st->resp;
	struct MHD_Response *m;
	int gz = 0;

	if (r->fd >= 0) {
		m = MHD_create_response_from_fd_at_offset64(r->fd_len, r->fd, r->fd_off);
		if (m)
			r->fd = -1;	/* MHD closes it */
	} else {
		size_t len = r->body.len;
		if (len > 1024 && compressible(r->content_type) && accepts_gzip(c)) {
			struct ct_buf z = CT_BUF_INIT(CT_HTTP_MAX_RESP);
			if (ct_gzip_compress(r->body.data, len, 6, &z) == 0) {
				ct_buf_free(&r->body);
				r->body = z;
				gz = 1;
			} else {
				ct_buf_free(&z);
			}
		}
		void *data = ct_buf_steal(&r->body, &len);
		m = MHD_create_response_from_buffer(len, data ? data : (void *)"",
						    data ? MHD_RESPMEM_MUST_FREE
							 : MHD_RESPMEM_PERSISTENT);
		if (m == NULL)
			free(data);
	}
	if (m == NULL)
		return NULL;
	MHD_add_response_header(m, MHD_HTTP_HEADER_CONTENT_TYPE,
				r->content_type ? r->content_type : "text/html; charset=utf-8");
	if (gz) {
		MHD_add_response_header(m, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
		MHD_add_response_header(m, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
	}
	for (int i = 0; i < r->nhdr; i++)
		MHD_add_response_header(m, r->hdr_name[i], r->hdr_value[i]);
	return m;
}

static enum MHD_Result send_response(struct conn_state *st, struct MHD_Connection *c)
{
	struct MHD_Response *m = make_response(st, c);
	enum MHD_Result ret;

	if (m == NULL)
		return MHD_NO;
	ret = MHD_queue_response(c, (unsigned)(st->resp.status ? st->resp.status : 200), m);
	MHD_destroy_response(m);
	return ret;
}

/* ---- the request cycle ------------------------------------------------- */

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	size_t *n = cls;

	*n += strlen(key) + (value ? strlen(value) : 0) + 4;
	return MHD_YES;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct hdr_join {
	const char *name;
	char *out;		/* NULL: count only */
	size_t len;
};

static enum MHD_Result join_header(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct hdr_join *j = cls;
	size_t n = value ? strlen(value) : 0;

	(void)kind;
	if (key == NULL || strcasecmp(key, j->name) != 0)
		return MHD_YES;
	if (j->out) {
		if (j->len > 0)
			j->out[j->len] = ',';
		memcpy(j->out + j->len + (j->len > 0), value ? value : "", n);
	}
	j->len += n + (j->len > 0);
	return MHD_YES;
}

/* Every line of the proxy header, joined by ',' in order (RFC 7230 3.2.2),
 * as a malloc'd string; NULL when absent (or out of memory: the proxy's
 * own address then stands). MHD's connection memory caps the length. */
static char *proxy_header(struct ct_http *h, struct MHD_Connection *c)
{
	struct hdr_join j = { .name = h->fwd_name };

	MHD_get_connection_values(c, MHD_HEADER_KIND, join_header, &j);
	if (j.len == 0)
		return NULL;
	j.out = malloc(j.len + 1);
	if (j.out == NULL)
		return NULL;
	j.len = 0;
	MHD_get_connection_values(c, MHD_HEADER_KIND, join_header, &j);
	j.out[j.len] = '\0';
	return j.out;
}

/* st->addr and st->ip: the peer's, or behind a trusted proxy the client's
 * its header names. Returns 1 when the address came from the header. */
static int fill_ip(struct ct_http *h, struct conn_state *st, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	struct ct_addr peer;
	char *fwd;
	int from_header = 0;

	strcpy(st->ip, "?");
	if (ci == NULL || ct_addr_from_sockaddr(ci->client_addr, &peer) < 0)
		return 0;
	st->addr = peer;
	if (ct_proxy_trusted(&h->proxies, &peer)) {
		fwd = proxy_header(h, c);
		from_header = ct_proxy_resolve(&h->proxies, &peer, h->fwd_kind, fwd, &st->addr);
		free(fwd);
	}
	ct_addr_format(&st->addr, st->ip);
	return from_header;
}

static struct ct_guard_conn *guard_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static struct conn_state *state_new(struct ct_http *h, struct MHD_Connection *c,
				    const char *url, const char *method)
{
	struct ct_server *srv = h->srv;
	struct conn_state *st = calloc(1, sizeof(*st));
	const char *cl;

	if (st == NULL)
		return NULL;
	st->path = strdup(url);
	if (st->path == NULL) {
		free(st);
		return NULL;
	}
	char *q = strchr(st->path, '?');	/* MHD already strips it; be sure */
	if (q)
		*q = 0;
	st->resp.fd = -1;
	ct_buf_init(&st->resp.body, CT_HTTP_MAX_RESP);
	ct_buf_init(&st->raw, srv->max_body);
	ct_buf_init(&st->decoded, srv->max_inflated);
	st->gc = guard_of(c);
	if (fill_ip(h, st, c)) {
		/* behind a proxy: the client's requests count as its connections */
		st->counted = ct_guard_acquire(h->guard, &st->addr);
		if (!st->counted) {
			ct_log_info("http: %s: over http.max_conns_per_ip, refused", st->ip);
			ct_http_xml_error(&st->resp, 503, "error_reply", CT_EAGAIN,
					  "too many requests from your address at once", -1);
			st->failed = 1;
		}
	}
	st->req.srv = srv;
	st->req.method = method;
	st->req.path = st->path;
	st->req.subpath = "";
	st->req.remote_ip = st->ip;
	st->req.conn = c;
	st->req.content_length = UINT64_MAX;
	cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl)
		st->req.content_length = strtoull(cl, NULL, 10);
	return st;
}

/* First call: headers are in. Pick the route, check sizes, begin streams. */
static void on_headers(struct conn_state *st, struct MHD_Connection *c)
{
	struct ct_server *srv = st->req.srv;
	size_t hbytes = 0;
	int matched;

	if (st->failed)
		return;
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &hbytes);
	if (hbytes > MAX_HEADER_BYTES) {
		plain_error(&st->resp, 431, "request headers too large");
		st->failed = 1;
		return;
	}
	st->route = find_route(srv, st->req.method, st->path, &st->req.subpath, &matched);
	if (st->route == NULL) {
		plain_error(&st->resp, matched ? 405 : 404,
			    matched ? "method not allowed" : "not found");
		st->failed = 1;
		return;
	}
	if (st->route->flags & CT_HTTP_STREAM) {
		int rc = st->route->begin(&st->req, &st->resp);
		if (rc < 0 && st->resp.status < 400)
			plain_error(&st->resp, 500, "internal error");
		if (rc < 0 || st->resp.status >= 400)
			st->failed = 1;
		return;
	}
	if (st->req.content_length != UINT64_MAX && st->req.content_length > srv->max_body) {
		ct_http_xml_error(&st->resp, 413, "error_reply", CT_ETOOBIG,
				  "request body over the limit", -1);
		st->failed = 1;
	}
}

static int on_body(struct ct_http *h, struct conn_state *st, const char *data, size_t n)
{
	int rc;

	ct_guard_body(h->guard, st->gc, n);
	if (st->failed) {
		st->discarded += n;
		return st->discarded > MAX_DISCARD ? -1 : 0;
	}
	if (st->route->flags & CT_HTTP_STREAM) {
		rc = st->route->chunk(&st->req, &st->resp, data, n);
		if (rc < 0 || st->resp.status >= 400) {
			if (st->resp.status < 400)
				plain_error(&st->resp, 500, "internal error");
			st->failed = 1;
		}
		return 0;
	}
	rc = ct_buf_append(&st->raw, data, n);
	if (rc < 0) {
		ct_http_xml_error(&st->resp, 413, "error_reply", CT_ETOOBIG,
				  "request body over the limit", -1);
		st->failed = 1;
	}
	return 0;
}

/* Decode a gzip body into st->decoded. Sets an error response on failure. */
static int decode_body(struct conn_state *st, struct MHD_Connection *c)
{
	const char *ce = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_ENCODING);
	int rc;

	st->req.body = st->raw.data ? st->raw.data : (const unsigned char *)"";
	st->req.body_len = st->raw.len;
	if (ce == NULL || strcasecmp(ce, "identity") == 0)
		return 0;
	if (strcasecmp(ce, "gzip") != 0) {
		ct_http_xml_error(&st->resp, 415, "error_reply", CT_EUNSUPP,
				  "unsupported Content-Encoding", -1);
		return -1;
	}
	rc = ct_gzip_decompress(st->raw.data, st->raw.len, &st->decoded);
	if (rc < 0) {
		ct_http_xml_error(&st->resp, rc == CT_ETOOBIG ? 413 : 400, "error_reply", rc,
				  rc == CT_ETOOBIG ? "inflated body over the limit"
						   : "bad gzip body", -1);
		return -1;
	}
	st->req.body = st->decoded.data ? st->decoded.data : (const unsigned char *)"";
	st->req.body_len = st->decoded.len;
	return 0;
}

static void on_complete_request(struct conn_state *st, struct MHD_Connection *c)
{
	int rc;

	if (st->failed)
		return;
	if (st->route->flags & CT_HTTP_STREAM) {
		st->finished = 1;
		rc = st->route->end(&st->req, &st->resp);
	} else {
		if (decode_body(st, c) < 0)
			return;
		st->finished = 1;
		rc = st->route->handler(&st->req, &st->resp);
	}
	if (rc < 0) {
		ct_log_error("http: %s %s: %s", st->req.method, st->path, ct_errmsg(rc));
		if (st->resp.status < 400)
			plain_error(&st->resp, 500, "internal error");
	}
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	struct ct_http *h = cls;
	struct conn_state *st = *con_cls;

	(void)version;
	if (st == NULL) {
		st = state_new(h, c, url, method);
		if (st == NULL)
			return MHD_NO;
		*con_cls = st;
		ct_guard_phase(h->guard, st->gc, CT_GUARD_BODY, now_ms());
		on_headers(st, c);
		/* refuse before reading a body we would throw away */
		if (st->failed && st->req.content_length != 0) {
			ct_guard_phase(h->guard, st->gc, CT_GUARD_RESPONSE, now_ms());
			return send_response(st, c);
		}
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		int rc = on_body(h, st, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return rc < 0 ? MHD_NO : MHD_YES;
	}
	ct_guard_phase(h->guard, st->gc, CT_GUARD_RESPONSE, now_ms());
	on_complete_request(st, c);
	return send_response(st, c);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct ct_http *h = cls;
	struct conn_state *st = *con_cls;
	int big;

	(void)toe;
	if (st == NULL)
		return;
	/* the next request on this connection has its own header deadline */
	ct_guard_phase(h->guard, st->gc, CT_GUARD_HEADERS, now_ms());
	if (st->counted)
		ct_guard_release(h->guard, &st->addr);
	big = st->raw.cap + st->decoded.cap >= TRIM_AFTER;
	/* a stream whose end() never ran (refused, failed, connection lost) */
	if (st->route && (st->route->flags & CT_HTTP_STREAM) && !st->finished &&
	    st->route->abort)
		st->route->abort(&st->req);
	if (st->resp.fd >= 0)
		close(st->resp.fd);
	ct_buf_free(&st->resp.body);
	ct_buf_free(&st->raw);
	ct_buf_free(&st->decoded);
	free(st->path);
	free(st);
	*con_cls = NULL;
	if (big)
		malloc_trim(0);	/* else glibc keeps the freed megabytes */
}

/* ---- what one address may hold ----------------------------------------- */

static enum MHD_Result on_accept(void *cls, const struct sockaddr *sa, socklen_t len)
{
	struct ct_http *h = cls;
	struct ct_addr a;

	(void)len;
	if (ct_addr_from_sockaddr(sa, &a) < 0 || ct_proxy_trusted(&h->proxies, &a))
		return MHD_YES;
	if (ct_guard_admit(h->guard, &a))
		return MHD_YES;
	atomic_fetch_add(&h->refused, 1);
	return MHD_NO;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct ct_http *h = cls;
	const union MHD_ConnectionInfo *fd, *ca;
	struct ct_addr a;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		ct_guard_close(h->guard, *socket_context);
		*socket_context = NULL;
		return;
	}
	fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	ca = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (fd == NULL || ca == NULL || ct_addr_from_sockaddr(ca->client_addr, &a) < 0)
		return;
	*socket_context = ct_guard_open(h->guard, &a, ct_proxy_trusted(&h->proxies, &a),
					fd->connect_fd, now_ms());
}

/* The socket stays open (libmicrohttpd closes it, after telling
 * on_connection, which waits for the guard's lock: fd is not reused while
 * we hold it); shutting it down wakes its thread with end-of-file. */
static void kill_fd(void *cls, int fd)
{
	(void)cls;
	shutdown(fd, SHUT_RDWR);
}

/* One line every REFUSED_LOG_TICKS ticks with refusals, not one each. */
static void log_refused(struct ct_http *h, unsigned tick)
{
	long n;

	if (tick % REFUSED_LOG_TICKS != 0)
		return;
	n = atomic_exchange(&h->refused, 0);
	if (n > 0)
		ct_log_info("http: refused %ld connection%s over http.max_conns_per_ip "
			    "(or http.max_conns) in the last %d s", n, n == 1 ? "" : "s",
			    REFUSED_LOG_TICKS * WATCH_TICK_MS / 1000);
}

static void *watch_main(void *arg)
{
	struct ct_http *h = arg;
	unsigned tick = 0;

	pthread_mutex_lock(&h->watch_lock);
	while (!h->watch_stop) {
		struct timespec ts;
		int n;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += WATCH_TICK_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&h->watch_cond, &h->watch_lock, &ts);
		if (h->watch_stop)
			break;
		pthread_mutex_unlock(&h->watch_lock);
		n = ct_guard_sweep(h->guard, now_ms(), kill_fd, NULL);
		if (n > 0)
			ct_log_info("http: closed %d connection%s past the header or body deadline",
				    n, n == 1 ? "" : "s");
		log_refused(h, ++tick);
		pthread_mutex_lock(&h->watch_lock);
	}
	pthread_mutex_unlock(&h->watch_lock);
	return NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	ct_log_warn("http: %s", line);
}

/* ---- start / stop ------------------------------------------------------ */

static int parse_listen(const char *s, struct sockaddr_in *sa)
{
	char host[128];
	const char *colon = strrchr(s, ':');
	char *end;
	long port;

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	if (colon == NULL || (size_t)(colon - s) >= sizeof(host))
		return ct_error(CT_EINVAL, "listen address '%s': want ADDR:PORT", s);
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	port = strtol(colon + 1, &end, 10);
	if (*end || end == colon + 1 || port < 0 || port > 65535)
		return ct_error(CT_EINVAL, "listen address '%s': bad port", s);
	sa->sin_port = htons((uint16_t)port);
	if (host[0] == 0 || strcmp(host, "*") == 0 || strcmp(host, "0.0.0.0") == 0)
		sa->sin_addr.s_addr = htonl(INADDR_ANY);
	else if (strcmp(host, "localhost") == 0)
		sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return ct_error(CT_EINVAL, "listen address '%s': not an IPv4 address", s);
	return 0;
}

static int load_tls(struct ct_server *srv, struct ct_http *h)
{
	const char *cert = NULL, *key = NULL;
	unsigned char *data = NULL;
	size_t len;
	int rc;

	ct_conf_get_str(srv->conf, "http.tls_cert", "", &cert);
	ct_conf_get_str(srv->conf, "http.tls_key", "", &key);
	if (!*cert && !*key)
		return 0;
	if (!*cert || !*key)
		return ct_error(CT_ECONFIG, "http.tls_cert and http.tls_key go together");
	rc = ct_file_read_all(cert, 1 << 20, &data, &len);
	if (rc < 0)
		return ct_error(CT_ECONFIG, "http.tls_cert: %s", ct_errmsg(rc));
	h->tls_cert = (char *)data;
	rc = ct_file_read_all(key, 1 << 20, &data, &len);
	if (rc < 0)
		return ct_error(CT_ECONFIG, "http.tls_key: %s", ct_errmsg(rc));
	h->tls_key = (char *)data;
	return 1;
}

static void watch_stop(struct ct_http *h)
{
	if (!h->watching)
		return;
	pthread_mutex_lock(&h->watch_lock);
	h->watch_stop = 1;
	pthread_cond_signal(&h->watch_cond);
	pthread_mutex_unlock(&h->watch_lock);
	pthread_join(h->watch, NULL);
	h->watching = 0;
}

static void http_free(struct ct_http *h)
{
	if (h == NULL)
		return;
	watch_stop(h);
	pthread_mutex_destroy(&h->watch_lock);
	pthread_cond_destroy(&h->watch_cond);
	ct_guard_free(h->guard);
	free(h->tls_cert);
	free(h->tls_key);
	free(h);
}

/* The connections the descriptor limit allows: the soft limit is raised to
 * the hard one as far as `want` needs; what is still short comes off
 * `want` (logged). */
static long fit_fds(long want)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)want + FD_RESERVE;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return want;
	if (rl.rlim_cur < need) {
		rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur >= need)
		return want;
	ct_log_warn("http: %ld connections need %ld descriptors, the limit is %ld: "
		    "serving %ld (raise `ulimit -n`)", want, (long)need, (long)rl.rlim_cur,
		    (long)rl.rlim_cur > 2 * FD_RESERVE ? (long)rl.rlim_cur - FD_RESERVE
						       : (long)FD_RESERVE);
	return (long)rl.rlim_cur > 2 * FD_RESERVE ? (long)rl.rlim_cur - FD_RESERVE : FD_RESERVE;
}

/* The [http] keys of the guard and the proxies (doc/operator.md). */
static int load_guard(struct ct_server *srv, struct ct_http *h, long *max_conns,
		      long *idle_s)
{
	struct ct_guard_opts o;
	const char *proxies = NULL, *hdr = NULL;
	long per_ip, header_s, body_s;
	uint64_t rate;
	int rc;

	rc = ct_conf_get_int(srv->conf, "http.max_conns", 4096, 16, 1000000, max_conns);
	if (rc == 0)
		rc = ct_conf_get_int(srv->conf, "http.max_conns_per_ip", 32, 1, 1000000, &per_ip);
	if (rc == 0)
		rc = ct_conf_get_int(srv->conf, "http.header_timeout", 30, 1, 3600, &header_s);
	if (rc == 0)
		rc = ct_conf_get_int(srv->conf, "http.body_timeout", 60, 1, 86400, &body_s);
	if (rc == 0)
		rc = ct_conf_get_int(srv->conf, "http.idle_timeout", 120, 1, 86400, idle_s);
	if (rc == 0)
		rc = ct_conf_get_size(srv->conf, "http.body_min_rate", 4096, &rate);
	if (rc == 0)
		rc = ct_conf_get_str(srv->conf, "http.trusted_proxies", "", &proxies);
	if (rc == 0)
		rc = ct_conf_get_str(srv->conf, "http.forwarded_header", "X-Forwarded-For", &hdr);
	if (rc < 0)
		return rc;
	if (rate == 0 || rate > (1ull << 40))
		return ct_error(CT_ECONFIG, "http.body_min_rate: want 1 byte/s or more");
	if (strcasecmp(hdr, "X-Forwarded-For") == 0) {
		h->fwd_kind = CT_PROXY_XFF;
		h->fwd_name = "X-Forwarded-For";
	} else if (strcasecmp(hdr, "Forwarded") == 0) {
		h->fwd_kind = CT_PROXY_FORWARDED;
		h->fwd_name = "Forwarded";
	} else {
		return ct_error(CT_ECONFIG, "http.forwarded_header: '%s': want X-Forwarded-For "
				"or Forwarded", hdr);
	}
	rc = ct_proxy_list_parse(proxies, &h->proxies);
	if (rc < 0)
		return rc;
	*max_conns = fit_fds(*max_conns);
	o = (struct ct_guard_opts){ .max_conns = (int)*max_conns, .per_addr = (int)per_ip,
		.header_ms = header_s * 1000, .body_ms = body_s * 1000,
		.min_rate = (int64_t)rate };
	return ct_guard_new(&o, &h->guard);
}

static int watch_start(struct ct_http *h)
{
	if (pthread_create(&h->watch, NULL, watch_main, h) != 0)
		return ct_error(CT_ENOMEM, "http: cannot start the deadline thread");
	h->watching = 1;
	return 0;
}

int ct_http_start(struct ct_server *srv, const char *listen, int *bound_port)
{
	struct sockaddr_in sa;
	struct ct_http *h;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	long threads = 4, max_conns, idle_s;
	int rc, tls;

	rc = parse_listen(listen, &sa);
	if (rc < 0)
		return rc;
	rc = ct_conf_get_int(srv->conf, "http.threads", 4, 1, 256, &threads);
	if (rc < 0)
		return rc;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return CT_ENOMEM;
	h->srv = srv;
	/* Big buffers (bodies, inflated bodies, libxml2's copy of a document)
	 * straight from mmap and back to the system when freed: glibc's
	 * sliding threshold would otherwise keep them in each thread's arena
	 * after the first, tens of MB a thread that malloc_trim does not
	 * reach (an arena's top). Up to MMAP_AFTER they come from the arena,
	 * and malloc_trim after a request of TRIM_AFTER gives them back. */
	mallopt(M_MMAP_THRESHOLD, (int)MMAP_AFTER);
	pthread_mutex_init(&h->watch_lock, NULL);
	pthread_cond_init(&h->watch_cond, NULL);
	rc = load_guard(srv, h, &max_conns, &idle_s);
	if (rc == 0)
		rc = watch_start(h);
	if (rc < 0) {
		http_free(h);
		return rc;
	}
	tls = load_tls(srv, h);
	if (tls < 0) {
		http_free(h);
		return tls;
	}
	if (tls)
		flags |= MHD_USE_TLS;
	h->d = MHD_start_daemon(flags, 0, on_accept, h, on_request, h,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)threads,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64u << 10),
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)idle_s,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)max_conns,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
		tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, h->tls_cert,
		MHD_OPTION_HTTPS_MEM_KEY, h->tls_key,
		MHD_OPTION_END);
	if (h->d == NULL) {
		http_free(h);
		return ct_error(CT_ENET, "cannot listen on %s (address in use?)", listen);
	}
	if (bound_port) {
		const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
		*bound_port = di ? di->port : ntohs(sa.sin_port);
	}
	srv->http = h;
	return 0;
}

void ct_http_stop(struct ct_server *srv)
{
	struct ct_http *h = srv->http;

	if (h == NULL)
		return;
	watch_stop(h);
	MHD_stop_daemon(h->d);
	http_free(h);
	srv->http = NULL;
}
