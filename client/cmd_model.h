/*
 * cmd_model.h - the Llama subcommands of `ctune model` (client/cmd_model.c):
 * import HF_DIR, export M.ct, init-llama, as rows of `ctune model`'s table
 * (cmd_train.c; ct_cmd.h).
 */
#ifndef CT_CLIENT_CMD_MODEL_H
#define CT_CLIENT_CMD_MODEL_H

#include "ct_cmd.h"

extern const struct ct_cmd_def ct_model_import_cmd, ct_model_export_cmd,
	ct_model_init_llama_cmd;

#endif
