/*
 * bench_export - what `job export` costs for a GPT-2 shape: a synthetic
 * LoRA job's model (base ~ init_random, then --rounds rounds of --shards
 * shards of rank --rank adapters on all targets merged by ct_lora_merge,
 * as the assimilator does) written
 *   - as a Hugging Face directory in float32 (the family row's hf_export),
 *   - narrowed to bf16 and to f16 (ct_hf_dtype_set; each from a fresh f32
 *     export, whose time is not counted again),
 *   - as a PEFT adapter of rank rank x shards x rounds (ct_job_peft_export),
 * with each step's wall seconds and output bytes, and how far base + B A
 * is from the model (the largest error over all target weights, relative
 * to the largest change of its module).
 *
 *   bench/bench_export [--shape 124m|small] [--rank R] [--shards K]
 *                      [--rounds N] [--dir DIR]
 *
 * The files go to DIR (default $TMPDIR or /tmp) and are removed at the end.
 */
#include "config.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_hf_dtype.h"
#include "ct_llama_hf.h"
#include "ct_model_ops.h"
#include "ct_lora.h"
#include "ct_rng.h"
#include "ct_safetensors.h"
#include "ct_time.h"
#include "cmd/job_peft.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static long long file_size(const char *dir, const char *name)
{
	char p[4096];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) == 0 ? (long long)st.st_size : -1;
}

/* The synthetic job's model into m (base: b) and both as files. */
static int make_job(const struct ct_model_config *c, const struct ct_lora_spec *s, int K,
		    int rounds, const char *dir, struct ct_gpt2 *b, struct ct_gpt2 *m)
{
	const size_t n = ct_lora_nparams(c, s);
	struct ct_rng rng;
	char p[4200];
	float **ads = calloc((size_t)K, sizeof(*ads));
	int rc = ads ? 0 : CT_ENOMEM;

	ct_rng_seed(&rng, 3);
	if (rc == 0)
		rc = ct_gpt2_alloc(b, c);
	if (rc == 0)
		rc = ct_gpt2_alloc(m, c);
	if (rc == 0)
		rc = ct_gpt2_init_random(c, 1, b->params);
	if (rc == 0)
		memcpy(m->params, b->params, b->lay.total * sizeof(float));
	for (int r = 0; r < rounds && rc == 0; r++) {
		for (int k = 0; k < K && rc == 0; k++) {
			ads[k] = malloc(n * sizeof(float));
			if (ads[k] == NULL)
				rc = CT_ENOMEM;
			for (size_t i = 0; i < n && rc == 0; i++)
				ads[k][i] = 0.01f * ct_rng_normal(&rng);
		}
		if (rc == 0)
			rc = ct_lora_merge(c, s, m->params, (const float *const *)ads, K);
		for (int k = 0; k < K; k++) {
			free(ads[k]);
			ads[k] = NULL;
		}
	}
	free(ads);
	snprintf(p, sizeof(p), "%s/base.ct", dir);
	if (rc == 0)
		rc = ct_gpt2_save(p, c, b->params);
	snprintf(p, sizeof(p), "%s/model.ct", dir);
	if (rc == 0)
		rc = ct_gpt2_save(p, c, m->params);
	return rc;
}

/* The largest |base + B A - model| / (largest |model - base|) of a slot. */
static double adapter_error(const char *dir, const struct ct_model_config *c,
			    const struct ct_lora_spec *s, const struct ct_gpt2 *b,
			    const struct ct_gpt2 *m)
{
	struct ct_st_file f;
	char p[4200], name[160];
	double worst = 0.0;
	static const char *const tn[] = { "attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj" };

	snprintf(p, sizeof(p), "%s/adapter/adapter_model.safetensors", dir);
	if (ct_st_open(p, &f) < 0)
		return NAN;
	for (int i = 0; i < ct_lora_nslots(c, s); i++) {
		struct ct_lora_slot sl;
		const struct ct_st_tensor *ta, *tb;
		float *A, *B;
		double dmax = 0.0, err = 0.0;
		int t = 0, P;

		ct_lora_slot(c, s, i, &sl);
		while ((1 << t) != (int)sl.target)
			t++;
		snprintf(name, sizeof(name), "base_model.model.transformer.h.%d.%s.lora_A.weight",
			 sl.layer, tn[t]);
		ta = ct_st_find(&f, name);
		memcpy(strstr(name, "lora_A"), "lora_B", 6);
		tb = ct_st_find(&f, name);
		if (ta == NULL || tb == NULL)
			return NAN;
		P = (int)ta->shape[0];
		A = malloc(ta->nelem * sizeof(float));
		B = malloc(tb->nelem * sizeof(float));
		ct_st_read_f32(&f, ta, A, ta->nelem);
		ct_st_read_f32(&f, tb, B, tb->nelem);
		for (size_t k = 0; k < (size_t)sl.out * sl.in; k++)
			dmax = fmax(dmax, fabs((double)m->params[sl.w_off + k] - b->params[sl.w_off + k]));
		for (int o = 0; o < sl.out; o++)
			for (int x = 0; x < sl.in; x++) {
				const size_t w = sl.w_off + (size_t)o * sl.in + x;
				double d = 0.0;

				for (int j = 0; j < P; j++)
					d += (double)B[(size_t)o * P + j] * A[(size_t)j * sl.in + x];
				err = fmax(err, fabs(b->params[w] + d - m->params[w]));
			}
		worst = fmax(worst, err / dmax);
		free(A);
		free(B);
	}
	ct_st_close(&f);
	return worst;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "shape", 1, NULL, 's' }, { "rank", 1, NULL, 'r' },
					      { "shards", 1, NULL, 'k' }, { "rounds", 1, NULL, 'n' },
					      { "dir", 1, NULL, 'd' }, { NULL, 0, NULL, 0 } };
	struct ct_model_config c = { .maxT = 1024, .V = 50257, .Vp = 50304, .L = 12, .NH = 12,
				    .C = 768 };
	struct ct_lora_spec s = { .rank = 8, .alpha = 16.0f, .targets = CT_LORA_ALL };
	struct ct_gpt2 b = { 0 }, m = { 0 };
	const char *td = getenv("TMPDIR"), *shape = "124m";
	char dir[4096], out[4200], cmd[4300];
	int K = 4, rounds = 2, rank = 0, ch, rc;
	double t;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 's': shape = optarg; break;
		case 'r': s.rank = atoi(optarg); break;
		case 'k': K = atoi(optarg); break;
		case 'n': rounds = atoi(optarg); break;
		case 'd': td = optarg; break;
		default:
			fprintf(stderr, "usage: bench_export [--shape 124m|small] [--rank R] "
				"[--shards K] [--rounds N] [--dir DIR]\n");
			return 2;
		}
	}
	if (strcmp(shape, "small") == 0)
		c = (struct ct_model_config){ .maxT = 64, .V = 256, .Vp = 256, .L = 2, .NH = 4,
					     .C = 128 };
	snprintf(dir, sizeof(dir), "%s/bench-export-XXXXXX", td && *td ? td : "/tmp");
	if (mkdtemp(dir) == NULL || K < 1 || rounds < 1 || ct_lora_spec_check(&s, &c) < 0) {
		fprintf(stderr, "bench_export: bad options or no directory\n");
		return 1;
	}
	rc = make_job(&c, &s, K, rounds, dir, &b, &m);
	printf("GPT-2 %s (L=%d C=%d), LoRA rank %d x %d shards x %d rounds\n", shape, c.L, c.C,
	       s.rank, K, rounds);
	printf("%-26s %10s %14s\n", "export", "seconds", "bytes");
	for (int i = 0; i < 3 && rc == 0; i++) {
		static const enum ct_st_dtype dt[] = { CT_ST_F32, CT_ST_BF16, CT_ST_F16 };

		snprintf(out, sizeof(out), "%s/hf", dir);
		t = ct_time_mono_s();
		rc = ct_model_ops_for(&m.cfg)->hf_export(&m, out, NULL);
		if (i == 0)
			printf("%-26s %10.2f %14lld\n", "--hf --dtype f32", ct_time_mono_s() - t,
			       file_size(out, "model.safetensors"));
		t = ct_time_mono_s();
		if (rc == 0 && i > 0)
			rc = ct_hf_dtype_set(out, dt[i]);
		if (rc == 0 && i > 0)
			printf("--hf --dtype %-13s %10.2f %14lld\n", ct_hf_dtype_name(dt[i]),
			       ct_time_mono_s() - t, file_size(out, "model.safetensors"));
	}
	if (rc == 0) {
		char bp[4200], mp[4200];
		struct ct_job_peft p = { .base_path = bp, .model_path = mp, .spec = s,
					 .rank = s.rank * K * rounds, .dtype = CT_ST_F32 };

		snprintf(bp, sizeof(bp), "%s/base.ct", dir);
		snprintf(mp, sizeof(mp), "%s/model.ct", dir);
		snprintf(out, sizeof(out), "%s/adapter", dir);
		t = ct_time_mono_s();
		rc = ct_job_peft_export(&p, out, &rank);
		if (rc == 0) {
			char what[40];

			snprintf(what, sizeof(what), "--adapter (rank %d)", rank);
			printf("%-26s %10.2f %14lld\n", what, ct_time_mono_s() - t,
			       file_size(out, "adapter_model.safetensors"));
		}
	}
	if (rc == 0)
		printf("base + B A off the model by at most %.3g of a module's largest change\n",
		       adapter_error(dir, &c, &s, &b, &m));
	if (rc < 0)
		fprintf(stderr, "bench_export: %s\n", ct_errmsg(rc));
	ct_gpt2_free(&b);
	ct_gpt2_free(&m);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_export: could not remove %s\n", dir);
	return rc < 0;
}
