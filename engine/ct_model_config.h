/*
 * ct_model_config.h - what describes a model of any family: its config
 * (struct ct_model_config; arch names the family, CT_ARCH_*), the caps a
 * peer's file may claim, and the flat parameter array of 16 tensor slots
 * every family fills (struct ct_gpt2_layout; ct_gpt2.h says what GPT-2
 * keeps in each slot, ct_llama.h what Llama does). What differs between
 * the families is a row of the ops table (ct_model_ops.h), looked up from
 * arch; nothing outside the rows compares arch with a family.
 */
#ifndef CT_MODEL_CONFIG_H
#define CT_MODEL_CONFIG_H

#include <stddef.h>

#include "ct_tok.h"

#define CT_GPT2_MAGIC 20240326
#define CT_GPT2_VERSION 3
#define CT_GPT2_HEADER_INTS 256
#define CT_GPT2_HEADER_BYTES (CT_GPT2_HEADER_INTS * 4)
#define CT_GPT2_NTENSORS 16

/* Caps on what a checkpoint header may claim (a file comes from a peer). */
#define CT_GPT2_MAX_T (1 << 16)
#define CT_GPT2_MAX_V CT_VOCAB_MAX	/* ct_tok.h */
#define CT_GPT2_MAX_VP (1 << 22)
#define CT_GPT2_MAX_L 1024
#define CT_GPT2_MAX_NH 1024
#define CT_GPT2_MAX_C (1 << 16)
#define CT_GPT2_MAX_PARAMS ((size_t)1 << 33)	/* 32 GiB of float32 */

struct ct_model_config {
	int maxT;	/* max sequence length (rows of wpe) */
	int V;		/* vocabulary size */
	int L;		/* number of layers */
	int NH;		/* number of attention heads */
	int C;		/* channels; C % NH == 0 */
	int Vp;		/* padded vocabulary, Vp >= V (rows of wte) */
	/* The family (its row of ct_model_ops.h): CT_ARCH_GPT2 or
	 * CT_ARCH_LLAMA (ct_llama.h); every field below is 0 for GPT-2, so a
	 * zero-initialised config is GPT-2. */
	int arch;
	int KVH;	/* Llama: key/value heads, NH % KVH == 0 */
	int F;		/* Llama: MLP hidden size (intermediate_size) */
	int flags;	/* Llama: CT_LLAMA_TIED, CT_LLAMA_QKV_BIAS */
	int rope_orig_maxT;	/* Llama-3 scaling: original_max_position_embeddings */
	int hd;		/* Llama: head_dim when it is not C/NH (Qwen3), else 0 */
	double rope_theta;	/* Llama: RoPE base */
	double rms_eps;		/* Llama: RMSNorm epsilon */
	double rope_factor;	/* Llama-3 scaling factor; 0: no scaling */
	double rope_low, rope_high;	/* Llama-3 low/high_freq_factor */
};

#define CT_ARCH_GPT2 0
#define CT_ARCH_LLAMA 1

/* Index of each tensor in the parameter array, llm.c's order. */
enum ct_gpt2_tensor {
	CT_WTE = 0, CT_WPE, CT_LN1W, CT_LN1B, CT_QKVW, CT_QKVB,
	CT_ATTPROJW, CT_ATTPROJB, CT_LN2W, CT_LN2B, CT_FCW, CT_FCB,
	CT_FCPROJW, CT_FCPROJB, CT_LNFW, CT_LNFB
};

/* Sizes and offsets (in floats) of the 16 tensors in the flat array. */
struct ct_gpt2_layout {
	size_t size[CT_GPT2_NTENSORS];
	size_t offset[CT_GPT2_NTENSORS];
	size_t total;			/* nparams */
};

#endif
