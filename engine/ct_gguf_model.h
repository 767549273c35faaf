/*
 * ct_gguf_model.h - a crowdtune model out as one GGUF file for llama.cpp,
 * Ollama and LM Studio (`ctune model export --gguf`, `ctune-server job
 * export --gguf`; the format: lib/ct_gguf.h).
 *
 * Architectures, named as llama.cpp names them:
 *   "llama"  a Llama model (no q/k/v biases, no q/k norms; SmolLM2 too);
 *   "qwen2"  with q/k/v biases (CT_LLAMA_QKV_BIAS);
 *   "qwen3"  with per-head q/k norms (CT_LLAMA_QK_NORM);
 *   "gpt2"   a GPT-2 (llm.c) model.
 * Metadata: general.architecture, general.name, general.file_type (0 all
 * F32, 1 mostly F16, 7 mostly Q8_0, 32 mostly BF16),
 * general.quantization_version 2 (Q8_0 files); ARCH.context_length
 * (maxT), .embedding_length (C), .block_count (L), .feed_forward_length
 * (F; GPT-2 4C), .vocab_size (V), .attention.head_count (NH); Llama
 * family: .attention.head_count_kv, .attention.key_length and
 * .value_length (head_dim), .rope.dimension_count (head_dim),
 * .rope.freq_base, .attention.layer_norm_rms_epsilon; GPT-2:
 * .attention.layer_norm_epsilon 1e-5. And the tokenizer of tok_dir
 * (lib/ct_gguf_tok.h).
 *
 * Tensors (blk.N. per layer; HF (out, in) matrices are ne = {in, out}):
 *   token_embd.weight (V rows: llm.c's padding rows are dropped),
 *   blk.N.attn_norm, attn_q, attn_k, attn_v (+ .bias: qwen2),
 *   attn_q_norm, attn_k_norm (qwen3), attn_output, ffn_norm, ffn_gate,
 *   ffn_up, ffn_down, output_norm, output.weight (absent when tied),
 *   rope_freqs.weight (Llama 3 scaling: head_dim/2 factors f_i / f'_i
 *   by which llama.cpp divides each RoPE frequency). GPT-2: token_embd,
 *   position_embd, blk.N.attn_norm (+bias), attn_qkv (+bias),
 *   attn_output (+bias), ffn_norm (+bias), ffn_up (+bias), ffn_down
 *   (+bias), output_norm (+bias), output.weight (a copy of token_embd).
 * For "llama" the rows of attn_q and attn_k are reordered within each
 * head from Hugging Face's rotate-half pairs (i, i + hd/2) to the
 * adjacent pairs (2i, 2i + 1) llama.cpp's "llama" RoPE rotates: row
 * 2i + e of the head is HF row e*hd/2 + i. qwen2 and qwen3 keep HF's
 * order (llama.cpp rotates them the NeoX way).
 * Vectors (norms, biases, rope_freqs) are always F32; matrices are of
 * the dtype asked, except Q8_0 matrices whose rows are not a multiple of
 * 32 values, which are F16.
 */
#ifndef CT_GGUF_MODEL_H
#define CT_GGUF_MODEL_H

#include "ct_gguf.h"
#include "ct_gpt2.h"

/* "f32", "f16", "bf16" or "q8_0" into *t. 0 or CT_EINVAL naming s. */
int ct_gguf_dtype_parse(const char *s, enum ct_ggml_type *t);

/* The short name of t ("f32", ...). */
const char *ct_gguf_dtype_name(enum ct_ggml_type t);

/* Write m (params in float32) to path as GGUF, matrices of dtype, with
 * the tokenizer of directory tok_dir (tokenizer.json, and
 * tokenizer_config.json when there; NULL: no tokenizer keys, which
 * llama.cpp cannot run) and general.name name (NULL: "crowdtune").
 * Returns 0 or a CT_E* code (CT_EUNSUPP: both biases and q/k norms, or a
 * compact base without float32 weights; CT_ERANGE: a value F16 cannot
 * hold; the tokenizer's and the writer's errors). */
int ct_gguf_export_model(const struct ct_gpt2 *m, const char *path, const char *tok_dir,
			 enum ct_ggml_type dtype, const char *name);

/* ---- the families' parts (their rows of ct_model_ops.h) -------------- */

/* One export being written (ct_gguf_model.c). */
struct ct_gguf_export;

/* general.architecture of c: "gpt2"; "llama", "qwen2" or "qwen3" (NULL:
 * both biases and q/k norms, which llama.cpp has no architecture for). */
const char *ct_gguf_gpt2_arch(const struct ct_model_config *c);
const char *ct_gguf_llama_arch(const struct ct_model_config *c);

/* The family's own "<arch>." keys, after the ones every family has
 * (context_length .. attention.head_count). */
int ct_gguf_gpt2_keys(struct ct_gguf_export *x, const char *arch);
int ct_gguf_llama_keys(struct ct_gguf_export *x, const char *arch);

/* The model's tensors, named and shaped as llama.cpp's arch loads them. */
int ct_gguf_gpt2_tensors(struct ct_gguf_export *x, const char *arch);
int ct_gguf_llama_tensors(struct ct_gguf_export *x, const char *arch);

#endif
