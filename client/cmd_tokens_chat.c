/*
 * cmd_tokens_chat.c - the chat halves of `ctune tokens encode` and
 * `ctune tokens decode` (cmd_tokens_text.c parses their options):
 *
 *   ctune tokens encode --tokenizer DIR --chat IN.jsonl --out OUT.bin
 *   ctune tokens decode --tokenizer DIR --json IN.bin
 *
 * encode renders each conversation of IN.jsonl with the chat template of
 * DIR's tokenizer_config.json, encodes it with DIR's tokenizer.json and
 * writes a version 3 token file: the conversations one after the other,
 * each flagged where it starts, the tokens of the assistant replies (and
 * the end-of-turn token closing each) trained, the rest not
 * (lib/ct_chat_mask.h, doc/chat.md). A malformed line, or one the
 * template refuses, stops it with FILE:LINE and leaves no output.
 * decode --json prints one line per conversation (per document start
 * flag; a file without them is one), {"ids": [...], "train": [0|1, ...]}.
 */
#include "commands.h"
#include "cmd_tokens_chat.h"
#include "ct_buf.h"
#include "ct_chat.h"
#include "ct_chat_mask.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_tokens.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAT_MAX_FILE (1ull << 30)

struct enc_state {
	struct ct_tokens_out w;
	size_t nconv, ntok, ntrained;
};

static int put_conv(void *arg, long lineno, const uint32_t *ids, const uint8_t *flags,
		    size_t n)
{
	struct enc_state *st = arg;

	(void)lineno;
	st->nconv++;
	st->ntok += n;
	for (size_t i = 0; i < n; i++)
		st->ntrained += flags[i] & CT_TOKENS_TRAINED;
	return ct_tokens_out_write_masked(&st->w, ids, flags, n);
}

int ct_tokens_encode_chat(const char *tokdir, const char *in, const char *out)
{
	struct ct_chat *c = NULL;
	struct ct_tokenizer *tk = NULL;
	struct enc_state st = { .w = { .af = { .fd = -1 } } };
	unsigned char *text = NULL;
	size_t len = 0;
	int rc;

	rc = ct_chat_open(tokdir, &c);
	if (rc == 0)
		rc = ct_tokenizer_open(tokdir, &tk);
	if (rc == 0)
		rc = ct_file_read_all(in, CHAT_MAX_FILE, &text, &len);
	if (rc == 0)
		rc = ct_tokens_out_open_masked(&st.w, out);
	if (rc == 0)
		rc = ct_chat_encode_lines(c, tk, (const char *)text, len, in, put_conv, &st);
	if (rc == 0 && st.nconv == 0)
		rc = ct_error(CT_EINVAL, "%s: no conversation", in);
	if (rc == 0)
		rc = ct_tokens_out_commit(&st.w);
	ct_tokens_out_abort(&st.w);
	if (rc == 0)
		fprintf(stderr, "ctune tokens encode: %s: %zu conversations, %zu tokens, %zu "
			"trained (%.1f%%)\n", out, st.nconv, st.ntok, st.ntrained,
			st.ntok ? 100.0 * (double)st.ntrained / (double)st.ntok : 0.0);
	free(text);
	ct_tokenizer_free(tk);
	ct_chat_free(c);
	return rc;
}

/* One conversation, tokens [a, b) of t, as a JSON line onto out. */
static int json_line(const struct ct_tokens *t, uint64_t a, uint64_t b, struct ct_buf *out)
{
	int rc = ct_buf_appends(out, "{\"ids\": [");

	for (uint64_t i = a; i < b && rc == 0; i++)
		rc = ct_buf_appendf(out, "%s%u", i > a ? ", " : "", (unsigned)ct_tokens_get(t, i));
	if (rc == 0)
		rc = ct_buf_appends(out, "], \"train\": [");
	for (uint64_t i = a; i < b && rc == 0; i++)
		rc = ct_buf_appendf(out, "%s%d", i > a ? ", " : "", ct_tokens_trained(t, i));
	return rc == 0 ? ct_buf_appends(out, "]}\n") : rc;
}

static int is_start(const struct ct_tokens *t, uint64_t i)
{
	return t->train != NULL && (t->train[i] & CT_TOKENS_START) != 0;
}

int ct_tokens_decode_json(const struct ct_tokens *t, int vocab, const char *name)
{
	struct ct_buf line = CT_BUF_INIT(0);
	int rc = 0;

	for (uint64_t i = 0; i < t->n; i++)
		if (ct_tokens_get(t, i) >= (uint32_t)vocab)
			return ct_error(CT_ERANGE, "%s: token %u at position %" PRIu64 " is not in "
					"the tokenizer's vocabulary of %d (wrong --tokenizer?)", name,
					(unsigned)ct_tokens_get(t, i), i, vocab);
	for (uint64_t a = 0; a < t->n && rc == 0;) {
		uint64_t b = a + 1;

		while (b < t->n && !is_start(t, b))
			b++;
		ct_buf_reset(&line);
		rc = json_line(t, a, b, &line);
		if (rc == 0 && fwrite(line.data, 1, line.len, stdout) != line.len)
			rc = ct_error_errno("standard output");
		a = b;
	}
	if (rc == 0 && fflush(stdout) != 0)
		rc = ct_error_errno("standard output");
	ct_buf_free(&line);
	return rc;
}
