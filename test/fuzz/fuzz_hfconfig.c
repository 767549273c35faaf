/*
 * fuzz_hfconfig.c - a Hugging Face model's config.json
 * (engine/ct_llama_hf.c with lib/ct_jv.c), what an operator imports a
 * Llama or Qwen model from (`job submit --hf DIR`). The input is the file.
 * A config that is accepted must pass the model's own check and describe
 * a model whose size the caps bound.
 */
#include "config.h"
#include "fuzz.h"
#include "ct_gpt2.h"
#include "ct_llama_hf.h"

#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = ct_fuzz_file("config.json", data, size);
	char dir[4200];
	struct ct_model_config c;
	struct ct_gpt2_layout lay;

	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(path, '/') - path), path);
	if (ct_llama_hf_read_config(dir, &c) < 0)
		return 0;
	CT_FUZZ_CHECK(c.arch == CT_ARCH_LLAMA && ct_gpt2_config_check(&c) == 0);
	ct_gpt2_layout(&c, &lay);
	CT_FUZZ_CHECK(lay.total > 0 && lay.total <= CT_GPT2_MAX_PARAMS);
	return 0;
}
