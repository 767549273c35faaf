/*
 * cmd_model.h - the Llama subcommands of `ctune model` (client/cmd_model.c):
 * import HF_DIR, export M.ct, init-llama. argv[0] is the action's name;
 * each returns an exit status like the commands of commands.h.
 */
#ifndef CT_CLIENT_CMD_MODEL_H
#define CT_CLIENT_CMD_MODEL_H

int ct_cmd_model_import(int argc, char **argv);
int ct_cmd_model_export(int argc, char **argv);
int ct_cmd_model_init_llama(int argc, char **argv);

#endif
