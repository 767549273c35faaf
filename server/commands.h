/*
 * commands.h - ctune-server's project subcommands (job submit/list/show/
 * cancel/export, status, user create) as a table. They run either in the
 * CLI process (no server running: it opens the database itself) or inside
 * `ctune-server run`, called through the admin socket (admin.h) with
 * the caller's argv and working directory; either way they print to
 * ctx->out and return 0 or a CT_E* code whose ct_errmsg() is the error.
 */
#ifndef CT_COMMANDS_H
#define CT_COMMANDS_H

#include <stdio.h>

struct ct_server;
struct ct_db;

struct ct_cmd_ctx {
	struct ct_server *srv;
	struct ct_db *db;
	FILE *out;
	const char *cwd;	/* where relative paths in argv are resolved */
};

struct ct_cmd {
	const char *group;	/* "job", or NULL for a top-level command */
	const char *name;	/* "submit", "status" */
	/* argv[0] is the command name; the project dir is already taken out */
	int (*fn)(struct ct_cmd_ctx *ctx, int argc, char **argv);
	const char *usage;	/* after "ctune-server ... DIR" */
	const char *help;	/* one line */
};

/* The table, ended by a row with name NULL. */
extern const struct ct_cmd ct_project_cmds[];

/* The command for words a (and b when a is a group), or NULL; *nwords gets
 * 1 or 2. */
const struct ct_cmd *ct_cmd_find(const char *a, const char *b, int *nwords);

/* Resolve path against ctx->cwd into out (cap bytes). */
int ct_cmd_path(const struct ct_cmd_ctx *ctx, const char *path, char *out, size_t cap);

#endif
