/*
 * cmd_chat_talk.h - `ctune chat --model DIR`: a conversation with a chat
 * model in the terminal (engine/ct_chat_reply.h), interactive or, with
 * --prompt, one reply. Its row is ct_chat_cmd (cmd_chat.c), a group that
 * runs this on options.
 */
#ifndef CT_CMD_CHAT_TALK_H
#define CT_CMD_CHAT_TALK_H

#include <getopt.h>

#include "ct_cmd.h"

extern const struct option ct_chat_talk_opts[];
extern const char ct_chat_talk_help[];
int ct_chat_talk(struct ct_cmd_ctx *ctx, int argc, char **argv);

#endif
