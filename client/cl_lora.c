/*
 * cl_lora.c - see cl_lora.h.
 */
#include "cl_lora.h"
#include "cl_paths.h"
#include "ct_base.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_lora_file.h"
#include "ct_lora_result.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* <lora_base_format>: how the WU keeps its frozen base (f32 when absent). */
static int base_format(const struct ct_task *t, int *fmt)
{
	const char *f = ct_task_param(t, "lora_base_format");

	*fmt = CT_BASE_F32;
	if (f != NULL && ct_base_fmt_parse(f, fmt) < 0)
		return ct_error(CT_EINVAL, "work unit parameter lora_base_format = '%.40s' is not "
				"f32, bf16, q8 or nf4", f);
	return 0;
}

int ct_task_lora_hparams(const struct ct_task *t, struct ct_wu_hparams *hp)
{
	const char *rank = ct_task_param(t, "lora_rank"), *alpha = ct_task_param(t, "lora_alpha");
	const char *targets = ct_task_param(t, "lora_targets"), *seed = ct_task_param(t, "seed");
	struct ct_lora_spec sp = { 0 };
	char *end;
	long r;
	double a;
	unsigned long long sd;
	int rc;

	memset(&hp->lora, 0, sizeof(hp->lora));
	hp->lora_seed = 0;
	if (rank == NULL)
		return 0;
	errno = 0;
	r = strtol(rank, &end, 10);
	if (end == rank || *end != '\0' || errno != 0 || r < 1 || r > CT_LORA_MAX_RANK)
		return ct_error(CT_EINVAL, "work unit parameter lora_rank = '%.40s' is out of range",
				rank);
	sp.rank = (int)r;
	sp.alpha = (float)r;
	if (alpha != NULL) {
		a = strtod(alpha, &end);
		if (end == alpha || *end != '\0' || !isfinite(a) || !(a > 0) || a > 1e30)
			return ct_error(CT_EINVAL, "work unit parameter lora_alpha = '%.40s' is not "
					"a number > 0", alpha);
		sp.alpha = (float)a;
	}
	sp.targets = CT_LORA_ALL;
	if (targets != NULL) {
		rc = ct_lora_targets_parse(targets, &sp.targets);
		if (rc < 0) {
			char why[160];	/* the detail buffer is ct_error's own */

			snprintf(why, sizeof(why), "%s", ct_errmsg(rc));
			return ct_error(CT_EINVAL, "work unit parameter lora_targets: %s", why);
		}
	}
	errno = 0;
	sd = seed ? strtoull(seed, &end, 10) : 0;
	if (seed == NULL || end == seed || *end != '\0' || errno != 0 || seed[0] == '-')
		return ct_error(CT_EINVAL, "a LoRA work unit needs a seed (got '%.40s')",
				seed ? seed : "");
	rc = base_format(t, &sp.base_fmt);
	if (rc < 0)
		return rc;
	hp->lora = sp;
	hp->lora_seed = (uint64_t)sd;
	return 0;
}

int ct_task_lora_init(struct ct_task_run *r, const struct ct_task *t, const char *cache_dir)
{
	const struct ct_task_file *f = ct_task_input(t, "lora_init");
	uint64_t want;
	char path[4096];
	int rc;

	r->lora_init = NULL;
	if (f == NULL)
		return 0;
	if (r->hp.lora.rank == 0)
		return ct_error(CT_EINVAL, "a full-weight work unit with a lora_init input");
	want = ct_lora_file_size(&r->model.cfg, &r->hp.lora);
	if (f->size != want)
		return ct_error(CT_EFORMAT, "lora_init input of %llu bytes; the work unit's "
				"adapters make %llu", (unsigned long long)f->size,
				(unsigned long long)want);
	rc = ct_task_cache_path(cache_dir, t, "lora_init", path, sizeof(path), NULL);
	if (rc < 0)
		return rc;
	r->lora_init = malloc((size_t)(want - CT_LORA_FILE_HDR));
	if (r->lora_init == NULL)
		return CT_ENOMEM;
	rc = ct_lora_file_load(path, &r->model.cfg, &r->hp.lora, r->lora_init);
	if (rc < 0) {
		free(r->lora_init);
		r->lora_init = NULL;
	}
	return rc;
}

int ct_task_write_lora_result(struct ct_task_run *r, const char *slot_dir,
			      uint64_t max_bytes, char sha_hex[CT_SHA256_HEXLEN + 1],
			      uint64_t *size)
{
	struct ct_buf out = CT_BUF_INIT(max_bytes > 0 && max_bytes < SIZE_MAX ? (size_t)max_bytes : 0);
	size_t n = ct_lora_nparams(&r->model.cfg, &r->hp.lora);
	float *ad = malloc(n * sizeof(float));
	int rc = 0;

	if (ad == NULL)
		return CT_ENOMEM;
	rc = ct_wu_read_adapters(r->wu, ad);
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (!isfinite(ad[i]))
			rc = ct_error(CT_ENONFINITE, "LoRA adapter %zu is not finite", i);
	if (rc == 0)
		rc = ct_lora_result_encode_from(&r->model.cfg, &r->hp.lora, r->hp.lora_seed,
						r->lora_init, r->base_sha, ad, r->encoding, &out);
	rc = ct_task_save_result(rc, &out, max_bytes, slot_dir, sha_hex, size);
	free(ad);
	ct_buf_free(&out);
	return rc;
}
