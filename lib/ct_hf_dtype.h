/*
 * ct_hf_dtype.h - the dtype of an exported Hugging Face directory:
 * `ctune model export --dtype` and `ctune-server job export --hf --dtype`
 * write config.json + model.safetensors in float32 (ct_llama_hf.h,
 * ct_gpt2_hf.h) and then narrow the file here to bfloat16 or float16,
 * each weight rounded to nearest, ties to even (ct_st_bf16, ct_st_f16),
 * with config.json's torch_dtype saying so. A job's export keeps its input
 * model's dtype by default: the torch_dtype (or transformers' newer
 * "dtype") of the config.json the job was submitted with.
 */
#ifndef CT_HF_DTYPE_H
#define CT_HF_DTYPE_H

#include "ct_safetensors.h"

/* "f32", "bf16" or "f16" (or torch's "float32", "bfloat16", "float16")
 * into *out. Returns 0 or CT_EINVAL naming s and the choices. */
int ct_hf_dtype_parse(const char *s, enum ct_st_dtype *out);

/* The short name of d: "f32", "bf16", "f16". */
const char *ct_hf_dtype_name(enum ct_st_dtype d);

/* The dtype of the model whose config.json is at path: its torch_dtype or
 * dtype member ("bfloat16", "float16"; anything else, or none, float32)
 * into *out. Returns 0 or a file / CT_EFORMAT error (*out F32). */
int ct_hf_dtype_of_config(const char *path, enum ct_st_dtype *out);

/* Make the float32 export in dir (config.json with "torch_dtype":
 * "float32", model.safetensors) one of dtype d: the file rewritten
 * atomically with every tensor rounded, torch_dtype changed. F32 leaves
 * dir as it is. Returns 0 or a CT_E* code (CT_EFORMAT: a config.json
 * export did not write). */
int ct_hf_dtype_set(const char *dir, enum ct_st_dtype d);

#endif
