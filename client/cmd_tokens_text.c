/*
 * cmd_tokens_text.c - `ctune tokens encode` and `ctune tokens decode`:
 * text files <-> llm.c token files with a named tokenizer (ct_tokenizer.h).
 *
 *   ctune tokens encode --tokenizer gpt2|bytes|PATH [--no-eot] IN... --out OUT.bin
 *   ctune tokens encode --tokenizer DIR --chat IN.jsonl --out OUT.bin
 *   ctune tokens decode --tokenizer gpt2|bytes|PATH IN.bin [--out OUT.txt]
 *   ctune tokens decode --tokenizer DIR --json IN.bin
 *
 * The --chat and --json forms are cmd_tokens_chat.c's.
 *
 * PATH is a Hugging Face tokenizer.json (or its directory). A vocabulary
 * over 65,536 ids (Llama 3, Qwen) is written as a version 2 token file
 * (32-bit ids, ct_tokens.h), which everything reads alike.
 *
 * Each input (a file, or `-` for standard input) is one document. As in
 * llm.c's data scripts, a tokenizer with an end-of-text token (gpt2) puts
 * that token BEFORE every document, so the file starts with it and
 * documents are separated by it; --no-eot leaves it out. A tokenizer.json
 * whose post_processor template adds tokens (Llama 3's <|begin_of_text|>)
 * gets those around each document instead, exactly Hugging Face's
 * encode(text) (ct_tokenizer_doc_open). "bytes" has no such token: its
 * documents are simply concatenated. Inputs are read in 1 MiB blocks
 * (ct_tokenizer_encode_part) and the ids written as they come
 * (ct_tokens_out), so memory is bounded by the block and the longest
 * pre-token (CT_BPE_MAX_PIECE, 64 KiB: a longer run, such as 100 MB of
 * spaces, is cut there), whatever the input and the output; a progress
 * line goes to standard error for inputs over 16 MiB.
 */
#include "commands.h"
#include "cmd_tokens_chat.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_os.h"
#include "ct_file.h"
#include "ct_time.h"
#include "ct_tokenizer.h"
#include "ct_tokens.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK (1u << 20)
#define BLOCK_MAX (64u << 20)	/* a safety net: CT_BPE_MAX_PIECE keeps it at BLOCK */
#define PROGRESS_MIN (16ull << 20)
#define DECODE_CHUNK 65536

static int fail(const char *what, int rc)
{
	fprintf(stderr, "ctune tokens %s: %s\n", what, ct_errmsg(rc));
	return CT_EXIT_FAIL;
}

struct progress {
	uint64_t total, done;	/* bytes of the input files; bytes read */
	double t0, last;
	size_t ntok;
	int tty;		/* stderr is a terminal: redraw one line */
};

static void progress_show(struct progress *pg, int end)
{
	double now = ct_time_mono_s();

	if ((pg->total < PROGRESS_MIN && pg->done < PROGRESS_MIN) ||
	    (!end && now - pg->last < 1.0))
		return;
	pg->last = now;
	/* standard input's size is unknown: the total only counts files */
	fprintf(stderr, "%sctune tokens encode: %.1f MB of %.1f, %zu tokens, %.1f MB/s%s",
		pg->tty ? "\r" : "",
		pg->done / 1e6, (pg->total > pg->done ? pg->total : pg->done) / 1e6, pg->ntok,
		pg->done / 1e6 / (now - pg->t0 > 1e-9 ? now - pg->t0 : 1e-9),
		end || !pg->tty ? "\n" : "");
	fflush(stderr);
}

/* The ids in ids go to the output file; ids is emptied. */
static int flush_ids(struct ct_tokens_out *w, struct ct_tokvec *ids, struct progress *pg)
{
	int rc = ct_tokens_out_write(w, ids->v, ids->n);

	pg->ntok += ids->n;
	ids->n = 0;
	return rc;
}

/* Encode one document from fd, block by block, its ids written to w as
 * they come: memory follows the block and the longest pre-token
 * (CT_BPE_MAX_PIECE), not the input nor the output. */
static int encode_fd(const struct ct_tokenizer *tk, int fd, const char *name,
		     struct ct_tokvec *ids, struct ct_tokens_out *w, struct progress *pg)
{
	size_t cap = BLOCK, have = 0, used;
	unsigned char *buf = malloc(cap);
	int rc = 0, eof = 0;

	if (buf == NULL)
		return CT_ENOMEM;
	while (!eof || have > 0) {
		ssize_t r = 0;

		if (!eof) {
			if (have == cap) {	/* nothing could be cut off yet: more text */
				unsigned char *nb = cap < BLOCK_MAX ? realloc(buf, cap * 2) : NULL;

				if (nb == NULL) {
					rc = cap < BLOCK_MAX ? CT_ENOMEM :
					     ct_error(CT_ETOOBIG, "%s: over %u MiB of text "
						      "the tokenizer cannot cut", name,
						      BLOCK_MAX >> 20);
					break;
				}
				buf = nb;
				cap *= 2;
			}
			r = read(fd, buf + have, cap - have);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				rc = ct_error_errno("%s: read", name);
				break;
			}
			eof = r == 0;
			have += (size_t)r;
			pg->done += (uint64_t)r;
		}
		rc = ct_tokenizer_encode_part(tk, buf, have, eof, ids, &used);
		if (rc < 0)
			break;
		memmove(buf, buf + used, have - used);
		have -= used;
		rc = flush_ids(w, ids, pg);
		if (rc < 0)
			break;
		progress_show(pg, 0);
	}
	free(buf);
	return rc;
}

static int encode_one(const struct ct_tokenizer *tk, const char *path, int marks,
		      struct ct_tokvec *ids, struct ct_tokens_out *w, struct progress *pg)
{
	int fd = 0, rc;

	if (marks && (rc = ct_tokenizer_doc_open(tk, ids)) < 0)
		return rc;
	if (strcmp(path, "-") != 0) {
		fd = ct_os_open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return ct_error_errno("%s", path);
	}
	rc = encode_fd(tk, fd, strcmp(path, "-") ? path : "standard input", ids, w, pg);
	if (fd != 0)
		close(fd);
	if (rc == 0 && marks)
		rc = ct_tokenizer_doc_close(tk, ids);
	if (rc == 0)
		rc = flush_ids(w, ids, pg);
	return rc;
}

struct text_opts {
	const char *tokenizer, *out, *chat;
	int no_eot, json;
};

static const struct option encode_long[] = {
	{ "tokenizer", required_argument, NULL, 't' },
	{ "out", required_argument, NULL, 'o' },
	{ "no-eot", no_argument, NULL, 'n' },
	{ "chat", required_argument, NULL, 'c' },
	{ NULL, 0, NULL, 0 },
};
static const struct option decode_long[] = {
	{ "tokenizer", required_argument, NULL, 't' },
	{ "out", required_argument, NULL, 'o' },
	{ "json", no_argument, NULL, 'j' },
	{ NULL, 0, NULL, 0 },
};

/* Parse the options of opts (one of the above); the positional arguments
 * are left at argv[optind..]. */
static int parse_text_opts(int argc, char **argv, struct text_opts *o,
			   const struct option *opts)
{
	int c;

	optind = 0;	/* full re-initialisation: main() used getopt already */
	while ((c = getopt_long(argc, argv, "o:t:", opts, NULL)) != -1) {
		switch (c) {
		case 't': o->tokenizer = optarg; break;
		case 'o': o->out = optarg; break;
		case 'n': o->no_eot = 1; break;
		case 'c': o->chat = optarg; break;
		case 'j': o->json = 1; break;
		default: return -1;	/* ct_cmd_resolve named it */
		}
	}
	return 0;
}

static int cmd_encode(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct text_opts o = { 0 };
	struct ct_tokenizer *tk = NULL;
	struct ct_tokvec ids = { 0 };
	struct ct_tokens_out w = { .af = { .fd = -1 } };
	struct progress pg = { 0 };
	int rc;

	(void)ctx;
	rc = parse_text_opts(argc, argv, &o, encode_long);
	if (rc != 0)
		return CT_EXIT_USAGE;
	if (o.chat != NULL && (optind < argc || o.no_eot)) {
		fprintf(stderr, "ctune tokens encode: --chat FILE takes no other input and no "
			"--no-eot (see --help)\n");
		return CT_EXIT_USAGE;
	}
	if (o.chat != NULL) {
		rc = ct_tokens_encode_chat(o.tokenizer, o.chat, o.out);
		return rc < 0 ? fail("encode", rc) : CT_EXIT_OK;
	}
	if (optind >= argc || o.out == NULL || o.tokenizer == NULL) {
		fprintf(stderr, "ctune tokens encode: need --tokenizer NAME, IN... and --out OUT "
			"(see --help)\n");
		return CT_EXIT_USAGE;
	}
	rc = ct_tokenizer_open(o.tokenizer, &tk);
	if (rc < 0)
		return fail("encode", rc);
	for (int i = optind; i < argc; i++) {
		struct stat st;

		if (strcmp(argv[i], "-") != 0 && stat(argv[i], &st) == 0)
			pg.total += (uint64_t)st.st_size;
	}
	pg.t0 = pg.last = ct_time_mono_s();
	pg.tty = isatty(2);
	rc = ct_tokens_out_open(&w, o.out, ct_tokenizer_vocab(tk) > UINT16_MAX + 1);
	for (int i = optind; i < argc && rc == 0; i++)
		rc = encode_one(tk, argv[i], !o.no_eot, &ids, &w, &pg);
	if (rc == 0) {
		progress_show(&pg, 1);
		rc = ct_tokens_out_commit(&w);
	}
	ct_tokens_out_abort(&w);
	if (rc == 0)
		fprintf(stderr, "ctune tokens encode: %s: %zu tokens (%s) from %d input%s, "
			"%" PRIu64 " bytes\n", o.out, pg.ntok, ct_tokenizer_name(tk),
			argc - optind, argc - optind == 1 ? "" : "s", pg.done);
	ct_tokvec_free(&ids);
	ct_tokenizer_free(tk);
	return rc < 0 ? fail("encode", rc) : CT_EXIT_OK;
}

/* Write the text of t to fd or af, DECODE_CHUNK tokens at a time. */
static int decode_all(const struct ct_tokenizer *tk, const struct ct_tokens *t,
		      struct ct_afile *af)
{
	uint32_t *ids = malloc(DECODE_CHUNK * sizeof(*ids));
	struct ct_buf b;
	int rc = 0;

	if (ids == NULL)
		return CT_ENOMEM;
	ct_buf_init(&b, 0);
	for (uint64_t i = 0; i < t->n && rc == 0; i += DECODE_CHUNK) {
		size_t k = t->n - i < DECODE_CHUNK ? (size_t)(t->n - i) : DECODE_CHUNK;

		for (size_t q = 0; q < k; q++)
			ids[q] = ct_tokens_get(t, i + q);
		ct_buf_reset(&b);
		rc = ct_tokenizer_decode(tk, ids, k, &b);
		if (rc < 0)
			break;
		if (af != NULL)
			rc = ct_afile_write(af, b.data, b.len);
		else if (fwrite(b.data, 1, b.len, stdout) != b.len)
			rc = ct_error_errno("standard output");
	}
	ct_buf_free(&b);
	free(ids);
	if (rc == 0 && af == NULL && fflush(stdout) != 0)
		rc = ct_error_errno("standard output");
	return rc;
}

static int cmd_decode(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct text_opts o = { 0 };
	struct ct_tokenizer *tk = NULL;
	struct ct_tokens t = { 0 };
	struct ct_afile af = { .fd = -1 };
	int rc;

	(void)ctx;
	rc = parse_text_opts(argc, argv, &o, decode_long);
	if (rc != 0)
		return CT_EXIT_USAGE;
	if (optind != argc - 1 || o.tokenizer == NULL || (o.json && o.out != NULL)) {
		fprintf(stderr, "ctune tokens decode: need --tokenizer NAME and one IN.bin, and "
			"--json prints to standard output (see --help)\n");
		return CT_EXIT_USAGE;
	}
	rc = ct_tokenizer_open(o.tokenizer, &tk);
	if (rc == 0)
		rc = ct_tokens_load_any(argv[optind], &t);
	if (rc == 0 && o.json) {
		rc = ct_tokens_decode_json(&t, ct_tokenizer_vocab(tk), argv[optind]);
		ct_tokens_free(&t);
		ct_tokenizer_free(tk);
		return rc < 0 ? fail("decode", rc) : CT_EXIT_OK;
	}
	if (rc == 0) {
		for (uint64_t i = 0; i < t.n; i++)
			if (ct_tokens_get(&t, i) >= (uint32_t)ct_tokenizer_vocab(tk)) {
				rc = ct_error(CT_ERANGE, "%s: token %u at position %" PRIu64
					      " is not in the %s vocabulary of %d (wrong "
					      "--tokenizer?)", argv[optind],
					      (unsigned)ct_tokens_get(&t, i), i,
					      ct_tokenizer_name(tk), ct_tokenizer_vocab(tk));
				break;
			}
	}
	if (rc == 0 && o.out != NULL)
		rc = ct_afile_open(&af, o.out, 0644);
	if (rc == 0)
		rc = decode_all(tk, &t, o.out != NULL ? &af : NULL);
	if (rc == 0 && o.out != NULL)
		rc = ct_afile_commit(&af);
	if (o.out != NULL)
		ct_afile_abort(&af);
	ct_tokens_free(&t);
	ct_tokenizer_free(tk);
	return rc < 0 ? fail("decode", rc) : CT_EXIT_OK;
}

const struct ct_cmd_def ct_tokens_encode_cmd = {
	.name = "encode", .fn = cmd_encode, .opts = encode_long, .shortopts = "o:t:",
	.required = "tokenizer out",
	.min_args = 0, .max_args = -1,
	.summary = "tokenize text files, or conversations, into one llm.c token file",
	.usage = "--tokenizer NAME [--no-eot] IN... --out OUT.bin\n"
	"                     --tokenizer DIR --chat IN.jsonl --out OUT.bin",
	.help = "Tokenize text files (IN may be - for standard input) into one llm.c\n"
	"token file. NAME: gpt2 (GPT-2's BPE, V = 50257, as OpenAI's tiktoken),\n"
	"bytes (one token per byte, V = 256), or the path of a Hugging Face\n"
	"tokenizer.json or of its directory (byte-level BPE: Llama 3, Qwen2/3,\n"
	"SmolLM2, GPT-2; ids as Hugging Face's tokenizers give them).\n"
	"Each input is one document; it is preceded by the end-of-text token\n"
	"(gpt2: <|endoftext|> = 50256, as llm.c's scripts do; tokenizer.json:\n"
	"its <|endoftext|>, <|end_of_text|> or </s>) unless --no-eot. When the\n"
	"tokenizer.json's post_processor template adds tokens (Llama 3's\n"
	"<|begin_of_text|>), each document gets those instead: exactly Hugging\n"
	"Face's encode(text) with special tokens. With gpt2,\n"
	"\"<|endoftext|>\" written in the text is encoded as ordinary text; a\n"
	"tokenizer.json's added tokens written in the text ARE recognised, as\n"
	"Hugging Face does. A vocabulary over 65,536 ids (Llama 3, Qwen) makes\n"
	"a version 2 token file (32-bit ids); training takes both versions.\n\n"
	"--chat IN.jsonl: one conversation a line ({\"messages\": [{\"role\",\n"
	"\"content\"}, ...]} or Alpaca's {\"instruction\", \"input\", \"output\"}),\n"
	"rendered with the chat_template of DIR/tokenizer_config.json and encoded\n"
	"with DIR/tokenizer.json, into a version 3 token file with a loss mask:\n"
	"the tokens of each assistant reply and the end-of-turn token closing it\n"
	"are trained, prompts, system text and template scaffolding are not\n"
	"(doc/chat.md). A malformed line stops it with its line number.\n",
};

const struct ct_cmd_def ct_tokens_decode_cmd = {
	.name = "decode", .fn = cmd_decode, .opts = decode_long, .shortopts = "o:t:",
	.required = "tokenizer",
	.min_args = 1, .max_args = 1,
	.summary = "turn an llm.c token file back into text",
	.usage = "--tokenizer NAME IN.bin [--out OUT.txt | --json]",
	.help = "Turn an llm.c token file (version 1, 2 with 32-bit ids, or 3 with a\n"
	"loss mask) back into text (standard output unless --out). NAME as for\n"
	"encode. The end-of-text token is written as <|endoftext|>, a\n"
	"tokenizer.json's added tokens as their text.\n"
	"--json prints one line per conversation of a file from encode --chat\n"
	"(the whole file is one without a mask): {\"ids\": [...], \"train\": [0|1,\n"
	"...]}, train[i] saying whether the loss counts token i.\n",
};
