/*
 * cmd_run.c - `ctune-server init DIR` and `ctune-server run DIR`, and the
 * local runner of project commands when no server holds the project.
 */
#include "config.h"

#include "cmd_run.h"

#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc/account.h"
#include "admin.h"
#include "commands.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_log.h"
#include "data/db.h"
#include "rpc/files.h"
#include "rpc/http.h"
#include "daemons/instance.h"
#include "project_init.h"
#include "roles.h"
#include "rpc/sched_rpc.h"
#include "cmd/server_open.h"
#include "data/server.h"
#include "web/web_http.h"
#include "web/web_recover.h"

static struct ct_server *g_srv;

static const struct option init_long[] = {
	{ "listen", 1, NULL, 'l' }, { "url", 1, NULL, 'u' }, { "db", 1, NULL, 'd' },
	{ "name", 1, NULL, 'n' }, { "tls", 0, NULL, 't' }, { "tls-cert", 1, NULL, 'c' },
	{ "tls-key", 1, NULL, 'k' }, { NULL, 0, NULL, 0 } };

static int cmd_init(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_project_opts o = { 0 };
	char abs[PATH_MAX];
	int c, rc;

	(void)ctx;
	while ((c = getopt_long(argc, argv, "", init_long, NULL)) != -1) {
		switch (c) {
		case 'l': o.listen = optarg; break;
		case 'u': o.url = optarg; break;
		case 'd': o.db_url = optarg; break;
		case 'n': o.name = optarg; break;
		case 't': o.tls = 1; break;
		case 'c': o.tls_cert = optarg; break;
		case 'k': o.tls_key = optarg; break;
		default: return ct_error(CT_EUSAGE, "see ctune-server init --help");
		}
	}
	if (optind != argc - 1)
		return ct_error(CT_EUSAGE, "usage: ctune-server init DIR [options]");
	rc = ct_project_create(argv[optind], &o);
	if (rc == 0)
		printf("project created in %s\n", realpath(argv[optind], abs) ? abs : argv[optind]);
	return rc;
}

/* ---- run --------------------------------------------------------------- */

static void on_signal(int sig)
{
	(void)sig;
	if (g_srv)
		atomic_store(&g_srv->stop, 1);
}

static void set_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/* Register the routes, listen, and make the base URL if none is set. */
static int http_start(struct ct_server *srv, const char *listen)
{
	char url[300], path[PATH_MAX], host[128];
	int port = 0, rc;

	rc = ct_http_register_routes(srv, ct_sched_routes);
	if (rc == 0) rc = ct_http_register_routes(srv, ct_account_routes);
	if (rc == 0) rc = ct_http_register_routes(srv, ct_files_routes);
	if (rc == 0) rc = ct_web_register(srv);
	if (rc == 0) rc = ct_http_start(srv, listen, &port);
	if (rc < 0)
		return rc;
	snprintf(host, sizeof(host), "%.*s", (int)(strrchr(listen, ':') - listen), listen);
	if (host[0] == 0 || strcmp(host, "0.0.0.0") == 0 || strcmp(host, "*") == 0)
		strcpy(host, "127.0.0.1");
	snprintf(url, sizeof(url), "%s://%s:%d", ct_conf_get(srv->conf, "http.tls_cert") &&
		 *ct_conf_get(srv->conf, "http.tls_cert") ? "https" : "http", host, port);
	if (srv->base_url[0] == 0)
		rc = ct_server_set_base_url(srv, url);
	/* tests and scripts read the address from here */
	if (rc == 0)
		rc = ct_instance_file(srv->dir, "server", ".url", path, sizeof(path));
	if (rc == 0) {
		char line[320];
		int n = snprintf(line, sizeof(line), "%s\n", srv->base_url);
		rc = ct_file_write_atomic(path, line, (size_t)n, 0644);
	}
	if (rc == 0)
		ct_log_info("listening on %s (clients use %s)", listen, srv->base_url);
	return rc;
}

struct run_opts {
	const char *roles, *listen, *db, *log, *instance;
	int verbose;
};

static const struct option run_long[] = {
	{ "roles", 1, NULL, 'r' }, { "listen", 1, NULL, 'l' }, { "db", 1, NULL, 'd' },
	{ "log", 1, NULL, 'L' }, { "verbose", 0, NULL, 'v' }, { "instance", 1, NULL, 'i' },
	{ NULL, 0, NULL, 0 } };

static int parse_run(int argc, char **argv, struct run_opts *o)
{
	int c;

	while ((c = getopt_long(argc, argv, "v", run_long, NULL)) != -1) {
		switch (c) {
		case 'r': o->roles = optarg; break;
		case 'l': o->listen = optarg; break;
		case 'd': o->db = optarg; break;
		case 'L': o->log = optarg; break;
		case 'v': o->verbose = 1; break;
		case 'i': o->instance = optarg; break;
		default: return ct_error(CT_EUSAGE, "see ctune-server run --help");
		}
	}
	if (optind != argc - 1)
		return ct_error(CT_EUSAGE, "usage: ctune-server run DIR [options]");
	return 0;
}

static int run_serving(struct ct_server *srv, const struct run_opts *o)
{
	const char *listen = o->listen;
	int rc;

	rc = ct_instance_clear_stale();
	if (rc == 0)
		rc = ct_admin_start(srv);
	if (rc < 0)
		return rc;
	if (ct_roles_wants_http(o->roles)) {
		if (listen == NULL)
			ct_conf_get_str(srv->conf, "listen", "127.0.0.1:8080", &listen);
		rc = http_start(srv, listen);
	}
	if (rc == 0)
		rc = ct_roles_run(srv, o->roles);
	atomic_store(&srv->stop, 1);
	ct_http_stop(srv);
	ct_web_recover_stop(srv);	/* after the pages that queue to it */
	ct_admin_stop(srv);
	return rc;
}

static int cmd_run(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct run_opts o = { 0 };
	struct ct_server srv;
	const char *lvl;
	enum ct_log_level level;
	int rc;

	(void)ctx;
	rc = parse_run(argc, argv, &o);
	if (rc < 0)
		return rc;
	rc = ct_server_load(&srv, argv[optind], o.db);
	if (rc < 0)
		return rc;
	ct_conf_get_str(srv.conf, "log_level", "info", &lvl);
	if (ct_log_parse_level(lvl, &level) == 0)
		ct_log_set_level(o.verbose ? CT_LOG_DEBUG : level);
	if (o.log)
		rc = ct_log_open(o.log);
	if (rc == 0)
		rc = ct_instance_setup(&srv, o.instance);
	if (rc == 0)
		rc = ct_project_db_start(&srv, 0);
	if (rc == 0) {
		g_srv = &srv;
		set_signals();
		ct_log_info("ctune-server %s running project %s as instance %s", PACKAGE_VERSION,
			    srv.dir, ct_instance_name());
		rc = run_serving(&srv, &o);
		g_srv = NULL;
	}
	ct_db_global_end();
	ct_instance_release();
	ct_log_info("ctune-server stopped");
	ct_server_free(&srv);
	return rc;
}

/* ---- project commands -------------------------------------------------- */

int ct_cmd_project(const char *dir, int argc, char **argv)
{
	struct ct_cmd_ctx ctx = { .out = stdout };
	struct ct_server srv;
	const struct ct_cmd_def *cmd;
	char cwd[PATH_MAX];
	int nw, cmd_rc = 0, rc;

	rc = ct_admin_call(dir, argc, argv, &cmd_rc);
	if (rc < 0)
		return rc;
	if (rc == 1)
		return cmd_rc;
	cmd = ct_cmd_lookup(ct_project_cmds, argc, argv, &nw);
	if (cmd == NULL)
		return ct_error(CT_EUSAGE, "unknown command");
	rc = ct_server_load(&srv, dir, NULL);
	if (rc < 0)
		return rc;
	rc = ct_project_db_start(&srv, 0);
	if (rc == 0)
		rc = ct_db_open(&ctx.db, srv.clock);
	if (rc == 0) {
		ctx.srv = &srv;
		ctx.cwd = getcwd(cwd, sizeof(cwd));
		rc = cmd->fn(&ctx, argc - (nw - 1), argv + (nw - 1));
	}
	char msg[1024] = "";
	if (rc < 0)
		snprintf(msg, sizeof(msg), "%s", ct_errmsg(rc));
	ct_db_close(ctx.db);
	ct_db_global_end();
	ct_server_free(&srv);
	if (rc < 0)
		ct_error(rc, "%s", msg);	/* cleanup may have replaced the detail */
	return rc;
}

/* ---- the table rows (ct_cmd.h) ----------------------------------------- */

const struct ct_cmd_def ct_init_cmd = {
	.name = "init", .fn = cmd_init, .opts = init_long, .min_args = 1, .max_args = 1,
	.summary = "create a project directory (config, secret, database)",
	.usage = "DIR [--listen ADDR:PORT] [--url URL] [--db URL] [--name NAME]\n"
	"       [--tls | --tls-cert FILE --tls-key FILE]",
	.help = "DIR must be new or empty. --db mysql://USER:PASS@HOST[:PORT]/DATABASE uses\n"
	"an external MariaDB (default: an embedded one under DIR/db). A database\n"
	"that already holds another project is refused; a failed init leaves\n"
	"nothing behind. --tls makes a self-signed certificate and key\n"
	"(DIR/tls.crt, DIR/tls.key, EC P-256, for the --url host, else the\n"
	"--listen host) and serves https; --tls-cert/--tls-key use your own.\n",
};

const struct ct_cmd_def ct_run_cmd = {
	.name = "run", .fn = cmd_run, .opts = run_long, .shortopts = "v", .min_args = 1,
	.max_args = 1, .summary = "serve the project",
	.usage = "DIR [--roles r1,r2] [--instance NAME] [--listen ADDR:PORT] [--db URL]\n"
	"       [--log FILE] [-v]",
	.help = "roles: http, transitioner, validator, assimilator, file_deleter, stats,\n"
	"credit_decay, purge; default all.\n",
};
