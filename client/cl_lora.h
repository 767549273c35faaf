/*
 * cl_lora.h - LoRA work units in the client: the WU's LoRA parameters
 * (doc/protocol.md: lora_rank, lora_alpha, lora_targets, and the WU's
 * seed, which starts the adapters) and its result, the trained adapters
 * only, as a ct_delta adapter file (ct_lora_result.h).
 */
#ifndef CT_CL_LORA_H
#define CT_CL_LORA_H

#include <stdint.h>

#include "cl_state.h"
#include "cl_task.h"

/* Set hp->lora and hp->lora_seed from the parameters of t: no lora_rank
 * leaves a full-weight WU (rank 0); with it, lora_alpha (default: the
 * rank), lora_targets (default all) and seed (required, 0..2^64-1) must be
 * well-formed (CT_EINVAL naming the parameter). */
int ct_task_lora_hparams(const struct ct_task *t, struct ct_wu_hparams *hp);

/* A LoRA WU's "lora_init" input (doc/protocol.md; a compact-base job's
 * round r+1 starts from round r's aggregate, ct_lora_file.h) into
 * r->lora_init: none leaves it NULL (ct_lora_init of the seed). The
 * announced size must be the exact file size the WU's spec gives, and
 * the file is held to the spec field by field (CT_EFORMAT, CT_EMISMATCH,
 * CT_ECORRUPT: the WU's fault). A full-weight WU with the input ->
 * CT_EINVAL. Needs r->model and r->hp loaded. */
int ct_task_lora_init(struct ct_task_run *r, const struct ct_task *t, const char *cache_dir);

/* ct_task_write_result for a LoRA WU (r->hp.lora.rank > 0): encode the
 * trained adapters against the initial ones into slot_dir/result.ctd
 * (atomic, at most max_bytes when not 0); its SHA-256 (hex) and size. */
int ct_task_write_lora_result(struct ct_task_run *r, const char *slot_dir,
			      uint64_t max_bytes, char sha_hex[CT_SHA256_HEXLEN + 1],
			      uint64_t *size);

#endif
