/*
 * ct_lora_file.h - an adapter array as a file: what a compact-base LoRA
 * job's round r+1 starts its WUs from (doc/workunit.md §13, "Jobs on a
 * compact base"; the round's aggregate (Ā, B̄)). The server writes it into
 * its store (content-addressed by SHA-256 like every WU input), the
 * client downloads it as a WU's "lora_init" input, `ctune train
 * --lora-init FILE` reads it for one WU.
 *
 * Layout, little-endian, CT_LORA_FILE_HDR (32) bytes of header:
 *   0  8  magic "CTLORA1\0"
 *   8  4  rank (int32)       12 4  alpha (float32)
 *   16 4  targets (uint32)   20 4  model arch (uint32, ct_model_config)
 *   24 8  adapter count n (uint64) = ct_lora_nparams
 *   32 .. n float32, the adapter array in ct_lora.h's layout.
 * A reader holds every field to the WU's, the size to exactly 32 + 4 n
 * and every float to finite: a peer's file is never trusted.
 */
#ifndef CT_LORA_FILE_H
#define CT_LORA_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "ct_lora.h"
#include "ct_model_config.h"

#define CT_LORA_FILE_MAGIC "CTLORA1"
#define CT_LORA_FILE_HDR 32

/* The header of an adapter file for cfg and spec (spec checked) into
 * hdr. The file is hdr followed by the ct_lora_nparams(cfg, spec)
 * floats, little-endian. */
void ct_lora_file_header(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
			 unsigned char hdr[CT_LORA_FILE_HDR]);

/* The size in bytes of the adapter file for cfg and spec. */
uint64_t ct_lora_file_size(const struct ct_model_config *cfg, const struct ct_lora_spec *spec);

/* Write adapters (ct_lora_nparams floats) as the file at path,
 * atomically (mode 0644). Returns 0 or a CT_E* code (CT_EUNSUPP on a
 * big-endian host). */
int ct_lora_file_save(const char *path, const struct ct_model_config *cfg,
		      const struct ct_lora_spec *spec, const float *adapters);

/* Check a file's len bytes at data against cfg and spec and copy its
 * adapters into out (ct_lora_nparams floats, caller-allocated). Returns 0,
 * CT_EFORMAT (magic, size), CT_EMISMATCH (rank, alpha, targets, arch or
 * count other than the WU's; the detail says which) or CT_ECORRUPT (a
 * float not finite). out is untouched on failure. */
int ct_lora_file_parse(const void *data, size_t len, const struct ct_model_config *cfg,
		       const struct ct_lora_spec *spec, float *out);

/* ct_lora_file_parse of the file at path (mapped, not read: its header
 * is judged before its size). Also the file's open or map errors. */
int ct_lora_file_load(const char *path, const struct ct_model_config *cfg,
		      const struct ct_lora_spec *spec, float *out);

#endif
