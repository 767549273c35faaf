/*
 * commands.h - the subcommands of `ctune`, each `int fn(int argc, char **argv)`.
 *
 * client/main.c parses the global options and dispatches through a table of
 * these. argv[0] is the subcommand's name; the function parses the rest with
 * getopt_long and returns the process exit status (0 success, 1 failure,
 * 2 usage error). Global options that matter to a subcommand travel in the
 * environment so that every subcommand sees them the same way:
 *   CTUNE_DIR   the state directory chosen with `ctune --dir DIR`.
 *
 * Where they live: attach/detach (client/cmd_attach.c), run (cmd_run.c),
 * status/saver/suspend/resume/quit (cmd_status.c), train/eval/model
 * (cmd_train.c, LoRA parts in cmd_lora.c), devices (cmd_devices.c), tokens
 * (cmd_tokens.c), sample (cmd_sample.c); all in client/libctclient.a, listed
 * in main.c's command table.
 */
#ifndef CT_CLIENT_COMMANDS_H
#define CT_CLIENT_COMMANDS_H

/* CLIENT */
int ct_cmd_attach(int argc, char **argv);
int ct_cmd_detach(int argc, char **argv);
int ct_cmd_run(int argc, char **argv);
int ct_cmd_status(int argc, char **argv);
int ct_cmd_saver(int argc, char **argv);
int ct_cmd_suspend(int argc, char **argv);
int ct_cmd_resume(int argc, char **argv);
int ct_cmd_quit(int argc, char **argv);

/* ENGINE (client/cmd_train.c) */
int ct_cmd_train(int argc, char **argv);
int ct_cmd_eval(int argc, char **argv);
int ct_cmd_model(int argc, char **argv);

/* LEAD (client/cmd_tokens.c) */
int ct_cmd_tokens(int argc, char **argv);
/* client/cmd_tokens_text.c: `ctune tokens encode|decode` (argv[0] is the action) */
int ct_cmd_tokens_encode(int argc, char **argv);
int ct_cmd_tokens_decode(int argc, char **argv);

/* TEXT (client/cmd_sample.c) */
int ct_cmd_sample(int argc, char **argv);

/* OPENCL (client/cmd_devices.c) */
int ct_cmd_devices(int argc, char **argv);

/* Exit statuses shared by the subcommands. */
#define CT_EXIT_OK 0
#define CT_EXIT_FAIL 1
#define CT_EXIT_USAGE 2

#endif
