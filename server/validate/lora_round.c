/*
 * lora_round.c - see lora_round.h.
 */
#include "lora_round.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_avg.h"
#include "ct_base.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_log.h"
#include "ct_lora_file.h"
#include "ct_lora_result.h"
#include "validate/quorum.h"
#include "data/dl_round.h"
#include "data/dl_workunit.h"
#include "data/lora_job.h"
#include "data/server.h"

/* ---- initial adapters --------------------------------------------------- */

/* The initial adapters named sha (a round's lora_init, "" none) into init
 * (n floats): the store's adapter file, held to cfg and spec (1), or
 * ct_lora_init of seed (0). */
static int load_init(struct ct_server *srv, const char *sha, const struct ct_model_config *cfg,
		     const struct ct_lora_spec *spec, uint64_t seed, float *init)
{
	char path[4096];
	int rc;

	if (sha[0] == '\0')
		return ct_lora_init(cfg, spec, seed, init);
	rc = ct_server_download_path(srv, sha, path, sizeof(path));
	if (rc == 0)
		rc = ct_lora_file_load(path, cfg, spec, init);
	if (rc < 0)
		ct_log_error("LoRA: the initial adapters %.12s: %s", sha, ct_errmsg(rc));
	return rc < 0 ? rc : 1;
}

int ct_lora_round_init(struct ct_server *srv, struct ct_db *db, int64_t roundid,
		       const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
		       uint64_t seed, float *init)
{
	char sha[65];
	int rc = ct_round_lora_init_id(db, roundid, sha);

	return rc < 0 ? rc : load_init(srv, sha, cfg, spec, seed, init);
}

/* ---- validator ---------------------------------------------------------- */

int ct_lora_val_open(struct ct_server *srv, struct ct_db *db, int64_t jobid, int64_t wuid,
		     const struct ct_model_config *cfg, struct ct_lora_val *lv)
{
	char sha[65];
	int64_t seed = 0;
	int rc;

	memset(lv, 0, sizeof(*lv));
	rc = ct_lora_job_get(db, jobid, &lv->spec);
	if (rc < 0 || lv->spec.rank == 0)
		return rc;
	rc = ct_wu_seed(db, wuid, &seed);
	if (rc == 0)
		rc = ct_round_lora_init_wu(db, wuid, sha);
	if (rc < 0)
		goto out;
	lv->seed = (uint64_t)seed;
	lv->n = ct_lora_nparams(cfg, &lv->spec);
	lv->init = malloc(lv->n * sizeof(float));
	rc = lv->init ? load_init(srv, sha, cfg, &lv->spec, lv->seed, lv->init) : CT_ENOMEM;
	lv->carried = rc == 1;
out:
	if (rc < 0)
		ct_lora_val_close(lv);
	return rc < 0 ? rc : 0;
}

void ct_lora_val_close(struct ct_lora_val *lv)
{
	free(lv->init);
	memset(lv, 0, sizeof(*lv));
}

int ct_lora_val_decode(const struct ct_lora_val *lv, const struct ct_model_config *cfg,
		       const void *data, size_t len, float *adapters,
		       struct ct_delta_info *info)
{
	return ct_lora_result_decode(cfg, &lv->spec, lv->seed, lv->init, data, len, adapters,
				     info);
}

int ct_lora_val_merged(const struct ct_lora_val *lv, const struct ct_gpt2 *base,
		       const float *adapters, double max_ratio, float **merged_out,
		       int *reason)
{
	size_t n = base->lay.total;
	struct ct_val_stats st;
	float *w;
	int rc;

	*merged_out = NULL;
	*reason = CT_VAL_OK;
	w = malloc(n * sizeof(float));
	if (w == NULL)
		return ct_error(CT_ENOMEM, "validator: %zu floats for a merged model", n);
	memcpy(w, base->params, n * sizeof(float));
	rc = ct_lora_merge(&base->cfg, &lv->spec, w, &adapters, 1);
	if (rc < 0) {
		free(w);
		return rc;
	}
	ct_val_stats(base->params, w, n, &st);
	/* from carried adapters the merged weights differ from the base
	 * untrained: no update is then adapters equal to the initial ones */
	if (!st.finite)
		*reason = CT_VAL_NONFINITE;
	else if (lv->carried ? memcmp(adapters, lv->init, lv->n * sizeof(float)) == 0
			     : st.update_norm == 0.0)
		*reason = CT_VAL_NO_UPDATE;
	else if (max_ratio > 0.0 && st.update_norm > max_ratio * st.base_norm)
		*reason = CT_VAL_TOO_LARGE;
	if (*reason != CT_VAL_OK)
		free(w);
	else
		*merged_out = w;
	return 0;
}

double ct_lora_wu_flops(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
			int seq, int batch, int steps)
{
	double L = cfg->L, C = cfg->C, T = seq;
	double nm = L * 12.0 * C * C + (double)cfg->Vp * C;
	double na = (double)ct_lora_nparams(cfg, spec);
	double per_token = 4.0 * nm + 6.0 * L * C * (T + 1.0) + 6.0 * na;

	return (double)steps * batch * T * per_token;
}

/* ---- assimilator -------------------------------------------------------- */

/* Decode the canonical result of shard k (named `name`, WU seed `seed`)
 * into ad (n floats). */
static int decode_shard(struct ct_server *srv, const struct ct_model_config *cfg,
			const struct ct_lora_spec *spec, const char *name, uint64_t seed,
			const float *init, float *ad)
{
	struct ct_mmap map = { 0 };
	int rc;

	rc = ct_server_map_upload(srv, name, &map);
	if (rc == 0)
		rc = ct_lora_result_decode(cfg, spec, seed, init, map.addr, map.len, ad, NULL);
	ct_file_unmap(&map);
	if (rc < 0)
		ct_log_error("assimilator: LoRA result %s: %s", name, ct_errmsg(rc));
	return rc;
}

/* The K canonical results in shard order: decode each into ads[k],
 * against the round's carried initial adapters when it has them (every
 * shard of a round starts from the same ones). */
static int decode_round(struct ct_server *srv, struct ct_db *db, int64_t roundid, int nwus,
			const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
			float **ads)
{
	struct ct_seeded_canonical_row *rows = NULL;
	size_t n = ct_lora_nparams(cfg, spec), nrows = 0;
	float *init = NULL;
	char sha[65];
	int rc;

	rc = ct_wu_seeded_canonicals(db, roundid, &rows, &nrows);
	if (rc == 0 && nrows != (size_t)nwus)
		rc = ct_error(CT_ESTATE, "round %" PRId64 ": %zu canonical results of %d",
			      roundid, nrows, nwus);
	if (rc == 0)
		rc = ct_round_lora_init_id(db, roundid, sha);
	if (rc == 0 && sha[0] != '\0') {
		init = malloc(n * sizeof(float));
		rc = init ? load_init(srv, sha, cfg, spec, 0, init) : CT_ENOMEM;
		rc = rc < 0 ? rc : 0;
	}
	for (int k = 0; rc == 0 && k < nwus; k++) {
		ads[k] = malloc(n * sizeof(float));
		rc = ads[k] == NULL ? CT_ENOMEM
				    : decode_shard(srv, cfg, spec, rows[k].name,
						   (uint64_t)rows[k].seed, init, ads[k]);
	}
	free(init);
	free(rows);
	return rc;
}

int ct_lora_round_adapters(struct ct_server *srv, struct ct_db *db, int64_t roundid, int nwus,
			   const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
			   float **ads)
{
	return decode_round(srv, db, roundid, nwus, cfg, spec, ads);
}

/* A compact-base job's round (doc/workunit.md §13, "Jobs on a compact
 * base"): the mean of the K adapter arrays (ct_avg: A and B each averaged
 * in shard order), merged alone (K = 1) into out, the widened base. The
 * mean is kept in ads[0]. */
static int merge_mean_adapters(const struct ct_model_config *cfg,
			       const struct ct_lora_spec *spec, float *out, float **ads, int nwus)
{
	size_t n = ct_lora_nparams(cfg, spec);
	float *mean = malloc(n * sizeof(float));
	int rc;

	if (mean == NULL)
		return CT_ENOMEM;
	rc = ct_avg(mean, (const float *const *)ads, (size_t)nwus, n, CT_AVG_MEAN, 0);
	if (rc == 0)
		rc = ct_lora_merge(cfg, spec, out, (const float *const *)&mean, 1);
	free(ads[0]);
	ads[0] = mean;
	return rc;
}

int ct_lora_round_merge(struct ct_server *srv, struct ct_db *db, int64_t jobid,
			int64_t roundid, int nwus, const struct ct_gpt2 *base, float *out,
			float **mean_out)
{
	struct ct_lora_spec spec;
	float **ads = NULL;
	int rc;

	rc = ct_lora_job_get(db, jobid, &spec);
	if (rc == 0 && spec.rank == 0)
		rc = ct_error(CT_EINVAL, "job %" PRId64 " is not a LoRA job", jobid);
	if (rc == 0 && nwus < 1)
		rc = ct_error(CT_ERANGE, "round %" PRId64 ": %d WUs", roundid, nwus);
	if (rc < 0)
		return rc;
	ads = calloc((size_t)nwus, sizeof(*ads));
	if (ads == NULL)
		return CT_ENOMEM;
	rc = decode_round(srv, db, roundid, nwus, &base->cfg, &spec, ads);
	if (rc == 0)
		memcpy(out, base->params, base->lay.total * sizeof(float));
	if (rc == 0 && spec.base_fmt != CT_BASE_F32)
		rc = merge_mean_adapters(&base->cfg, &spec, out, ads, nwus);
	else if (rc == 0)
		rc = ct_lora_merge(&base->cfg, &spec, out, (const float *const *)ads, nwus);
	if (rc == 0 && spec.base_fmt != CT_BASE_F32 && mean_out != NULL) {
		*mean_out = ads[0];	/* the mean (merge_mean_adapters) */
		ads[0] = NULL;
	}
	for (int k = 0; k < nwus; k++)
		free(ads[k]);
	free(ads);
	return rc;
}
