/*
 * cmd_job.c - the project subcommands of ctune-server (see commands.h):
 * job submit/list/show/cancel/export, status, user create.
 */
#include "commands.h"

#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rpc/account.h"
#include "ct_avg.h"
#include "ct_outer.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_log.h"
#include "daemons/daemons.h"
#include "data/db.h"
#include "data/migrate_lock.h"
#include "data/db_args.h"
#include "data/dl.h"
#include "data/dl_heartbeat.h"
#include "data/dl_job.h"
#include "data/dl_result.h"
#include "data/dl_round.h"
#include "data/dl_status.h"
#include "data/dl_workunit.h"
#include "data/job_state.h"
#include "daemons/eval.h"
#include "ct_gguf_model.h"
#include "ct_hf_dtype.h"
#include "job_hf.h"
#include "job_peft.h"
#include "job_tokenizer.h"
#include "text_submit.h"
#include "data/dl_web.h"	/* news add */
#include "data/lora_job.h"
#include "data/result_state.h"
#include "data/server.h"
#include "data/wu_state.h"
#include "daemons/submit_check.h"
#include "daemons/wg.h"
#include "ct_base.h"

int ct_cmd_path(const struct ct_cmd_ctx *ctx, const char *path, char *out, size_t cap)
{
	if (path[0] == '/' || ctx->cwd == NULL || ctx->cwd[0] == 0) {
		if (snprintf(out, cap, "%s", path) >= (int)cap)
			return ct_error(CT_ETOOBIG, "path too long");
		return 0;
	}
	return ct_path_join(out, cap, ctx->cwd, path);
}

static int parse_i64(const char *s, const char *what, int64_t lo, int64_t hi, int64_t *out)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	if (*s == 0 || *end || v < lo || v > hi)
		return ct_error(CT_EUSAGE, "%s: '%s' is not a number in %" PRId64 "..%" PRId64,
				what, s, lo, hi);
	*out = v;
	return 0;
}

static int parse_int(const char *s, const char *what, int *out)
{
	int64_t v = 0;
	int rc = parse_i64(s, what, 0, INT_MAX, &v);

	if (rc == 0)
		*out = (int)v;
	return rc;
}

static int parse_dbl(const char *s, const char *what, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (*s == 0 || *end || !isfinite(v))
		return ct_error(CT_EUSAGE, "%s: '%s' is not a number", what, s);
	*out = v;
	return 0;
}

/* ---- job submit -------------------------------------------------------- */

enum { O_MODEL = 256, O_TRAIN, O_EVAL, O_SHARDS, O_ROUNDS, O_STEPS, O_BATCH, O_SEQ, O_LR,
       O_QUORUM, O_REPLICAS, O_BETA1, O_BETA2, O_EPS, O_WD, O_CLIP, O_SEED, O_DEADLINE,
       O_NAME, O_TOL, O_MARGIN, O_ENC, O_NOADAPT, O_EVALTOK, O_PROBETOK, O_RANDOM,
       /* LoRA jobs */
       O_LORA_RANK, O_LORA_ALPHA, O_LORA_TARGETS, O_BASE_FMT, O_AGG,
       /* the outer optimizer */
       O_OUTER, O_OUTER_LR, O_OUTER_MOM,
       /* rounds that close without their last WUs */
       O_ROUND_QUORUM, O_ROUND_TIMEOUT,
       /* text jobs: taken out by ct_text_submit_prepare (text_submit.h) */
       O_TEXT };

static const struct option submit_opts[] = {
	{ "model", 1, NULL, O_MODEL }, { "train", 1, NULL, O_TRAIN },
	{ "eval", 1, NULL, O_EVAL }, { "shards", 1, NULL, O_SHARDS },
	{ "rounds", 1, NULL, O_ROUNDS }, { "steps", 1, NULL, O_STEPS },
	{ "batch", 1, NULL, O_BATCH }, { "seq", 1, NULL, O_SEQ }, { "lr", 1, NULL, O_LR },
	{ "quorum", 1, NULL, O_QUORUM }, { "replicas", 1, NULL, O_REPLICAS },
	{ "beta1", 1, NULL, O_BETA1 }, { "beta2", 1, NULL, O_BETA2 }, { "eps", 1, NULL, O_EPS },
	{ "weight-decay", 1, NULL, O_WD }, { "grad-clip", 1, NULL, O_CLIP },
	{ "seed", 1, NULL, O_SEED }, { "deadline", 1, NULL, O_DEADLINE },
	{ "name", 1, NULL, O_NAME }, { "tolerance", 1, NULL, O_TOL },
	{ "loss-margin", 1, NULL, O_MARGIN }, { "encoding", 1, NULL, O_ENC },
	{ "no-adaptive", 0, NULL, O_NOADAPT }, { "eval-tokens", 1, NULL, O_EVALTOK },
	{ "probe-tokens", 1, NULL, O_PROBETOK }, { "allow-random-base", 0, NULL, O_RANDOM },
	/* LoRA jobs */
	{ "lora-rank", 1, NULL, O_LORA_RANK }, { "lora-alpha", 1, NULL, O_LORA_ALPHA },
	{ "lora-targets", 1, NULL, O_LORA_TARGETS }, { "base-format", 1, NULL, O_BASE_FMT },
	{ "aggregate", 1, NULL, O_AGG },
	{ "outer", 1, NULL, O_OUTER }, { "outer-lr", 1, NULL, O_OUTER_LR },
	{ "outer-momentum", 1, NULL, O_OUTER_MOM },
	{ "round-quorum", 1, NULL, O_ROUND_QUORUM }, { "round-timeout", 1, NULL, O_ROUND_TIMEOUT },
	/* text jobs; --train-text takes one FILE or more */
	{ "train-text", 1, NULL, O_TEXT }, { "eval-text", 1, NULL, O_TEXT },
	{ "eval-fraction", 1, NULL, O_TEXT }, { "tokenizer", 1, NULL, O_TEXT },
	{ "sample-prompt", 1, NULL, O_TEXT }, { "sample-seed", 1, NULL, O_TEXT },
	/* conversations (chat_submit.h) */
	{ "train-chat", 1, NULL, O_TEXT }, { "eval-chat", 1, NULL, O_TEXT },
	{ "sample-chat", 1, NULL, O_TEXT },
	{ "truncate", 0, NULL, O_TEXT },
	{ NULL, 0, NULL, 0 },
};

/* --lora-rank R [--lora-alpha A] [--lora-targets LIST]; alpha defaults
 * to r (s = 1) and targets to all four (ct_wg_submit fills them in). */
static int lora_opt(struct ct_job_spec *s, int c)
{
	double a = 0;
	int rc;

	switch (c) {
	case O_LORA_RANK:
		rc = parse_int(optarg, "--lora-rank", &s->lora.rank);
		if (rc == 0 && (s->lora.rank < 1 || s->lora.rank > CT_LORA_MAX_RANK))
			rc = ct_error(CT_EUSAGE, "--lora-rank must be 1..%d", CT_LORA_MAX_RANK);
		return rc;
	case O_LORA_ALPHA:
		rc = parse_dbl(optarg, "--lora-alpha", &a);
		if (rc == 0 && !(a > 0 && a < 1e30))
			rc = ct_error(CT_EUSAGE, "--lora-alpha must be a number > 0");
		s->lora.alpha = (float)a;
		return rc;
	case O_BASE_FMT:
		rc = ct_base_fmt_parse(optarg, &s->lora.base_fmt);
		if (rc < 0) {
			char why[160];

			snprintf(why, sizeof(why), "%s", ct_errmsg(rc));
			return ct_error(CT_EUSAGE, "--base-format: %s", why);
		}
		return 0;
	default:
		rc = ct_lora_targets_parse(optarg, &s->lora.targets);
		if (rc < 0) {
			char why[160];	/* the detail buffer is ct_error's own */

			snprintf(why, sizeof(why), "%s", ct_errmsg(rc));
			return ct_error(CT_EUSAGE, "--lora-targets: %s", why);
		}
		return 0;
	}
}

/* The largest --probe-tokens: job.probe_tokens is an INT, and a probe is
 * run for every result whose weights are new. */
#define CT_PROBE_MAX_TOKENS ((int64_t)1 << 24)

/* The options that set one number of struct ct_job_spec: its type ('i'
 * an int >= 0, 'l' an int64_t in lo..hi, 'd' a finite double) and place. */
#define SPEC(o, t, m, lo, hi) { o, t, offsetof(struct ct_job_spec, m), lo, hi }
static const struct spec_num {
	int val;
	char type;
	size_t off;
	int64_t lo, hi;
} spec_nums[] = {
	SPEC(O_SHARDS, 'i', shards, 0, 0), SPEC(O_ROUNDS, 'i', rounds, 0, 0),
	SPEC(O_STEPS, 'i', steps, 0, 0), SPEC(O_BATCH, 'i', batch, 0, 0),
	SPEC(O_SEQ, 'i', seq, 0, 0), SPEC(O_QUORUM, 'i', quorum, 0, 0),
	SPEC(O_REPLICAS, 'i', replicas, 0, 0), SPEC(O_DEADLINE, 'i', delay_bound, 0, 0),
	SPEC(O_LR, 'd', lr, 0, 0), SPEC(O_BETA1, 'd', beta1, 0, 0),
	SPEC(O_BETA2, 'd', beta2, 0, 0), SPEC(O_EPS, 'd', eps, 0, 0),
	SPEC(O_WD, 'd', weight_decay, 0, 0), SPEC(O_CLIP, 'd', grad_clip, 0, 0),
	SPEC(O_TOL, 'd', tolerance, 0, 0), SPEC(O_MARGIN, 'd', loss_margin, 0, 0),
	SPEC(O_SEED, 'l', seed, 0, INT64_MAX), SPEC(O_ROUND_TIMEOUT, 'i', round_timeout, 0, 0),
	SPEC(O_EVALTOK, 'l', eval_tokens, 0, CT_SEVAL_MAX_TOKENS),
	SPEC(O_PROBETOK, 'l', probe_tokens, 0, CT_PROBE_MAX_TOKENS),
};
#undef SPEC

/* Option c's value (optarg) into its field of s, if c is one of spec_nums:
 * 0 or CT_EUSAGE; 1 when c is not. */
static int spec_num_opt(struct ct_job_spec *s, int c)
{
	const struct option *o = submit_opts;
	char what[40];

	for (size_t i = 0; i < sizeof(spec_nums) / sizeof(spec_nums[0]); i++) {
		const struct spec_num *n = &spec_nums[i];
		void *p = (char *)s + n->off;

		if (n->val != c)
			continue;
		while (o->name && o->val != c)
			o++;
		snprintf(what, sizeof(what), "--%s", o->name);
		return n->type == 'i' ? parse_int(optarg, what, p)
		     : n->type == 'd' ? parse_dbl(optarg, what, p)
				      : parse_i64(optarg, what, n->lo, n->hi, p);
	}
	return 1;
}

static int submit_opt(struct ct_cmd_ctx *ctx, struct ct_job_spec *s, int c, char *paths[3])
{
	char p[PATH_MAX];
	int rc = spec_num_opt(s, c);

	if (rc <= 0)
		return rc;
	switch (c) {
	case O_MODEL: case O_TRAIN: case O_EVAL:
		rc = ct_cmd_path(ctx, optarg, p, sizeof(p));
		if (rc < 0)
			return rc;
		free(paths[c - O_MODEL]);
		paths[c - O_MODEL] = strdup(p);
		return paths[c - O_MODEL] ? 0 : CT_ENOMEM;
	case O_NAME: s->name = optarg; return 0;
	case O_OUTER:
		s->outer = optarg;
		return ct_outer_parse(optarg, &(enum ct_outer_method){ CT_OUTER_MEAN }) == 0 ? 0
		       : ct_error(CT_EUSAGE, "--outer: '%s': want mean, sgd or nesterov", optarg);
	case O_ROUND_QUORUM:	/* 0 would read as "the default" */
		rc = parse_dbl(optarg, "--round-quorum", &s->round_quorum);
		if (rc == 0 && !(s->round_quorum > 0 && s->round_quorum <= 1))
			rc = ct_error(CT_EUSAGE, "--round-quorum %s: want a fraction in (0, 1]",
				      optarg);
		return rc;
	case O_OUTER_LR:	/* 0 would read as "the default" */
		rc = parse_dbl(optarg, "--outer-lr", &s->outer_lr);
		if (rc == 0 && !(s->outer_lr > 0 && s->outer_lr <= 10))
			rc = ct_error(CT_EUSAGE, "--outer-lr %s: the outer learning rate must be "
				      "in (0, 10]", optarg);
		return rc;
	case O_OUTER_MOM:	/* a value < 0 would read as "the default" */
		rc = parse_dbl(optarg, "--outer-momentum", &s->outer_momentum);
		if (rc == 0 && !(s->outer_momentum >= 0 && s->outer_momentum < 1))
			rc = ct_error(CT_EUSAGE, "--outer-momentum %s: want 0 <= MU < 1", optarg);
		return rc;
	case O_ENC: s->upload_encoding = optarg; return 0;
	case O_NOADAPT: s->adaptive = 0; return 0;
	case O_LORA_RANK: case O_LORA_ALPHA: case O_LORA_TARGETS: case O_BASE_FMT:
		return lora_opt(s, c);
	default: return ct_error(CT_EUSAGE, "unknown option (see --help)");
	}
}

/* --aggregate mean|trimmed-mean|median: how the assimilator combines a
 * round's canonical results (ct_avg; job.aggregation). */
static int aggregate_opt(const char *v, const char **out)
{
	enum ct_avg_method m;

	if (strcmp(v, "trimmed-mean") == 0)
		v = "trimmed";
	if (ct_avg_parse_method(v, &m) < 0)
		return ct_error(CT_EUSAGE, "--aggregate: '%s': want mean, trimmed-mean or "
				"median", v);
	*out = m == CT_AVG_MEAN ? "mean" : m == CT_AVG_TRIMMED ? "trimmed" : "median";
	return 0;
}

/* What job submit's options say. */
struct submit_args {
	struct ct_job_spec s;
	char *paths[3];		/* --model, --train, --eval (owned) */
	int allow_random_base;	/* --allow-random-base */
};

static void submit_args_free(struct submit_args *a)
{
	for (int i = 0; i < 3; i++)
		free(a->paths[i]);
}

/* The word of the option getopt_long just returned (with its value). */
static const char *opt_word(char **argv)
{
	return optarg != NULL && optarg == argv[optind - 1] && optind >= 2 ? argv[optind - 2]
									     : argv[optind - 1];
}

/* Parse job submit's argv (argv[0] the command's name) into a: every
 * option and its value, and at most npos positional arguments. A text
 * option is only accepted when text_ok and spelled out in full (text_submit.c
 * takes it out by its full name). Returns 0 or CT_EUSAGE. */
static int submit_parse(struct ct_cmd_ctx *ctx, int argc, char **argv, int npos, int text_ok,
			struct submit_args *a)
{
	int li, c, rc = 0;

	memset(a, 0, sizeof(*a));
	a->s.adaptive = -1;
	a->s.outer_momentum = -1;	/* ct_job_spec: the default */
	optind = 0;
	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, "", submit_opts, &li)) != -1) {
		const char *w = c == O_TEXT ? opt_word(argv) : "";

		if (c == O_TEXT && (!text_ok || strncmp(w + 2, submit_opts[li].name,
						strlen(submit_opts[li].name)) != 0))
			rc = ct_error(CT_EUSAGE, "'%s': spell the text options out in full", w);
		else if (c != O_TEXT)
			rc = c == '?' ? ct_error(CT_EUSAGE, "bad option %s", argv[optind - 1])
			   : c == O_AGG ? aggregate_opt(optarg, &a->s.aggregation)
			   : c == O_RANDOM ? (a->allow_random_base = 1, 0)
				      : submit_opt(ctx, &a->s, c, a->paths);
	}
	if (rc == 0 && argc - optind > npos)
		rc = ct_error(CT_EUSAGE, "unexpected argument '%s'", argv[optind + npos]);
	optind = 0;
	return rc;
}

/* The table's check (ct_cmd.h): every value, before the project opens,
 * on a copy of argv (getopt reorders what it parses). The positional
 * arguments are DIR and --train-text's FILEs past its first (getopt takes
 * the first as the option's value). */
static int check_submit(int argc, char **argv)
{
	struct ct_cmd_ctx none = { .cwd = NULL };
	struct submit_args a = { .paths = { NULL } };
	char **copy = calloc((size_t)argc + 1, sizeof(*copy));
	int npos = 1, rc;

	if (copy == NULL)
		return ct_error(CT_ENOMEM, "argv");
	memcpy(copy, argv, (size_t)argc * sizeof(*copy));
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--train-text") == 0)
			for (; i + 2 < argc && strncmp(argv[i + 2], "--", 2) != 0; i++)
				npos++;
	rc = submit_parse(&none, argc, copy, npos, 1, &a);
	submit_args_free(&a);
	free(copy);
	return rc;
}

static int cmd_submit(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct submit_args a = { .paths = { NULL } };
	struct ct_text_submit ts;
	char *hf_tmp = NULL, *hf_dir = NULL;
	int64_t jobid = 0;
	int rc = 0;

	rc = ct_text_submit_prepare(ctx, argc, argv, &ts);	/* text options (text_submit.h) */
	if (rc == 0)
		rc = submit_parse(ctx, ts.argc, ts.argv, 0, 0, &a);
	if (rc == 0 && (hf_dir = strdup(a.paths[0] ? a.paths[0] : "")) == NULL)
		rc = ct_error(CT_ENOMEM, "out of memory");
	if (rc == 0)		/* --model HF_DIR: a Hugging Face directory */
		rc = ct_job_hf_import(&a.paths[0], &hf_tmp);
	if (rc < 0)
		goto out;
	a.s.model_path = a.paths[0];
	a.s.train_path = a.paths[1];
	a.s.eval_path = a.paths[2];
	if (!a.allow_random_base)	/* refuses random weights (submit_check.h) */
		rc = ct_submit_check_base_file(a.s.model_path, a.s.eval_path, a.s.seq);
	if (rc == 0)
		rc = ct_wg_submit(ctx->srv, ctx->db, &a.s, &jobid);
	if (rc == 0)
		rc = ct_text_submit_record(ctx, &ts, jobid);
	if (rc == 0 && hf_tmp != NULL)	/* its config.json: ids and dtype for exports */
		rc = ct_job_tokenizer_keep_config(ctx, hf_dir, jobid);
	if (rc == 0)
		fprintf(ctx->out, "job %" PRId64 "\n", jobid);
out:
	free(hf_dir);
	ct_text_submit_free(&ts);
	submit_args_free(&a);
	if (hf_tmp != NULL)
		unlink(hf_tmp);
	free(hf_tmp);
	return rc;
}

/* ---- job list / show --------------------------------------------------- */

/* A loss for a table: "-" for none, else every digit. */
static const char *loss_str(double loss, char *buf, size_t size)
{
	if (isnan(loss))
		return "-";
	snprintf(buf, size, "%.17g", loss);
	return buf;
}

static int cmd_list(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_job_row *jobs = NULL;
	size_t n = 0;
	int rc;

	rc = ct_job_list(ctx->db, &jobs, &n);
	if (rc < 0)
		return rc;
	fprintf(ctx->out, "%-6s %-24s %-9s %-9s %-6s %s\n", "ID", "NAME", "STATUS", "ROUND",
		"SHARDS", "EVAL LOSS");
	for (size_t i = 0; i < n; i++) {
		const struct ct_job_row *j = &jobs[i];
		char round[32], loss[32];

		snprintf(round, sizeof(round), "%d/%d", j->cur_round, j->nrounds);
		fprintf(ctx->out, "%-6" PRId64 " %-24.24s %-9s %-9s %-6d %s\n", j->id, j->name,
			ct_job_status_name(j->status), round, j->nshards,
			loss_str(j->final_eval_loss, loss, sizeof(loss)));
	}
	free(jobs);
	return 0;
}

static int job_arg(int argc, char **argv, int64_t *id)
{
	if (argc < 2)
		return ct_error(CT_EUSAGE, "missing job ID");
	return parse_i64(argv[1], "job ID", 1, INT64_MAX, id);
}

/* show_rounds' count of results by state. */
/* A round's loss for the table: "-" while there is none. */
static const char *round_loss(double loss, char *buf, size_t size)
{
	if (isnan(loss))
		return "-";
	snprintf(buf, size, "%.6g", loss);
	return buf;
}

/* Print the rounds. An open round counts its WUs with a canonical result
 * (round.nwus_done is only set when the round closes); once all have one it
 * is "averaging": the assimilator averages, evaluates and samples it. Then
 * one line when the eval loss rose two rounds in a row (submit_check.h). */
static void print_rounds(struct ct_cmd_ctx *ctx, const struct ct_round_row *rounds, size_t n,
			 const struct ct_round_count *wc, size_t nwc)
{
	double *loss = calloc(n + 1, sizeof(double));
	char note[256], l1[32], l2[32];

	fprintf(ctx->out, "rounds:\n  %-5s %-9s %-9s %-12s %-12s %s\n", "ROUND", "STATUS", "WUS",
		"BASE LOSS", "EVAL LOSS", "MODEL");
	for (size_t i = 0; i < n; i++) {
		const struct ct_round_row *r = &rounds[i];
		const char *status = ct_round_status_name(r->status);
		int64_t done = r->nwus_done;
		char wus[32];

		for (size_t k = 0; r->status == CT_ROUND_OPEN && k < nwc; k++)
			if (wc[k].round_idx == r->idx)
				done = wc[k].n;
		if (r->status == CT_ROUND_OPEN && done >= r->nwus)
			status = "averaging";
		snprintf(wus, sizeof(wus), "%" PRId64 "/%d", done, r->nwus);
		fprintf(ctx->out, "  %-5d %-9s %-9s %-12s %-12s %.16s\n", r->idx, status, wus,
			round_loss(r->base_eval_loss, l1, sizeof(l1)),
			round_loss(r->eval_loss, l2, sizeof(l2)),
			r->out_model_sha256[0] ? r->out_model_sha256 : r->model_sha256);
		if (loss != NULL)
			loss[i + 1] = r->eval_loss;
	}
	if (loss != NULL && n > 0) {
		loss[0] = rounds[0].base_eval_loss;
		if (ct_submit_loss_rises(loss, n + 1, note, sizeof(note)) >= 0)
			fprintf(ctx->out, "warning: %s\n", note);
	}
	free(loss);
}

static int show_rounds(struct ct_cmd_ctx *ctx, int64_t id)
{
	struct ct_round_row *rounds = NULL;
	struct ct_round_count *done = NULL;
	struct ct_state_count *counts = NULL;
	size_t n = 0, nwc = 0;
	int rc;

	rc = ct_round_list(ctx->db, id, &rounds, &n);
	if (rc == 0)
		rc = ct_wu_done_by_round(ctx->db, id, &done, &nwc);
	if (rc == 0)
		print_rounds(ctx, rounds, n, done, nwc);
	free(rounds);
	free(done);
	if (rc < 0)
		return rc;
	rc = ct_result_state_counts(ctx->db, id, &counts, &n);
	if (rc < 0)
		return rc;
	fprintf(ctx->out, "results:\n");
	for (size_t i = 0; i < n; i++)
		fprintf(ctx->out, "  %-12s %-15s %-13s %" PRId64 "\n",
			ct_rs_name(counts[i].server_state), ct_ro_name(counts[i].outcome),
			ct_vs_name(counts[i].validate_state), counts[i].n);
	free(counts);
	return 0;
}

static int cmd_show(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_job_row j;
	char loss[32];
	int64_t id, evtok = 0;
	int rc;

	rc = job_arg(argc, argv, &id);
	if (rc < 0)
		return rc;
	rc = ct_job_get(ctx->db, id, &j);
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "no job %" PRId64, id);
	if (rc < 0)
		return rc;
	fprintf(ctx->out, "job %" PRId64 " (%s): %s, round %d of %d, %d shards\n", id,
		j.name, ct_job_status_name(j.status), j.cur_round, j.nrounds, j.nshards);
	fprintf(ctx->out, "work unit: %d steps, batch %d, seq %d, lr %g; quorum %d of %d\n",
		j.steps, j.batch, j.seq, j.lr, j.min_quorum, j.target_nresults);
	fprintf(ctx->out, "probe: %d eval tokens per new result%s\n",
		ct_val_probe_tokens(j.steps, j.batch, j.seq, j.probe_tokens),
		j.probe_tokens > 0 ? "" : " (default)");
	rc = ct_seval_job_tokens(ctx->srv, ctx->db, id, &evtok);
	if (rc < 0)
		return rc;
	if (evtok > 0)
		fprintf(ctx->out, "evaluation: %" PRId64 " tokens a round", evtok);
	else
		fprintf(ctx->out, "evaluation: the whole eval file a round");
	fprintf(ctx->out, "%s; rounds aggregated by %s", j.eval_tokens > 0 ? "" : " (default)",
		j.aggregation);
	if (strcmp(j.outer_method, "mean") == 0)
		fprintf(ctx->out, ", no outer optimizer\n");
	else
		fprintf(ctx->out, ", outer optimizer %s (lr %g, momentum %g)\n", j.outer_method,
			j.outer_lr, j.outer_momentum);
	if (j.round_quorum < 1 || j.round_timeout > 0)
		fprintf(ctx->out, "a round closes with %g of its work units done, %d s after it "
			"opened at the earliest; the rest are abandoned\n", j.round_quorum,
			j.round_timeout);
	fprintf(ctx->out, "base model: %s\n", j.model_sha256);
	ct_lora_job_describe(ctx->out, ctx->db, id);
	if (j.final_model_sha256[0])
		fprintf(ctx->out, "final model: %s (eval loss %s)\n", j.final_model_sha256,
			loss_str(j.final_eval_loss, loss, sizeof(loss)));
	if (j.error_message[0])
		fprintf(ctx->out, "error: %s\n", j.error_message);
	return show_rounds(ctx, id);
}

/* ---- job cancel -------------------------------------------------------- */

static int cmd_cancel(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	int64_t id;
	int rc;

	rc = job_arg(argc, argv, &id);
	if (rc == 0)
		rc = ct_job_cancel(ctx->db, id);
	if (rc == 0)
		fprintf(ctx->out, "job %" PRId64 " canceled\n", id);
	return rc;
}

/* ---- job export -------------------------------------------------------- */

static const struct option export_opts[] = { { "out", 1, NULL, 'o' },
					     { "round", 1, NULL, 'r' }, { "hf", 0, NULL, 'H' },
					     { "adapter", 1, NULL, 'A' }, { "dtype", 1, NULL, 'D' },
					     { "gguf", 1, NULL, 'G' }, { NULL, 0, NULL, 0 } };

/* What job export was asked for. */
struct export_args {
	char out[PATH_MAX];	/* --out FILE/DIR, --adapter DIR or --gguf FILE */
	int64_t id, round;	/* round 0: the final model */
	int hf, adapter, gguf;
	const char *dtype;	/* --dtype, or NULL */
};

/* The model a job export writes: its SELECT's one column. */
static int export_parse(struct ct_cmd_ctx *ctx, int argc, char **argv, struct export_args *a)
{
	int c, rc = 0;

	optind = 0;
	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, "o:r:", export_opts, NULL)) != -1) {
		if (c == 'o' || c == 'A' || c == 'G')
			rc = a->out[0] ? ct_error(CT_EUSAGE, "give one of --out, --adapter and "
						  "--gguf")
				       : ct_cmd_path(ctx, optarg, a->out, sizeof(a->out));
		if (c == 'A')
			a->adapter = 1;
		else if (c == 'G')
			a->gguf = 1;
		else if (c == 'r')
			rc = parse_i64(optarg, "--round", 1, INT32_MAX, &a->round);
		else if (c == 'H')
			a->hf = 1;
		else if (c == 'D')
			a->dtype = optarg;
		else if (c != 'o')
			rc = ct_error(CT_EUSAGE, "bad option (want --out FILE [--round R] [--hf] "
				      "[--dtype D], --adapter DIR or --gguf FILE)");
	}
	if (rc == 0 && optind >= argc)
		rc = ct_error(CT_EUSAGE, "missing job ID");
	if (rc == 0)
		rc = parse_i64(argv[optind], "job ID", 1, INT64_MAX, &a->id);
	if (rc == 0 && a->out[0] == 0)
		rc = ct_error(CT_EUSAGE, "--out FILE (or --adapter DIR) is required");
	if (rc == 0 && a->hf && a->adapter)
		rc = ct_error(CT_EUSAGE, "--hf and --adapter write different directories: one "
			      "at a time");
	if (rc == 0 && a->hf && a->gguf)
		rc = ct_error(CT_EUSAGE, "--hf and --gguf write different things: one at a time");
	if (rc == 0 && a->dtype != NULL && !a->hf && !a->adapter && !a->gguf)
		rc = ct_error(CT_EUSAGE, "--dtype is for --hf, --adapter and --gguf (a "
			      "checkpoint is float32)");
	return rc;
}

/* Job id's input config.json (kept at submit, job_tokenizer.h) into path;
 * 0, CT_ENOTFOUND (the job came from a checkpoint) or a db error. */
static int input_config(struct ct_cmd_ctx *ctx, int64_t id, char *path, size_t cap)
{
	return ct_job_tokenizer_kept(ctx->srv, ctx->db, id, CT_JOB_INPUT_CONFIG, path, cap);
}

/* The dtype of the export: --dtype, else (dflt_input) the input model's
 * (its config.json's torch_dtype), else float32. */
static int export_dtype(struct ct_cmd_ctx *ctx, const struct export_args *a, int dflt_input,
			enum ct_st_dtype *dt)
{
	char path[PATH_MAX];
	int rc;

	*dt = CT_ST_F32;
	if (a->dtype != NULL) {
		rc = ct_hf_dtype_parse(a->dtype, dt);
		return rc < 0 ? ct_error(CT_EUSAGE, "--%s", ct_errmsg(rc)) : 0;
	}
	if (!dflt_input)
		return 0;
	rc = input_config(ctx, a->id, path, sizeof(path));
	if (rc == CT_ENOTFOUND)
		return 0;
	return rc < 0 ? rc : ct_hf_dtype_of_config(path, dt);
}

/* Job id's input config.json gives the exported directory out its special
 * token ids (job_hf.h); none kept: 0. */
static int export_special_ids(struct ct_cmd_ctx *ctx, int64_t id, const char *out)
{
	char path[PATH_MAX];
	int rc = input_config(ctx, id, path, sizeof(path));

	if (rc == CT_ENOTFOUND)
		return 0;
	return rc < 0 ? rc : ct_job_hf_special_ids(out, path);
}

static int export_hf(struct ct_cmd_ctx *ctx, const struct export_args *a, const char *src,
		     const char *sha)
{
	enum ct_st_dtype dt;
	int ntok = 0, rc = export_dtype(ctx, a, 1, &dt);

	if (rc == 0)
		rc = ct_job_hf_export(src, a->out);
	if (rc == 0)	/* float32 rounded to the input's dtype (ct_hf_dtype.h) */
		rc = ct_hf_dtype_set(a->out, dt);
	if (rc == 0)	/* the job's tokenizer.json and the files beside it */
		rc = ct_job_tokenizer_export(ctx->srv, ctx->db, a->id, a->out, &ntok);
	if (rc == 0)	/* the input's bos/eos_token_id */
		rc = export_special_ids(ctx, a->id, a->out);
	if (rc == 0)
		fprintf(ctx->out, "%s: model %s as config.json + model.safetensors (%s)%s\n",
			a->out, sha, ct_hf_dtype_name(dt),
			ntok ? " + the job's tokenizer files" : "");
	return rc;
}

/* --gguf: one GGUF file with the job's tokenizer (job_hf.h), of --dtype
 * or else the input's dtype (bf16, f16; float32 otherwise). */
static int export_gguf(struct ct_cmd_ctx *ctx, const struct export_args *a, const char *src,
		       const char *sha)
{
	struct export_args input = *a;
	enum ct_ggml_type gt = CT_GGML_F32;
	enum ct_st_dtype dt;
	int tok = 0, rc = a->dtype != NULL ? ct_gguf_dtype_parse(a->dtype, &gt) : 0;

	if (rc < 0)
		return ct_error(CT_EUSAGE, "--%s", ct_errmsg(rc));
	input.dtype = NULL;
	if (a->dtype == NULL)
		rc = export_dtype(ctx, &input, 1, &dt);
	if (rc == 0 && a->dtype == NULL)
		gt = dt == CT_ST_BF16 ? CT_GGML_BF16 : dt == CT_ST_F16 ? CT_GGML_F16 : CT_GGML_F32;
	if (rc == 0)
		rc = ct_job_gguf_export(ctx->srv, ctx->db, a->id, src, a->out, gt, &tok);
	if (rc == 0)
		fprintf(ctx->out, "%s: model %s as GGUF (%s)%s\n", a->out, sha,
			ct_gguf_dtype_name(gt), tok ? " with the job's tokenizer"
			: ": no tokenizer kept with the job, llama.cpp cannot run it alone");
	return rc;
}

/* --adapter: the PEFT directory of a LoRA job's model (job_peft.h). */
static int export_adapter(struct ct_cmd_ctx *ctx, const struct export_args *a,
			  const char *src, const char *sha)
{
	struct ct_job_peft p = { .model_path = src };
	struct ct_job_row j;
	char base[PATH_MAX], cfg[PATH_MAX], name[1024];
	int64_t rank64;
	int rank = 0, rc = ct_lora_job_get(ctx->db, a->id, &p.spec);

	if (rc == 0 && p.spec.rank == 0)
		rc = ct_error(CT_EINVAL, "job %" PRId64 " trains all weights, not LoRA adapters: "
			      "export it with --hf", a->id);
	if (rc == 0)
		rc = export_dtype(ctx, a, 0, &p.dtype);
	if (rc == 0)
		rc = ct_job_get(ctx->db, a->id, &j);
	if (rc == 0)
		rc = ct_server_download_path(ctx->srv, j.model_sha256, base, sizeof(base));
	if (rc < 0)
		return rc;
	p.base_path = base;
	/* each round added K rank-r products (job_peft.h; capped there); a
	 * compact-base job's model is its base + one rank-r pair s B̄Ā */
	rank64 = (int64_t)p.spec.rank * j.nshards * (a->round ? a->round : j.nrounds);
	if (p.spec.base_fmt != CT_BASE_F32)
		rank64 = p.spec.rank;
	p.rank = rank64 < INT32_MAX ? (int)rank64 : INT32_MAX;
	rc = input_config(ctx, a->id, cfg, sizeof(cfg));
	if (rc == 0 && ct_job_hf_input_name(cfg, name, sizeof(name)) > 0)
		p.base_name = name;
	if (rc < 0 && rc != CT_ENOTFOUND)
		return rc;
	rc = ct_job_peft_export(&p, a->out, &rank);
	if (rc == 0)
		fprintf(ctx->out, "%s: model %s as a PEFT LoRA adapter of rank %d (%d x %" PRId64
			" shards x rounds) on base %s (%s)\n", a->out, sha, rank, p.spec.rank,
			(int64_t)j.nshards, j.model_sha256, ct_hf_dtype_name(p.dtype));
	return rc;
}

/* The table's check (ct_cmd.h): --out or --adapter is given (either
 * names what is written; ct_cmd's `required` takes no alternatives). */
static int check_export(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "-o") == 0 || strncmp(argv[i], "--out", 5) == 0 ||
		    strncmp(argv[i], "--adapter", 9) == 0 || strncmp(argv[i], "--gguf", 6) == 0)
			return 0;
	return ct_error(CT_EUSAGE, "the required option '--out' is missing (or give "
			"--adapter DIR or --gguf FILE)");
}

static int cmd_export(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct export_args a = { .out = "" };
	char sha[65] = "", src[PATH_MAX];
	struct ct_mmap m = { 0 };
	int rc = export_parse(ctx, argc, argv, &a);

	if (rc < 0)
		return rc;
	rc = ct_job_model(ctx->db, a.id, (int)a.round, sha);
	if (rc < 0)
		return rc;
	if (sha[0] == 0)
		return ct_error(CT_ENOTFOUND, "job %" PRId64 " has no %s model yet", a.id,
				a.round ? "such round's" : "final");
	rc = ct_server_download_path(ctx->srv, sha, src, sizeof(src));
	if (rc == 0 && a.hf)
		return export_hf(ctx, &a, src, sha);
	if (rc == 0 && a.adapter)
		return export_adapter(ctx, &a, src, sha);
	if (rc == 0 && a.gguf)
		return export_gguf(ctx, &a, src, sha);
	if (rc == 0)
		rc = ct_file_map(src, &m);
	if (rc == 0)
		rc = ct_file_write_atomic(a.out, m.addr ? m.addr : "", m.len, 0644);
	ct_file_unmap(&m);
	if (rc == 0)
		fprintf(ctx->out, "%s: model %s\n", a.out, sha);
	return rc;
}

/* ---- status ------------------------------------------------------------ */

static int print_counts(struct ct_cmd_ctx *ctx)
{
	static const char *const label[CT_STATUS_NCOUNTS] = {
		"users", "hosts", "jobs running", "results unsent", "results in progress",
		"results over", "WUs waiting to validate", "WUs waiting to assimilate",
	};
	int64_t n[CT_STATUS_NCOUNTS];
	int rc = ct_status_counts(ctx->db, n);

	for (int i = 0; rc == 0 && i < CT_STATUS_NCOUNTS; i++)
		fprintf(ctx->out, "%-26s %" PRId64 "\n", label[i], n[i]);
	return rc;
}

static int cmd_status(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_beat_row *r = NULL;
	int64_t now = ct_db_now(ctx->db);
	size_t n = 0;
	int ver = 0, rc;

	rc = ct_db_schema_version(ctx->db, &ver);
	if (rc < 0)
		return rc;
	fprintf(ctx->out, "project %s\ndatabase %s, schema %d\n", ctx->srv->dir,
		ct_db_global_is_embedded() ? "embedded" : "external", ver);
	rc = print_counts(ctx);
	if (rc < 0)
		return rc;
	rc = ct_beat_list(ctx->db, &r, &n);
	if (rc < 0)
		return rc;
	fprintf(ctx->out, "instances and roles (a clean stop removes its rows):\n");
	for (size_t i = 0; i < n; i++)
		fprintf(ctx->out, "  %-16s %-13s %s (host %s pid %" PRId64 ", last seen %" PRId64
			" s ago, %" PRId64 " items)%s%s\n", r[i].instance, r[i].role,
			now - r[i].beat_time < 30 ? "up" : "down", r[i].host, r[i].pid,
			now - r[i].beat_time, r[i].nitems,
			r[i].last_error[0] ? " last error: " : "", r[i].last_error);
	free(r);
	return 0;
}

/* ---- user create ------------------------------------------------------- */

static const struct option user_opts[] = { { "name", 1, NULL, 'n' }, { "email", 1, NULL, 'e' },
					   { "password", 1, NULL, 'p' }, { NULL, 0, NULL, 0 } };

static int cmd_user_create(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	const char *name = NULL, *email = NULL, *pw = NULL;
	char key[CT_ACCOUNT_KEY_HEXLEN + 1];
	int64_t uid = 0;
	int c, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", user_opts, NULL)) != -1) {
		if (c == 'n')
			name = optarg;
		else if (c == 'e')
			email = optarg;
		else if (c == 'p')
			pw = optarg;
		else
			return ct_error(CT_EUSAGE, "bad option (want --name --email --password)");
	}
	if (!name || !email || !pw)
		return ct_error(CT_EUSAGE, "--name, --email and --password are required");
	rc = ct_account_create(ctx->db, name, email, pw, key, &uid);
	if (rc == 0)
		fprintf(ctx->out, "user %" PRId64 " account key %s\n", uid, key);
	return rc;
}

/* ---- user reset-link -------------------------------------------------- */

/* A one-time password-reset link for the account of argv[1], valid an
 * hour: the operator hands it to the volunteer (no mail server needed). */
static int cmd_user_reset_link(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	const char *listen = ct_conf_get(ctx->srv->conf, "listen");
	char token[65];
	int64_t uid = 0;
	int rc;

	if (argc < 2)
		return ct_error(CT_EUSAGE, "missing EMAIL");
	rc = ct_account_reset_start(ctx->db, argv[1], 3600, token, &uid);
	if (rc < 0)
		return rc;
	/* the URL volunteers reach the project by (as the web pages' attach command) */
	if (ctx->srv->base_url != NULL && ctx->srv->base_url[0] != '\0')
		fprintf(ctx->out, "%s", ctx->srv->base_url);
	else
		fprintf(ctx->out, "http://%s", listen && *listen ? listen : "127.0.0.1:8080");
	fprintf(ctx->out, "/account/reset?token=%s\n", token);
	ct_log_info("user %" PRId64 ": a password reset link was made", uid);
	return 0;
}

/* ---- news add ---------------------------------------------------------- */

static const struct option news_opts[] = { { "title", 1, NULL, 't' }, { "text", 1, NULL, 'x' },
					   { NULL, 0, NULL, 0 } };

static int cmd_news_add(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	const char *title = NULL, *text = "";
	int64_t id = 0;
	int c, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", news_opts, NULL)) != -1) {
		if (c == 't')
			title = optarg;
		else if (c == 'x')
			text = optarg;
		else
			return ct_error(CT_EUSAGE, "bad option (want --title --text)");
	}
	if (title == NULL)
		return ct_error(CT_EUSAGE, "--title is required");
	rc = ct_web_news_add(ctx->db, title, text, &id);
	if (rc == 0)
		fprintf(ctx->out, "news %" PRId64 " posted\n", id);
	return rc;
}

/* ---- the table (ct_cmd.h; DIR counts among the arguments) ------------- */

static const struct ct_cmd_def job_submit = {
	.name = "submit", .fn = cmd_submit, .opts = submit_opts, .check = check_submit,
	.min_args = 1, .max_args = -1,
	.flags = CT_CMD_PROJECT,
	.summary = "submit a fine-tuning job (LoRA adapters with --lora-rank); prints its id",
	.usage = "DIR --model BASE.bin|HF_DIR --train TOKENS.bin --eval TOKENS.bin --shards K\n"
	"       --rounds R --steps N --batch B --seq T --lr LR [--quorum Q] [--replicas N]\n"
	"       [--beta1 X] [--beta2 X] [--eps X] [--weight-decay X] [--grad-clip X]\n"
	"       [--seed S] [--deadline SECS] [--name NAME] [--tolerance X] [--loss-margin X]\n"
	"       [--encoding lossless|int8] [--no-adaptive] [--eval-tokens N]\n"
	"       [--probe-tokens N] [--allow-random-base]\n"
	"       [--aggregate mean|trimmed-mean|median]\n"
	"       [--outer mean|sgd|nesterov [--outer-lr X] [--outer-momentum MU]]\n"
	"       [--round-quorum F [--round-timeout SECS]]\n"
	"       [--lora-rank R [--lora-alpha A] [--lora-targets qkv,proj,fc,fcproj]\n"
	"        [--base-format f32|bf16|q8|nf4]]",
	.help = "With text instead of --train/--eval: --train-text FILE...\n"
	"(--eval-text FILE | --eval-fraction F) [--tokenizer bytes|gpt2|PATH]\n"
	"[--sample-prompt TEXT] [--sample-seed S]. With --model HF_DIR the text is\n"
	"tokenised with HF_DIR/tokenizer.json (PATH: another tokenizer.json), which\n"
	"the job keeps to decode its samples; job export --hf copies it back.\n"
	"With conversations: --model HF_DIR --train-chat FILE.jsonl (--eval-chat\n"
	"FILE.jsonl | --eval-fraction F) [--truncate]: one conversation a line\n"
	"({\"messages\": [...]} or Alpaca's {\"instruction\", \"input\", \"output\"}),\n"
	"rendered with HF_DIR's chat template; the loss counts the assistant\n"
	"replies only. Conversations are packed whole into sequences of --seq\n"
	"tokens; a longer one is refused with its line unless --truncate cuts it.\n"
	"--sample-chat FILE.json (one conversation, as such a line) makes the job's\n"
	"samples the model's reply to it, base and every round (job page, job sample).\n"
	"See doc/chat.md.\n"
	"A base model whose eval loss is near log V (random weights) is refused\n"
	"unless --allow-random-base.\n"
	"--outer sgd|nesterov steps an outer optimizer on each round's aggregate\n"
	"(SGD with momentum on theta - aggregate; lr 0.7, momentum 0.9 unless given);\n"
	"mean (the default) takes the aggregate as the next model.\n"
	"--round-quorum F closes a round once that fraction of its work units is\n"
	"done (after --round-timeout SECS from its opening, if given), over the ones\n"
	"done; the rest are abandoned and the next round opens at once.\n"
	"--base-format bf16|q8|nf4 (LoRA, --outer mean) converts the base once and\n"
	"ships it compact: volunteers download and hold 1/2 (bf16) to 1/7 (nf4) of\n"
	"the float32 base; every WU and the server's evaluation use the widened\n"
	"weights, and round r+1's WUs start from round r's mean adapters, one\n"
	"adapter file a round (doc/workunit.md section 13).\n"
	"See doc/operator.md and doc/llama.md.\n",
};
static const struct ct_cmd_def job_list = {
	.name = "list", .fn = cmd_list, .min_args = 1, .max_args = 1,
	.flags = CT_CMD_PROJECT, .summary = "list jobs", .usage = "DIR",
};
static const struct ct_cmd_def job_show = {
	.name = "show", .fn = cmd_show, .min_args = 2, .max_args = 2,
	.flags = CT_CMD_PROJECT, .summary = "show a job, its rounds and results",
	.usage = "DIR ID",
};
static const struct ct_cmd_def job_cancel = {
	.name = "cancel", .fn = cmd_cancel, .min_args = 2, .max_args = 2,
	.flags = CT_CMD_PROJECT, .summary = "cancel a running job", .usage = "DIR ID",
};
static const struct ct_cmd_def job_sample = {
	.name = "sample", .fn = ct_cmd_job_sample, .opts = ct_job_sample_opts, .min_args = 2,
	.max_args = 2, .flags = CT_CMD_PROJECT,
	.summary = "print a sample of round R's model (0 = base; default the newest)",
	.usage = "DIR ID [--round R] [--prompt TEXT] [--tokens N] [--seed S]",
};
static const struct ct_cmd_def job_export = {
	.name = "export", .fn = cmd_export, .opts = export_opts, .shortopts = "o:r:",
	.check = check_export, .min_args = 2, .max_args = 2, .flags = CT_CMD_PROJECT,
	.summary = "write the job's final (or round R's) model to FILE (--hf: as a Hugging "
	"Face directory FILE; --adapter: a LoRA job's PEFT adapter; --gguf: one GGUF file)",
	.usage = "DIR ID --out FILE [--round R] [--hf [--dtype f32|bf16|f16]]\n"
	"       DIR ID --adapter ADAPTER_DIR [--round R] [--dtype f32|bf16|f16]\n"
	"       DIR ID --gguf FILE [--round R] [--dtype f32|f16|bf16|q8_0]",
	.help = "--hf writes config.json + model.safetensors in the input model's dtype\n"
	"(its config.json's torch_dtype; float32 for a job from a checkpoint), or\n"
	"--dtype's: bf16 and f16 round each weight to nearest, ties to even.\n"
	"--adapter writes adapter_config.json + adapter_model.safetensors (float32\n"
	"unless --dtype) that PEFT applies to the job's base model: the sum of the\n"
	"rounds' adapters, rank r x shards x rounds (a compact-base job's: r, its\n"
	"mean adapters). See doc/operator.md.\n"
	"--gguf writes one GGUF file for llama.cpp, Ollama and LM Studio with the job's\n"
	"tokenizer and chat template (a Llama-family or GPT-2 model), in the input's\n"
	"dtype or --dtype's (q8_0: 8-bit blocks with a float16 scale). See doc/llama.md.\n",
};
static const struct ct_cmd_def *const job_cmds[] = {
	&job_submit, &job_list, &job_show, &job_cancel, &job_sample, &job_export, NULL,
};
const struct ct_cmd_def ct_job_cmd = {
	.name = "job", .subs = job_cmds,
	.summary = "submit, list, show, cancel, sample and export fine-tuning jobs",
};
const struct ct_cmd_def ct_status_cmd = {
	.name = "status", .fn = cmd_status, .min_args = 1, .max_args = 1,
	.flags = CT_CMD_PROJECT, .summary = "show the project's state and its roles",
	.usage = "DIR",
};
static const struct ct_cmd_def user_create = {
	.name = "create", .fn = cmd_user_create, .opts = user_opts, .min_args = 1,
	.required = "name email password",
	.max_args = 1, .flags = CT_CMD_PROJECT, .summary = "create an account; prints its key",
	.usage = "DIR --name NAME --email EMAIL --password PW",
};
static const struct ct_cmd_def user_reset_link = {
	.name = "reset-link", .fn = cmd_user_reset_link, .min_args = 2, .max_args = 2,
	.flags = CT_CMD_PROJECT,
	.summary = "print a one-time link (valid an hour) that sets a new password",
	.usage = "DIR EMAIL",
	.help = "Password recovery without a mail server: send the printed link to the\n"
	"volunteer at the account's e-mail address. It works once; the account key,\n"
	"wrapped under the old password, can then no longer be looked up (attached\n"
	"computers keep it; the account settings page makes a new one).\n",
};
static const struct ct_cmd_def *const user_cmds[] = { &user_create, &user_reset_link, NULL };
const struct ct_cmd_def ct_user_cmd = {
	.name = "user", .subs = user_cmds,
	.summary = "create volunteer accounts, make password reset links",
};
static const struct ct_cmd_def news_add = {
	.name = "add", .fn = cmd_news_add, .opts = news_opts, .min_args = 1, .max_args = 1,
	.required = "title", .flags = CT_CMD_PROJECT,
	.summary = "post a news item on the web site and its Atom feed",
	.usage = "DIR --title TITLE [--text TEXT]",
	.help = "TITLE: one line of at most 200 bytes; TEXT: at most 4000 bytes of plain\n"
	"text (newlines kept). Shown on /news, the home page and /news.atom.\n",
};
static const struct ct_cmd_def *const news_cmds[] = { &news_add, NULL };
const struct ct_cmd_def ct_news_cmd = {
	.name = "news", .subs = news_cmds, .summary = "post news for the volunteers",
};
const struct ct_cmd_def *const ct_project_cmds[] = {
	&ct_job_cmd, &ct_status_cmd, &ct_user_cmd, &ct_news_cmd, &ct_project_cmd, NULL,
};
