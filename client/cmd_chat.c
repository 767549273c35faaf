/*
 * cmd_chat.c - `ctune chat`: talk to a model (cmd_chat_talk.c), and
 * `ctune chat render`: conversations through a model's chat template
 * (lib/ct_chat.h, doc/chat.md).
 *
 *   ctune chat render --tokenizer DIR [--add-generation-prompt] FILE.jsonl
 *
 * FILE.jsonl holds one conversation a line ({"messages": [...]} or
 * Alpaca's {"instruction", "input", "output"}; "-" is standard input);
 * each is printed as one JSON string a line, the text the model is
 * trained on. A malformed line is refused with FILE:LINE before anything
 * is printed, and so is a conversation the template refuses
 * (raise_exception), with the template's message.
 */
#include "commands.h"
#include "ct_buf.h"
#include "ct_chat.h"
#include "ct_err.h"
#include "cmd_chat_talk.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAT_MAX_LINE (64u << 20)
#define CHAT_MAX_FILE (1ull << 30)	/* read whole: nothing printed before all is checked */

static int fail(int rc)
{
	fprintf(stderr, "ctune chat: %s\n", ct_errmsg(rc));
	return CT_EXIT_FAIL;
}

/* One JSON string (JSON.stringify's escapes) and a newline onto out. */
static int put_json_line(struct ct_buf *out, const struct ct_buf *text)
{
	int rc = ct_chat_json_str(out, (const char *)text->data, text->len);

	return rc < 0 ? rc : ct_buf_append(out, "\n", 1);
}

static int render_line(const struct ct_chat *c, const char *line, size_t n,
		       const char *name, long lineno, int agp, struct ct_buf *out)
{
	struct ct_buf text = CT_BUF_INIT(CHAT_MAX_LINE);
	struct ct_jv *conv = NULL;
	int rc;

	rc = ct_chat_parse_line(line, n, name, lineno, &conv);
	if (rc >= 0)
		rc = ct_chat_render(c, conv, agp, &text);
	if (rc >= 0)
		rc = put_json_line(out, &text);
	else if (conv != NULL)	/* the template's error, with the line it was on */
		rc = ct_error(rc, "%s:%ld: %s", name, lineno, ct_errmsg(rc));
	ct_jv_free(conv);
	ct_buf_free(&text);
	return rc;
}

static int read_input(const char *path, struct ct_buf *in)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	char chunk[65536];
	size_t n;
	int rc = 0;

	if (f == NULL)
		return ct_error_errno("%s", path);
	while (rc >= 0 && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		rc = ct_buf_append(in, chunk, n);
	if (rc >= 0 && ferror(f))
		rc = ct_error(CT_EIO, "%s: read error", path);
	else if (rc < 0)
		rc = ct_error(rc, "%s: over %llu bytes", path, CHAT_MAX_FILE);
	if (f != stdin)
		fclose(f);
	return rc;
}

static const struct option render_long[] = {
	{ "tokenizer", required_argument, NULL, 't' },
	{ "add-generation-prompt", no_argument, NULL, 'g' },
	{ NULL, 0, NULL, 0 },
};

static int chat_render(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_buf in = CT_BUF_INIT(CHAT_MAX_FILE), out = CT_BUF_INIT(0);
	const char *tok = NULL;
	struct ct_chat *c = NULL;
	long lineno = 0;
	int opt, agp = 0, rc;

	(void)ctx;
	while ((opt = getopt_long(argc, argv, "", render_long, NULL)) != -1) {
		if (opt == 't')
			tok = optarg;
		else if (opt == 'g')
			agp = 1;
		else
			return CT_EXIT_USAGE;
	}
	rc = ct_chat_open(tok, &c);
	if (rc >= 0)
		rc = read_input(argv[optind], &in);
	for (size_t p = 0; rc >= 0 && p < in.len;) {
		const char *s = (const char *)in.data + p;
		const char *nl = memchr(s, '\n', in.len - p);
		size_t len = nl ? (size_t)(nl - s) : in.len - p;

		lineno++;
		if (len > 0 && !(len == 1 && s[0] == '\r'))
			rc = render_line(c, s, len, argv[optind], lineno, agp, &out);
		p += len + 1;
	}
	if (rc >= 0 && fwrite(out.data ? out.data : (unsigned char *)"", 1, out.len, stdout) != out.len)
		rc = ct_error(CT_EIO, "writing the output");
	ct_chat_free(c);
	ct_buf_free(&in);
	ct_buf_free(&out);
	return rc < 0 ? fail(rc) : CT_EXIT_OK;
}

static const struct ct_cmd_def render_cmd = {
	.name = "render", .fn = chat_render, .opts = render_long, .min_args = 1, .max_args = 1,
	.required = "tokenizer",
	.summary = "print each conversation of a chat JSONL file as its model's template renders it",
	.usage = "--tokenizer DIR [--add-generation-prompt] FILE.jsonl",
	.help = "DIR holds the model's tokenizer_config.json (or name the file itself); its\n"
		"chat_template and special tokens are used as Hugging Face uses them. Each line\n"
		"of FILE.jsonl (\"-\": standard input) is {\"messages\": [{\"role\", \"content\"}, ...]}\n"
		"or Alpaca's {\"instruction\", \"input\", \"output\"}; each is printed as one JSON\n"
		"string a line. A malformed line is refused with its line number.\n",
};

static const struct ct_cmd_def *const chat_cmds[] = { &render_cmd, NULL };

const struct ct_cmd_def ct_chat_cmd = {
	.name = "chat", .subs = chat_cmds, .fn = ct_chat_talk, .opts = ct_chat_talk_opts,
	.required = "model", .min_args = 0, .max_args = 0,
	.summary = "talk to a chat model; conversations through a model's chat template",
	.usage = "--model DIR [--tokenizer DIR] [--system TEXT] [--prompt TEXT]\n"
	"                  [--max-tokens N] [--temperature X] [--top-k K] [--seed S]\n"
	"                  [--device cpu|opencl[:N]]",
	.help = ct_chat_talk_help,
};
