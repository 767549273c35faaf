/*
 * cmd_tokens.c - `ctune tokens`: inspect and cut llm.c token files.
 *
 *   ctune tokens info FILE
 *   ctune tokens shard FILE --shard k --of K --out OUT
 *   ctune tokens cat IN1 IN2 ... --out OUT
 *   ctune tokens encode|decode ...   (text <-> tokens, cmd_tokens_text.c)
 *
 * `shard` cuts exactly the slice the project server sends as shard k of K
 * (tokens [n*k/K, n*(k+1)/K) ), so an operator or the demo can re-run one
 * work unit by hand with `ctune train` and compare its result with the
 * volunteers'. Outputs are written atomically. Version 2 files (32-bit
 * ids, ct_tokens.h) are read and cut alike; a concatenation is version 2
 * when any input is.
 */
#include "commands.h"
#include "ct_err.h"
#include "ct_tokens.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(int rc)
{
	fprintf(stderr, "ctune tokens: %s\n", ct_errmsg(rc));
	return CT_EXIT_FAIL;
}

static int tokens_info(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_tokens t = { 0 };
	uint32_t max = 0;
	uint64_t trained = 0;
	int rc;

	(void)ctx;
	if (argc != 2)
		return CT_EXIT_USAGE;	/* ct_cmd_resolve counted the arguments */
	rc = ct_tokens_load_any(argv[1], &t);
	if (rc < 0)
		return fail(rc);
	for (uint64_t i = 0; i < t.n; i++) {
		if (ct_tokens_get(&t, i) > max)
			max = ct_tokens_get(&t, i);
		trained += (uint64_t)ct_tokens_trained(&t, i);
	}
	printf("%s: %" PRIu64 " tokens, largest token id %u%s", argv[1], t.n, (unsigned)max,
	       t.version == CT_TOKENS_VERSION_WIDE ? " (version 2: 32-bit ids)"
	       : t.version == CT_TOKENS_VERSION_MASK ? " (version 3: 32-bit ids and a loss mask)"
	       : "");
	if (t.version == CT_TOKENS_VERSION_MASK)
		printf(", %" PRIu64 " trained", trained);
	printf("\n");
	ct_tokens_free(&t);
	return CT_EXIT_OK;
}

static const struct option shard_long[] = {
	{ "shard", required_argument, NULL, 's' },
	{ "of", required_argument, NULL, 'K' },
	{ "out", required_argument, NULL, 'o' },
	{ NULL, 0, NULL, 0 },
};
static const struct option cat_long[] = {
	{ "out", required_argument, NULL, 'o' },
	{ NULL, 0, NULL, 0 },
};

/* Parse the options of opts (one of the above) around the positional
 * arguments. */
static int parse_out(int argc, char **argv, const struct option *opts, long *k, long *K,
		     const char **out)
{
	int c;

	optind = 0;	/* 0: full re-initialisation, main() used getopt already */
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': *k = strtol(optarg, NULL, 10); break;
		case 'K': *K = strtol(optarg, NULL, 10); break;
		case 'o': *out = optarg; break;
		default: return -1;	/* ct_cmd_resolve named it */
		}
	}
	return 0;
}

static int tokens_shard(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_tokens t = { 0 };
	const char *out = NULL;
	long k = -1, K = 0;
	uint64_t a, b;
	int rc;

	(void)ctx;
	rc = parse_out(argc, argv, shard_long, &k, &K, &out);
	if (rc != 0)
		return CT_EXIT_USAGE;
	if (optind != argc - 1 || out == NULL || K < 1 || k < 0 || k >= K) {
		fprintf(stderr, "ctune tokens shard: need FILE --shard k --of K --out OUT, 0 <= k < K\n");
		return CT_EXIT_USAGE;
	}
	rc = ct_tokens_load_any(argv[optind], &t);
	if (rc < 0)
		return fail(rc);
	a = t.n * (uint64_t)k / (uint64_t)K;
	b = t.n * (uint64_t)(k + 1) / (uint64_t)K;
	rc = ct_tokens_save_range(out, &t, a, b - a);
	ct_tokens_free(&t);
	return rc < 0 ? fail(rc) : CT_EXIT_OK;
}

static int tokens_cat(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	const char *out = NULL;
	long k = 0, K = 0;
	uint32_t *all = NULL, *p;
	uint8_t *train = NULL, *q8;	/* the flags, kept when an input is version 3 */
	uint64_t n = 0;
	int rc, first, wide = 0, masked = 0;

	(void)ctx;
	rc = parse_out(argc, argv, cat_long, &k, &K, &out);
	if (rc != 0)
		return CT_EXIT_USAGE;
	if (optind >= argc || out == NULL) {
		fprintf(stderr, "ctune tokens cat: need IN... --out OUT\n");
		return CT_EXIT_USAGE;
	}
	first = optind;
	for (int i = first; i < argc; i++) {
		struct ct_tokens t = { 0 };

		rc = ct_tokens_load_any(argv[i], &t);
		if (rc == 0 && n + t.n > INT32_MAX)
			rc = ct_error(CT_ETOOBIG, "concatenation exceeds %d tokens", INT32_MAX);
		p = rc == 0 ? realloc(all, (size_t)(n + t.n + 1) * sizeof(*all)) : NULL;
		if (rc == 0 && p == NULL)
			rc = CT_ENOMEM;
		if (rc == 0)
			all = p;
		q8 = rc == 0 ? realloc(train, (size_t)(n + t.n + 1)) : NULL;
		if (rc == 0 && q8 == NULL)
			rc = CT_ENOMEM;
		if (rc == 0) {
			train = q8;
			for (uint64_t q = 0; q < t.n; q++) {
				all[n + q] = ct_tokens_get(&t, q);
				train[n + q] = (uint8_t)ct_tokens_trained(&t, q);
			}
			n += t.n;
			wide |= t.version == CT_TOKENS_VERSION_WIDE;
			masked |= t.version == CT_TOKENS_VERSION_MASK;
		}
		ct_tokens_free(&t);
		if (rc < 0)
			goto out;
	}
	rc = masked ? ct_tokens_save_masked(out, all, train, n)
		    : ct_tokens_save_ids(out, all, n, wide);
out:
	free(all);
	free(train);
	return rc < 0 ? fail(rc) : CT_EXIT_OK;
}

/* ---- the table rows (ct_cmd.h) ---- */

static const struct ct_cmd_def info_cmd = {
	.name = "info", .fn = tokens_info, .min_args = 1, .max_args = 1,
	.summary = "print a token file's length and largest token id", .usage = "FILE",
};

static const struct ct_cmd_def shard_cmd = {
	.name = "shard", .fn = tokens_shard, .opts = shard_long, .min_args = 1, .max_args = 1,
	.required = "shard of out",
	.summary = "cut shard k of K exactly as the project server does",
	.usage = "FILE --shard k --of K --out OUT",
	.help = "Shard k of K is tokens [n*k/K, n*(k+1)/K) of FILE's n tokens.\n",
};

static const struct ct_cmd_def cat_cmd = {
	.name = "cat", .fn = tokens_cat, .opts = cat_long, .min_args = 1, .max_args = -1,
	.required = "out",
	.summary = "concatenate token files", .usage = "IN... --out OUT",
	.help = "The output is version 3 (with the loss mask) when an input is.\n",
};

static const struct ct_cmd_def *const tokens_cmds[] = {
	&info_cmd, &shard_cmd, &cat_cmd, &ct_tokens_encode_cmd, &ct_tokens_decode_cmd, NULL,
};

const struct ct_cmd_def ct_tokens_cmd = {
	.name = "tokens", .subs = tokens_cmds,
	.summary = "encode text to token files and back; inspect, shard, concatenate",
};
