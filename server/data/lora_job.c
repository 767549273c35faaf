/*
 * lora_job.c - see lora_job.h.
 */
#include "lora_job.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ct_base.h"
#include "ct_err.h"
#include "ct_xml.h"
#include "db.h"
#include "dl.h"
#include "dl_round.h"
#include "store.h"

/* job_lora's row as stored. */
struct lora_row {
	int rank;
	double alpha;
	int64_t targets;
	int base_format;
};

static const struct ct_dl_col lora_cols[] = {
	CT_DL_COL(struct lora_row, rank), CT_DL_COL(struct lora_row, alpha),
	CT_DL_COL(struct lora_row, targets), CT_DL_COL(struct lora_row, base_format),
};

int ct_lora_job_get(struct ct_db *db, int64_t jobid, struct ct_lora_spec *spec)
{
	struct lora_row r;
	int rc;

	memset(spec, 0, sizeof(*spec));
	rc = CT_DL_ONE(db, &r, lora_cols, "SELECT lora_rank, lora_alpha, lora_targets, "
		       "base_format FROM job_lora WHERE jobid=?", jobid);
	if (rc == CT_ENOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	spec->rank = r.rank;
	spec->alpha = (float)r.alpha;
	spec->targets = (unsigned)r.targets;
	spec->base_fmt = r.base_format;
	if (spec->base_fmt < 0 || spec->base_fmt >= CT_BASE_NFMT ||
	    spec->rank < 1 || spec->rank > CT_LORA_MAX_RANK || !(spec->alpha > 0.0f) ||
	    !isfinite(spec->alpha) || spec->targets == 0 ||
	    (spec->targets & ~(unsigned)CT_LORA_ALL) != 0)
		return ct_error(CT_EFORMAT, "job %" PRId64 ": stored LoRA spec is invalid", jobid);
	return 0;
}

int64_t ct_lora_max_upload(const struct ct_model_config *cfg, const struct ct_lora_spec *spec)
{
	int64_t raw = 4 * (int64_t)ct_lora_nparams(cfg, spec);

	return 160 + raw + raw / 8 + (64 << 10);
}

int ct_lora_job_check(const struct ct_lora_spec *in, struct ct_lora_spec *out)
{
	struct ct_lora_spec s = *in;

	if (s.rank == 0 && (s.alpha != 0.0f || s.targets != 0))
		return ct_error(CT_EINVAL, "--lora-alpha and --lora-targets need --lora-rank");
	if (s.rank == 0 && s.base_fmt != CT_BASE_F32)
		return ct_error(CT_EINVAL, "--base-format needs --lora-rank (only a LoRA job "
				"has a frozen base)");
	if (s.rank != 0 && s.alpha == 0.0f)
		s.alpha = (float)s.rank;
	if (s.rank != 0 && s.targets == 0)
		s.targets = CT_LORA_ALL;
	if (out != NULL)
		*out = s;
	return ct_lora_spec_check(&s, NULL);
}

int ct_lora_job_put(struct ct_db *db, int64_t jobid, const struct ct_lora_spec *in,
		    const struct ct_model_config *cfg)
{
	struct ct_lora_spec spec;
	int rc;

	if (in->rank < 1)
		return ct_error(CT_EINVAL, "LoRA job without a rank");
	rc = ct_lora_job_check(in, &spec);
	if (rc == 0)
		rc = ct_lora_spec_check(&spec, cfg);
	if (rc < 0)
		return rc;
	rc = CT_DB_EXEC(db, "INSERT INTO job_lora (jobid, lora_rank, lora_alpha, lora_targets, "
			"base_format) VALUES (?, ?, ?, ?, ?)", jobid, spec.rank,
			(double)spec.alpha, (int)spec.targets, spec.base_fmt);
	if (rc >= 0)
		rc = CT_DB_EXEC(db, "UPDATE job SET max_upload_bytes=? WHERE id=?",
				ct_lora_max_upload(cfg, &spec), jobid);
	return rc < 0 ? rc : 0;
}

void ct_lora_targets_str(unsigned targets, char *out, size_t cap)
{
	static const char *const names[CT_LORA_NTARGETS] = { "qkv", "proj", "fc", "fcproj" };
	size_t len = 0;

	if (cap == 0)
		return;
	out[0] = '\0';
	for (int t = 0; t < CT_LORA_NTARGETS; t++) {
		if (!(targets & (1u << t)))
			continue;
		int n = snprintf(out + len, cap - len, "%s%s", len ? "," : "", names[t]);
		if (n < 0 || (size_t)n >= cap - len)
			return;
		len += (size_t)n;
	}
}

/* Job jobid's LoRA spec and its targets as text (32 bytes): 1, 0 when the
 * job trains all weights, or CT_E*. */
static int spec_targets(struct ct_db *db, int64_t jobid, struct ct_lora_spec *spec,
			char targets[32])
{
	int rc = ct_lora_job_get(db, jobid, spec);

	if (rc < 0 || spec->rank == 0)
		return rc;
	ct_lora_targets_str(spec->targets, targets, 32);
	return 1;
}

/* The lora_init file of round `round` when it starts from carried
 * adapters: its hash into sha ("" none) and its size. */
static int init_file(struct ct_db *db, int64_t jobid, int round, char sha[65], int64_t *size)
{
	int rc = ct_round_lora_init(db, jobid, round, sha);

	if (rc == CT_ENOTFOUND || (rc == 0 && sha[0] == '\0')) {
		sha[0] = '\0';
		return 0;
	}
	return rc < 0 ? rc : ct_store_size(db, sha, size);
}

int ct_lora_wu_xml(struct ct_buf *b, struct ct_db *db, int64_t jobid, int round,
		   char init_sha[65], int64_t *init_size)
{
	struct ct_lora_spec spec;
	char targets[32];
	int rc = spec_targets(db, jobid, &spec, targets);

	init_sha[0] = '\0';
	*init_size = 0;
	if (rc <= 0)
		return rc;
	rc = ct_xml_elem_int64(b, "lora_rank", spec.rank);
	if (rc == 0)
		rc = ct_xml_elem_double(b, "lora_alpha", (double)spec.alpha);
	if (rc == 0)
		rc = ct_xml_elem_str(b, "lora_targets", targets);
	if (rc == 0 && spec.base_fmt != CT_BASE_F32)
		rc = ct_xml_elem_str(b, "lora_base_format", ct_base_fmt_name(spec.base_fmt));
	if (rc == 0 && spec.base_fmt != CT_BASE_F32 && round > 1)
		rc = init_file(db, jobid, round, init_sha, init_size);
	return rc;
}

int ct_lora_job_describe(FILE *out, struct ct_db *db, int64_t jobid)
{
	struct ct_lora_spec spec;
	char targets[32];
	int rc = spec_targets(db, jobid, &spec, targets);

	if (rc <= 0)
		return rc;
	fprintf(out, "LoRA: rank %d, alpha %g, targets %s (results are adapters)\n", spec.rank,
		(double)spec.alpha, targets);
	if (spec.base_fmt != CT_BASE_F32)
		fprintf(out, "frozen base: %s\n", ct_base_fmt_name(spec.base_fmt));
	return 0;
}
