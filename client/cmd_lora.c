/*
 * cmd_lora.c - LoRA adapter files for the command line: written by
 * `ctune train --lora-rank R ... --out ADAPTER.bin`, merged by
 * `ctune model merge` and `ctune eval --adapter` (see cmd_lora.h).
 */
#include "config.h"
#include "cmd_lora.h"
#include "commands.h"
#include "ct_base.h"
#include "ct_buf.h"
#include "ct_delta.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_lora_result.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest adapter file merge reads (a 124M-shape model at rank 1024 is
 * ~0.6 GB of adapters, raw). */
#define ADAPTER_MAX_BYTES ((size_t)2 << 30)

int ct_lora_write_adapter_file(struct ct_wu *wu, const struct ct_gpt2 *model,
			       const char *model_path, const struct ct_wu_hparams *hp,
			       const float *init, const char *out, size_t *bytes)
{
	size_t n = ct_lora_nparams(&model->cfg, &hp->lora);
	struct ct_buf buf = CT_BUF_INIT(0);
	unsigned char base_sha[CT_SHA256_LEN];
	float *ad = malloc(n * sizeof(float));
	int rc = ad ? 0 : ct_error(CT_ENOMEM, "out of memory for %zu adapters", n);

	if (rc == 0)
		rc = ct_sha256_file(model_path, base_sha);
	if (rc == 0)
		rc = ct_wu_read_adapters(wu, ad);
	if (rc == 0)
		rc = ct_gpt2_check_finite(ad, n, NULL);
	if (rc == 0)		/* exactly the client's upload, lossless */
		rc = ct_lora_result_encode_from(&model->cfg, &hp->lora, hp->lora_seed, init,
						base_sha, ad, CT_DELTA_LOSSLESS, &buf);
	if (rc == 0)
		rc = ct_file_write_atomic(out, buf.data, buf.len, 0644);
	if (rc == 0 && bytes != NULL)
		*bytes = buf.len;
	ct_buf_free(&buf);
	free(ad);
	return rc;
}

/* Check a parsed adapter header against the base model. */
static int check_header(const struct ct_delta_info *info, const struct ct_gpt2 *model,
			const unsigned char base_sha[CT_SHA256_LEN], const char *apath)
{
	struct ct_delta_model dm;

	ct_lora_result_model(&model->cfg, &dm);
	if (info->kind != CT_DELTA_LORA)
		return ct_error(CT_EMISMATCH, "%s is a full-weight result, not LoRA adapters", apath);
	if (memcmp(&dm, &info->model, sizeof(dm)) != 0)
		return ct_error(CT_EMISMATCH, "%s was trained for another model config", apath);
	if (memcmp(base_sha, info->base_sha, CT_SHA256_LEN) != 0)
		return ct_error(CT_EMISMATCH, "%s was trained from another base model", apath);
	return 0;
}

int ct_lora_apply_file(struct ct_gpt2 *model, const char *model_path,
		       const char *adapter_path, struct ct_lora_spec *spec)
{
	unsigned char *data = NULL, base_sha[CT_SHA256_LEN];
	struct ct_delta_info info;
	struct ct_lora_spec sp;
	float *ad = NULL;
	size_t len, n;
	int rc;

	rc = ct_file_read_all(adapter_path, ADAPTER_MAX_BYTES, &data, &len);
	if (rc == 0)
		rc = ct_delta_parse_header(data, len, &info);
	if (rc == 0)
		rc = ct_sha256_file(model_path, base_sha);
	if (rc == 0)
		rc = check_header(&info, model, base_sha, adapter_path);
	if (rc < 0)
		goto out;
	sp = (struct ct_lora_spec){ .rank = (int)info.lora.rank, .alpha = info.lora.alpha,
				    .targets = info.lora.targets };
	n = ct_lora_nparams(&model->cfg, &sp);
	ad = malloc(n * sizeof(float));
	if (ad == NULL) {
		rc = ct_error(CT_ENOMEM, "out of memory for %zu adapters", n);
		goto out;
	}
	rc = ct_lora_result_decode(&model->cfg, &sp, info.lora.seed, NULL, data, len, ad, &info);
	if (rc == 0) {
		const float *const one[1] = { ad };

		rc = ct_lora_merge(&model->cfg, &sp, model->params, one, 1);
	}
	if (rc == 0 && spec != NULL)
		*spec = sp;
out:
	free(data);
	free(ad);
	return rc;
}

static const struct option merge_long[] = {
	{ "out", required_argument, NULL, 'o' },
	{ NULL, 0, NULL, 0 },
};

static int cmd_merge(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	const char *out = NULL;
	struct ct_gpt2 model = { 0 };
	struct ct_lora_spec sp;
	int c, rc;

	(void)ctx;
	optind = 0;
	while ((c = getopt_long(argc, argv, "", merge_long, NULL)) != -1) {
		if (c != 'o')
			return CT_EXIT_USAGE;	/* ct_cmd_resolve named it */
		out = optarg;
	}
	if (argc - optind != 2 || out == NULL) {
		fprintf(stderr, "ctune model: merge takes BASE.bin ADAPTER.bin and --out "
			"MERGED.bin (see 'ctune model merge --help')\n");
		return CT_EXIT_USAGE;
	}
	rc = ct_base_load_f32(argv[optind], &model);
	if (rc == 0)
		rc = ct_lora_apply_file(&model, argv[optind], argv[optind + 1], &sp);
	if (rc == 0)
		rc = ct_gpt2_save(out, &model.cfg, model.params);
	if (rc == 0)
		printf("wrote %s: %s + LoRA rank %d, alpha %g, %d adapted matrices\n", out,
		       argv[optind], sp.rank, (double)sp.alpha, ct_lora_nslots(&model.cfg, &sp));
	ct_gpt2_free(&model);
	if (rc < 0) {
		fprintf(stderr, "ctune model: %s\n", ct_errmsg(rc));
		return CT_EXIT_FAIL;
	}
	return CT_EXIT_OK;
}

const struct ct_cmd_def ct_model_merge_cmd = {
	.name = "merge", .fn = cmd_merge, .opts = merge_long, .min_args = 2, .max_args = 2,
	.required = "out",
	.summary = "merge LoRA adapters into their base model",
	.usage = "BASE.bin ADAPTER.bin --out MERGED.bin",
	.help = "Merge the LoRA adapters of ADAPTER (written by `ctune train --lora-rank`)\n"
	"into BASE, the model they were trained from: W = W + (alpha/r) B A for\n"
	"every adapted matrix (the exact merge of ct_lora.h with one shard), and\n"
	"write the merged checkpoint to MERGED atomically. A compact BASE (bf16,\n"
	"q8, nf4) is widened to float32 first; MERGED is float32.\n",
};
