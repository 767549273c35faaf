/*
 * ct_model_ops_gpt2.c - GPT-2's row of the model families table
 * (ct_model_ops.h): llm.c's checkpoint and layout (ct_gpt2.c), the C
 * reference's passes (ct_model.c), the Hugging Face and GGUF exports
 * (ct_gpt2_hf.c, ct_gguf_model.c) and its LoRA result layout (ct_delta.c).
 */
#include "config.h"
#include "ct_model_ops.h"
#include "ct_delta.h"
#include "ct_gguf_model.h"
#include "ct_gpt2.h"
#include "ct_gpt2_hf.h"
#include "ct_llama_hf.h"
#include "ct_model.h"

#include <stdio.h>
#include <string.h>

static struct ct_model_dims dims(const struct ct_model_config *c)
{
	return (struct ct_model_dims){
		.qkv = 3 * c->C, .att = c->C, .fc = 4 * c->C, .hidden = 4 * c->C,
		.head = c->C / c->NH, .qk_norms = 0, .norm_means = 1, .rope = 0,
	};
}

static void file_header(const struct ct_model_config *c, unsigned char *hdr)
{
	int32_t h[CT_GPT2_HEADER_INTS];

	ct_gpt2_header(c, h);
	memcpy(hdr, h, sizeof(h));
}

static void describe(const struct ct_model_config *c, char *out, size_t cap)
{
	(void)c;
	snprintf(out, cap, "GPT-2 checkpoint v%d float32", CT_GPT2_VERSION);
}

/* transformers' GPT2LMHeadModel, the tokenizer files beside it */
static int hf_export(const struct ct_gpt2 *m, const char *dir, const char *tok_dir)
{
	int rc = ct_gpt2_hf_export(m, dir);

	return rc == 0 && tok_dir != NULL ? ct_llama_hf_copy_tokenizer(tok_dir, dir) : rc;
}

const struct ct_model_ops ct_model_ops_gpt2 = {
	.arch = CT_ARCH_GPT2,
	.name = "GPT-2",
	.magic = CT_GPT2_MAGIC,
	.flags = CT_MODEL_ANY_BACKEND | CT_MODEL_PREFIX_LOGITS |
		 CT_MODEL_LORA_TENSOR_SEGMENTS | CT_MODEL_HF_FAN_IN_FAN_OUT,
	.config_check = NULL,
	.tensor_sizes = ct_gpt2_own_sizes,
	.dims = dims,
	.file_header = file_header,
	.parse_header = ct_gpt2_own_parse,
	.flops_per_token = ct_gpt2_own_flops,
	.describe = describe,
	.forward = ct_model_gpt2_forward,
	.backward = ct_model_gpt2_backward,
	.rope_table = NULL,
	.hf_export = hf_export,
	.gguf_arch = ct_gguf_gpt2_arch,
	.gguf_keys = ct_gguf_gpt2_keys,
	.gguf_tensors = ct_gguf_gpt2_tensors,
	.hf_lora_module = ct_gpt2_hf_lora_module,
	.peft_words = ct_gpt2_hf_peft_words,
	.delta_lora_fits = ct_delta_gpt2_lora_fits,
};
