/*
 * cmd_chat_talk.c - `ctune chat --model DIR [--system TEXT] [--prompt
 * TEXT]`: talk to a chat model (see cmd_chat_talk.h). Each turn the whole
 * conversation is rendered with the model's template and
 * add_generation_prompt, and the reply is sampled until the model ends
 * its turn (engine/ct_chat_reply.h); the same seed gives the same reply
 * on every device.
 */
#include "config.h"
#include "cmd_chat_talk.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "ct_chat_reply.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_utf8.h"

#define TALK_MAX_LINE (64u << 10)	/* one typed message */
#define TALK_MAX_CONV ((size_t)16 << 20)	/* the conversation's JSON */

const struct option ct_chat_talk_opts[] = {
	{ "model", required_argument, NULL, 'm' },
	{ "tokenizer", required_argument, NULL, 'k' },
	{ "system", required_argument, NULL, 'S' },
	{ "prompt", required_argument, NULL, 'p' },
	{ "max-tokens", required_argument, NULL, 'n' },
	{ "temperature", required_argument, NULL, 'x' },
	{ "top-k", required_argument, NULL, 't' },
	{ "seed", required_argument, NULL, 's' },
	{ "device", required_argument, NULL, 'D' },
	{ NULL, 0, NULL, 0 },
};

const char ct_chat_talk_help[] =
	"Talk to a chat model. DIR is a Hugging Face directory (`model export\n"
	"--tokenizer-from`, `job export --hf`) with tokenizer.json and\n"
	"tokenizer_config.json (its chat_template), or a checkpoint with --tokenizer\n"
	"DIR naming them. Each turn the conversation is rendered with the model's\n"
	"template and add_generation_prompt, and the reply is sampled until the model\n"
	"ends its turn (eos_token or the template's end of turn) or N tokens (default\n"
	"256): temperature X (default 0.7; 0: the most likely token), the K most\n"
	"likely tokens (default 40), seed S (default 1). The same seed gives the same\n"
	"reply on every device. --prompt TEXT prints one reply and exits; otherwise\n"
	"each line of standard input is a message (\"/reset\" starts over) until the\n"
	"end of the input. A conversation longer than the model's context is\n"
	"refused (start a new one with /reset).\n";

/* What one session talks with. */
struct talk {
	struct ct_gpt2 model;
	struct ct_tokenizer *tk;
	struct ct_chat *chat;
	struct ct_sample_params sp;
	const char *device, *system;
	struct ct_buf msgs;	/* the messages so far, JSON, comma-separated */
};

static int fail(int rc)
{
	fprintf(stderr, "ctune chat: %s\n", ct_errmsg(rc));
	return CT_EXIT_FAIL;
}

static int add_message(struct ct_buf *msgs, const char *role, const char *s, size_t n)
{
	struct ct_buf clean = CT_BUF_INIT(TALK_MAX_CONV);
	int rc = ct_utf8_clean(s, n, &clean);

	if (rc == 0)
		rc = ct_buf_appendf(msgs, "%s{\"role\": \"%s\", \"content\": ",
				    msgs->len ? ", " : "", role);
	if (rc == 0)
		rc = ct_chat_json_str(msgs, (const char *)clean.data, clean.len);
	if (rc == 0)
		rc = ct_buf_append(msgs, "}", 1);
	ct_buf_free(&clean);
	return rc < 0 ? ct_error(rc, "the conversation is over %zu bytes: /reset",
				 TALK_MAX_CONV) : 0;
}

static int print_text(void *arg, const unsigned char *s, size_t n)
{
	(void)arg;
	fwrite(s, 1, n, stdout);
	fflush(stdout);
	return 0;
}

/* The user's message text: the reply is printed and both join t->msgs
 * (nothing joins when the turn fails). */
static int turn(struct talk *t, const char *text, size_t n)
{
	struct ct_buf conv = CT_BUF_INIT(TALK_MAX_CONV + 64), reply = CT_BUF_INIT(0);
	size_t before = t->msgs.len;
	struct ct_jv *jv = NULL;
	int rc = add_message(&t->msgs, "user", text, n);

	if (rc == 0)
		rc = ct_buf_appendf(&conv, "{\"messages\": [%s]}", ct_buf_cstr(&t->msgs));
	if (rc == 0)
		rc = ct_chat_parse_line((const char *)conv.data, conv.len, "conversation", 1, &jv);
	if (rc == 0)
		rc = ct_chat_reply(&t->model, t->chat, t->tk, jv, t->device, &t->sp, print_text,
				   NULL, &reply, NULL);
	if (rc == 0) {
		printf("\n");
		rc = add_message(&t->msgs, "assistant", (const char *)reply.data, reply.len);
	}
	if (rc < 0) {	/* the turn is forgotten */
		t->msgs.len = before;
		if (t->msgs.data)
			t->msgs.data[before] = 0;
	}
	ct_jv_free(jv);
	ct_buf_free(&conv);
	ct_buf_free(&reply);
	return rc;
}

static int reset(struct talk *t)
{
	ct_buf_reset(&t->msgs);
	return t->system ? add_message(&t->msgs, "system", t->system, strlen(t->system)) : 0;
}

/* Lines of standard input, one message each, until its end. */
static int interactive(struct talk *t)
{
	const int tty = isatty(0);
	char *line = malloc(TALK_MAX_LINE + 2);
	size_t n;
	int rc = 0;

	if (line == NULL)
		return ct_error(CT_ENOMEM, "a line of standard input");
	for (;;) {
		int too_long = 0;

		if (tty)
			fprintf(stderr, "> ");
		if (fgets(line, TALK_MAX_LINE + 2, stdin) == NULL)
			break;
		n = strlen(line);
		if (n == TALK_MAX_LINE + 1 && line[n - 1] != '\n') {
			int c;

			while ((c = getchar()) != EOF && c != '\n')
				;	/* the rest of an over-long line */
			too_long = 1;
		}
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if (n == 0)
			continue;
		if (too_long || n > TALK_MAX_LINE)
			rc = ct_error(CT_ETOOBIG, "a message is at most %u bytes", TALK_MAX_LINE);
		else if (strcmp(line, "/reset") == 0)
			rc = reset(t);
		else
			rc = turn(t, line, (size_t)n);
		if (rc < 0)	/* said, and the conversation goes on */
			fprintf(stderr, "ctune chat: %s\n", ct_errmsg(rc));
	}
	free(line);
	return ferror(stdin) ? ct_error(CT_EIO, "reading standard input") : 0;
}

static int parse_num(int c, const char *s, struct ct_sample_params *p)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(d) || d < 0 ||
	    (c != 'x' && d != floor(d)) || d > (c == 's' ? 9007199254740992.0
					       : c == 'n' ? CT_SAMPLE_MAX_TOKENS : 1e6)) {
		fprintf(stderr, "ctune chat: bad number '%s'\n", s);
		return -1;
	}
	if (c == 'x')
		p->temperature = (float)d;
	else if (c == 's')
		p->seed = (uint64_t)d;
	else if (c == 'n')
		p->ntokens = (int)d;
	else
		p->top_k = (int)d;
	return 0;
}

/* Model, tokenizer and template: the tokenizer files from --tokenizer,
 * else the model's directory. */
static int open_all(struct talk *t, const char *mpath, const char *tkdir)
{
	char tkjson[PATH_MAX], def[PATH_MAX];
	struct stat st;
	int rc = ct_cli_load_model(mpath, &t->model, def, sizeof(def));

	if (rc == 0 && tkdir == NULL && stat(mpath, &st) == 0 && S_ISDIR(st.st_mode))
		tkdir = mpath;
	if (rc == 0 && tkdir == NULL)
		rc = ct_error(CT_EUSAGE, "%s is a checkpoint: name the directory of its "
			      "tokenizer.json and tokenizer_config.json with --tokenizer", mpath);
	if (rc == 0)
		rc = ct_path_join(tkjson, sizeof(tkjson), tkdir, "tokenizer.json");
	if (rc == 0)
		rc = ct_tokenizer_open(tkjson, &t->tk);
	if (rc == 0 && ct_tokenizer_vocab(t->tk) > t->model.cfg.V)
		rc = ct_error(CT_EMISMATCH, "%s has %d tokens, the model only %d", tkjson,
			      ct_tokenizer_vocab(t->tk), t->model.cfg.V);
	if (rc == 0)
		rc = ct_chat_open(tkdir, &t->chat);
	if (rc == 0 && t->sp.top_k > t->model.cfg.V)	/* the default 40, a tiny model */
		t->sp.top_k = 0;
	if (rc == 0)
		rc = ct_sample_params_check(&t->sp, t->model.cfg.V);
	return rc;
}

int ct_chat_talk(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	const char *mpath = NULL, *tkdir = NULL, *prompt = NULL;
	struct talk t = { .device = "cpu", .msgs = CT_BUF_INIT(TALK_MAX_CONV) };
	int c, rc;

	(void)ctx;
	ct_sample_params_default(&t.sp);
	t.sp.ntokens = 256;
	t.sp.temperature = 0.7f;
	optind = 0;
	while ((c = getopt_long(argc, argv, "", ct_chat_talk_opts, NULL)) != -1) {
		switch (c) {
		case 'm': mpath = optarg; break;
		case 'k': tkdir = optarg; break;
		case 'S': t.system = optarg; break;
		case 'p': prompt = optarg; break;
		case 'D': t.device = optarg; break;
		case 'n': case 'x': case 't': case 's':
			if (parse_num(c, optarg, &t.sp) < 0)
				return CT_EXIT_USAGE;
			break;
		default: return CT_EXIT_USAGE;	/* ct_cmd_resolve named it */
		}
	}
	rc = open_all(&t, mpath, tkdir);
	if (rc == 0)
		rc = reset(&t);
	if (rc == 0 && prompt != NULL)
		rc = turn(&t, prompt, strlen(prompt));
	else if (rc == 0)
		rc = interactive(&t);
	ct_chat_free(t.chat);
	ct_tokenizer_free(t.tk);
	ct_gpt2_free(&t.model);
	ct_buf_free(&t.msgs);
	return rc < 0 ? fail(rc) : CT_EXIT_OK;
}
