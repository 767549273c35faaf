/*
 * main.c - ctune-server's command line: a table of subcommands; each
 * does its work in cmd_run.c / cmd_job.c.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_run.h"
#include "commands.h"
#include "ct_err.h"
#include "ct_log.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: ctune-server COMMAND ...\n\n"
		"  init DIR [--listen ADDR:PORT] [--url URL] [--db URL] [--name NAME]\n"
		"        create a project directory (config, secret, database)\n"
		"  run DIR [--roles r1,r2] [--instance NAME] [--listen ADDR:PORT] [--db URL]\n"
		"      [--log FILE] [-v]\n"
		"        serve the project (roles: http, transitioner, validator,\n"
		"        assimilator, file_deleter, stats, credit_decay, purge; default all)\n");
	for (const struct ct_cmd *c = ct_project_cmds; c->name; c++)
		fprintf(f, "  %s%s%s DIR %s\n        %s\n", c->group ? c->group : "",
			c->group ? " " : "", c->name, c->usage, c->help);
	fprintf(f, "\n  --help, --version\n\nSee doc/operator.md.\n");
}

static int wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

static int project_cmd(int argc, char **argv)
{
	const struct ct_cmd *cmd;
	char *args[256];
	int nw, n = 0;

	cmd = ct_cmd_find(argv[1], argc > 2 ? argv[2] : NULL, &nw);
	if (cmd == NULL)
		return ct_error(CT_EUSAGE, "unknown command '%s' (see ctune-server --help)", argv[1]);
	if (wants_help(argc, argv)) {
		printf("usage: ctune-server %s%s%s DIR %s\n%s\n", cmd->group ? cmd->group : "",
		       cmd->group ? " " : "", cmd->name, cmd->usage, cmd->help);
		return 0;
	}
	if (argc < 2 + nw || argc - 1 > 255)
		return ct_error(CT_EUSAGE, "missing project DIR (see ctune-server %s --help)", argv[1]);
	for (int i = 1; i < 1 + nw; i++)
		args[n++] = argv[i];
	for (int i = 2 + nw; i < argc; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	return ct_cmd_project(argv[1 + nw], n, args);
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
} cmds[] = {
	{ "init", ct_cmd_init, "init DIR [--listen ADDR:PORT] [--url URL] [--db URL] [--name NAME]" },
	{ "run", ct_cmd_run, "run DIR [--roles r1,r2] [--instance NAME] [--listen ADDR:PORT] [--db URL] [--log FILE] [-v]" },
	{ NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
	int rc;

	ct_log_set_ident("ctune-server");
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "--version") == 0 || (argc > 2 && strcmp(argv[2], "--version") == 0)) {
		printf("ctune-server %s\n", PACKAGE_VERSION);
		return 0;
	}
	rc = 1;
	for (int i = 0; cmds[i].name; i++)
		if (strcmp(argv[1], cmds[i].name) == 0) {
			if (wants_help(argc, argv)) {
				printf("usage: ctune-server %s\n", cmds[i].usage);
				return 0;
			}
			rc = cmds[i].fn(argc - 1, argv + 1);
			goto done;
		}
	rc = project_cmd(argc, argv);
done:
	if (rc < 0) {
		fprintf(stderr, "ctune-server: %s\n", ct_errmsg(rc));
		return rc == CT_EUSAGE ? 2 : 1;
	}
	return 0;
}
