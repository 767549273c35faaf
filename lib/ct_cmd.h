/*
 * ct_cmd.h - command tables for crowdtune's programs (`ctune`,
 * `ctune-server`): commands and subcommands are const trees of
 * struct ct_cmd_def, and one resolver gives every level the same
 * behaviour:
 *
 *   PROG help [WORDS...]         usage of that command (stdout, exit 0)
 *   PROG WORDS... --help | -h    the same
 *   PROG GROUP                   the group's usage on stderr, exit 2
 *   an unknown command, an unknown option, an option missing its
 *   argument, a required option left out, too few or too many arguments:
 *   one line naming it, exit 2
 *
 * Options are checked against the command's getopt_long table (the same
 * table its handler parses with), on a copy of argv, before the handler
 * runs, then their values by the row's check(), if any; the handler then
 * parses argv as before (optind is reset to 0).
 *
 * Each program defines struct ct_cmd_ctx (the server: the project and its
 * database, commands.h; the client passes NULL); this module never looks
 * inside it.
 */
#ifndef CT_CMD_H
#define CT_CMD_H

#include <getopt.h>
#include <stdio.h>

struct ct_cmd_ctx;

struct ct_cmd_def {
	const char *name;	/* "submit" */
	const char *summary;	/* one line, for the command lists */
	/* the arguments after the command words ("DIR ID [--round R]"); may
	 * hold '\n' + spaces for a second line */
	const char *usage;
	const char *help;	/* optional paragraphs after the usage */
	/* a leaf: returns the program's own status (see each program) */
	int (*fn)(struct ct_cmd_ctx *ctx, int argc, char **argv);
	const struct option *opts;	/* NULL: takes no long options */
	const char *shortopts;		/* getopt's, NULL: none */
	int own_opts;		/* 1: fn refuses unknown options itself */
	/* optional: judges the option values once the table's check passed,
	 * before anything runs (argv as fn gets it, with the positional
	 * arguments fn's caller takes out, such as DIR, still in it);
	 * returns 0 or CT_EUSAGE with a one-line message (exit 2) */
	int (*check)(int argc, char **argv);
	int min_args, max_args;	/* positional arguments; max_args -1: any */
	/* long options that must be given, space-separated ("model out") */
	const char *required;
	/* a group: NULL-ended; a group with fn runs fn (its opts, usage,
	 * required, args) when the word after it is an option, not --help */
	const struct ct_cmd_def *const *subs;
	unsigned flags;		/* for the program's own use */
};

/*
 * Find the command argv names in table (NULL-ended) and check its options
 * and arguments. argv[0] is the first command word ("help" is understood).
 * prog ("ctune") prefixes the messages.
 *
 * Returns 0 with *def the leaf to run and *nwords the number of command
 * words at argv[0..]; 1 when help was printed on stdout (exit 0); or
 * CT_EUSAGE with a one-line message in ct_errmsg() (exit 2), the group's
 * usage printed on stderr where a subcommand is missing.
 */
int ct_cmd_resolve(const char *prog, const struct ct_cmd_def *const *table, int argc,
		   char **argv, const struct ct_cmd_def **def, int *nwords);

/* For a program whose handlers return exit statuses (ctune): resolve argv
 * as above, print a usage error as "prog: message" on stderr (exit 2), or
 * run the leaf with ctx and argv from its name on. Returns the exit
 * status. */
int ct_cmd_run(const char *prog, const struct ct_cmd_def *const *table,
	       struct ct_cmd_ctx *ctx, int argc, char **argv);

/* The leaf that argv's words name in table without checking options, or
 * NULL; *nwords as for ct_cmd_resolve. For argv already checked (the
 * server's admin socket). */
const struct ct_cmd_def *ct_cmd_lookup(const struct ct_cmd_def *const *table, int argc,
				       char **argv, int *nwords);

/* Print "commands:" and one "  NAME  summary" line per entry of table. */
void ct_cmd_list(FILE *f, const struct ct_cmd_def *const *table);

#endif
