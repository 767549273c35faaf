/*
 * commands.h - the commands of `ctune`, as rows of main.c's table
 * (ct_cmd.h); each row sits beside its handler in client/cmd_*.c.
 *
 * main.c parses the global options, then ct_cmd_resolve() finds the row,
 * answers --help and refuses unknown options and wrong argument counts
 * before the handler runs. A handler is called with ctx NULL and argv[0]
 * its own name, parses the rest with getopt_long (the row's option table)
 * and returns the process exit status (0 success, 1 failure, 2 usage
 * error). Global options that matter to a command travel in the
 * environment so that every command sees them the same way:
 *   CTUNE_DIR   the state directory chosen with `ctune --dir DIR`.
 *
 * Where they live: attach/detach (client/cmd_attach.c), run (cmd_run.c),
 * status/saver/suspend/resume/quit/web/prefs (cmd_status.c), train/eval/model
 * (cmd_train.c, LoRA parts in cmd_lora.c), devices (cmd_devices.c), tokens
 * (cmd_tokens.c), sample (cmd_sample.c); all in client/libctclient.a, listed
 * in main.c's command table.
 */
#ifndef CT_CLIENT_COMMANDS_H
#define CT_CLIENT_COMMANDS_H

#include "ct_cmd.h"

/* client/cmd_attach.c */
extern const struct ct_cmd_def ct_attach_cmd, ct_detach_cmd;
/* client/cmd_run.c */
extern const struct ct_cmd_def ct_run_cmd;
/* client/cmd_status.c */
extern const struct ct_cmd_def ct_status_cmd, ct_saver_cmd, ct_suspend_cmd, ct_prefs_cmd,
	ct_resume_cmd, ct_quit_cmd, ct_web_cmd;
/* client/cmd_devices.c */
extern const struct ct_cmd_def ct_devices_cmd;
/* client/cmd_train.c: train, eval, model (init, info; merge in cmd_lora.c) */
extern const struct ct_cmd_def ct_train_cmd, ct_eval_cmd, ct_model_cmd;
extern const struct ct_cmd_def ct_model_merge_cmd;
/* client/cmd_tokens.c (encode, decode in cmd_tokens_text.c) */
extern const struct ct_cmd_def ct_tokens_cmd;
extern const struct ct_cmd_def ct_tokens_encode_cmd, ct_tokens_decode_cmd;
/* client/cmd_sample.c */
extern const struct ct_cmd_def ct_sample_cmd;

struct ct_gpt2;
/* `sample` and `chat --model`: a checkpoint, or a Hugging Face directory
 * (what `model export` and `job export --hf` write): then tkdef (cap
 * bytes) gets its tokenizer.json's path when it has one, else "".
 * Returns like ct_gpt2_load / ct_llama_hf_import (cmd_sample.c). */
int ct_cli_load_model(const char *mpath, struct ct_gpt2 *model, char *tkdef, size_t cap);
/* client/cmd_verify.c */
extern const struct ct_cmd_def ct_verify_cmd;
/* client/cmd_chat.c */
extern const struct ct_cmd_def ct_chat_cmd;
/* client/service_win.c (a Windows service), service_posix.c (systemd) */
extern const struct ct_cmd_def ct_service_cmd;

/* Exit statuses shared by the commands. */
#define CT_EXIT_OK 0
#define CT_EXIT_FAIL 1
#define CT_EXIT_USAGE 2

#endif
