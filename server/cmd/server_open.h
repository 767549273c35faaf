/*
 * server_open.h - a project directory as a process opens it: `ctune-server
 * init`'s ct_project_init, and ct_server_load / ct_server_free, which load
 * its config, secret, signing key and tunables into struct ct_server
 * (data/server.h) with the state each layer keeps there (the web page
 * cache, the account rate limits, the scheduler's ready-to-send cache).
 * It sits with the commands because it makes what every layer below uses.
 */
#ifndef CT_SERVER_OPEN_H
#define CT_SERVER_OPEN_H

#include "data/server.h"

/* Load the project at dir (config, secret, paths) into srv, with fresh
 * process state (system clock, empty page cache and rate limits, no
 * routes).
 * db_url (may be NULL) overrides the config's `db` key. Returns 0 or
 * CT_ENOENT (not a project: no config), CT_ECONFIG, a file error. On
 * failure srv is cleaned up (ct_server_free() on it is harmless). */
int ct_server_load(struct ct_server *srv, const char *dir, const char *db_url);

/* Free what ct_server_load() allocated; srv is zeroed. The http role and
 * the admin socket must be stopped first (ct_http_stop, ct_admin_stop). */
void ct_server_free(struct ct_server *srv);

/* Options of `ctune-server init`; NULL fields take defaults. */
struct ct_project_opts {
	const char *name;	/* project_name, default "crowdtune" */
	const char *listen;	/* default 127.0.0.1:8080 */
	const char *url;	/* default "" (derived from listen) */
	const char *db_url;	/* default "embedded" */
	int tls;		/* make a self-signed tls.crt/tls.key in dir */
	const char *tls_cert;	/* the operator's own PEM files (both or none) */
	const char *tls_key;
};

/* Create the project directory dir (0700; may exist but must not be a
 * project yet): subdirectories, a random secret, the config file. The
 * database is created separately (ct_db_global_init + ct_db_migrate).
 * Returns 0, CT_EEXISTS (already a project) or a file error. */
int ct_project_init(const char *dir, const struct ct_project_opts *o);

#endif
