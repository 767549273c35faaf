/*
 * cmd_attach.c - `ctune attach` and `ctune detach`.
 *
 * When a daemon runs on the state directory (it holds ctune.lock), the
 * change goes through its control socket so that the daemon's state and the
 * file never disagree; otherwise the state file is edited directly under the
 * same lock.
 */
#include "commands.h"
#include "cl_ctl.h"
#include "cl_http.h"
#include "cl_paths.h"
#include "cl_rpc.h"
#include "cl_state.h"
#include "ct_err.h"
#include "ct_log.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int check_url(const char *url)
{
	if ((strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) ||
	    strlen(url) > 1000 || strpbrk(url, " \t\r\n") != NULL)
		return ct_error(CT_EUSAGE, "'%s' is not an http:// or https:// URL", url);
	return 0;
}

static int check_key(const char *key)
{
	size_t n = strlen(key);

	if (n == 0 || n > 255)
		return ct_error(CT_EUSAGE, "bad account key");
	for (size_t i = 0; i < n; i++)
		if (!((key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'z') ||
		      (key[i] >= 'A' && key[i] <= 'Z')))
			return ct_error(CT_EUSAGE, "bad account key (letters and digits only)");
	return 0;
}

/* Create or look up the account; *key is malloc'd. */
static int account_key(const char *url, const char *name, const char *email,
		       const char *password, char **key)
{
	struct ct_buf req = CT_BUF_INIT(1 << 16), reply = CT_BUF_INIT(1 << 16);
	char *rpc = NULL, *uname = NULL;
	long status;
	int rc;

	*key = NULL;
	rc = ct_rpc_build_account(name ? "create" : "lookup", name, email, password, &req);
	if (rc == 0 && asprintf(&rpc, "%s/rpc/account", url) < 0)
		rc = CT_ENOMEM;
	if (rc == 0) rc = ct_http_post(rpc, "application/xml", req.data, req.len, 0, NULL,
				       &reply, &status);
	if (rc == 0 || (rc == CT_EHTTP && reply.len > 0))
		rc = ct_rpc_parse_account(reply.data, reply.len, key, &uname);
	if (rc == 0)
		printf("%s account '%s' on %s\n", name ? "created" : "found",
		       uname ? uname : email, url);
	free(uname);
	free(rpc);
	ct_buf_free(&req);
	ct_buf_free(&reply);
	return rc;
}

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

static int edit_state(const char *dir, const char *url, const char *key)
{
	struct ct_state *st = NULL;
	char *path = ct_cl_path(dir, CT_CL_STATE_FILE);
	int rc;

	rc = path ? ct_state_load(path, &st) : CT_ENOMEM;
	if (rc == 0)
		rc = key ? ct_state_add_project(st, url, key, NULL) : ct_state_remove_project(st, url);
	if (rc == 0)
		rc = ct_state_save(st);
	ct_state_free(st);
	free(path);
	return rc;
}

/* Attach or detach (key NULL) in the state directory. */
static int change(const char *dir_opt, const char *url, const char *key)
{
	char *dir = NULL, *cmd = NULL;
	int rc, lock_fd = -1;

	umask(077);
	rc = ct_cl_state_dir(dir_opt, &dir);
	if (rc == 0) rc = ct_cl_make_private_dir(dir);
	if (rc == 0 && asprintf(&cmd, key ? "attach %s %s" : "detach %s", url, key) < 0)
		rc = CT_ENOMEM;
	if (rc == 0 && !via_daemon(dir, cmd, &lock_fd, &rc))
		rc = edit_state(dir, url, key);
	if (lock_fd >= 0)
		close(lock_fd);
	if (rc == 0)
		printf("%s %s (state in %s)\n", key ? "attached to" : "detached from", url, dir);
	free(cmd);
	free(dir);
	return rc;
}

static void attach_usage(FILE *f)
{
	fprintf(f,
		"usage: ctune attach URL --key KEY   (or: ctune attach URL KEY)\n"
		"       ctune attach URL --name NAME --email EMAIL --password PASSWORD\n"
		"       ctune attach URL --email EMAIL --password PASSWORD\n"
		"Attach this computer to a project: with the account key from the\n"
		"project's web site, by creating an account (--name), or by looking up\n"
		"the key of an existing account. The password may also come from the\n"
		"CTUNE_PASSWORD environment variable.\n"
		"  -d, --dir DIR   state directory\n");
}

int ct_cmd_attach(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "name", required_argument, NULL, 'n' },
		{ "email", required_argument, NULL, 'e' },
		{ "password", required_argument, NULL, 'p' },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *key = NULL, *name = NULL, *email = NULL, *dir = NULL;
	const char *password = getenv("CTUNE_PASSWORD"), *why = NULL;
	char *got = NULL, url[1024];
	int c, rc, nargs;

	while ((c = getopt_long(argc, argv, "k:n:e:p:d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k': key = optarg; break;
		case 'n': name = optarg; break;
		case 'e': email = optarg; break;
		case 'p': password = optarg; break;
		case 'd': dir = optarg; break;
		case 'h': attach_usage(stdout); return CT_EXIT_OK;
		default: attach_usage(stderr); return CT_EXIT_USAGE;
		}
	}
	nargs = argc - optind;
	if (key == NULL && nargs == 2)
		key = argv[optind + 1];	/* `ctune attach URL KEY` */
	else if (nargs != 1)
		why = nargs == 0 ? "missing the project URL" : "too many arguments";
	if (why == NULL && key == NULL && (email == NULL || password == NULL))
		why = "give --key KEY, or --email EMAIL and --password PASSWORD";
	if (why != NULL) {
		fprintf(stderr, "ctune attach: %s\n", why);
		attach_usage(stderr);
		return CT_EXIT_USAGE;
	}
	snprintf(url, sizeof(url), "%s", argv[optind]);
	ct_url_normalise(url);
	rc = check_url(url);
	if (rc == 0 && key == NULL) {
		rc = account_key(url, name, email, password, &got);
		key = got;
	}
	if (rc == 0) rc = check_key(key);
	if (rc == 0) rc = change(dir, url, key);
	if (rc < 0)
		fprintf(stderr, "ctune attach: %s\n", ct_errmsg(rc));
	free(got);
	return rc == 0 ? CT_EXIT_OK : rc == CT_EUSAGE ? CT_EXIT_USAGE : CT_EXIT_FAIL;
}

int ct_cmd_detach(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL;
	char url[1024];
	int c, rc;

	while ((c = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
		if (c == 'd') {
			dir = optarg;
		} else {
			fprintf(c == 'h' ? stdout : stderr,
				"usage: ctune detach URL [--dir DIR]\n"
				"Detach from a project; its unfinished tasks are dropped.\n");
			return c == 'h' ? CT_EXIT_OK : CT_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "ctune detach: %s\nusage: ctune detach URL [--dir DIR]\n",
			optind == argc ? "missing the project URL" : "too many arguments");
		return CT_EXIT_USAGE;
	}
	snprintf(url, sizeof(url), "%s", argv[optind]);
	ct_url_normalise(url);
	rc = change(dir, url, NULL);
	if (rc < 0)
		fprintf(stderr, "ctune detach: %s\n", ct_errmsg(rc));
	return rc == 0 ? CT_EXIT_OK : CT_EXIT_FAIL;
}
