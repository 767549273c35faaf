/*
 * cmd_run.h - the subcommands of ctune-server that main.c dispatches to:
 * init, run, and the project commands (commands.h) run through the admin
 * socket or locally. Each returns 0 or a CT_E* code (ct_errmsg has the
 * message).
 */
#ifndef CT_CMD_RUN_H
#define CT_CMD_RUN_H

#include "ct_cmd.h"

/* The rows of `init DIR` and `run DIR` in main.c's table (ct_cmd.h); their
 * handlers take a NULL ctx and return 0 or a CT_E* code. */
extern const struct ct_cmd_def ct_init_cmd, ct_run_cmd;

/* Run a project command (argv = its words and options, without DIR) on the
 * project in dir: through the admin socket if a server runs, else here. */
int ct_cmd_project(const char *dir, int argc, char **argv);

#endif
