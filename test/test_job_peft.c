/*
 * Unit tests for server/cmd/job_peft.c (job export --adapter): models made
 * the way a LoRA job makes them (ct_lora_merge of random adapters, several
 * rounds of several shards) come back as a PEFT adapter whose B A, added
 * to the base, is the model within float rounding, for GPT-2 and for a
 * Llama model with GQA (fused q/k/v and gate/up matrices split into
 * PEFT's modules); the names, shapes and adapter_config.json; the rank
 * capped at the widest matrix's smaller side; a model changed outside
 * the targets refused. test/llama_e2e.sh and test/lora_e2e.sh check the
 * same on real jobs with an independent Python reader.
 */
#include "ct_test.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_llama.h"
#include "ct_lora.h"
#include "ct_rng.h"
#include "ct_safetensors.h"
#include "cmd/job_peft.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dir;

/* dir/name; four calls' results live at once. */
static const char *path(const char *name)
{
	static char p[4][4096];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

/* base (seed 1) and, in "model.ct", base merged with `rounds` rounds of
 * K shards of random rank-r adapters (B not zero: trained ones). */
static void make_models(const struct ct_model_config *c, const struct ct_lora_spec *s,
			int K, int rounds, struct ct_gpt2 *base)
{
	const size_t n = ct_lora_nparams(c, s);
	float *ads[4], *p;
	struct ct_rng rng;

	assert_true(K <= 4);
	assert_int_equal(ct_gpt2_alloc(base, c), 0);
	assert_int_equal(ct_gpt2_init_random(c, 1, base->params), 0);
	assert_int_equal(ct_gpt2_save(path("base.ct"), c, base->params), 0);
	ct_rng_seed(&rng, 7);
	p = malloc(base->lay.total * sizeof(float));
	memcpy(p, base->params, base->lay.total * sizeof(float));
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < K; k++) {
			ads[k] = malloc(n * sizeof(float));
			for (size_t i = 0; i < n; i++)	/* both A and B random */
				ads[k][i] = 0.05f * ct_rng_normal(&rng);
		}
		assert_int_equal(ct_lora_merge(c, s, p, (const float *const *)ads, K), 0);
		for (int k = 0; k < K; k++)
			free(ads[k]);
	}
	assert_int_equal(ct_gpt2_save(path("model.ct"), c, p), 0);
	free(p);
}

/* The weight (out, in) of HF module `mod`, a view into m's params. */
struct mod_ref {
	const char *name;	/* after base_model.model. */
	size_t off;
	int out, in;
};

/* Check adapter_model.safetensors in dir against base/model for mods:
 * shapes (P, in) / (out, P), and base + B A = model within 1e-5 of the
 * largest change of the module plus 4 ulps. */
static void check_adapter(const struct mod_ref *mods, size_t nm, int P, const float *base,
			  const float *model, size_t want_tensors)
{
	struct ct_st_file f;
	char name[160];

	assert_int_equal(ct_st_open(path("adapter/adapter_model.safetensors"), &f), 0);
	assert_int_equal(f.nt, want_tensors);
	for (size_t k = 0; k < nm; k++) {
		const struct mod_ref *e = &mods[k];
		const struct ct_st_tensor *ta, *tb;
		float *A = malloc((size_t)P * e->in * sizeof(float));
		float *B = malloc((size_t)P * e->out * sizeof(float));
		double dmax = 0.0, worst = 0.0;

		snprintf(name, sizeof(name), "base_model.model.%s.lora_A.weight", e->name);
		ta = ct_st_find(&f, name);
		snprintf(name, sizeof(name), "base_model.model.%s.lora_B.weight", e->name);
		tb = ct_st_find(&f, name);
		assert_non_null(ta);
		assert_non_null(tb);
		assert_true(ta->ndim == 2 && ta->shape[0] == P && ta->shape[1] == e->in);
		assert_true(tb->ndim == 2 && tb->shape[0] == e->out && tb->shape[1] == P);
		assert_int_equal(ct_st_read_f32(&f, ta, A, (size_t)P * e->in), 0);
		assert_int_equal(ct_st_read_f32(&f, tb, B, (size_t)P * e->out), 0);
		for (size_t i = 0; i < (size_t)e->out * e->in; i++)
			dmax = fmax(dmax, fabs((double)model[e->off + i] - base[e->off + i]));
		assert_true(dmax > 0.0);
		for (int o = 0; o < e->out; o++)
			for (int i = 0; i < e->in; i++) {
				const size_t w = e->off + (size_t)o * e->in + i;
				double d = 0.0, err, ulp;

				for (int j = 0; j < P; j++)
					d += (double)B[(size_t)o * P + j] * A[(size_t)j * e->in + i];
				err = fabs(base[w] + d - model[w]);
				ulp = ldexp(1.0, ilogb(fmax(fabs(model[w]), 1e-30)) - 23);
				worst = fmax(worst, err / dmax);
				assert_true(err <= 1e-5 * dmax + 4 * ulp);
			}
		fprintf(stderr, "%s: base + B A within %.2g of its largest change %.3g\n", e->name,
			worst, dmax);
		free(A);
		free(B);
	}
	ct_st_close(&f);
}

static char *read_text(const char *p)
{
	unsigned char *t = NULL;
	size_t n = 0;

	assert_int_equal(ct_file_read_all(p, 1 << 20, &t, &n), 0);
	return (char *)t;
}

static void test_gpt2(void **state)
{
	const struct ct_model_config c = { .maxT = 16, .V = 64, .Vp = 64, .L = 2, .NH = 2, .C = 16 };
	const struct ct_lora_spec s = { .rank = 2, .alpha = 4.0f, .targets = CT_LORA_ALL };
	struct ct_job_peft p = { .spec = s, .rank = 2 * 3 * 2, .base_name = "gpt2 \"tiny\"",
				 .dtype = CT_ST_F32 };
	char bp[4096], mp[4096];
	struct ct_gpt2 base = { 0 }, model = { 0 };
	struct ct_gpt2_layout *l;
	struct mod_ref mods[8];
	int rank = 0, n = 0;
	char *cfg;

	(void)state;
	make_models(&c, &s, 3, 2, &base);
	p.base_path = strcpy(bp, path("base.ct"));
	p.model_path = strcpy(mp, path("model.ct"));
	assert_int_equal(ct_gpt2_load(path("model.ct"), &model), 0);
	l = &base.lay;
	for (int i = 0; i < 2; i++) {
		static char names[8][64];

		snprintf(names[n], 64, "transformer.h.%d.attn.c_attn", i);
		mods[n] = (struct mod_ref){ names[n], l->offset[CT_QKVW] + (size_t)i * 48 * 16, 48, 16 };
		n++;
		snprintf(names[n], 64, "transformer.h.%d.mlp.c_proj", i);
		mods[n] = (struct mod_ref){ names[n], l->offset[CT_FCPROJW] + (size_t)i * 16 * 64, 16, 64 };
		n++;
	}
	assert_int_equal(ct_job_peft_export(&p, path("adapter"), &rank), 0);
	assert_int_equal(rank, 12);
	check_adapter(mods, (size_t)n, 12, base.params, model.params, 2 * 4 * 2);
	cfg = read_text(path("adapter/adapter_config.json"));
	assert_non_null(strstr(cfg, "\"peft_type\": \"LORA\""));
	assert_non_null(strstr(cfg, "\"task_type\": \"CAUSAL_LM\""));
	assert_non_null(strstr(cfg, "\"r\": 12,\n  \"lora_alpha\": 12,"));
	assert_non_null(strstr(cfg, "\"base_model_name_or_path\": \"gpt2 \\\"tiny\\\"\""));
	assert_non_null(strstr(cfg, "\"target_modules\": [\"c_attn\", \"attn.c_proj\", \"c_fc\", "
			       "\"mlp.c_proj\"]"));
	assert_non_null(strstr(cfg, "\"fan_in_fan_out\": true"));
	free(cfg);
	/* a rank over every matrix's smaller side is capped there (C = 16) */
	p.rank = 1000;
	assert_int_equal(ct_job_peft_export(&p, path("adapter"), &rank), 0);
	assert_int_equal(rank, 16);
	check_adapter(mods, (size_t)n, 16, base.params, model.params, 2 * 4 * 2);
	/* a change outside the targets (a layer norm): not a LoRA model */
	model.params[l->offset[CT_LN1W]] += 1.0f;
	assert_int_equal(ct_gpt2_save(path("model.ct"), &c, model.params), 0);
	assert_int_equal(ct_job_peft_export(&p, path("adapter2"), &rank), CT_EMISMATCH);
	assert_non_null(strstr(ct_errmsg(CT_EMISMATCH), "outside the LoRA targets"));
	assert_false(ct_file_exists(path("adapter2/adapter_config.json")));
	ct_gpt2_free(&model);
	ct_gpt2_free(&base);
}

static void test_llama(void **state)
{
	/* GQA: q 32 rows, k and v 16 each; F = 24 */
	const struct ct_model_config c = { .maxT = 16, .V = 50, .Vp = 50, .L = 2, .NH = 4,
					  .C = 32, .arch = CT_ARCH_LLAMA, .KVH = 2, .F = 24,
					  .flags = CT_LLAMA_TIED, .rope_theta = 10000.0,
					  .rms_eps = 1e-5 };
	const struct ct_lora_spec s = { .rank = 3, .alpha = 3.0f,
					.targets = CT_LORA_QKV | CT_LORA_FC };
	struct ct_job_peft p = { .spec = s, .rank = 3 * 2 * 1, .dtype = CT_ST_F32 };
	char bp[4096], mp[4096];
	struct ct_gpt2 base = { 0 }, model = { 0 };
	static char names[10][64];
	struct mod_ref mods[10];
	size_t qkv, fc;
	int rank = 0, n = 0;
	char *cfg;

	(void)state;
	make_models(&c, &s, 2, 1, &base);
	p.base_path = strcpy(bp, path("base.ct"));
	p.model_path = strcpy(mp, path("model.ct"));
	assert_int_equal(ct_gpt2_load(path("model.ct"), &model), 0);
	for (int i = 0; i < 2; i++) {
		static const char *const w[5] = { "self_attn.q_proj", "self_attn.k_proj",
						  "self_attn.v_proj", "mlp.gate_proj", "mlp.up_proj" };
		static const int rows[5] = { 32, 16, 16, 24, 24 };

		qkv = base.lay.offset[CT_QKVW] + (size_t)i * 64 * 32;
		fc = base.lay.offset[CT_FCW] + (size_t)i * 48 * 32;
		for (int k = 0; k < 5; k++, n++) {
			snprintf(names[n], 64, "model.layers.%d.%s", i, w[k]);
			mods[n] = (struct mod_ref){ names[n], k < 3 ? qkv : fc, rows[k], 32 };
			if (k < 3)
				qkv += (size_t)rows[k] * 32;
			else
				fc += (size_t)rows[k] * 32;
		}
	}
	assert_int_equal(ct_job_peft_export(&p, path("adapter"), &rank), 0);
	assert_int_equal(rank, 6);
	check_adapter(mods, (size_t)n, 6, base.params, model.params, 2 * 5 * 2);
	cfg = read_text(path("adapter/adapter_config.json"));
	assert_non_null(strstr(cfg, "\"target_modules\": [\"q_proj\", \"k_proj\", \"v_proj\", "
			       "\"gate_proj\", \"up_proj\"]"));
	assert_non_null(strstr(cfg, "\"fan_in_fan_out\": false"));
	assert_non_null(strstr(cfg, "\"base_model_name_or_path\": null"));
	free(cfg);
	/* bf16 tensors: half the bytes, the same names */
	p.dtype = CT_ST_BF16;
	assert_int_equal(ct_job_peft_export(&p, path("adapter_bf16"), &rank), 0);
	{
		struct ct_st_file f;

		assert_int_equal(ct_st_open(path("adapter_bf16/adapter_model.safetensors"), &f), 0);
		assert_int_equal(f.t[0].dtype, CT_ST_BF16);
		assert_int_equal(f.nt, 20);
		ct_st_close(&f);
	}
	ct_gpt2_free(&model);
	ct_gpt2_free(&base);
}

static int setup(void **state)
{
	(void)state;
	dir = ct_test_mkdtemp();
	return dir == NULL;
}

static int teardown(void **state)
{
	(void)state;
	ct_test_rmtree(dir);
	free(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gpt2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_llama, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
