/*
 * craft_result.c - a test helper (not installed) that plays a volunteer
 * for test/server_crafted.sh: it makes result files, honest or crafted to
 * cheat, in the upload format of engine/ct_delta.h, and recomputes the
 * average the assimilator should take at the end of a round.
 *
 *   craft_result MODE BASE DATA OUT HP...     write one result file
 *       MODE: honest  train on the CPU reference as a client does, encode
 *                     the weights lossless against BASE
 *             lazy    the base weights back (no training)
 *             noise   base + Gaussian noise with the L2 norm of the honest
 *                     update
 *             x10     base + 10 * (honest - base)
 *             flip    base - (honest - base): the sign-flipped update
 *                     (passes the single-result checks; colluders agree)
 *             nudge   base + 0.9 * (honest - base): passes every check of
 *                     a single result, but is not the honest result
 *             ulp     base moved by one ulp towards the honest weights
 *                     (a near-zero update with the honest signs)
 *             nan     the honest weights with one NaN
 *             shape   a delta for another model config (one more layer)
 *       HP: steps= batch= seq= lr= beta1= beta2= eps= weight_decay=
 *           grad_clip= (the work unit's values, as the scheduler sends them)
 *           and for a LoRA WU lora_rank= lora_alpha= lora_targets= seed=:
 *           then the result is an adapter file, the modes applied to the
 *           adapters against the WU's initial ones (honest, lazy, x10,
 *           flip, ulp, nan, nudge, noise).
 *       Also writes OUT.weights: the raw float32 weights it claims (for
 *       shape: the honest ones, which it does not claim; for LoRA: the
 *       adapters).
 *   craft_result chain BASE DATA S OUT HP...  the WU's honest hash chain
 *       with a link every S steps (hex links, lib/ct_chain.h) into OUT
 *   craft_result state BASE DATA K OUT HP...  the WU's state after step K
 *       (ct_wu_save_state), as an honest host uploads it for a dispute
 *   craft_result median BASE OUT W1 W2 W3 ... checkpoint of the
 *       coordinate-wise median of an odd number of raw weight files (its
 *       own sort, to check the assimilator's --aggregate median).
 *   craft_result nesterov LR MU MOM_IN|- MOM_OUT THETA AGG OUT    the outer
 *       step of doc/workunit.md on checkpoint AGG from THETA (its own
 *       arithmetic, to check the assimilator's --outer nesterov).
 *   craft_result mean BASE OUT W1 W2 ...      checkpoint of the mean
 *       of the raw weight files W1..WK (float sum in order, then one
 *       division by K), with BASE's config, written as an llm.c checkpoint.
 *
 * Exit 0 on success, 1 with a message on stderr otherwise.
 */
#include "ct_buf.h"
#include "ct_chain.h"
#include "ct_delta.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_hash.h"
#include "ct_lora.h"
#include "ct_lora_result.h"
#include "ct_tokens.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parse the key=value hyperparameters (as strtod + cast, like the client). */
static int parse_hp(int argc, char **argv, struct ct_wu_hparams *hp)
{
	ct_wu_hparams_default(hp);
	for (int i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '='), *end;
		double v;

		if (eq == NULL)
			return ct_error(CT_EINVAL, "bad argument '%s'", argv[i]);
		*eq = '\0';
		if (strcmp(argv[i], "lora_targets") == 0) {
			if (ct_lora_targets_parse(eq + 1, &hp->lora.targets) < 0)
				return ct_error(CT_EINVAL, "bad LoRA targets '%s'", eq + 1);
			continue;
		}
		if (strcmp(argv[i], "seed") == 0) {	/* 64 bits: not through a double */
			hp->lora_seed = strtoull(eq + 1, &end, 10);
			if (end == eq + 1 || *end != '\0')
				return ct_error(CT_EINVAL, "bad seed '%s'", eq + 1);
			continue;
		}
		v = strtod(eq + 1, &end);
		if (end == eq + 1 || *end != '\0')
			return ct_error(CT_EINVAL, "bad value for %s", argv[i]);
		if (strcmp(argv[i], "steps") == 0) hp->steps = (int)v;
		else if (strcmp(argv[i], "batch") == 0) hp->B = (int)v;
		else if (strcmp(argv[i], "seq") == 0) hp->T = (int)v;
		else if (strcmp(argv[i], "lr") == 0) hp->lr = (float)v;
		else if (strcmp(argv[i], "beta1") == 0) hp->beta1 = (float)v;
		else if (strcmp(argv[i], "beta2") == 0) hp->beta2 = (float)v;
		else if (strcmp(argv[i], "eps") == 0) hp->eps = (float)v;
		else if (strcmp(argv[i], "weight_decay") == 0) hp->weight_decay = (float)v;
		else if (strcmp(argv[i], "grad_clip") == 0) hp->grad_clip = (float)v;
		else if (strcmp(argv[i], "lora_rank") == 0) hp->lora.rank = (int)v;
		else if (strcmp(argv[i], "lora_alpha") == 0) hp->lora.alpha = (float)v;
		else return ct_error(CT_EINVAL, "unknown parameter %s", argv[i]);
	}
	return 0;
}

static void delta_model(const struct ct_model_config *c, struct ct_delta_model *dm)
{
	dm->max_seq_len = (uint32_t)c->maxT;
	dm->vocab_size = (uint32_t)c->V;
	dm->padded_vocab_size = (uint32_t)c->Vp;
	dm->num_layers = (uint32_t)c->L;
	dm->num_heads = (uint32_t)c->NH;
	dm->channels = (uint32_t)c->C;
}

/* A standard normal deviate from a fixed xorshift stream (Box-Muller). */
static double gauss(uint64_t *s)
{
	double u[2];

	for (int i = 0; i < 2; i++) {
		*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
		u[i] = ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
	}
	return sqrt(-2.0 * log(u[0])) * cos(2.0 * 3.14159265358979323846 * u[1]);
}

/* The "shape" cheat: a plausible small update of a model with one more
 * layer, encoded against that model's weights but naming the real base. */
static int other_shape(const struct ct_gpt2 *base, const unsigned char *base_sha,
		       struct ct_buf *out)
{
	struct ct_gpt2 m = { 0 };
	struct ct_model_config cfg = base->cfg;
	struct ct_delta_model dm;
	float *w = NULL;
	int rc;

	cfg.L += 1;
	rc = ct_gpt2_alloc(&m, &cfg);
	if (rc == 0) rc = ct_gpt2_init_random(&cfg, 7, m.params);
	if (rc == 0 && (w = malloc(m.lay.total * sizeof(float))) == NULL)
		rc = CT_ENOMEM;
	if (rc == 0) {
		for (size_t i = 0; i < m.lay.total; i++)
			w[i] = m.params[i] + 1e-4f;
		delta_model(&cfg, &dm);
		rc = ct_delta_encode(m.params, w, m.lay.total, &dm, base_sha, CT_DELTA_LOSSLESS,
				     -1, out);
	}
	free(w);
	ct_gpt2_free(&m);
	return rc;
}

/* Make the weights `w` (n floats) for mode from the honest ones. */
static int craft(const char *mode, const float *base, float *w, size_t n)
{
	if (strcmp(mode, "honest") == 0 || strcmp(mode, "shape") == 0)
		return 0;	/* "shape" is made from scratch by other_shape() */
	if (strcmp(mode, "lazy") == 0) {
		memcpy(w, base, n * sizeof(float));
	} else if (strcmp(mode, "x10") == 0) {
		for (size_t i = 0; i < n; i++)
			w[i] = base[i] + 10.0f * (w[i] - base[i]);
	} else if (strcmp(mode, "flip") == 0) {
		for (size_t i = 0; i < n; i++)
			w[i] = base[i] - (w[i] - base[i]);
	} else if (strcmp(mode, "ulp") == 0) {
		for (size_t i = 0; i < n; i++)
			w[i] = w[i] == base[i] ? base[i] : nextafterf(base[i], w[i]);
	} else if (strcmp(mode, "nan") == 0) {
		w[n / 2] = NAN;
	} else if (strcmp(mode, "nudge") == 0) {
		for (size_t i = 0; i < n; i++)
			w[i] = base[i] + 0.9f * (w[i] - base[i]);
	} else if (strcmp(mode, "noise") == 0) {
		double norm = 0.0, gn = 0.0;
		uint64_t s = 0x9e3779b97f4a7c15ull;
		double *g = malloc(n * sizeof(double));

		if (g == NULL)
			return CT_ENOMEM;
		for (size_t i = 0; i < n; i++) {
			double d = (double)w[i] - base[i];

			norm += d * d;
			g[i] = gauss(&s);
			gn += g[i] * g[i];
		}
		for (size_t i = 0; i < n; i++)
			w[i] = (float)(base[i] + g[i] * sqrt(norm / gn));
		free(g);
	} else {
		return ct_error(CT_EINVAL, "unknown mode '%s'", mode);
	}
	return 0;
}

/* The modes on a LoRA WU's adapters (n floats), against its initial
 * adapters: "flip" is init - (trained - init), whose merged update is
 * about minus the honest one. */
static int craft_lora(const char *mode, const struct ct_model_config *cfg,
		      const struct ct_wu_hparams *hp, float *w, size_t n)
{
	float *init = malloc(n * sizeof(float));
	int rc;

	if (init == NULL)
		return CT_ENOMEM;
	if (strcmp(mode, "shape") == 0)
		rc = ct_error(CT_EINVAL, "mode shape is not made for a LoRA WU");
	else
		rc = ct_lora_init(cfg, &hp->lora, hp->lora_seed, init);
	if (rc == 0)
		rc = craft(mode, init, w, n);
	free(init);
	return rc;
}

static int cmd_result(const char *mode, const char *base_path, const char *data_path,
		      const char *out_path, int argc, char **argv)
{
	struct ct_gpt2 base = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams hp;
	struct ct_delta_model dm;
	struct ct_buf out = CT_BUF_INIT(0);
	unsigned char base_sha[32];
	char wpath[4096];
	float *w = NULL;
	size_t n = 0;
	int rc;

	rc = parse_hp(argc, argv, &hp);
	if (rc == 0) rc = ct_gpt2_load(base_path, &base);
	if (rc == 0) rc = ct_sha256_file(base_path, base_sha);
	if (rc == 0) rc = ct_tokens_load(data_path, &tok);
	if (rc == 0) {
		n = hp.lora.rank > 0 ? ct_lora_nparams(&base.cfg, &hp.lora) : base.lay.total;
		if ((w = malloc(n * sizeof(float))) == NULL)
			rc = CT_ENOMEM;
	}
	if (rc == 0) rc = ct_wu_run(&base, &tok, &hp, "cpu", w, NULL);
	if (rc == 0 && hp.lora.rank > 0) {
		rc = craft_lora(mode, &base.cfg, &hp, w, n);
		if (rc == 0)
			rc = ct_lora_result_encode(&base.cfg, &hp.lora, hp.lora_seed, base_sha, w,
						   CT_DELTA_LOSSLESS, &out);
	} else if (rc == 0) {
		rc = craft(mode, base.params, w, n);
		if (rc == 0 && strcmp(mode, "shape") == 0) {
			rc = other_shape(&base, base_sha, &out);
		} else if (rc == 0) {
			delta_model(&base.cfg, &dm);
			rc = ct_delta_encode(base.params, w, n, &dm, base_sha, CT_DELTA_LOSSLESS,
					     -1, &out);
		}
	}
	if (rc == 0) rc = ct_file_write_atomic(out_path, out.data, out.len, 0644);
	if (rc == 0 && snprintf(wpath, sizeof(wpath), "%s.weights", out_path) >= (int)sizeof(wpath))
		rc = ct_error(CT_EINVAL, "path too long");
	if (rc == 0) rc = ct_file_write_atomic(wpath, w, n * sizeof(float), 0644);
	free(w);
	ct_buf_free(&out);
	ct_tokens_free(&tok);
	ct_gpt2_free(&base);
	return rc;
}

/* BASE's model into *base and a zeroed float per parameter into *out
 * (malloc'd); 0 or CT_E*. */
static int load_base(const char *path, struct ct_gpt2 *base, float **out)
{
	int rc = ct_gpt2_load(path, base);

	if (rc == 0 && (*out = calloc(base->lay.total, sizeof(float))) == NULL)
		rc = CT_ENOMEM;
	return rc;
}

/* The raw weight file `path`, n floats, into *data (malloc'd); 0 or CT_E*. */
static int read_weights(const char *path, size_t n, unsigned char **data)
{
	size_t len;
	int rc = ct_file_read_all(path, n * sizeof(float) + 1, data, &len);

	if (rc == 0 && len != n * sizeof(float))
		rc = ct_error(CT_EFORMAT, "%s: %zu bytes, want %zu", path, len, n * sizeof(float));
	return rc;
}

/* The mean of K raw weight files, written as a checkpoint with BASE's
 * config. */
static int cmd_mean(const char *base_path, const char *out_path, int k, char **files)
{
	struct ct_gpt2 base = { 0 };
	unsigned char *data = NULL;
	size_t n;
	float *acc = NULL;
	int rc;

	rc = load_base(base_path, &base, &acc);
	n = base.lay.total;
	for (int j = 0; rc == 0 && j < k; j++) {
		rc = read_weights(files[j], n, &data);
		for (size_t i = 0; rc == 0 && i < n; i++) {
			float x;

			memcpy(&x, data + i * sizeof(float), sizeof(float));
			acc[i] = j == 0 ? x : acc[i] + x;
		}
		free(data);
		data = NULL;
	}
	for (size_t i = 0; rc == 0 && i < n; i++)
		acc[i] /= (float)k;
	if (rc == 0) rc = ct_gpt2_save(out_path, &base.cfg, acc);
	free(acc);
	ct_gpt2_free(&base);
	return rc;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

/* The coordinate-wise median of an odd number K of raw weight files. */
static int cmd_median(const char *base_path, const char *out_path, int k, char **files)
{
	struct ct_gpt2 base = { 0 };
	unsigned char *data[15] = { NULL };
	size_t n;
	float *out = NULL, col[15];
	int rc;

	if (k % 2 == 0 || k > 15)
		return ct_error(CT_EINVAL, "median: want an odd number of files, at most 15");
	rc = load_base(base_path, &base, &out);
	n = base.lay.total;
	for (int j = 0; rc == 0 && j < k; j++)
		rc = read_weights(files[j], n, &data[j]);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		for (int j = 0; j < k; j++)
			memcpy(&col[j], data[j] + i * sizeof(float), sizeof(float));
		qsort(col, (size_t)k, sizeof(float), cmp_float);
		out[i] = col[k / 2];
	}
	if (rc == 0) rc = ct_gpt2_save(out_path, &base.cfg, out);
	for (int j = 0; j < k; j++)
		free(data[j]);
	free(out);
	ct_gpt2_free(&base);
	return rc;
}

/* Nesterov's outer step as doc/workunit.md spells it, written out here
 * (the server's is lib/ct_outer.c): from the round's start checkpoint
 * THETA and its aggregate AGG (a checkpoint) with the previous buffer
 * MOM_IN (raw floats; "-" in a job's first round), the next model OUT (a
 * checkpoint) and the new buffer MOM_OUT (raw floats). */
static int cmd_nesterov(char **argv)
{
	float lr = strtof(argv[0], NULL), mu = strtof(argv[1], NULL);
	const char *mom_in = argv[2], *mom_out = argv[3];
	struct ct_gpt2 theta = { 0 }, agg = { 0 };
	unsigned char *prev = NULL;
	float *mom = NULL;
	size_t n = 0;
	int rc;

	rc = ct_gpt2_load(argv[4], &theta);
	if (rc == 0)
		rc = ct_gpt2_load(argv[5], &agg);
	if (rc == 0 && (n = theta.lay.total) != agg.lay.total)
		rc = ct_error(CT_EMISMATCH, "nesterov: the two checkpoints differ in size");
	if (rc == 0 && (mom = calloc(n, sizeof(float))) == NULL)
		rc = CT_ENOMEM;
	if (rc == 0 && strcmp(mom_in, "-") != 0)
		rc = read_weights(mom_in, n, &prev);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		float d = theta.params[i] - agg.params[i], m = d, p, g, s;

		if (prev != NULL) {
			memcpy(&p, prev + i * sizeof(float), sizeof(float));
			p = mu * p;
			m = p + d;
		}
		mom[i] = m;
		g = mu * m;
		g = d + g;
		s = lr * g;
		agg.params[i] = theta.params[i] - s;
	}
	if (rc == 0)
		rc = ct_gpt2_save(argv[6], &theta.cfg, agg.params);
	if (rc == 0)
		rc = ct_file_write_atomic(mom_out, mom, n * sizeof(float), 0644);
	free(prev);
	free(mom);
	ct_gpt2_free(&theta);
	ct_gpt2_free(&agg);
	return rc;
}

/* `chain` and `state`: the WU of HP trained on the CPU reference as a
 * client does; `chain` writes its hash chain with interval arg (hex links,
 * lib/ct_chain.h) to out, `state` its state after step arg to out. */
static int cmd_chain(const char *what, const char *base_path, const char *data_path,
		     int arg, const char *out_path, int argc, char **argv)
{
	struct ct_gpt2 base = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams hp;
	struct ct_wu *wu = NULL;
	char chain[CT_CHAIN_HEX_MAX + 1] = "";
	unsigned char d[32];
	size_t len = 0;
	float loss;
	int rc, is_chain = strcmp(what, "chain") == 0;

	rc = parse_hp(argc, argv, &hp);
	if (rc == 0) rc = ct_gpt2_load(base_path, &base);
	if (rc == 0) rc = ct_tokens_load(data_path, &tok);
	if (rc == 0) rc = ct_wu_open(&base, &tok, &hp, "cpu", &wu);
	while (rc == 0 && !ct_wu_done(wu) && (is_chain || ct_wu_steps_done(wu) < arg)) {
		rc = ct_wu_step(wu, &loss);
		if (rc == 0 && is_chain && ct_chain_due(ct_wu_steps_done(wu), hp.steps, arg)) {
			rc = len + 64 < sizeof(chain) ? ct_wu_chain_link(wu, d)
				: ct_error(CT_ETOOBIG, "chain too long");
			if (rc == 0)
				ct_hex_encode(d, 32, chain + len);
			len += 64;
		}
	}
	if (rc == 0 && is_chain)
		rc = ct_file_write_atomic(out_path, chain, len, 0644);
	else if (rc == 0)
		rc = ct_wu_save_state(wu, out_path);
	ct_wu_close(wu);
	ct_tokens_free(&tok);
	ct_gpt2_free(&base);
	return rc;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc == 9 && strcmp(argv[1], "nesterov") == 0)
		rc = cmd_nesterov(argv + 2);
	else if (argc >= 5 && strcmp(argv[1], "mean") == 0)
		rc = cmd_mean(argv[2], argv[3], argc - 4, argv + 4);
	else if (argc >= 5 && strcmp(argv[1], "median") == 0)
		rc = cmd_median(argv[2], argv[3], argc - 4, argv + 4);
	else if (argc >= 6 && (strcmp(argv[1], "chain") == 0 || strcmp(argv[1], "state") == 0))
		rc = cmd_chain(argv[1], argv[2], argv[3], atoi(argv[4]), argv[5], argc - 6,
			       argv + 6);
	else if (argc >= 5 && strcmp(argv[1], "mean") != 0)
		rc = cmd_result(argv[1], argv[2], argv[3], argv[4], argc - 5, argv + 5);
	else
		rc = ct_error(CT_EINVAL, "usage: craft_result MODE BASE DATA OUT HP... | "
			      "craft_result mean BASE OUT W...");
	if (rc < 0) {
		fprintf(stderr, "craft_result: %s\n", ct_errmsg(rc));
		return 1;
	}
	return 0;
}
