/*
 * ct_model_ops_llama.c - the Llama family's row of the model families
 * table (ct_model_ops.h): Llama 2/3, SmolLM2, Qwen2/3 (ct_llama.h), its
 * checkpoint and layout (ct_llama.c), the C reference's passes
 * (ct_llama_model.c), the Hugging Face and GGUF exports (ct_llama_hf.c,
 * ct_gguf_model.c) and its LoRA result layout (ct_delta.c).
 */
#include "config.h"
#include "ct_model_ops.h"
#include "ct_delta.h"
#include "ct_gguf_model.h"
#include "ct_llama.h"
#include "ct_llama_hf.h"

#include <stdio.h>

static struct ct_model_dims dims(const struct ct_model_config *c)
{
	return (struct ct_model_dims){
		.qkv = ct_llama_qkv_dim(c), .att = ct_llama_att_dim(c), .fc = 2 * c->F,
		.hidden = c->F, .head = ct_llama_head_dim(c),
		.qk_norms = (c->flags & CT_LLAMA_QK_NORM) ? c->NH + c->KVH : 0,
		.norm_means = 0, .rope = 1,
	};
}

static int parse_header(const void *data, size_t n, const char *name,
			struct ct_model_config *c)
{
	return ct_llama_parse_header(data, n, name, c);
}

static void describe(const struct ct_model_config *c, char *out, size_t cap)
{
	snprintf(out, cap, "Llama checkpoint v%d float32 (%d KV heads, head_dim %d, MLP %d, "
		 "rope_theta %g%s%s%s)",
		 c->hd || (c->flags & CT_LLAMA_QK_NORM) ? CT_LLAMA_VERSION_HD : CT_LLAMA_VERSION,
		 c->KVH, ct_llama_head_dim(c), c->F, c->rope_theta,
		 (c->flags & CT_LLAMA_TIED) ? ", tied embeddings" : "",
		 (c->flags & CT_LLAMA_QKV_BIAS) ? ", q/k/v biases" : "",
		 (c->flags & CT_LLAMA_QK_NORM) ? ", q/k norms" : "");
}

const struct ct_model_ops ct_model_ops_llama = {
	.arch = CT_ARCH_LLAMA,
	.name = "Llama",
	.magic = CT_LLAMA_MAGIC,
	.flags = CT_MODEL_LN1B_NORMS | CT_MODEL_OCL_LLAMA_PASS,
	.config_check = ct_llama_config_check,
	.tensor_sizes = ct_llama_tensor_sizes,
	.dims = dims,
	.file_header = ct_llama_header,
	.parse_header = parse_header,
	.flops_per_token = ct_llama_flops_per_token,
	.describe = describe,
	.forward = ct_llama_forward,
	.backward = ct_llama_backward,
	.rope_table = ct_llama_rope_table,
	.hf_export = ct_llama_hf_export,
	.gguf_arch = ct_gguf_llama_arch,
	.gguf_keys = ct_gguf_llama_keys,
	.gguf_tensors = ct_gguf_llama_tensors,
	.hf_lora_module = ct_llama_hf_lora_module,
	.peft_words = ct_llama_hf_peft_words,
	.delta_lora_fits = ct_delta_llama_lora_fits,
};
