/*
 * chat_submit.c - `job submit --train-chat`: conversations to packed,
 * masked token files (see chat_submit.h).
 */
#include "chat_submit.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ct_chat.h"
#include "ct_chat_mask.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_log.h"
#include "ct_tokenizer.h"
#include "ct_tokens.h"
#include "data/server.h"

#define CHAT_FILE_MAX (1ull << 30)
#define CHAT_CONV_MAX (1u << 24)	/* conversations in one file */

/* The conversations of one file: ids and flags back to back, and where
 * each starts (conv[i], conv[n] = the end) and its line. */
struct convs {
	struct ct_tokvec ids;
	struct ct_buf flags;
	size_t *at;
	long *line;
	size_t n, cap;
	const char *name;
	int T, truncate;
};

static void convs_free(struct convs *c)
{
	ct_tokvec_free(&c->ids);
	ct_buf_free(&c->flags);
	free(c->at);
	free(c->line);
}

/* ct_chat_conv_fn: keep one conversation (cut to T with --truncate). */
static int keep(void *arg, long lineno, const uint32_t *ids, const uint8_t *flags, size_t n)
{
	struct convs *c = arg;
	int rc = 0;

	if (n > (size_t)c->T && !c->truncate)
		return ct_error(CT_EINVAL, "%s:%ld: the conversation is %zu tokens, longer than "
				"--seq %d (conversations are never cut; --truncate cuts them to "
				"--seq tokens)", c->name, lineno, n, c->T);
	n = n > (size_t)c->T ? (size_t)c->T : n;
	if (c->n + 2 > c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 1024;
		size_t *at = cap <= CHAT_CONV_MAX ? realloc(c->at, cap * sizeof(*at)) : NULL;
		long *line = at ? realloc(c->line, cap * sizeof(*line)) : NULL;

		if (at != NULL)
			c->at = at;
		if (line == NULL)
			return ct_error(cap > CHAT_CONV_MAX ? CT_ETOOBIG : CT_ENOMEM,
					"%s: over %u conversations", c->name, CHAT_CONV_MAX);
		c->line = line;
		c->cap = cap;
	}
	c->at[c->n] = c->ids.n;
	c->line[c->n++] = lineno;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = ct_tokvec_push(&c->ids, ids[i]);
	if (rc == 0)
		rc = ct_buf_append(&c->flags, flags, n);
	c->at[c->n] = c->ids.n;
	return rc;
}

static int read_convs(struct ct_cmd_ctx *ctx, const struct ct_chat *chat,
		      const struct ct_tokenizer *tk, const char *opt, const char *arg,
		      struct convs *c)
{
	char path[PATH_MAX];
	unsigned char *text = NULL;
	size_t len = 0;
	int rc = ct_cmd_path(ctx, arg, path, sizeof(path));

	c->name = arg;
	if (rc == 0)
		rc = ct_file_read_all(path, CHAT_FILE_MAX, &text, &len);
	if (rc == 0)
		rc = ct_chat_encode_lines(chat, tk, (const char *)text, len, arg, keep, c);
	if (rc == 0 && c->n == 0)
		rc = ct_error(CT_EINVAL, "%s %s holds no conversation", opt, arg);
	free(text);
	return rc;
}

/* Conversations [a, b) of c packed into rows of T ids (pad, untrained,
 * after the last that fits), one more pad at the end. */
static int pack(const struct convs *c, size_t a, size_t b, int T, uint32_t pad,
		struct ct_tokvec *ids, struct ct_buf *flags)
{
	static const uint8_t zero;
	size_t used = 0;
	int rc = 0;

	for (size_t i = a; i < b && rc == 0; i++) {
		size_t n = c->at[i + 1] - c->at[i];

		for (; used + n > (size_t)T && rc == 0; used = (used + 1) % (size_t)T) {
			rc = ct_tokvec_push(ids, pad);
			if (rc == 0)
				rc = ct_buf_append(flags, &zero, 1);
		}
		for (size_t k = 0; k < n && rc == 0; k++)
			rc = ct_tokvec_push(ids, c->ids.v[c->at[i] + k]);
		if (rc == 0)
			rc = ct_buf_append(flags, c->flags.data + c->at[i], n);
		used = (used + n) % (size_t)T;	/* n == T fills a row */
	}
	for (; used != 0 && rc == 0; used = (used + 1) % (size_t)T) {
		rc = ct_tokvec_push(ids, pad);
		if (rc == 0)
			rc = ct_buf_append(flags, &zero, 1);
	}
	if (rc == 0)
		rc = ct_tokvec_push(ids, pad);
	if (rc == 0)
		rc = ct_buf_append(flags, &zero, 1);
	return rc;
}

static int write_packed(struct ct_cmd_ctx *ctx, struct ct_text_submit *ts, int k,
			const struct convs *c, size_t a, size_t b, int T, uint32_t pad)
{
	struct ct_tokvec ids = { 0 };
	struct ct_buf flags = CT_BUF_INIT(0);
	char name[64], path[PATH_MAX];
	int rc = pack(c, a, b, T, pad, &ids, &flags);

	snprintf(name, sizeof(name), ".chat-%ld-%s.bin", (long)getpid(), k ? "eval" : "train");
	if (rc == 0)
		rc = ct_path_join(path, sizeof(path), ctx->srv->upload_dir, name);
	if (rc == 0)
		rc = ct_tokens_save_masked(path, ids.v, flags.data, ids.n);
	if (rc == 0 && (ts->tmp[k] = strdup(path)) == NULL)
		rc = ct_error(CT_ENOMEM, "path");
	if (rc == 0) {
		ts->argv[ts->argc++] = k ? "--eval" : "--train";
		ts->argv[ts->argc++] = ts->tmp[k];
		ct_log_info("job submit: %s chat: %zu conversations in %zu rows of %d tokens",
			    k ? "eval" : "train", b - a, (ids.n - 1) / (size_t)T, T);
	}
	ct_tokvec_free(&ids);
	ct_buf_free(&flags);
	return rc;
}

int ct_chat_submit_prepare(struct ct_cmd_ctx *ctx, struct ct_text_submit *ts,
			   const struct ct_chat_submit_args *a)
{
	struct convs tr = { .flags = CT_BUF_INIT(0) }, ev = { .flags = CT_BUF_INIT(0) };
	struct ct_chat *chat = NULL;
	struct ct_tokenizer *tk = NULL;
	char dir[PATH_MAX];
	size_t ntr;
	uint32_t pad;
	int rc;

	if (a->model == NULL || ct_cmd_path(ctx, a->model, dir, sizeof(dir)) < 0)
		return ct_error(CT_EUSAGE, "--train-chat needs --model HF_DIR (a directory with "
				"tokenizer_config.json and tokenizer.json)");
	if (a->T < 1 || a->T > 65536)
		return ct_error(CT_EUSAGE, "--train-chat needs --seq T (1..65536): conversations "
				"are packed into sequences of T tokens");
	if ((a->eval != NULL) == (a->fraction > 0))
		return ct_error(CT_EUSAGE, "--train-chat needs exactly one of --eval-chat FILE "
				"and --eval-fraction F");
	rc = ct_chat_open(dir, &chat);
	if (rc == 0)
		rc = ct_tokenizer_open(ts->tokenizer ? ts->tokenizer : dir, &tk);
	if (rc == 0 && ts->V > 0 && ct_tokenizer_vocab(tk) > ts->V)
		rc = ct_error(CT_EMISMATCH, "the tokenizer has %d tokens, the model only %d",
			      ct_tokenizer_vocab(tk), ts->V);
	tr.T = ev.T = a->T;
	tr.truncate = ev.truncate = a->truncate;
	if (rc == 0)
		rc = read_convs(ctx, chat, tk, "--train-chat", a->train, &tr);
	if (rc == 0 && a->eval != NULL)
		rc = read_convs(ctx, chat, tk, "--eval-chat", a->eval, &ev);
	ntr = tr.n;
	if (rc == 0 && a->eval == NULL) {	/* the last F of the conversations */
		size_t ne = (size_t)((double)tr.n * a->fraction);

		ne = ne ? ne : 1;
		if (ne >= tr.n)
			rc = ct_error(CT_EINVAL, "--train-chat %s: %zu conversations are too few "
				      "to hold out an eval fraction", a->train, tr.n);
		ntr = tr.n - ne;
	}
	pad = rc == 0 && ct_tokenizer_eot(tk) >= 0 ? (uint32_t)ct_tokenizer_eot(tk) : 0;
	if (rc == 0)
		rc = write_packed(ctx, ts, 0, &tr, 0, ntr, a->T, pad);
	if (rc == 0)
		rc = a->eval ? write_packed(ctx, ts, 1, &ev, 0, ev.n, a->T, pad)
			     : write_packed(ctx, ts, 1, &tr, ntr, tr.n, a->T, pad);
	convs_free(&tr);
	convs_free(&ev);
	ct_tokenizer_free(tk);
	ct_chat_free(chat);
	return rc;
}
