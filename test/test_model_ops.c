/*
 * Unit tests for engine/ct_model_ops: the model families' table. Each
 * family is found by its arch and its checkpoint magic and by nothing
 * else; every row is complete; each row's widths agree with the slot
 * sizes it gives (the C reference, LoRA and the OpenCL scratch bounds rely
 * on both); a checkpoint header a row writes parses back to the same
 * config through the generic reader.
 */
#include "config.h"
#include "ct_test.h"
#include "ct_err.h"
#include "ct_gpt2.h"
#include "ct_llama.h"
#include "ct_model_ops.h"

#include <string.h>

static const struct ct_model_ops *const rows[] = { &ct_model_ops_gpt2, &ct_model_ops_llama };
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* One config of each shape the rows tell apart: GPT-2; Llama with q/k/v
 * biases; tied Llama 3 scaling; Qwen3 (head_dim != C/NH, q/k norms). */
static const struct ct_model_config cfgs[] = {
	{ .maxT = 16, .V = 60, .Vp = 64, .L = 2, .NH = 2, .C = 32 },
	{ .maxT = 16, .V = 50, .Vp = 50, .L = 2, .NH = 4, .C = 32, .arch = CT_ARCH_LLAMA,
	  .KVH = 2, .F = 48, .flags = CT_LLAMA_QKV_BIAS, .rope_theta = 10000.0,
	  .rms_eps = 1e-5 },
	{ .maxT = 32, .V = 50, .Vp = 50, .L = 3, .NH = 4, .C = 32, .arch = CT_ARCH_LLAMA,
	  .KVH = 1, .F = 40, .flags = CT_LLAMA_TIED, .rope_theta = 5e5, .rms_eps = 1e-5,
	  .rope_factor = 8.0, .rope_low = 1.0, .rope_high = 4.0, .rope_orig_maxT = 16 },
	{ .maxT = 16, .V = 50, .Vp = 50, .L = 2, .NH = 4, .C = 32, .arch = CT_ARCH_LLAMA,
	  .KVH = 2, .F = 24, .hd = 16, .flags = CT_LLAMA_QK_NORM, .rope_theta = 1e6,
	  .rms_eps = 1e-6 },
};
#define NCFGS (sizeof(cfgs) / sizeof(cfgs[0]))

static void test_lookup(void **state)
{
	struct ct_model_config odd = cfgs[0];

	(void)state;
	assert_ptr_equal(ct_model_ops_find(CT_ARCH_GPT2), &ct_model_ops_gpt2);
	assert_ptr_equal(ct_model_ops_find(CT_ARCH_LLAMA), &ct_model_ops_llama);
	assert_null(ct_model_ops_find(2));
	assert_null(ct_model_ops_find(-1));
	assert_ptr_equal(ct_model_ops_by_magic(CT_GPT2_MAGIC), &ct_model_ops_gpt2);
	assert_ptr_equal(ct_model_ops_by_magic(CT_LLAMA_MAGIC), &ct_model_ops_llama);
	assert_null(ct_model_ops_by_magic(0));
	assert_ptr_equal(ct_model_ops_for(&cfgs[1]), &ct_model_ops_llama);
	/* a config no row serves is refused by the check, whatever row it
	 * would be given */
	odd.arch = 7;
	assert_ptr_equal(ct_model_ops_for(&odd), &ct_model_ops_gpt2);
	assert_int_equal(ct_gpt2_config_check(&odd), CT_EFORMAT);
	assert_non_null(strstr(ct_errmsg(CT_EFORMAT), "unknown model type 7"));
	assert_string_equal(ct_model_ops_gpt2.name, "GPT-2");
	assert_string_equal(ct_model_ops_llama.name, "Llama");
}

static void test_rows_complete(void **state)
{
	(void)state;
	for (size_t i = 0; i < NROWS; i++) {
		const struct ct_model_ops *o = rows[i];

		for (size_t j = 0; j < i; j++) {
			assert_int_not_equal(o->arch, rows[j]->arch);
			assert_int_not_equal(o->magic, rows[j]->magic);
		}
		assert_non_null(o->name);
		assert_non_null(o->tensor_sizes);
		assert_non_null(o->dims);
		assert_non_null(o->file_header);
		assert_non_null(o->parse_header);
		assert_non_null(o->flops_per_token);
		assert_non_null(o->describe);
		assert_non_null(o->forward);
		assert_non_null(o->backward);
		assert_non_null(o->hf_export);
		assert_non_null(o->gguf_arch);
		assert_non_null(o->gguf_keys);
		assert_non_null(o->gguf_tensors);
		assert_non_null(o->hf_lora_module);
		assert_non_null(o->peft_words);
		assert_non_null(o->delta_lora_fits);
	}
}

/* The widths against the slots: q/k/v (L, qkv, C), o_proj (L, C, att),
 * the MLP's up (L, fc, C) and down (L, C, hidden) matrices; a RoPE table
 * exactly when the row has rotary positions. */
static void test_dims_fit_slots(void **state)
{
	(void)state;
	for (size_t i = 0; i < NCFGS; i++) {
		const struct ct_model_config *c = &cfgs[i];
		const struct ct_model_ops *o = ct_model_ops_for(c);
		const struct ct_model_dims d = ct_model_dims(c);
		const size_t L = (size_t)c->L, C = (size_t)c->C;
		struct ct_gpt2_layout lay;

		assert_int_equal(ct_gpt2_config_check(c), 0);
		ct_gpt2_layout(c, &lay);
		assert_int_equal(lay.size[CT_QKVW], L * (size_t)d.qkv * C);
		assert_int_equal(lay.size[CT_ATTPROJW], L * C * (size_t)d.att);
		assert_int_equal(lay.size[CT_FCW], L * (size_t)d.fc * C);
		assert_int_equal(lay.size[CT_FCPROJW], L * C * (size_t)d.hidden);
		assert_int_equal(d.att, c->NH * d.head);
		assert_int_equal(d.rope, o->rope_table != NULL);
		assert_int_equal(d.norm_means, lay.size[CT_LN2B] == L * C);	/* LayerNorm biases */
	}
}

/* What a row writes, the generic reader parses back (through the row its
 * magic names), and describe names the family's format. */
static void test_header_round_trip(void **state)
{
	(void)state;
	for (size_t i = 0; i < NCFGS; i++) {
		const struct ct_model_config *c = &cfgs[i];
		unsigned char hdr[CT_GPT2_HEADER_BYTES];
		struct ct_model_config back;
		char line[256];

		ct_gpt2_file_header(c, hdr);
		assert_int_equal(ct_gpt2_parse_config(hdr, "h", &back), 0);
		assert_memory_equal(&back, c, sizeof(back));
		ct_model_ops_for(c)->describe(c, line, sizeof(line));
		assert_non_null(strstr(line, ct_model_ops_for(c)->name));
	}
}

CT_TEST_MAIN(test_lookup, test_rows_complete, test_dims_fit_slots, test_header_round_trip)
