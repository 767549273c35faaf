/*
 * lora_tool - what the LoRA integration tests need besides the real
 * programs, built from the library's own functions:
 *
 *   lora_tool merge --base B.bin --rank R --alpha A --targets LIST
 *             --out OUT.bin RESULT...
 *       base merged with the adapters of the given result files (one per
 *       shard, in shard order; each decoded against the initial adapters
 *       of the seed its header names): what a LoRA round's model must be.
 *       A compact base (bf16, q8, nf4) is widened, and the mean of the
 *       adapters is merged instead (doc/workunit.md §13). --init FILE:
 *       the results are decoded against the adapter file FILE (a
 *       compact-base job's round r+1); --mean-out FILE also writes their
 *       mean as an adapter file (ct_lora_file.h), what round r+1 of such
 *       a job starts from.
 *   lora_tool craft --base B.bin --rank R --alpha A --targets LIST
 *             --seed S --how HOW --out RESULT
 *       a LoRA result file for WU seed S: HOW = honest-ish (small random
 *       update), zero (the initial adapters), huge (x1e4), nan, shape (a
 *       rank too many), full (a full-weights delta instead).
 *   lora_tool delta --base B.bin --out RESULT TRAINED.bin
 *       the lossless full-weights result file of a model trained from B
 *       (what a full-weight WU uploads), for size comparisons.
 *   lora_tool info RESULT
 *       the header: kind, rank, alpha, targets, seed, nparams, bytes.
 */
#include "config.h"
#include "ct_avg.h"
#include "ct_base.h"
#include "ct_delta.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_hash.h"
#include "ct_lora.h"
#include "ct_lora_file.h"
#include "ct_lora_result.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct args {
	const char *base, *out, *how, *init, *mean_out;
	struct ct_lora_spec spec;
	uint64_t seed;
};

static int parse(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "base", 1, NULL, 'b' }, { "rank", 1, NULL, 'r' }, { "alpha", 1, NULL, 'a' },
		{ "targets", 1, NULL, 't' }, { "out", 1, NULL, 'o' }, { "seed", 1, NULL, 's' },
		{ "how", 1, NULL, 'h' }, { "init", 1, NULL, 'i' }, { "mean-out", 1, NULL, 'M' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->spec.targets = CT_LORA_ALL;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'b': a->base = optarg; break;
		case 'r': a->spec.rank = atoi(optarg); break;
		case 'a': a->spec.alpha = (float)strtod(optarg, NULL); break;
		case 't':
			if (ct_lora_targets_parse(optarg, &a->spec.targets) < 0)
				return -1;
			break;
		case 'o': a->out = optarg; break;
		case 's': a->seed = strtoull(optarg, NULL, 10); break;
		case 'h': a->how = optarg; break;
		case 'i': a->init = optarg; break;
		case 'M': a->mean_out = optarg; break;
		default: return -1;
		}
	}
	if (a->spec.alpha == 0.0f)
		a->spec.alpha = (float)a->spec.rank;
	return a->base && a->out && a->spec.rank > 0 ? 0 : -1;
}

static int load_base(const char *path, struct ct_gpt2 *m, unsigned char sha[32], int *fmt)
{
	int rc = ct_base_load(path, m);	/* a compact base widened: exact */

	*fmt = m->fmt;
	if (rc == 0)
		rc = ct_base_widen_model(m);
	return rc == 0 ? ct_sha256_file(path, sha) : rc;
}

static int cmd_merge(int argc, char **argv)
{
	struct ct_gpt2 m = { 0 };
	struct args a;
	unsigned char sha[32];
	float **ads = NULL, *init = NULL;
	int K, fmt, rc;

	if (parse(argc, argv, &a) < 0 || optind >= argc)
		return ct_error(CT_EUSAGE, "usage: lora_tool merge --base B --rank R [--alpha A] "
				"[--targets LIST] [--init ADAPTERS] [--mean-out FILE] --out OUT "
				"RESULT...");
	K = argc - optind;
	rc = load_base(a.base, &m, sha, &fmt);
	if (rc == 0 && a.init != NULL) {
		init = malloc(ct_lora_nparams(&m.cfg, &a.spec) * sizeof(float));
		rc = init ? ct_lora_file_load(a.init, &m.cfg, &a.spec, init) : CT_ENOMEM;
	}
	if (rc == 0) {
		ads = calloc((size_t)K, sizeof(*ads));
		rc = ads ? 0 : CT_ENOMEM;
	}
	for (int k = 0; rc == 0 && k < K; k++) {
		struct ct_mmap map = { 0 };
		struct ct_delta_info info;

		ads[k] = malloc(ct_lora_nparams(&m.cfg, &a.spec) * sizeof(float));
		rc = ads[k] ? ct_file_map(argv[optind + k], &map) : CT_ENOMEM;
		if (rc == 0)
			rc = ct_delta_parse_header(map.addr, map.len, &info);
		if (rc == 0)
			rc = ct_lora_result_decode(&m.cfg, &a.spec, info.lora.seed, init, map.addr,
						   map.len, ads[k], &info);
		if (rc == 0 && memcmp(info.base_sha, sha, 32) != 0)
			rc = ct_error(CT_EMISMATCH, "%s: trained from another base",
				      argv[optind + k]);
		ct_file_unmap(&map);
	}
	if (rc == 0 && fmt != CT_BASE_F32) {	/* a compact base: the mean adapters */
		float *mean = malloc(ct_lora_nparams(&m.cfg, &a.spec) * sizeof(float));

		rc = mean ? ct_avg(mean, (const float *const *)ads, (size_t)K,
				   ct_lora_nparams(&m.cfg, &a.spec), CT_AVG_MEAN, 0) : CT_ENOMEM;
		free(ads[0]);
		ads[0] = mean;
		K = 1;
		if (rc == 0 && a.mean_out != NULL)
			rc = ct_lora_file_save(a.mean_out, &m.cfg, &a.spec, mean);
	}
	if (rc == 0)
		rc = ct_lora_merge(&m.cfg, &a.spec, m.params, (const float *const *)ads, K);
	if (rc == 0)
		rc = ct_gpt2_save(a.out, &m.cfg, m.params);
	for (int k = 0; ads && k < K; k++)
		free(ads[k]);
	free(ads);
	free(init);
	ct_gpt2_free(&m);
	return rc;
}

/* Adapters a dishonest or broken volunteer might send, from init. */
static void spoil(float *ad, const float *init, size_t n, const char *how)
{
	uint64_t x = 0x2545f4914f6cdd1dull;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		ad[i] = init[i] + 1e-3f * ((float)(x >> 40) / (float)(1 << 24) - 0.5f);
	}
	if (strcmp(how, "zero") == 0)
		memcpy(ad, init, n * sizeof(float));
	else if (strcmp(how, "huge") == 0)
		for (size_t i = 0; i < n; i++)
			ad[i] = init[i] + 1e4f * (ad[i] - init[i]);
	else if (strcmp(how, "nan") == 0)
		ad[n / 2] = NAN;
}

static int cmd_craft(int argc, char **argv)
{
	struct ct_gpt2 m = { 0 };
	struct ct_buf out = CT_BUF_INIT(0);
	struct args a;
	unsigned char sha[32];
	float *init = NULL, *ad = NULL;
	size_t n;
	int fmt, rc;

	if (parse(argc, argv, &a) < 0 || a.how == NULL)
		return ct_error(CT_EUSAGE, "usage: lora_tool craft --base B --rank R [--alpha A] "
				"[--targets LIST] --seed S --how HOW --out RESULT");
	rc = load_base(a.base, &m, sha, &fmt);
	if (rc < 0)
		return rc;
	if (strcmp(a.how, "shape") == 0)
		a.spec.rank++;
	n = ct_lora_nparams(&m.cfg, &a.spec);
	init = malloc(n * sizeof(float));
	ad = malloc(n * sizeof(float));
	rc = init && ad ? ct_lora_init(&m.cfg, &a.spec, a.seed, init) : CT_ENOMEM;
	if (rc == 0)
		spoil(ad, init, n, a.how);
	if (rc == 0 && strcmp(a.how, "full") == 0) {
		struct ct_delta_model dm;
		float *w = malloc(m.lay.total * sizeof(float));

		ct_lora_result_model(&m.cfg, &dm);
		rc = w ? 0 : CT_ENOMEM;
		for (size_t i = 0; rc == 0 && i < m.lay.total; i++)
			w[i] = m.params[i] + 1e-4f;
		if (rc == 0)
			rc = ct_delta_encode(m.params, w, m.lay.total, &dm, sha, CT_DELTA_LOSSLESS,
					     -1, &out);
		free(w);
	} else if (rc == 0) {	/* lossless carries NaN as it is */
		rc = ct_lora_result_encode(&m.cfg, &a.spec, a.seed, sha, ad, CT_DELTA_LOSSLESS,
					   &out);
	}
	if (rc == 0)
		rc = ct_file_write_atomic(a.out, out.data, out.len, 0644);
	free(init);
	free(ad);
	ct_buf_free(&out);
	ct_gpt2_free(&m);
	return rc;
}

static int cmd_delta(int argc, char **argv)
{
	struct ct_gpt2 m = { 0 }, t = { 0 };
	struct ct_buf out = CT_BUF_INIT(0);
	struct ct_delta_model dm;
	unsigned char sha[32];
	const char *base = NULL, *dst = NULL;
	int fmt, rc;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--base") == 0)
			base = argv[i + 1];
		else if (strcmp(argv[i], "--out") == 0)
			dst = argv[i + 1];
	}
	if (base == NULL || dst == NULL || argc != 6)
		return ct_error(CT_EUSAGE, "usage: lora_tool delta --base B --out OUT TRAINED");
	rc = load_base(base, &m, sha, &fmt);
	if (rc == 0)
		rc = ct_gpt2_load(argv[5], &t);
	if (rc == 0 && t.lay.total != m.lay.total)
		rc = ct_error(CT_EMISMATCH, "%s: another model shape", argv[5]);
	ct_lora_result_model(&m.cfg, &dm);
	if (rc == 0)
		rc = ct_delta_encode(m.params, t.params, m.lay.total, &dm, sha, CT_DELTA_LOSSLESS,
				     -1, &out);
	if (rc == 0)
		rc = ct_file_write_atomic(dst, out.data, out.len, 0644);
	ct_buf_free(&out);
	ct_gpt2_free(&m);
	ct_gpt2_free(&t);
	return rc;
}

static int cmd_info(int argc, char **argv)
{
	struct ct_mmap map = { 0 };
	struct ct_delta_info info;
	int rc;

	if (argc < 2)
		return ct_error(CT_EUSAGE, "usage: lora_tool info RESULT");
	rc = ct_file_map(argv[1], &map);
	if (rc == 0)
		rc = ct_delta_parse_header(map.addr, map.len, &info);
	if (rc == 0)
		printf("kind %u rank %u alpha %g targets 0x%x seed %llu nparams %llu bytes %zu\n",
		       info.kind, info.lora.rank, (double)info.lora.alpha, info.lora.targets,
		       (unsigned long long)info.lora.seed, (unsigned long long)info.nparams,
		       (size_t)map.len);
	ct_file_unmap(&map);
	return rc;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: lora_tool merge|craft|delta|info ...\n");
		return 2;
	}
	if (strcmp(argv[1], "merge") == 0)
		rc = cmd_merge(argc - 1, argv + 1);
	else if (strcmp(argv[1], "craft") == 0)
		rc = cmd_craft(argc - 1, argv + 1);
	else if (strcmp(argv[1], "delta") == 0)
		rc = cmd_delta(argc - 1, argv + 1);
	else if (strcmp(argv[1], "info") == 0)
		rc = cmd_info(argc - 1, argv + 1);
	else
		rc = ct_error(CT_EUSAGE, "unknown command %s", argv[1]);
	if (rc < 0)
		fprintf(stderr, "lora_tool: %s\n", ct_errmsg(rc));
	return rc < 0 ? 1 : 0;
}
