/*
 * main.c - ctune-server's command line: one table of commands (ct_cmd.h):
 * init and run (cmd_run.c), the project commands (cmd_job.c, run here or
 * through a running server's admin socket).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd_run.h"
#include "cmd/commands.h"
#include "ct_cmd.h"
#include "ct_err.h"
#include "ct_log.h"
#include "ct_options.h"

static const struct ct_cmd_def *const commands[] = {
	&ct_init_cmd, &ct_run_cmd, &ct_job_cmd, &ct_status_cmd, &ct_user_cmd, NULL,
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ctune-server COMMAND ...\n"
		"       ctune-server help COMMAND... | --help | --version\n\n");
	ct_cmd_list(f, commands);
	fprintf(f, "\n'ctune-server COMMAND --help' shows a command's usage; "
		"see doc/operator.md.\n");
}

/* A project command: DIR follows the command words; the rest (words and
 * options) goes to ct_cmd_project(). */
static int project_cmd(int argc, char **argv, int nw)
{
	char *args[256];
	int n = 0;

	if (argc > 255)
		return ct_error(CT_EUSAGE, "too many arguments");
	if (argc <= nw || argv[nw][0] == '-') {
		const char *w = nw > 1 ? argv[1] : "";

		return ct_error(CT_EUSAGE, "%s%s%s: the project DIR must come first (see "
				"'ctune-server %s%s%s --help')", argv[0], *w ? " " : "", w,
				argv[0], *w ? " " : "", w);
	}
	for (int i = 0; i < nw; i++)
		args[n++] = argv[i];
	for (int i = nw + 1; i < argc; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	return ct_cmd_project(argv[nw], n, args);
}

int main(int argc, char **argv)
{
	const struct ct_cmd_def *def;
	int nw, rc;

	ct_log_set_ident("ctune-server");
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    (strcmp(argv[1], "help") == 0 && argc == 2)) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("ctune-server %s\n", PACKAGE_VERSION);
		return 0;
	}
	rc = ct_options_check();	/* CTUNE_THREADS and the rest (ct_options.h) */
	if (rc == 0)
		rc = ct_cmd_resolve("ctune-server", commands, argc - 1, argv + 1, &def, &nw);
	if (rc == 1)
		return 0;
	if (rc == 0 && (def->flags & CT_CMD_PROJECT))
		rc = project_cmd(argc - 1, argv + 1, nw);
	else if (rc == 0)
		rc = def->fn(NULL, argc - nw, argv + nw);
	if (rc < 0) {
		fprintf(stderr, "ctune-server: %s\n", ct_errmsg(rc));
		return rc == CT_EUSAGE ? 2 : 1;
	}
	return 0;
}
