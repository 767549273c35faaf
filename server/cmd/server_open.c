/*
 * server_open.c - a project directory as a process opens it (see
 * server_open.h): creating one, loading its config, secret, key and
 * tunables, and the state every layer keeps in struct ct_server.
 */
#include "server_open.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ct_clock.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "data/project_key.h"
#include "rpc/feeder.h"
#include "rpc/ratelimit.h"
#include "rpc/tls_cert.h"
#include "web/page_cache.h"

#define CT_TLS_DAYS 3650	/* a self-signed certificate: ten years */

static const char conf_template[] =
	"# ctune-server project configuration (doc/operator.md lists every key)\n"
	"project_name = \"%s\"\n"
	"# where the HTTP front end listens, and the URL clients reach it by\n"
	"listen = %s\n"
	"url = %s\n"
	"# database: embedded (data in db/ here) or mysql://user:pass@host:port/name\n"
	"db = %s\n"
	"log_level = info\n"
	"\n"
	"[sched]\n"
	"max_in_progress = 4\n"
	"max_wus_per_rpc = 4\n"
	"request_delay = 10\n"
	"upload_token_slack = 86400\n"
	"\n"
	"[http]\n"
	"threads = 4\n"
	"max_body = 4M\n"
	"max_inflated = 16M\n"
	"# TLS: set both to PEM files to serve https\n"
	"tls_cert = \"%s\"\n"
	"tls_key = \"%s\"\n"
	"\n"
	"[daemons]\n"
	"file_grace = 3600\n";


static char *join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s/%s", a, b);
	return p;
}

/* The host a new certificate names: the --url's, else --listen's (a
 * wildcard address becomes 127.0.0.1). */
static int tls_host(const struct ct_project_opts *o, char *host, size_t cap)
{
	const char *l = o->listen ? o->listen : "127.0.0.1:8080";
	const char *c = strrchr(l, ':');

	if (o->url && o->url[0])
		return ct_tls_url_host(o->url, host, cap);
	snprintf(host, cap, "%.*s", c ? (int)(c - l) : (int)strlen(l), l);
	if (host[0] == 0 || strcmp(host, "0.0.0.0") == 0 || strcmp(host, "*") == 0 ||
	    strcmp(host, "[::]") == 0)
		snprintf(host, cap, "127.0.0.1");
	return 0;
}

/* Fill cert and key (cap bytes each, "" for no TLS): the operator's files
 * (absolute paths) or a new self-signed pair in dir. */
static int project_tls(const char *dir, const struct ct_project_opts *o,
			  char *cert, char *key, size_t cap)
{
	char host[256], abs[PATH_MAX];
	int rc;

	if (!o->tls && !o->tls_cert && !o->tls_key)
		return 0;
	if ((o->tls_cert == NULL) != (o->tls_key == NULL))
		return ct_error(CT_EUSAGE, "--tls-cert and --tls-key go together");
	if (o->url && strncmp(o->url, "http://", 7) == 0)
		return ct_error(CT_EUSAGE, "--url %s: with TLS the URL is https://", o->url);
	if (o->tls_cert) {
		if (realpath(o->tls_cert, cert) == NULL)
			return ct_error_errno("--tls-cert %s", o->tls_cert);
		if (realpath(o->tls_key, key) == NULL)
			return ct_error_errno("--tls-key %s", o->tls_key);
		return 0;
	}
	rc = tls_host(o, host, sizeof(host));
	if (rc == 0 && realpath(dir, abs) == NULL)
		rc = ct_error_errno("%s", dir);
	if (rc == 0)
		rc = ct_path_join(cert, cap, abs, "tls.crt");
	if (rc == 0)
		rc = ct_path_join(key, cap, abs, "tls.key");
	if (rc == 0)
		rc = ct_tls_make_self_signed(cert, key, host, CT_TLS_DAYS);
	return rc;
}

int ct_project_init(const char *dir, const struct ct_project_opts *o)
{
	char path[PATH_MAX], conf[4096];
	unsigned char secret[CT_SERVER_SECRET_LEN];
	const char *sub[] = { "download", "upload", "log", NULL };
	int rc;

	rc = ct_path_join(path, sizeof(path), dir, CT_SERVER_CONF);
	if (rc < 0)
		return rc;
	if (ct_file_exists(path))
		return ct_error(CT_EEXISTS, "%s is already a project (%s exists)", dir, path);
	rc = ct_mkdir_p(dir, 0700);
	if (rc < 0)
		return rc;
	for (int i = 0; sub[i]; i++) {
		char p[PATH_MAX];
		rc = ct_path_join(p, sizeof(p), dir, sub[i]);
		if (rc == 0)
			rc = ct_mkdir_p(p, 0700);
		if (rc < 0)
			return rc;
	}
	rc = ct_random_bytes(secret, sizeof(secret));
	if (rc < 0)
		return rc;
	char spath[PATH_MAX];
	rc = ct_path_join(spath, sizeof(spath), dir, "secret");
	if (rc == 0)
		rc = ct_file_write_atomic(spath, secret, sizeof(secret), 0600);
	if (rc == 0)
		rc = ct_project_key_make(dir);
	if (rc < 0)
		return rc;
	char cert[PATH_MAX] = "", key[PATH_MAX] = "";
	rc = project_tls(dir, o, cert, key, sizeof(cert));
	if (rc < 0)
		return rc;
	int n = snprintf(conf, sizeof(conf), conf_template,
			 o->name ? o->name : "crowdtune",
			 o->listen ? o->listen : "127.0.0.1:8080",
			 o->url ? o->url : "", o->db_url ? o->db_url : "embedded",
			 cert, key);
	if (n < 0 || (size_t)n >= sizeof(conf))
		return ct_error(CT_ETOOBIG, "config too long");
	if (strpbrk(o->name ? o->name : "", "\"\\\n"))
		return ct_error(CT_EINVAL, "project name must not contain quotes or newlines");
	/* written last: its presence marks a complete project */
	return ct_file_write_atomic(path, conf, (size_t)n, 0600);
}

static int load_secret(struct ct_server *srv)
{
	unsigned char *data = NULL;
	size_t len = 0;
	char *p = join(srv->dir, "secret");
	int rc;

	if (p == NULL)
		return CT_ENOMEM;
	rc = ct_file_read_all(p, 4096, &data, &len);
	if (rc == 0 && len != CT_SERVER_SECRET_LEN)
		rc = ct_error(CT_ECONFIG, "%s: must hold %d bytes", p, CT_SERVER_SECRET_LEN);
	if (rc == 0)
		memcpy(srv->secret, data, CT_SERVER_SECRET_LEN);
	free(data);
	free(p);
	return rc;
}

static int load_tunables(struct ct_server *srv)
{
	const struct ct_conf *c = srv->conf;
	long v;
	int rc;

#define GETI(key, def, lo, hi, field) \
	rc = ct_conf_get_int(c, key, def, lo, hi, &v); \
	if (rc < 0) return rc; \
	srv->field = (int)v;
	GETI("sched.max_in_progress", 4, 1, 10000, max_in_progress);
	GETI("sched.max_wus_per_rpc", 4, 1, 64, max_wus_per_rpc);
	GETI("sched.request_delay", 10, 0, 86400, request_delay);
	GETI("sched.upload_token_slack", 86400, 60, 30 * 86400, upload_token_slack);
	GETI("daemons.file_grace", 3600, 0, 365 * 86400, file_grace);
#undef GETI
	rc = ct_conf_get_size(c, "http.max_body", 4u << 20, &srv->max_body);
	if (rc == 0)
		rc = ct_conf_get_size(c, "http.max_inflated", 16u << 20, &srv->max_inflated);
	return rc;
}

int ct_server_load(struct ct_server *srv, const char *dir, const char *db_url)
{
	char real[PATH_MAX], *cpath = NULL;
	const char *s;
	int rc;

	memset(srv, 0, sizeof(*srv));
	srv->clock = &ct_clock_system;
	if (realpath(dir, real) == NULL)
		return ct_error_errno("%s", dir);
	rc = ct_page_cache_new(&srv->pages, srv->clock);
	if (rc == 0)
		rc = ct_rl_new(&srv->rl);
	if (rc < 0)
		goto fail;
	srv->dir = strdup(real);
	srv->download_dir = join(real, "download");
	srv->upload_dir = join(real, "upload");
	cpath = join(real, CT_SERVER_CONF);
	if (!srv->dir || !srv->download_dir || !srv->upload_dir || !cpath) {
		rc = CT_ENOMEM;
		goto fail;
	}
	if (!ct_file_exists(cpath)) {
		rc = ct_error(CT_ENOENT, "%s is not a ctune-server project (no %s; "
			      "make one with `ctune-server init %s`)", dir, CT_SERVER_CONF, dir);
		goto fail;
	}
	rc = ct_conf_load(cpath, &srv->conf);
	if (rc == 0)
		rc = load_secret(srv);
	if (rc == 0)	/* a project made before receipts gets its key now */
		rc = ct_project_key_open(srv->dir, &srv->sign_key, srv->sign_pub);
	if (rc == 0)
		rc = load_tunables(srv);
	if (rc < 0)
		goto fail;
	if (db_url == NULL)
		ct_conf_get_str(srv->conf, "db", "embedded", &db_url);
	srv->db_url = strdup(db_url);
	ct_conf_get_str(srv->conf, "url", "", &s);
	srv->base_url = strdup(s);
	if (!srv->db_url || !srv->base_url) {
		rc = CT_ENOMEM;
		goto fail;
	}
	/* no trailing slash: URLs are base_url + "/download/..." */
	size_t n = strlen(srv->base_url);
	while (n > 0 && srv->base_url[n - 1] == '/')
		srv->base_url[--n] = 0;
	free(cpath);
	return 0;
fail:
	free(cpath);
	ct_server_free(srv);
	return rc;
}

void ct_server_free(struct ct_server *srv)
{
	free(srv->dir);
	free(srv->download_dir);
	free(srv->upload_dir);
	free(srv->db_url);
	free(srv->base_url);
	ct_conf_free(srv->conf);
	ct_sign_key_free(srv->sign_key);
	ct_page_cache_free(srv->pages);
	ct_rl_free(srv->rl);
	ct_feeder_free(srv->feeder);
	memset(srv, 0, sizeof(*srv));
}
