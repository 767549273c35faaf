/*
 * ct_ocl_selftest.c - the conformance self-test (see ct_ocl_selftest.h).
 *
 * The work unit is chosen to touch the kernels real GPT-2 work units use
 * and awkward cases, cheaply: a head size that is a multiple of 8 (as
 * GPT-2's 64), a vocabulary large enough for the logits (and the MLP) to
 * take the transposed forward while the qkv product does not, sizes that
 * are multiples of nothing else (T = 7, V = 517 < Vp = 528), repeated
 * tokens (encoder backward accumulation), gradient clipping that triggers,
 * weight decay, three AdamW steps.
 */
#include "ct_ocl_selftest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_engine.h"
#include "ct_err.h"

#define ST_SEED 20241122ULL
#define ST_NTOK 200

static const struct ct_model_config st_cfg = {
	.maxT = 8, .V = 517, .L = 2, .NH = 2, .C = 32, .Vp = 528,
};

static void st_hparams(struct ct_wu_hparams *hp)
{
	ct_wu_hparams_default(hp);
	hp->steps = 3;
	hp->B = 2;
	hp->T = 7;
	hp->lr = 1e-2f;
	hp->weight_decay = 0.01f;
	hp->grad_clip = 0.5f;
}

/* A fixed token stream: mostly a short cycle, some pseudo-random tokens. */
static void st_tokens(ct_tok *tok, int n)
{
	uint32_t s = 2463534242u;

	for (int i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 17;
		s ^= s << 5;
		tok[i] = (ct_tok)(i % 5 == 0 ? s % (uint32_t)st_cfg.V : (uint32_t)(i * 3) % 11u);
	}
}

int ct_ocl_selftest_digest(const char *device, unsigned char digest[CT_SHA256_LEN])
{
	struct ct_gpt2 model;
	struct ct_tokens tokens;
	struct ct_wu_hparams hp;
	struct ct_sha256_ctx *h = NULL;
	ct_tok tok[ST_NTOK];
	float *out = NULL, losses[3];
	int rc;

	memset(&model, 0, sizeof(model));
	memset(&tokens, 0, sizeof(tokens));
	st_hparams(&hp);
	st_tokens(tok, ST_NTOK);
	rc = ct_gpt2_alloc(&model, &st_cfg);
	if (rc == 0)
		rc = ct_gpt2_init_random(&st_cfg, ST_SEED, model.params);
	if (rc == 0)
		rc = ct_tokens_from_array(&tokens, tok, ST_NTOK);
	if (rc == 0) {
		out = malloc(model.lay.total * sizeof(float));
		if (out == NULL)
			rc = ct_error(CT_ENOMEM, "self-test weights");
	}
	if (rc == 0)
		rc = ct_wu_run(&model, &tokens, &hp, device, out, losses);
	if (rc == 0)
		rc = ct_sha256_init(&h);
	if (rc == 0)
		rc = ct_sha256_update(h, out, model.lay.total * sizeof(float));
	if (rc == 0)
		rc = ct_sha256_update(h, losses, sizeof(losses));
	if (rc == 0) {
		rc = ct_sha256_final(h, digest);
		h = NULL;
	}
	ct_sha256_abort(h);
	free(out);
	ct_tokens_free(&tokens);
	ct_gpt2_free(&model);
	return rc;
}

int ct_ocl_selftest_report(const char *device, struct ct_conform_report *rep,
			   int *conforming)
{
	unsigned char d[CT_SHA256_LEN];
	char hex[CT_SHA256_HEXLEN + 1];
	struct ct_conform_check *c;
	int rc, ok = 1;

	*conforming = 0;
	memset(rep, 0, sizeof(*rep));
	/* the backend table must be complete */
	if (ct_ocl_backend_ops.step == NULL)
		return ct_error(CT_EINTERNAL, "OpenCL backend missing");
	rc = ct_ocl_selftest_digest(device, d);
	if (rc == 0)
		rc = ct_ocl_conform_probes(device, 0, rep);
	if (rc < 0)
		return rc;
	ct_hex_encode(d, sizeof(d), hex);
	c = &rep->check[rep->n++];
	c->name = "work unit digest";
	c->ok = strcmp(hex, CT_OCL_SELFTEST_SHA256) == 0;
	if (!c->ok)
		snprintf(c->detail, sizeof(c->detail), "digest %.16s..., expected %.16s...",
			 hex, CT_OCL_SELFTEST_SHA256);
	for (int i = 0; i < rep->n; i++)
		ok = ok && rep->check[i].ok;
	*conforming = ok;
	return 0;
}

int ct_ocl_selftest(const char *device, int *conforming)
{
	struct ct_conform_report rep;

	return ct_ocl_selftest_report(device, &rep, conforming);
}
