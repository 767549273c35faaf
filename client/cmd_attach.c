/*
 * cmd_attach.c - `ctune attach` and `ctune detach`.
 *
 * When a daemon runs on the state directory (it holds ctune.lock), the
 * change goes through its control socket so that the daemon's state and the
 * file never disagree; otherwise the state file is edited directly under the
 * same lock.
 */
#include "commands.h"
#include "cl_attach.h"
#include "cl_ctl.h"
#include "cl_http.h"
#include "cl_pin.h"
#include "cl_paths.h"
#include "cl_rpc.h"
#include "cl_state.h"
#include "ct_err.h"
#include "ct_os.h"
#include "ct_log.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Run "cmd" on the daemon if one holds the directory. Returns 1 if it did
 * (*rc = outcome), 0 if no daemon runs (*lock_fd then holds the lock). */
static int via_daemon(const char *dir, const char *cmd, int *lock_fd, int *rc)
{
	struct ct_buf reply = CT_BUF_INIT(1 << 16);
	char *sock;
	int done = 0;

	*rc = 0;
	if (ct_cl_lock_dir(dir, lock_fd) == CT_EBUSY) {
		done = 1;
		sock = ct_cl_path(dir, CT_CL_SOCKET_FILE);
		*rc = sock ? ct_ctl_request(sock, cmd, 10, &reply) : CT_ENOMEM;
		if (*rc == 0 && strncmp(ct_buf_cstr(&reply), "ok", 2) != 0)
			*rc = ct_error(CT_EDENIED, "daemon: %s", ct_buf_cstr(&reply) + 6);
		free(sock);
	}
	ct_buf_free(&reply);
	return done;
}

/* What attach writes besides URL and key. */
struct attach_extra {
	const char *ca_file;		/* absolute, or NULL */
	const char *cpid;		/* used by the verification RPC, or NULL */
};

static int edit_state(const char *dir, const char *url, const char *key,
		      const struct attach_extra *x)
{
	struct ct_state *st = NULL;
	struct ct_project *p = NULL;
	char *path = ct_cl_path(dir, CT_CL_STATE_FILE);
	int rc, fresh = path != NULL && access(path, F_OK) != 0;

	rc = path ? ct_state_load(path, &st) : CT_ENOMEM;
	if (rc == 0 && fresh && x != NULL && x->cpid != NULL)
		snprintf(st->cpid, sizeof(st->cpid), "%s", x->cpid);
	if (rc == 0)
		rc = key ? ct_state_add_project(st, url, key, &p) : ct_state_remove_project(st, url);
	if (rc == 0 && p != NULL && x != NULL && x->ca_file != NULL)
		rc = ct_strset(&p->ca_file, x->ca_file);
	if (rc == 0)
		rc = ct_state_save(st);
	ct_state_free(st);
	free(path);
	return rc;
}

/* Attach or detach (key NULL) in the state directory. */
static int change(const char *dir_opt, const char *url, const char *key,
		  const struct attach_extra *x)
{
	const char *ca = x != NULL && x->ca_file != NULL ? x->ca_file : "";
	char *dir = NULL, *cmd = NULL;
	int rc, lock_fd = -1;

	umask(077);
	rc = ct_cl_state_dir(dir_opt, &dir);
	if (rc == 0) rc = ct_cl_make_private_dir(dir);
	if (rc == 0 && (key ? asprintf(&cmd, "attach %s %s %s", url, key, ca)
			    : asprintf(&cmd, "detach %s", url)) < 0)
		rc = CT_ENOMEM;
	if (rc == 0 && !via_daemon(dir, cmd, &lock_fd, &rc))
		rc = edit_state(dir, url, key, x);
	if (lock_fd >= 0)
		close(lock_fd);
	if (rc == 0)
		printf("%s %s (state in %s)\n", key ? "attached to" : "detached from", url, dir);
	free(cmd);
	free(dir);
	return rc;
}

/* Absolute path of a CA file (malloc'd) into *out, checked as the
 * control page checks it (cl_attach.h). */
static int ca_path(const char *arg, char **out)
{
	int rc = ct_attach_check_ca(arg, out);

	return rc < 0 ? ct_error(rc, "--ca-file: %s", ct_errmsg(rc)) : 0;
}

/* The state as on disk (nothing is written), for its cpid. */
static int load_state(const char *dir_opt, struct ct_state **st)
{
	char *dir = NULL, *path = NULL;
	int rc;

	*st = NULL;
	rc = ct_cl_state_dir(dir_opt, &dir);
	if (rc == 0 && (path = ct_cl_path(dir, CT_CL_STATE_FILE)) == NULL)
		rc = CT_ENOMEM;
	if (rc == 0) rc = ct_state_load(path, st);
	free(path);
	free(dir);
	return rc;
}

struct attach_args {
	const char *key, *name, *email, *password, *dir, *ca_arg;
	int no_verify, pin;
};

/* Options into a; returns -1 to go on, else the exit code. */
static const struct option attach_long[] = {
	{ "key", required_argument, NULL, 'k' },
	{ "name", required_argument, NULL, 'n' },
	{ "email", required_argument, NULL, 'e' },
	{ "password", required_argument, NULL, 'p' },
	{ "dir", required_argument, NULL, 'd' },
	{ "ca-file", required_argument, NULL, 'c' },
	{ "no-verify", no_argument, NULL, 'V' },
	{ "pin-self-signed", no_argument, NULL, 'P' },
	{ NULL, 0, NULL, 0 },
};
#define ATTACH_SHORT "k:n:e:p:d:"

static int attach_opts(int argc, char **argv, struct attach_args *a)
{
	const char *why = NULL;
	int c, nargs;

	while ((c = getopt_long(argc, argv, ATTACH_SHORT, attach_long, NULL)) != -1) {
		switch (c) {
		case 'k': a->key = optarg; break;
		case 'n': a->name = optarg; break;
		case 'e': a->email = optarg; break;
		case 'p': a->password = optarg; break;
		case 'd': a->dir = optarg; break;
		case 'c': a->ca_arg = optarg; break;
		case 'V': a->no_verify = 1; break;
		case 'P': a->pin = 1; break;
		default: return CT_EXIT_USAGE;	/* ct_cmd_resolve named it */
		}
	}
	nargs = argc - optind;
	if (a->key == NULL && nargs == 2)
		a->key = argv[optind + 1];	/* `ctune attach URL KEY` */
	else if (nargs != 1)
		why = nargs == 0 ? "missing the project URL" : "too many arguments";
	if (why == NULL && a->key == NULL && (a->email == NULL || a->password == NULL))
		why = "give --key KEY, or --email EMAIL and --password PASSWORD";
	if (why == NULL && a->pin && a->ca_arg != NULL)
		why = "--pin-self-signed and --ca-file exclude each other";
	if (why == NULL && a->key == NULL && a->no_verify)
		why = "--no-verify needs --key (an account is made over the network)";
	if (why != NULL) {
		fprintf(stderr, "ctune attach: %s (see 'ctune attach --help')\n", why);
		return CT_EXIT_USAGE;
	}
	return -1;
}

/* The key check or account RPC (on st's cpid) with the CA file or pin ca. */
static int reach(const struct attach_args *a, const char *url, const char *ca,
		 struct ct_state *st, char **got)
{
	char *uname = NULL;
	int rc = 0;

	if (a->key == NULL)
		rc = ct_attach_account(url, a->name, a->email, a->password, ca, got, &uname);
	else if (!a->no_verify)
		rc = ct_attach_verify(st, url, a->key, ca, &uname);
	if (rc == 0 && a->key == NULL)
		printf("%s account '%s' on %s\n", a->name ? "created" : "found",
		       uname ? uname : a->email, url);
	else if (rc == 0 && !a->no_verify)
		printf("verified: %s knows this key (user %s)\n", url, uname ? uname : "?");
	free(uname);
	return rc;
}

/* reach(); with --pin-self-signed, when the server's certificate does not
 * verify against the system's CAs, pin the key it shows (trust on first
 * use: printed for the user to compare) and reach it again through the
 * pin. *ca becomes the pin then. */
static int reach_or_pin(const struct attach_args *a, const char *url, char **ca,
			struct ct_state *st, char **got)
{
	char pin[CT_PIN_MAX];
	int https = strncmp(url, "https://", 8) == 0;
	int rc;

	if (!(a->pin && a->no_verify && https)) {	/* --no-verify: pin at once */
		rc = reach(a, url, *ca, st, got);
		if (rc != CT_ENET || !a->pin || !https || strstr(ct_errmsg(rc), "TLS") == NULL)
			return rc;
	}
	rc = ct_pin_fetch(url, pin);
	if (rc < 0)
		return rc;
	printf("%s: certificate not signed by a known CA; pinning its public key %s\n",
	       url, pin);
	free(*ca);
	*ca = strdup(pin);
	if (*ca == NULL)
		return CT_ENOMEM;
	if (st != NULL)		/* the first try added it in memory */
		(void)ct_state_remove_project(st, url);
	return reach(a, url, *ca, st, got);
}

static int cmd_attach(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct attach_args a = { .password = getenv("CTUNE_PASSWORD") };
	struct attach_extra x = { 0 };
	struct ct_state *st = NULL;
	char *got = NULL, *ca = NULL, url[1024];
	const char *key;
	int rc;

	(void)ctx;
	rc = attach_opts(argc, argv, &a);
	if (rc >= 0)
		return rc;
	key = a.key;
	snprintf(url, sizeof(url), "%s", argv[optind]);
	ct_url_normalise(url);
	rc = ct_attach_check_url(url);
	if (rc == 0 && a.ca_arg != NULL) rc = ca_path(a.ca_arg, &ca);
	if (rc == 0 && key != NULL) rc = ct_attach_check_key(key);
	if (rc == 0 && key != NULL && !a.no_verify)
		rc = load_state(a.dir, &st);
	if (rc == 0)
		rc = reach_or_pin(&a, url, &ca, st, &got);
	if (rc == 0 && key == NULL) {
		key = got;
		rc = ct_attach_check_key(key);
	} else if (rc == 0 && st != NULL) {
		x.cpid = st->cpid;
	}
	x.ca_file = ca;
	if (rc == 0) rc = change(a.dir, url, key, &x);
	if (rc < 0)
		fprintf(stderr, "ctune attach: %s\n", ct_errmsg(rc));
	ct_state_free(st);
	free(got);
	free(ca);
	return rc == 0 ? CT_EXIT_OK : rc == CT_EUSAGE ? CT_EXIT_USAGE : CT_EXIT_FAIL;
}

static const struct option detach_long[] = {
	{ "dir", required_argument, NULL, 'd' },
	{ NULL, 0, NULL, 0 },
};

static int cmd_detach(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	const char *dir = NULL;
	char url[1024];
	int c, rc;

	(void)ctx;
	while ((c = getopt_long(argc, argv, "d:", detach_long, NULL)) != -1) {
		if (c != 'd')
			return CT_EXIT_USAGE;	/* ct_cmd_resolve named it */
		dir = optarg;
	}
	snprintf(url, sizeof(url), "%s", argv[optind]);
	ct_url_normalise(url);
	rc = change(dir, url, NULL, NULL);
	if (rc < 0)
		fprintf(stderr, "ctune detach: %s\n", ct_errmsg(rc));
	return rc == 0 ? CT_EXIT_OK : CT_EXIT_FAIL;
}

const struct ct_cmd_def ct_attach_cmd = {
	.name = "attach", .fn = cmd_attach, .opts = attach_long, .shortopts = ATTACH_SHORT,
	.min_args = 1, .max_args = 2,
	.summary = "attach to a project (URL --key KEY, or create an account)",
	.usage = "URL --key KEY   (or: ctune attach URL KEY)\n"
	"       ctune attach URL --name NAME --email EMAIL --password PASSWORD\n"
	"       ctune attach URL --email EMAIL --password PASSWORD",
	.help = "Attach this computer to a project: with the account key from the\n"
	"project's web site, by creating an account (--name), or by looking up\n"
	"the key of an existing account. The password may also come from the\n"
	"CTUNE_PASSWORD environment variable. One RPC to the project checks the\n"
	"URL, TLS and the key (or makes the account) before anything is written.\n"
	"  -d, --dir DIR      state directory\n"
	"      --ca-file FILE CA certificates for a project with its own CA\n"
	"                     (default: $CURL_CA_BUNDLE, else the system's)\n"
	"      --no-verify    write the key without asking the project (scripts\n"
	"                     attaching before the server is up)\n"
	"      --pin-self-signed  when the https certificate is not signed by a\n"
	"                     known CA, show and pin its public key (SHA-256):\n"
	"                     later connections accept that key only\n",
};

const struct ct_cmd_def ct_detach_cmd = {
	.name = "detach", .fn = cmd_detach, .opts = detach_long, .shortopts = "d:",
	.min_args = 1, .max_args = 1, .summary = "detach from a project (URL)",
	.usage = "URL [--dir DIR]",
	.help = "Detach from a project; its unfinished tasks are dropped.\n",
};
