/*
 * lora_job.h - LoRA jobs on the server, the parts every role needs: the
 * job's LoRA spec (table job_lora, db/migrations/003-lora.sql; no row
 * means a full-weight job), what the scheduler sends for a LoRA WU
 * (doc/protocol.md), and the upload cap of its results.
 *
 * The daemons' side (decoding adapter results, their checks, the exact
 * merge of a round) is in lora_round.h.
 */
#ifndef CT_LORA_JOB_H
#define CT_LORA_JOB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ct_buf.h"
#include "ct_gpt2.h"
#include "ct_lora.h"

struct ct_db;

/* The LoRA spec of job `jobid` into *spec: rank 0 (zeroed) for a
 * full-weight job. Returns 0 or a db error; a stored row that fails
 * ct_lora_spec_check gives CT_EFORMAT. */
int ct_lora_job_get(struct ct_db *db, int64_t jobid, struct ct_lora_spec *spec);

/* The spec a submission asked for, with its defaults filled in (alpha 0:
 * alpha = rank; targets 0: all four) into *out when out is not NULL, and
 * checked (ct_lora_spec_check). Rank 0 with alpha or targets set is an
 * error (they need --lora-rank). Returns 0 or CT_EINVAL. */
int ct_lora_job_check(const struct ct_lora_spec *in, struct ct_lora_spec *out);

/* Make job `jobid` (just inserted) a LoRA job: spec with its defaults
 * (ct_lora_job_check; rank > 0 required), checked against the model
 * (ct_lora_spec_check), insert its job_lora row
 * and lower the job's max_upload_bytes to what an adapter file can take
 * (ct_lora_max_upload). Call in the submission, before the first round
 * opens. Returns 0, CT_EINVAL or a db error. */
int ct_lora_job_put(struct ct_db *db, int64_t jobid, const struct ct_lora_spec *spec,
		    const struct ct_model_config *cfg);

/* Bytes a LoRA result file of this spec may have: the header, the
 * adapters' raw payload (4 bytes a float) and 1/8 + 64 KiB for zlib's
 * worst case and its block markers. */
int64_t ct_lora_max_upload(const struct ct_model_config *cfg, const struct ct_lora_spec *spec);

/* Append the LoRA elements of a WU of round `round` of job `jobid` to the
 * scheduler reply (inside its <workunit>): <lora_rank>, <lora_alpha>,
 * <lora_targets> ("qkv,proj,fc,fcproj", the words ct_lora_targets_parse
 * reads) and, for a compact frozen base, <lora_base_format> ("bf16",
 * "q8", "nf4"). Nothing for a full-weight job. When the round starts from
 * carried adapters (round.lora_init_sha256, doc/workunit.md §13), their
 * file's hash goes to init_sha and its size to *init_size, for the
 * reply's <file role="lora_init">; else init_sha is "". Returns 0,
 * CT_ETOOBIG (b's cap) or a db error. */
int ct_lora_wu_xml(struct ct_buf *b, struct ct_db *db, int64_t jobid, int round,
		   char init_sha[65], int64_t *init_size);

/* "qkv,proj,fc,fcproj" (the set bits of targets, in layout order) into
 * out (cap >= 24 always fits). */
void ct_lora_targets_str(unsigned targets, char *out, size_t cap);

/* One line for `job show` ("LoRA: rank 8, alpha 16, targets ...\n"), or
 * nothing for a full-weight job. Returns 0 or a db error. */
int ct_lora_job_describe(FILE *out, struct ct_db *db, int64_t jobid);

#endif
