/*
 * ct_gpt2_hf.h - a GPT-2 model (llm.c's layout) out as a Hugging Face
 * directory in transformers' GPT2LMHeadModel layout: config.json
 * (model_type "gpt2", gelu_new, layer_norm_epsilon 1e-5, tied embeddings)
 * and one model.safetensors (F32) with the names of OpenAI's gpt2 repository
 * (wte.weight, wpe.weight, h.N.ln_1.weight, h.N.attn.c_attn.weight, ...,
 * ln_f.bias). GPT-2's Conv1D matrices are stored (in, out), llm.c's are
 * (out, in): c_attn, attn.c_proj, c_fc and mlp.c_proj are transposed; wte
 * loses llm.c's padding rows (V of Vp). GPT-2's row of ct_model_ops.h
 * calls it (and copies the tokenizer beside it).
 */
#ifndef CT_GPT2_HF_H
#define CT_GPT2_HF_H

#include "ct_gpt2.h"

/* Write m (a GPT-2 model) to directory dir (created if missing):
 * config.json and model.safetensors, each atomically (ct_llama_hf_export
 * copies the tokenizer files beside them). bos/eos_token_id are
 * 50256 (<|endoftext|>) when V is GPT-2's 50257, else left out. Holds a
 * second copy of the weights while writing. Returns 0 or a CT_E* code. */
int ct_gpt2_hf_export(const struct ct_gpt2 *m, const char *dir);

/* GPT-2's Hugging Face module of a LoRA target, for PEFT (the row's
 * hf_lora_module and peft_words; ct_model_ops.h): the fused Conv1D
 * itself, "transformer.h.<l>.attn.c_attn" and so on. */
int ct_gpt2_hf_lora_module(const struct ct_model_config *c, int ti, int k, int l, int out,
			   char *name, size_t cap);
extern const char *const ct_gpt2_hf_peft_words[4][3];

#endif
