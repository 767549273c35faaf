/*
 * job_peft.h - `job export ID --adapter DIR` of a LoRA job: a PEFT adapter
 * directory (adapter_config.json + adapter_model.safetensors) that
 * PeftModel.from_pretrained(base, DIR) applies to the job's base model in
 * transformers to give the job's model.
 *
 * A LoRA job's model is not one rank-r adapter: every round adds the mean
 * of its K shards' products s B_k A_k to the weights and the next round
 * starts fresh adapters (lora_round.h), so after R rounds each target
 * weight carries a sum of R x K rank-r products. The export recovers that
 * sum from the models the job keeps (its base and the exported round's
 * model; the uploads are gone by then): per Hugging Face module, D =
 * model - base (out, in) is factored as B A with B (out, p) of orthonormal
 * columns spanning D's range (D times p seeded random sign vectors, one
 * subspace iteration B = orth(D orth(D^T B)), modified Gram-Schmidt twice,
 * all in double) and A = B^T D (p, in), p = min(P, out, in) for the
 * adapter's rank P = r K R; so B A equals D up to float rounding (~1e-7
 * of the change, test/test_job_peft.c). Modules narrower than P get zero rows / columns: every module
 * has rank P, lora_alpha = P (scale 1).
 *
 * Hugging Face modules per crowdtune target (ct_lora.h): Llama-family
 * qkv -> q_proj, k_proj, v_proj (rows of the fused matrix), proj -> o_proj,
 * fc -> gate_proj, up_proj, fcproj -> down_proj, under
 * base_model.model.model.layers.N.{self_attn,mlp}; GPT-2 qkv -> attn.c_attn,
 * proj -> attn.c_proj, fc -> mlp.c_fc, fcproj -> mlp.c_proj under
 * base_model.model.transformer.h.N (Conv1D: fan_in_fan_out true; lora_A is
 * still (P, in) and lora_B (out, P)).
 */
#ifndef CT_SERVER_JOB_PEFT_H
#define CT_SERVER_JOB_PEFT_H

#include "ct_lora.h"
#include "ct_safetensors.h"

struct ct_job_peft {
	const char *base_path;	/* the job's base checkpoint */
	const char *model_path;	/* the model to express (final or a round's) */
	struct ct_lora_spec spec;	/* the job's LoRA spec (targets used) */
	int rank;		/* P: r x shards x rounds (capped here) */
	const char *base_name;	/* base_model_name_or_path; NULL: null */
	enum ct_st_dtype dtype;	/* of adapter_model.safetensors */
};

/* Write p's adapter into directory dir (created if missing), each file
 * atomically; *rank_out (may be NULL) gets the rank written. Refuses
 * (CT_EMISMATCH) a model whose shape is not the base's or that differs
 * from the base outside the LoRA targets. Returns 0 or a CT_E* code. */
int ct_job_peft_export(const struct ct_job_peft *p, const char *dir, int *rank_out);

#endif
