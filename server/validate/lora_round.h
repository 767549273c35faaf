/*
 * lora_round.h - the daemons' side of LoRA jobs (lora_job.h has the
 * spec, the scheduler's elements and the upload cap; doc/validation.md
 * and doc/operator.md describe the behaviour).
 *
 * Validator: a LoRA result is an adapter file (ct_lora_result.h). The
 * quorum compares adapters (their hash for exact uploads, their distance
 * otherwise, against the WU's initial adapters), AdamW's step bound holds
 * for the adapter array (that is what AdamW trained), and the result's
 * model, base merged with its adapters alone (ct_lora_merge, K = 1), must
 * be finite, differ from the base, stay within the relative size cap and
 * pass the probe loss.
 *
 * Assimilator: a LoRA round's model is base + the exact mean of the
 * shards' adapter products, ct_lora_merge over the K canonical results in
 * shard order; the next round's WUs start fresh adapters (one seed per
 * round, the same for its shards: wg.h) from that model. A compact-base
 * job's round merges the mean adapter pair instead, and its next round's
 * WUs start from that pair on the same base (round.lora_init_sha256,
 * doc/workunit.md §13): everything here that needs a WU's initial
 * adapters reads that file when the round names one. Before the
 * merge, the cross-shard check compares the shards' adapter updates
 * (lora_robust.h).
 */
#ifndef CT_LORA_ROUND_H
#define CT_LORA_ROUND_H

#include <stddef.h>
#include <stdint.h>

#include "ct_delta.h"
#include "ct_gpt2.h"
#include "ct_lora.h"

struct ct_db;
struct ct_server;

/* A WU's LoRA context in the validator. Zero-initialise; spec.rank 0
 * means a full-weight WU (nothing else is set). */
struct ct_lora_val {
	struct ct_lora_spec spec;
	uint64_t seed;		/* the WU's seed */
	size_t n;		/* adapter floats */
	float *init;		/* the WU's initial adapters (n floats, owned) */
	int carried;		/* 1: init is its round's lora_init file, not
				 * ct_lora_init of the seed */
};

/* Fill lv for WU `wuid` of job `jobid` with model config cfg: the job's
 * spec and, for a LoRA job, the WU's seed and initial adapters (its
 * round's lora_init file from the store when it has one, doc/workunit.md
 * §13, else ct_lora_init of the seed). Returns 0, CT_ENOMEM, the adapter
 * file's errors (ct_lora_file.h) or a db error. Release with
 * ct_lora_val_close. */
int ct_lora_val_open(struct ct_server *srv, struct ct_db *db, int64_t jobid, int64_t wuid,
		     const struct ct_model_config *cfg, struct ct_lora_val *lv);

/* The initial adapters of round roundid's WUs into init (ct_lora_nparams
 * floats): its lora_init file (1), or ct_lora_init of seed (0; the
 * round's one seed). Returns 1, 0, file or db errors. */
int ct_lora_round_init(struct ct_server *srv, struct ct_db *db, int64_t roundid,
		       const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
		       uint64_t seed, float *init);
void ct_lora_val_close(struct ct_lora_val *lv);

/* Decode an upload of the WU into adapters (lv->n floats). Returns like
 * ct_lora_result_decode (CT_EMISMATCH: not this WU's kind, shape, spec or
 * seed). */
int ct_lora_val_decode(const struct ct_lora_val *lv, const struct ct_model_config *cfg,
		       const void *data, size_t len, float *adapters,
		       struct ct_delta_info *info);

/* The checks on the result's model: merge the adapters into a copy of
 * base (K = 1). *reason (enum ct_val_reason): CT_VAL_NONFINITE,
 * CT_VAL_NO_UPDATE (the merged weights equal the base; from carried
 * initial adapters: the adapters equal them),
 * CT_VAL_TOO_LARGE (||merged - base|| > max_ratio * ||base|| when
 * max_ratio > 0), else CT_VAL_OK with *merged_out the merged weights
 * (malloc'd, base->lay.total floats; the caller frees) for the probe.
 * Returns 0 or CT_ENOMEM (*merged_out NULL unless OK). */
int ct_lora_val_merged(const struct ct_lora_val *lv, const struct ct_gpt2 *base,
		       const float *adapters, double max_ratio, float **merged_out,
		       int *reason);

/* FLOPs of a LoRA WU for credit (doc/credit.md): per token forward
 * 2 Nm + 2 L C (T+1) + 2 Na and backward 2 Nm + 4 L C (T+1) + 4 Na (the
 * input gradient still flows through every frozen matrix; no weight
 * gradient for them), Nm the matrix parameters of ct_gpt2_flops_per_token,
 * Na the adapter floats. */
double ct_lora_wu_flops(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
			int seq, int batch, int steps);

/* Close LoRA round `roundid` of job `jobid` (nwus WUs): decode the K
 * canonical results (shard order, each against its WU's initial
 * adapters) and write base merged with all of them (ct_lora_merge) into
 * out (base->lay.total floats). A job on a compact base (spec.base_fmt)
 * merges the mean of the K adapter arrays instead (ct_avg, then
 * ct_lora_merge with K = 1; doc/workunit.md §13), base being the widened
 * base; the mean then goes to *mean_out (when not NULL; malloc'd
 * ct_lora_nparams floats, the caller frees; NULL for a float32 job): what
 * the next round starts from. Each result is decoded against the round's
 * initial adapters (its lora_init file when it has one). Holds K adapter
 * arrays at once. Returns 0, CT_ESTATE (a WU without a canonical result),
 * CT_ENOMEM, decode or db errors. */
int ct_lora_round_merge(struct ct_server *srv, struct ct_db *db, int64_t jobid,
			int64_t roundid, int nwus, const struct ct_gpt2 *base, float *out,
			float **mean_out);

/* The K canonical adapter sets of round `roundid` (nwus WUs) in shard
 * order, each decoded against its WU's initial adapters: ads[k] (nwus
 * entries, NULL on entry) gets ct_lora_nparams(cfg, spec) floats malloc'd
 * here; the caller frees them, also on error. Returns 0, CT_ESTATE (a WU
 * without a canonical result), CT_ENOMEM, decode or db errors. */
int ct_lora_round_adapters(struct ct_server *srv, struct ct_db *db, int64_t roundid, int nwus,
			   const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
			   float **ads);

#endif
