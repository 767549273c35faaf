/*
 * cmd_run.h - the subcommands of ctune-server that main.c dispatches to:
 * init, run, and the project commands (commands.h) run through the admin
 * socket or locally. Each returns 0 or a CT_E* code (ct_errmsg has the
 * message).
 */
#ifndef CT_CMD_RUN_H
#define CT_CMD_RUN_H

/* argv[0] is "init"/"run"; options and DIR follow. */
int ct_cmd_init(int argc, char **argv);
int ct_cmd_run(int argc, char **argv);

/* Run a project command (argv = its words and options, without DIR) on the
 * project in dir: through the admin socket if a server runs, else here. */
int ct_cmd_project(const char *dir, int argc, char **argv);

#endif
