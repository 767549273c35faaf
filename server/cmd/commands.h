/*
 * commands.h - ctune-server's project subcommands (job submit/list/show/
 * cancel/export, status, user create) as a table. They run either in the
 * CLI process (no server running: it opens the database itself) or inside
 * `ctune-server run`, called through the admin socket (admin.h) with
 * the caller's argv and working directory; either way they print to
 * ctx->out and return 0 or a CT_E* code whose ct_errmsg() is the error.
 * ctune-server's main.c resolves and checks a command line against these
 * tables (ct_cmd.h) before anything opens the project.
 */
#ifndef CT_COMMANDS_H
#define CT_COMMANDS_H

#include <stdio.h>

#include "ct_cmd.h"

struct ct_server;
struct ct_db;

struct ct_cmd_ctx {
	struct ct_server *srv;
	struct ct_db *db;
	FILE *out;
	const char *cwd;	/* where relative paths in argv are resolved */
};

/* The project commands' rows in their tables (ct_cmd.h) carry this flag:
 * their first argument is the project DIR, and ctune-server runs them
 * through ct_cmd_project(); their handlers take a struct ct_cmd_ctx with
 * the project open and argv[0] the command's name (DIR taken out). */
#define CT_CMD_PROJECT 1u

/* The project commands (job ..., status, user ...), NULL-ended, and the
 * rows main.c lists beside init and run. */
extern const struct ct_cmd_def *const ct_project_cmds[];
extern const struct ct_cmd_def ct_job_cmd, ct_status_cmd, ct_user_cmd;

/* Resolve path against ctx->cwd into out (cap bytes). */
int ct_cmd_path(const struct ct_cmd_ctx *ctx, const char *path, char *out, size_t cap);

#endif
