/*
 * server.h - the ctune-server process: its project directory, config,
 * secrets, tunables and process state, shared by every role thread
 * (struct ct_server is passed explicitly; there is no global): the clock
 * rows are stamped with, the web page cache, the account rate limits, the
 * HTTP route tables and the admin socket all live here, so two servers in
 * one process (tests) never share any of them.
 *
 * A project directory holds:
 *   ctune-server.conf   config (key = value, see doc/operator.md), 0600
 *   secret              32 random bytes (upload token HMAC key), 0600
 *   signing.key         the project's Ed25519 key (round receipts), PEM, 0600
 *   db/                 embedded MariaDB data (absent with an external db)
 *   download/aa/<sha256>  content-addressed files (models, token shards)
 *   upload/<result name>  result uploads
 *   log/                server and mariadb logs
 *   admin.sock          admin socket while `run` holds the project (0600)
 *   lock                flock()ed by the process holding the embedded db
 */
#ifndef CT_SERVER_H
#define CT_SERVER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ct_conf.h"
#include "ct_hash.h"
#include "ct_sign.h"

struct ct_admin;
struct ct_clock;
struct ct_db;
struct ct_http;
struct ct_http_route;
struct ct_page_cache;
struct ct_rl;
struct ct_feeder;
struct ct_web_recover;

#define CT_SERVER_CONF "ctune-server.conf"
#define CT_SERVER_SECRET_LEN 32
#define CT_SERVER_MAX_ROUTE_TABLES 16

struct ct_server {
	char *dir;		/* project directory, absolute, owned */
	char *download_dir;	/* dir/download, owned */
	char *upload_dir;	/* dir/upload, owned */
	char *db_url;		/* NULL: embedded db in dir/db; owned */
	struct ct_conf *conf;	/* the project's config, owned */
	unsigned char secret[CT_SERVER_SECRET_LEN];
	struct ct_sign_key *sign_key;	/* signs round receipts (receipt.h), owned */
	unsigned char sign_pub[CT_SIGN_PUB_LEN];	/* its public half */

	/* tunables (config keys in brackets; doc/operator.md) */
	char *base_url;		/* [url] prefix of download/upload URLs in replies */
	int max_in_progress;	/* [sched.max_in_progress] per host, default 4 */
	int max_wus_per_rpc;	/* [sched.max_wus_per_rpc] default 4 */
	int request_delay;	/* [sched.request_delay] seconds, default 10 */
	int upload_token_slack;	/* [sched.upload_token_slack] s after deadline, 86400 */
	uint64_t max_body;	/* [http.max_body] RPC body cap, default 4M */
	uint64_t max_inflated;	/* [http.max_inflated] gunzipped cap, default 16M */
	int file_grace;		/* [daemons.file_grace] seconds before deletion, 3600 */

	atomic_int stop;	/* set to 1 to make every role loop return */
	struct ct_http *http;	/* the HTTP front end when the http role runs */

	/* process state (ct_server_load makes it, ct_server_free frees it:
	 * cmd/server_open.h) */
	const struct ct_clock *clock;	/* stamps rows and deadlines: every
					 * connection opened for this server takes
					 * it (ct_db_open); the system clock,
					 * tests set a fake one (ct_clock.h) */
	struct ct_page_cache *pages;	/* web content cache (page_cache.h) */
	struct ct_rl *rl;		/* account rate limits (ratelimit.h) */
	struct ct_feeder *feeder;	/* ready-to-send cache (feeder.h), made by
					 * the first scheduler request */
	struct ct_web_recover *recover;	/* password-recovery worker
					 * (web_recover.h), made by the first
					 * request; stopped by ct_web_recover_stop */
	/* route tables the http role serves (ct_http_register_routes) */
	const struct ct_http_route *routes[CT_SERVER_MAX_ROUTE_TABLES];
	int nroutes;
	struct ct_admin *admin;		/* admin socket while `run` serves (admin.h) */
};

/* PROJECT/download/<aa>/<sha256> into out (cap bytes). sha256 must be 64
 * lowercase hex, else CT_EINVAL. Returns 0, CT_EINVAL or CT_ETOOBIG. */
int ct_server_download_path(const struct ct_server *srv, const char *sha256,
			    char *out, size_t cap);

/* PROJECT/upload/<result name>. The name must be [A-Za-z0-9_.-]{1,80}
 * without "..", else CT_EINVAL. Returns 0, CT_EINVAL or CT_ETOOBIG. */
int ct_server_upload_path(const struct ct_server *srv, const char *result_name,
			  char *out, size_t cap);

struct ct_mmap;

/* Map the upload of result `result_name` (ct_file_map of its
 * ct_server_upload_path; unmap with ct_file_unmap). Returns 0 or their
 * errors (*map zeroed on failure). */
int ct_server_map_upload(const struct ct_server *srv, const char *result_name,
			 struct ct_mmap *map);

/* Replace srv->base_url (trailing slashes dropped). 0 or CT_ENOMEM. */
int ct_server_set_base_url(struct ct_server *srv, const char *url);

/* 1 if s is a valid result/WU name: [A-Za-z0-9_.-]{1,80}, no "..", not
 * starting with '.'. */
int ct_result_name_valid(const char *s);

/* Seconds since the epoch on srv's clock (ct_db_now() where a connection
 * is at hand: the same clock). */
int64_t ct_server_now(const struct ct_server *srv);

/* 1 once srv->stop was set (a role loop checks it between items). */
static inline int ct_server_stopping(struct ct_server *srv)
{
	return atomic_load(&srv->stop) != 0;
}

#endif
