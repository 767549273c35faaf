/*
 * main.c - `ctune`, the crowdtune volunteer client: global options, then one
 * command from a const table (ct_cmd.h; see commands.h for the contract).
 *
 * Every command is linked in (client/libctclient.a) and listed in the
 * table below.
 */
#include "config.h"
#include "commands.h"
#include "ct_cmd.h"
#include "ct_err.h"
#include "ct_log.h"
#include "ct_options.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct ct_cmd_def *const commands[] = {
	&ct_attach_cmd, &ct_detach_cmd, &ct_run_cmd, &ct_status_cmd, &ct_saver_cmd,
	&ct_suspend_cmd, &ct_resume_cmd, &ct_prefs_cmd, &ct_quit_cmd, &ct_web_cmd, &ct_devices_cmd,
	&ct_train_cmd,
	&ct_eval_cmd, &ct_model_cmd, &ct_tokens_cmd, &ct_sample_cmd, &ct_chat_cmd,
	&ct_verify_cmd, &ct_service_cmd, NULL,
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ctune [--dir DIR] [-v|-q] [--log-level L] COMMAND [ARGS]\n"
		"       ctune help COMMAND... | --help | --version\n\n"
		"global options:\n"
		"  -d, --dir DIR        state directory (default $XDG_DATA_HOME/crowdtune)\n"
		"  -v, --verbose        debug logging\n"
		"  -q, --quiet          warnings and errors only\n"
		"      --log-level L    error, warn, info or debug\n\n");
	ct_cmd_list(f, commands);
	fprintf(f, "\n'ctune COMMAND --help' shows a command's usage.\n");
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
		default:	/* getopt named the option */
			fprintf(stderr, "ctune: see 'ctune --help'\n");
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
	int status, i;

	ct_log_set_ident("ctune");
	i = parse_global(argc, argv, &status);
	if (i < 0)
		return status;
	argc -= i;
	argv += i;
	if (argc == 1 && strcmp(argv[0], "help") == 0) {
		usage(stdout);
		return CT_EXIT_OK;
	}
	if (ct_options_check() < 0) {	/* CTUNE_THREADS and the rest (ct_options.h) */
		fprintf(stderr, "ctune: %s\n", ct_errmsg(CT_EINVAL));
		return CT_EXIT_USAGE;
	}
	return ct_cmd_run("ctune", commands, NULL, argc, argv);
}
