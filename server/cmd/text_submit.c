/*
 * text_submit.c - `job submit` with text or conversations, and `job
 * sample` (see text_submit.h).
 */
#include "text_submit.h"

#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chat_submit.h"
#include "ct_base.h"
#include "ct_chat.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_log.h"
#include "ct_sample.h"
#include "ct_tokenizer.h"
#include "ct_tokens.h"
#include "daemons/eval.h"
#include "daemons/sample.h"
#include "daemons/submit_check.h"
#include "data/db.h"
#include "data/dl_round.h"
#include "data/dl_text.h"
#include "data/server.h"
#include "job_tokenizer.h"

/* ---- job submit with text ------------------------------------------------- */

struct text_args {
	const char *train[64];
	int ntrain;
	const char *eval_text, *model, *token_file[2];
	double fraction;
	const char *train_chat, *eval_chat;	/* chat_submit.h */
	int truncate, seq;
};

/* Is `opt` argv[*i] (as "--opt V" or "--opt=V")? Then *val = V, *i moves on. */
static int take(int argc, char **argv, int *i, const char *opt, const char **val)
{
	size_t n = strlen(opt);

	if (strncmp(argv[*i], opt, n) != 0)
		return 0;
	if (argv[*i][n] == '=') {
		*val = argv[*i] + n + 1;
		return 1;
	}
	if (argv[*i][n] != 0)
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*val = argv[++*i];
	return 1;
}

/* Sort argv into ts (kept options) and ta (text options). */
static int split_args(int argc, char **argv, struct ct_text_submit *ts, struct text_args *ta)
{
	for (int i = 0; i < argc; i++) {
		const char *v = NULL;
		int t;

		if (i > 0 && strcmp(argv[i], "--train-text") == 0) {
			while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
				if (ta->ntrain == 64)
					return ct_error(CT_EUSAGE, "--train-text: at most 64 files");
				ta->train[ta->ntrain++] = argv[++i];
			}
			if (ta->ntrain == 0)
				return ct_error(CT_EUSAGE, "--train-text needs at least one FILE");
			continue;
		}
#define OPT(name, dst) \
		if (i > 0 && (t = take(argc, argv, &i, name, &v)) != 0) { \
			if (t < 0) \
				return ct_error(CT_EUSAGE, "%s needs a value", name); \
			dst = v; \
			continue; \
		}
		OPT("--eval-text", ta->eval_text)
		OPT("--train-chat", ta->train_chat)
		OPT("--eval-chat", ta->eval_chat)
		if (i > 0 && strcmp(argv[i], "--truncate") == 0) {
			ta->truncate = 1;
			continue;
		}
		OPT("--tokenizer", ts->tokenizer)
		OPT("--sample-prompt", ts->prompt)
		OPT("--sample-chat", ts->chat_file)
		if (i > 0 && (t = take(argc, argv, &i, "--eval-fraction", &v)) != 0) {
			char *end;

			ta->fraction = t > 0 ? strtod(v, &end) : 0;
			if (t < 0 || *v == 0 || *end || !(ta->fraction > 0 && ta->fraction <= 0.5))
				return ct_error(CT_EUSAGE, "--eval-fraction wants a number in (0, 0.5]");
			continue;
		}
		if (i > 0 && (t = take(argc, argv, &i, "--sample-seed", &v)) != 0) {
			char *end;
			long long s = t > 0 ? strtoll(v, &end, 10) : -1;

			if (t < 0 || *v == 0 || *end || s < 0)
				return ct_error(CT_EUSAGE, "--sample-seed wants an integer >= 0");
			ts->sample_seed = s;
			continue;
		}
#undef OPT
		/* kept; remember the inputs for the checks below */
		ts->argv[ts->argc++] = argv[i];
		if (i > 0 && (t = take(argc, argv, &i, "--model", &v)) > 0)
			ta->model = v;
		else if (i > 0 && (t = take(argc, argv, &i, "--seq", &v)) > 0)
			ta->seq = atoi(v);	/* checked again by submit_parse */
		else if (i > 0 && (t = take(argc, argv, &i, "--train", &v)) > 0)
			ta->token_file[0] = v;
		else if (i > 0 && (t = take(argc, argv, &i, "--eval", &v)) > 0)
			ta->token_file[1] = v;
		else
			continue;
		if (ts->argv[ts->argc - 1] != argv[i])
			ts->argv[ts->argc++] = argv[i];
	}
	return 0;
}

/* A --train/--eval file that is text, not a token file: say so. */
static int check_token_file(struct ct_cmd_ctx *ctx, const char *arg, const char *opt)
{
	char path[PATH_MAX];
	unsigned char head[512];
	size_t n;
	FILE *f;
	int text = 1;

	if (ct_cmd_path(ctx, arg, path, sizeof(path)) < 0 || (f = fopen(path, "rb")) == NULL)
		return 0;	/* the submit itself reports it */
	n = fread(head, 1, sizeof(head), f);
	fclose(f);
	if (n >= 4 && (head[0] | head[1] << 8 | head[2] << 16 | (uint32_t)head[3] << 24) ==
		      CT_TOKENS_MAGIC)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (head[i] == 0)
			text = 0;
	if (n == 0 || !text)
		return 0;
	return ct_error(CT_EFORMAT, "%s %s is text, not a token file: pass text with "
			"%s-text FILE (tokenised with --tokenizer, default from the model)",
			opt, arg, opt);
}

/* Append the tokens of one text file to tv. */
static int encode_file(struct ct_cmd_ctx *ctx, const struct ct_tokenizer *tk,
		       const char *opt, const char *arg, struct ct_tokvec *tv)
{
	char path[PATH_MAX];
	struct ct_mmap m = { 0 };
	int rc;

	rc = ct_cmd_path(ctx, arg, path, sizeof(path));
	if (rc == 0)
		rc = ct_file_map(path, &m);
	if (rc == 0 && m.len == 0)
		rc = ct_error(CT_EFORMAT, "%s is empty", arg);
	if (rc == 0 && ct_submit_check_text(opt, arg, m.addr, m.len) < 0) {
		ct_file_unmap(&m);	/* the detail is the whole line */
		return CT_EFORMAT;
	}
	if (rc == 0)	/* EOT, or the template's BOS, before each document */
		rc = ct_tokenizer_doc_open(tk, tv);
	if (rc == 0)
		rc = ct_job_tokenizer_encode(tk, arg, m.addr, m.len, tv);
	if (rc == 0)
		rc = ct_tokenizer_doc_close(tk, tv);
	ct_file_unmap(&m);
	if (rc < 0)
		return ct_error(rc, "%s: %s", arg, ct_errmsg(rc));
	return 0;
}

static int write_tmp(struct ct_cmd_ctx *ctx, struct ct_text_submit *ts, int k,
		     const uint32_t *tok, size_t n)
{
	char name[64], path[PATH_MAX];
	int rc;

	snprintf(name, sizeof(name), ".text-%ld-%s.bin", (long)getpid(), k ? "eval" : "train");
	rc = ct_path_join(path, sizeof(path), ctx->srv->upload_dir, name);
	if (rc == 0)
		rc = ct_tokens_save(path, tok, n);	/* version 2 when an id passes 65,535 */
	if (rc == 0 && (ts->tmp[k] = strdup(path)) == NULL)
		rc = ct_error(CT_ENOMEM, "path");
	if (rc == 0) {
		ts->argv[ts->argc++] = k ? "--eval" : "--train";
		ts->argv[ts->argc++] = ts->tmp[k];
	}
	return rc;
}

/* Tokenise the text options into the two temporary token files. */
static int tokenise(struct ct_cmd_ctx *ctx, struct ct_text_submit *ts, struct text_args *ta)
{
	struct ct_tokenizer *tk = NULL;
	struct ct_tokvec tr = { 0 }, ev = { 0 };
	const char *name = ts->tokenizer ? ts->tokenizer : ct_tokenizer_for_vocab(ts->V);
	int rc = 0;

	if (name == NULL)
		return ct_error(CT_EUSAGE, "no default tokenizer for vocabulary %d: name one "
				"with --tokenizer", ts->V);
	rc = ct_tokenizer_open(name, &tk);
	if (rc == 0 && ct_tokenizer_vocab(tk) > ts->V)
		rc = ct_error(CT_EMISMATCH, "tokenizer '%s' has %d tokens, the model only %d",
			      name, ct_tokenizer_vocab(tk), ts->V);
	for (int i = 0; rc == 0 && i < ta->ntrain; i++)
		rc = encode_file(ctx, tk, "--train-text", ta->train[i], &tr);
	if (rc == 0 && ta->eval_text)
		rc = encode_file(ctx, tk, "--eval-text", ta->eval_text, &ev);
	if (rc == 0 && !ta->eval_text) {
		size_t ne = (size_t)((double)tr.n * ta->fraction);

		ne = ne ? ne : 1;
		if (ne >= tr.n)
			rc = ct_error(CT_EINVAL, "the training text is too short to hold out "
				      "an eval fraction (%zu tokens)", tr.n);
		for (size_t i = tr.n - ne; rc == 0 && i < tr.n; i++)
			rc = ct_tokvec_push(&ev, tr.v[i]);
		tr.n -= rc == 0 ? ne : 0;
	}
	if (rc == 0)
		ct_log_info("job submit: %s tokenizer: %zu training and %zu eval tokens", name,
			    tr.n, ev.n);
	if (rc == 0)
		rc = write_tmp(ctx, ts, 0, tr.v, tr.n);
	if (rc == 0)
		rc = write_tmp(ctx, ts, 1, ev.v, ev.n);
	ct_tokvec_free(&tr);
	ct_tokvec_free(&ev);
	ct_tokenizer_free(tk);
	return rc;
}

/* --train-chat, alone of the data options but --eval-chat | --eval-fraction. */
static int chat_prepare(struct ct_cmd_ctx *ctx, struct ct_text_submit *ts,
			const struct text_args *ta)
{
	struct ct_chat_submit_args a = {
		.model = ta->model, .train = ta->train_chat, .eval = ta->eval_chat,
		.fraction = ta->fraction, .truncate = ta->truncate, .T = ta->seq,
	};

	if (ta->train_chat == NULL)
		return ct_error(CT_EUSAGE, "--eval-chat and --truncate need --train-chat");
	if (ta->ntrain > 0 || ta->eval_text || ta->token_file[0] || ta->token_file[1])
		return ct_error(CT_EUSAGE, "give the training data one way: conversations "
				"(--train-chat), text (--train-text) or tokens (--train, --eval)");
	return ct_chat_submit_prepare(ctx, ts, &a);
}

/* --sample-chat FILE.json: one conversation the job's template renders
 * (with add_generation_prompt) into ts->chat, before anything is stored. */
static int sample_chat_check(struct ct_cmd_ctx *ctx, struct ct_text_submit *ts)
{
	struct ct_buf text = CT_BUF_INIT(64u << 20);
	struct ct_chat *c = NULL;
	struct ct_jv *conv = NULL;
	unsigned char *data = NULL;
	char path[PATH_MAX];
	size_t n = 0;
	int rc = 0;

	if (ts->prompt[0] != '\0')
		return ct_error(CT_EUSAGE, "give one of --sample-prompt (text) and --sample-chat "
				"(a conversation)");
	if (ts->tk_dir == NULL)
		return ct_error(CT_EUSAGE, "--sample-chat needs a --model HF_DIR whose "
				"tokenizer_config.json has a chat template");
	rc = ct_cmd_path(ctx, ts->chat_file, path, sizeof(path));
	if (rc == 0)
		rc = ct_file_read_all(path, CT_JOB_SAMPLE_MAX_CHAT, &data, &n);
	if (rc == CT_ETOOBIG)
		rc = ct_error(rc, "--sample-chat %s: over %d bytes", ts->chat_file,
			      CT_JOB_SAMPLE_MAX_CHAT);
	while (rc == 0 && n > 0 && (data[n - 1] == '\n' || data[n - 1] == '\r' ||
				    data[n - 1] == ' ' || data[n - 1] == '\t'))
		data[--n] = 0;
	if (rc == 0)
		rc = ct_chat_parse_line((const char *)data, n, ts->chat_file, 1, &conv);
	if (rc == 0)
		rc = ct_chat_open(ts->tk_dir, &c);
	if (rc == 0)
		rc = ct_chat_render(c, conv, 1, &text);
	if (rc < 0 && conv != NULL)
		rc = ct_error(rc, "--sample-chat %s: %s", ts->chat_file, ct_errmsg(rc));
	if (rc == 0) {
		ts->chat = (char *)data;
		data = NULL;
	}
	ct_chat_free(c);
	ct_jv_free(conv);
	ct_buf_free(&text);
	free(data);
	return rc;
}

int ct_text_submit_prepare(struct ct_cmd_ctx *ctx, int argc, char **argv,
			   struct ct_text_submit *ts)
{
	struct text_args ta = { .ntrain = 0 };
	struct ct_model_config cfg;
	char path[PATH_MAX];
	int rc;

	memset(ts, 0, sizeof(*ts));
	ts->prompt = "";
	ts->sample_seed = 1;
	ts->argv = calloc((size_t)argc + 5, sizeof(char *));
	if (ts->argv == NULL)
		return ct_error(CT_ENOMEM, "argv");
	rc = split_args(argc, argv, ts, &ta);
	if (rc == 0 && strlen(ts->prompt) > CT_JOB_SAMPLE_MAX_PROMPT)
		rc = ct_error(CT_EUSAGE, "--sample-prompt: at most %d bytes",
			      CT_JOB_SAMPLE_MAX_PROMPT);
	for (int k = 0; rc == 0 && k < 2; k++)
		if (ta.token_file[k])
			rc = check_token_file(ctx, ta.token_file[k], k ? "--eval" : "--train");
	if (rc == 0 && ta.model && ct_cmd_path(ctx, ta.model, path, sizeof(path)) == 0 &&
	    ct_base_read_config(path, &cfg, NULL) == 0)
		ts->V = cfg.V;
	if (rc == 0)	/* a Hugging Face directory's, or --tokenizer PATH */
		rc = ct_job_tokenizer_prepare(ctx, ta.model, ta.ntrain > 0 || ta.train_chat, ts);
	if (rc == 0 && ts->chat_file != NULL)
		rc = sample_chat_check(ctx, ts);
	if (rc == 0 && (ta.train_chat || ta.eval_chat || ta.truncate))
		return chat_prepare(ctx, ts, &ta);
	if (rc < 0 || (ta.ntrain == 0 && !ta.eval_text && ta.fraction == 0))
		return rc;
	if (ta.ntrain == 0)
		return ct_error(CT_EUSAGE, "--eval-text / --eval-fraction need --train-text");
	if (ta.token_file[0] || ta.token_file[1])
		return ct_error(CT_EUSAGE, "give the training data either as tokens (--train, "
				"--eval) or as text (--train-text with --eval-text or "
				"--eval-fraction), not both");
	if (!ta.eval_text == !(ta.fraction > 0))
		return ct_error(CT_EUSAGE, "--train-text needs exactly one of --eval-text FILE "
				"and --eval-fraction F");
	if (ta.model == NULL || ts->V == 0)
		return ct_error(CT_EUSAGE, "--train-text needs a readable --model");
	return tokenise(ctx, ts, &ta);
}

int ct_text_submit_record(struct ct_cmd_ctx *ctx, const struct ct_text_submit *ts,
			  int64_t jobid)
{
	const char *name = ts->tokenizer ? ts->tokenizer : ct_tokenizer_for_vocab(ts->V);
	int rc;

	if (ts->tk_path != NULL) {	/* kept with the job */
		rc = ct_job_tokenizer_record(ctx, ts, jobid);
		if (rc != 0)
			return rc < 0 ? rc : 0;
		name = CT_JOB_TOKENIZER_JSON;
	}
	if (name == NULL)
		return 0;	/* no tokenizer known: no samples */
	return ct_job_text_put(ctx->db, jobid, name, ts->prompt, ts->sample_seed, ts->chat);
}

void ct_text_submit_free(struct ct_text_submit *ts)
{
	for (int k = 0; k < 2; k++) {
		if (ts->tmp[k])
			unlink(ts->tmp[k]);
		free(ts->tmp[k]);
		ts->tmp[k] = NULL;
	}
	free(ts->argv);
	ts->argv = NULL;
	free(ts->tk_path);
	free(ts->tk_dir);
	free(ts->chat);
	ts->tk_path = ts->tk_dir = ts->chat = NULL;
}

/* ---- job sample ------------------------------------------------------------------ */

static int parse_ll(const char *s, const char *what, long long lo, long long hi, int64_t *out)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	if (*s == 0 || *end || v < lo || v > hi)
		return ct_error(CT_EUSAGE, "%s: '%s' is not a number in %lld..%lld", what, s, lo, hi);
	*out = v;
	return 0;
}

const struct option ct_job_sample_opts[] = {
	{ "round", required_argument, NULL, 'r' }, { "tokens", required_argument, NULL, 'n' },
	{ "seed", required_argument, NULL, 's' }, { "prompt", required_argument, NULL, 'p' },
	{ NULL, 0, NULL, 0 },
};

int ct_cmd_job_sample(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	int64_t id = 0, round = -1, ntok = 64, seed = -1;
	const char *prompt = NULL;
	struct ct_sample_job jt;
	struct ct_gpt2 model = { 0 };
	struct ct_buf text;
	char sha[65], path[PATH_MAX];
	int c, rc = 0;

	optind = 0;
	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, "", ct_job_sample_opts, NULL)) != -1) {
		switch (c) {
		case 'r': rc = parse_ll(optarg, "--round", 0, INT32_MAX, &round); break;
		case 'n': rc = parse_ll(optarg, "--tokens", 1, CT_SAMPLE_MAX_TOKENS, &ntok); break;
		case 's': rc = parse_ll(optarg, "--seed", 0, INT64_MAX, &seed); break;
		case 'p': prompt = optarg; break;
		default:
			rc = ct_error(CT_EUSAGE, "bad option '%s' (want ID [--round R] [--prompt "
				      "TEXT] [--tokens N] [--seed S])", argv[optind - 1]);
		}
	}
	if (rc == 0 && optind + 1 != argc)
		rc = ct_error(CT_EUSAGE, "want one job ID");
	if (rc == 0)
		rc = parse_ll(argv[optind], "job ID", 1, INT64_MAX, &id);
	if (rc < 0)
		return rc;
	rc = ct_sample_job_load(ctx->srv, ctx->db, id, &jt);
	if (rc == CT_ENOTFOUND)
		rc = ct_error(CT_ENOTFOUND, "job %" PRId64 " has no text settings (no such "
			      "job, or no tokenizer for its model)", id);
	if (rc == 0 && prompt != NULL && jt.row.chat[0] != '\0')
		rc = ct_error(CT_EUSAGE, "job %" PRId64 " samples its conversation "
			      "(--sample-chat): --prompt is for text samples", id);
	if (rc == 0)
		rc = ct_round_model_find(ctx->db, id, &round, sha);
	if (rc == 0)
		rc = ct_server_download_path(ctx->srv, sha, path, sizeof(path));
	if (rc == 0)
		rc = ct_seval_model_load(path, &model);	/* a compact base widened */
	ct_buf_init(&text, CT_SAMPLE_TEXT_MAX);
	if (rc == 0)
		rc = ct_sample_job_model(ctx->srv, &jt, &model, NULL, prompt ? prompt : jt.row.prompt,
					 (int)ntok, seed >= 0 ? seed : jt.row.seed, &text);
	if (rc == 0)
		fprintf(ctx->out, "job %" PRId64 " round %" PRId64 " (model %.12s, %s tokenizer):"
			"\n%s\n", id, round, sha, jt.row.tokenizer, ct_buf_cstr(&text));
	ct_buf_free(&text);
	ct_gpt2_free(&model);
	ct_sample_job_free(&jt);
	return rc;
}
