/*
 * ct_model_ops.h - the model families as a table: one const row per
 * family (GPT-2, Llama) holding what differs between them, as
 * ct_backend_ops does for the backends. A caller looks the row up once
 * from the config (ct_model_ops_for) and calls through it; nothing outside
 * the rows (ct_model_ops_gpt2.c, ct_model_ops_llama.c) compares arch with
 * a family. The rows point into the family's own modules (ct_gpt2*.c,
 * ct_llama*.c, ct_model.c's GPT-2 passes), which never include this
 * table's rows, so no include runs in a circle.
 *
 * Adding a family: a CT_ARCH_* value (ct_model_config.h), its modules, a
 * row file, and the row in ct_model_ops.c's list.
 */
#ifndef CT_MODEL_OPS_H
#define CT_MODEL_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "ct_model_config.h"

struct ct_model;
struct ct_gpt2;
struct ct_gguf_export;
struct ct_delta_lora;
struct ct_delta_model;

/* The widths that differ between the families, per token (GPT-2's in
 * brackets). */
struct ct_model_dims {
	int qkv;	/* rows of the fused q/k/v matrix [3C] */
	int att;	/* attention output, o_proj's input [C] */
	int fc;		/* rows of the MLP's up matrix [4C; Llama gate+up 2F] */
	int hidden;	/* MLP hidden width, fcproj's input [4C; Llama F] */
	int head;	/* width of one head [C/NH] */
	int qk_norms;	/* q/k norm rows per token, NH + KVH, or 0 [0] */
	int norm_means;	/* 1: LayerNorm keeps means [1]; 0: RMSNorm */
	int rope;	/* 1: rotary positions, a RoPE table of T x head [0] */
};

/* Capabilities (struct ct_model_ops.flags). */
enum {
	/* every backend runs it; else only the C reference and OpenCL */
	CT_MODEL_ANY_BACKEND = 1 << 0,
	/* the ln1b slot holds norm weights (Qwen3's q/k norms): init 1 */
	CT_MODEL_LN1B_NORMS = 1 << 1,
	/* the forward of rows 0..pos alone (m->T lowered) gives row pos's
	 * logits bit for bit, so the reference may run the prefix only */
	CT_MODEL_PREFIX_LOGITS = 1 << 2,
	/* LoRA results may use the per-tensor lossless encoding (its
	 * segments follow this family's adapter slots; ct_delta.h) */
	CT_MODEL_LORA_TENSOR_SEGMENTS = 1 << 3,
	/* the OpenCL backend runs its passes through ct_ocl_llama.c and
	 * keeps a LoRA base in pieces (ct_ocl_weights.h) */
	CT_MODEL_OCL_LLAMA_PASS = 1 << 4,
	/* PEFT's fan_in_fan_out: the HF checkpoint stores (in, out) */
	CT_MODEL_HF_FAN_IN_FAN_OUT = 1 << 5,
};

struct ct_model_ops {
	int arch;		/* CT_ARCH_* of the configs this row serves */
	const char *name;	/* "GPT-2", "Llama": for people */
	int32_t magic;		/* checkpoint header word 0 */
	unsigned flags;		/* CT_MODEL_* above */

	/* The family's own config rules, after the shared ones of
	 * ct_gpt2_config_check (NULL: none). Returns 0 or CT_EFORMAT. */
	int (*config_check)(const struct ct_model_config *c);
	/* Floats of each of the 16 slots (a checked config). */
	void (*tensor_sizes)(const struct ct_model_config *c, size_t s[CT_GPT2_NTENSORS]);
	struct ct_model_dims (*dims)(const struct ct_model_config *c);
	/* The checkpoint header (CT_GPT2_HEADER_BYTES) of c into hdr. */
	void (*file_header)(const struct ct_model_config *c, unsigned char *hdr);
	/* A header whose word 0 is magic, against an image of n bytes
	 * (SIZE_MAX: header only); like ct_gpt2_parse_config. */
	int (*parse_header)(const void *data, size_t n, const char *name,
			    struct ct_model_config *c);
	double (*flops_per_token)(const struct ct_model_config *c, int T);
	/* One line naming the checkpoint format and the family's own
	 * fields ("GPT-2 checkpoint v3 float32"), into out (cap bytes). */
	void (*describe)(const struct ct_model_config *c, char *out, size_t cap);

	/* The C reference's passes (ct_model.h's contracts). */
	float (*forward)(struct ct_model *m, const ct_tok *inputs, const ct_tok *targets);
	void (*backward)(struct ct_model *m, const ct_tok *inputs, const ct_tok *targets);
	/* The RoPE table of T positions into rope (dims.rope; else NULL).
	 * Returns 0 or CT_ENOMEM. */
	int (*rope_table)(const struct ct_model_config *c, int T, float *rope);

	/* Exports (ct_llama_hf.h, ct_gguf_model.h): a Hugging Face folder
	 * (the tokenizer of tok_dir copied when not NULL); GGUF's
	 * general.architecture (NULL: not expressible), its architecture
	 * keys and its tensors. */
	int (*hf_export)(const struct ct_gpt2 *m, const char *dir, const char *tok_dir);
	const char *(*gguf_arch)(const struct ct_model_config *c);
	int (*gguf_keys)(struct ct_gguf_export *x, const char *arch);
	int (*gguf_tensors)(struct ct_gguf_export *x, const char *arch);
	/* The Hugging Face modules a LoRA target (index ti in ct_lora.h's
	 * order) of layer l is split into: module k's name into name (cap
	 * bytes) and its row count returned, out being the target's rows;
	 * 0: no module k. words[ti][k] is PEFT's target_modules word. */
	int (*hf_lora_module)(const struct ct_model_config *c, int ti, int k, int l, int out,
			      char *name, size_t cap);
	const char *const (*peft_words)[3];
	/* Whether a LoRA result header's adapter count n fits its model
	 * shape (ct_delta.c, which knows only C and L of the model). */
	int (*delta_lora_fits)(uint64_t n, const struct ct_delta_lora *l,
			       const struct ct_delta_model *m);
};

extern const struct ct_model_ops ct_model_ops_gpt2, ct_model_ops_llama;

/* The row of family arch, or NULL when no row has it. */
const struct ct_model_ops *ct_model_ops_find(int arch);

/* The row whose checkpoint magic is magic, or NULL. */
const struct ct_model_ops *ct_model_ops_by_magic(int32_t magic);

/* The row of cfg's family. cfg is one ct_gpt2_config_check accepted; an
 * arch no row has gets GPT-2's row, as a zeroed config does. */
const struct ct_model_ops *ct_model_ops_for(const struct ct_model_config *cfg);

/* The widths of cfg (its row's dims). */
struct ct_model_dims ct_model_dims(const struct ct_model_config *cfg);

#endif
