/*
 * cmd_lora.h - the LoRA pieces of `ctune train`, `ctune eval` and
 * `ctune model merge` (client/cmd_lora.c): writing a LoRA work unit's
 * adapter file and merging one into its base model.
 *
 * The adapter file is exactly what a volunteer uploads for a LoRA work
 * unit, lossless (ct_lora_result_encode): a ct_delta file of kind
 * CT_DELTA_LORA (engine/ct_delta.h)
 * holding the trained adapters as a delta against the initial adapters
 * ct_lora_init(config, {rank, alpha, targets}, seed), with the base
 * model's SHA-256, its config and the LoRA section in the header. So it is
 * self-describing: merge needs only the base model and this file.
 */
#ifndef CT_CLIENT_CMD_LORA_H
#define CT_CLIENT_CMD_LORA_H

#include <stddef.h>

#include "ct_engine.h"

/* Write the adapters of LoRA work unit wu (trained from `model`, loaded
 * from model_path, with hyperparameters hp, started from init or, when
 * init is NULL, from ct_lora_init of hp's seed) to `out` atomically
 * (0644) as a lossless ct_delta LoRA file against those initial adapters.
 * *bytes gets the file size (may be NULL). Returns 0 or a CT_E* code. */
int ct_lora_write_adapter_file(struct ct_wu *wu, const struct ct_gpt2 *model,
			       const char *model_path, const struct ct_wu_hparams *hp,
			       const float *init, const char *out, size_t *bytes);

/* Merge the adapter file at adapter_path into model's weights in place
 * (ct_lora_merge with K = 1). The file must be a LoRA result for model's
 * config and for the base file at model_path (its SHA-256): CT_EMISMATCH
 * otherwise; format errors as ct_delta_decode_lora. On success *spec (may
 * be NULL) gets the file's rank, alpha and targets. */
int ct_lora_apply_file(struct ct_gpt2 *model, const char *model_path,
		       const char *adapter_path, struct ct_lora_spec *spec);

/* `ctune model merge BASE.bin ADAPTER.bin --out MERGED.bin` is
 * ct_model_merge_cmd (commands.h). */

#endif
