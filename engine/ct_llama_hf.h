/*
 * ct_llama_hf.h - Hugging Face model directories in and out for the Llama
 * model type: config.json + one or more *.safetensors shards, in the
 * names of transformers' LlamaForCausalLM / Qwen2ForCausalLM
 * (model.embed_tokens.weight, model.layers.N.self_attn.q_proj.weight, ...,
 * model.norm.weight, lm_head.weight). How they map onto crowdtune's flat
 * parameter array: ct_llama.h.
 *
 * Import accepts model_type "llama" (hidden_act silu, no attention or MLP
 * biases) and "qwen2" (q/k/v biases, no sliding window); rope_scaling
 * absent, null, rope_type "default" or "llama3"; head_dim absent or
 * hidden_size / num_attention_heads; vocab_size <= CT_VOCAB_MAX (ct_tok.h,
 * 2,097,152). Tensors F32, F16 or BF16 (converted to float32); a missing
 * tensor, a wrong shape, another dtype or a tensor the architecture does
 * not have is refused, naming it (rotary_emb.inv_freq buffers and, for
 * tied models, lm_head.weight are ignored). max_position_embeddings is
 * capped at CT_GPT2_MAX_T. Every size is capped (config.json 1 MiB,
 * 4096 shards, the safetensors limits).
 *
 * Export writes config.json and a single model.safetensors (F32) that
 * transformers loads with from_pretrained(); importing it again gives the
 * same parameters bit for bit.
 */
#ifndef CT_LLAMA_HF_H
#define CT_LLAMA_HF_H

#include "ct_gpt2.h"

#define CT_HF_MAX_CONFIG (1 << 20)
#define CT_HF_MAX_SHARDS 4096

/* Read the model in directory dir into *m (zeroed first; ct_gpt2_free).
 * progress, when not NULL, is called once per shard read (i of n, path).
 * Returns 0 or a CT_E* code whose detail names the file and the problem. */
int ct_llama_hf_import(const char *dir, struct ct_gpt2 *m,
		       void (*progress)(int i, int n, const char *path));

/* The same import straight into a compact frozen base of format fmt
 * (ct_base.h; m->fmt, m->base set, m->params NULL), never holding the
 * float32 weights: BF16 matrices are copied bit for bit, F32/F16 ones
 * rounded to nearest even (then *exact, if not NULL, is 0; else 1);
 * norms and biases are widened to float32 as above. Returns like
 * ct_llama_hf_import, or CT_EINVAL for a format that is not compact. */
int ct_llama_hf_import_base(const char *dir, int fmt, struct ct_gpt2 *m, int *exact,
			    void (*progress)(int i, int n, const char *path));

/* Write m (a Llama model) to directory dir (created if missing):
 * config.json and model.safetensors, each atomically. When tok_dir is not
 * NULL, tokenizer.json, tokenizer_config.json, special_tokens_map.json and
 * generation_config.json found there are copied too. Returns 0 or a CT_E*
 * code. The row of m's family (ct_model_ops.h) exports any model: a GPT-2
 * one goes out in transformers' GPT-2 layout (ct_gpt2_hf.h). */
int ct_llama_hf_export(const struct ct_gpt2 *m, const char *dir, const char *tok_dir);

/* Copy the tokenizer files of ct_llama_hf_tokenizer_files that exist in
 * src into dir (atomically each). Returns 0 or a CT_E* code. */
int ct_llama_hf_copy_tokenizer(const char *src, const char *dir);

/* Llama's Hugging Face modules of a LoRA target, for PEFT (the row's
 * hf_lora_module and peft_words; ct_model_ops.h): q/k/v and gate/up
 * split out of the fused matrices. */
int ct_llama_hf_lora_module(const struct ct_model_config *c, int ti, int k, int l, int out,
			    char *name, size_t cap);
extern const char *const ct_llama_hf_peft_words[4][3];

/* The tokenizer files export copies when they exist (NULL-terminated):
 * tokenizer.json, tokenizer_config.json, special_tokens_map.json,
 * generation_config.json. */
extern const char *const ct_llama_hf_tokenizer_files[];

/* Read and check dir/config.json alone into *c (what import would
 * accept: the same errors, naming the directory). Returns 0 or a CT_E*
 * code. */
int ct_llama_hf_read_config(const char *dir, struct ct_model_config *c);

#endif
