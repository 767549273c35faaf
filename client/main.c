/*
 * main.c - `ctune`, the crowdtune volunteer client: global options, then one
 * subcommand from a const table (see commands.h for the contract).
 *
 * Every subcommand is linked in (client/libctclient.a) and listed in the
 * table below.
 */
#include "config.h"
#include "commands.h"
#include "ct_log.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ct_cmd_entry {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct ct_cmd_entry commands[] = {
	{ .name = "attach", .fn = ct_cmd_attach,
	  .summary = "attach to a project (URL --key KEY, or create an account)" },
	{ .name = "detach", .fn = ct_cmd_detach,
	  .summary = "detach from a project (URL)" },
	{ .name = "run", .fn = ct_cmd_run,
	  .summary = "run the client daemon: fetch, train and return work" },
	{ .name = "status", .fn = ct_cmd_status,
	  .summary = "show projects, tasks and credit of the running daemon" },
	{ .name = "saver", .fn = ct_cmd_saver,
	  .summary = "full-screen live view of the daemon (exits on a key)" },
	{ .name = "suspend", .fn = ct_cmd_suspend,
	  .summary = "stop computing until 'ctune resume'" },
	{ .name = "resume", .fn = ct_cmd_resume,
	  .summary = "resume computing after 'ctune suspend'" },
	{ .name = "quit", .fn = ct_cmd_quit,
	  .summary = "make the daemon checkpoint and exit" },
	{ .name = "devices", .fn = ct_cmd_devices,
	  .summary = "list OpenCL devices and their conformance" },
	{ .name = "train", .fn = ct_cmd_train,
	  .summary = "run one work unit locally (training)" },
	{ .name = "eval", .fn = ct_cmd_eval,
	  .summary = "evaluate a model on a token file" },
	{ .name = "model", .fn = ct_cmd_model,
	  .summary = "inspect or create model checkpoints" },
	{ .name = "tokens", .fn = ct_cmd_tokens,
	  .summary = "encode text to token files and back; inspect, shard, concatenate" },
	{ .name = "sample", .fn = ct_cmd_sample,
	  .summary = "generate text from a model (same seed, same text)" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct ct_cmd_entry *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ctune [--dir DIR] [-v|-q] [--log-level L] COMMAND [ARGS]\n"
		"       ctune help COMMAND | --help | --version\n\n"
		"global options:\n"
		"  -d, --dir DIR        state directory (default $XDG_DATA_HOME/crowdtune)\n"
		"  -v, --verbose        debug logging\n"
		"  -q, --quiet          warnings and errors only\n"
		"      --log-level L    error, warn, info or debug\n\n"
		"commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s%s\n", commands[i].name, commands[i].summary,
			commands[i].fn ? "" : " (not built in)");
	fprintf(f, "\n'ctune help COMMAND' shows a command's options.\n");
}

static int run_command(const struct ct_cmd_entry *c, int argc, char **argv)
{
	if (c->fn == NULL) {
		fprintf(stderr, "ctune: '%s' is not built in to this ctune\n",
			c->name);
		return CT_EXIT_FAIL;
	}
	return c->fn(argc, argv);
}

/* `ctune help [CMD]`: the command's own --help. */
static int help_command(int argc, char **argv)
{
	const struct ct_cmd_entry *c;
	char *sub[3];

	if (argc < 2) {
		usage(stdout);
		return CT_EXIT_OK;
	}
	c = find_command(argv[1]);
	if (c == NULL) {
		fprintf(stderr, "ctune: no command '%s'\n", argv[1]);
		return CT_EXIT_USAGE;
	}
	if (c->fn == NULL) {
		printf("ctune %s: %s (not built in)\n", c->name, c->summary);
		return CT_EXIT_OK;
	}
	sub[0] = (char *)c->name;
	sub[1] = (char *)"--help";
	sub[2] = NULL;
	return c->fn(2, sub);
}

/* Parse the options before the command; returns the index of the command
 * or -1 after printing (exit status in *status). */
static int parse_global(int argc, char **argv, int *status)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "log-level", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	enum ct_log_level lvl;
	int c;

	*status = CT_EXIT_OK;
	while ((c = getopt_long(argc, argv, "+d:vqh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			setenv("CTUNE_DIR", optarg, 1);
			break;
		case 'v':
			ct_log_set_level(CT_LOG_DEBUG);
			break;
		case 'q':
			ct_log_set_level(CT_LOG_WARN);
			break;
		case 'L':
			if (ct_log_parse_level(optarg, &lvl) < 0) {
				fprintf(stderr, "ctune: bad log level '%s'\n", optarg);
				*status = CT_EXIT_USAGE;
				return -1;
			}
			ct_log_set_level(lvl);
			break;
		case 'h':
			usage(stdout);
			return -1;
		case 'V':
			printf("ctune (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
			return -1;
		default:
			usage(stderr);
			*status = CT_EXIT_USAGE;
			return -1;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		*status = CT_EXIT_USAGE;
		return -1;
	}
	return optind;
}

int main(int argc, char **argv)
{
	const struct ct_cmd_entry *c;
	int status, i;

	ct_log_set_ident("ctune");
	i = parse_global(argc, argv, &status);
	if (i < 0)
		return status;
	argc -= i;
	argv += i;
	optind = 0;	/* GNU getopt: reinitialise for the subcommand */
	if (strcmp(argv[0], "help") == 0)
		return help_command(argc, argv);
	c = find_command(argv[0]);
	if (c == NULL) {
		fprintf(stderr, "ctune: no command '%s' (try 'ctune --help')\n",
			argv[0]);
		return CT_EXIT_USAGE;
	}
	return run_command(c, argc, argv);
}
