/*
 * ct_model.c - GPT-2 forward, backward and AdamW step built from the
 * reference layers of ct_layers.c, for a fixed batch shape B x T.
 *
 * The order of the layers (and so of the gradient contributions) is the
 * specification: see ct_model.h and doc/workunit.md. Buffers: parameters,
 * gradients, m and v are nparams floats each; forward activations are kept
 * per layer (backward needs them); the backward pass reuses one layer's
 * worth of gradient scratch, zeroing each buffer just before the layer that
 * adds into it.
 */
#include "config.h"
#include "ct_model.h"
#include "ct_err.h"
#include "ct_llama.h"
#include "ct_lora_model.h"

#include <stdlib.h>
#include <string.h>

/* Per-model views of the tensors of layer l. */
struct layer_params {
	float *ln1w, *ln1b, *qkvw, *qkvb, *attprojw, *attprojb;
	float *ln2w, *ln2b, *fcw, *fcb, *fcprojw, *fcprojb;
};

static void layer_params(const struct ct_gpt2_layout *lay, float *base, int l,
			 int C, struct layer_params *p)
{
	size_t C_ = (size_t)C;

	p->ln1w = base + lay->offset[CT_LN1W] + l * C_;
	p->ln1b = base + lay->offset[CT_LN1B] + l * C_;
	p->qkvw = base + lay->offset[CT_QKVW] + l * 3 * C_ * C_;
	p->qkvb = base + lay->offset[CT_QKVB] + l * 3 * C_;
	p->attprojw = base + lay->offset[CT_ATTPROJW] + l * C_ * C_;
	p->attprojb = base + lay->offset[CT_ATTPROJB] + l * C_;
	p->ln2w = base + lay->offset[CT_LN2W] + l * C_;
	p->ln2b = base + lay->offset[CT_LN2B] + l * C_;
	p->fcw = base + lay->offset[CT_FCW] + l * 4 * C_ * C_;
	p->fcb = base + lay->offset[CT_FCB] + l * 4 * C_;
	p->fcprojw = base + lay->offset[CT_FCPROJW] + l * 4 * C_ * C_;
	p->fcprojb = base + lay->offset[CT_FCPROJB] + l * C_;
}

/* Lay out the activations in one block; returns the float count (and
 * assigns pointers when base is not NULL). */
static size_t acts_layout(struct ct_acts *a, float *base, size_t L, size_t B,
			  size_t T, size_t C, size_t NH, size_t Vp)
{
	size_t off = 0, BT = B * T;
#define TAKE(field, n) do { if (base) a->field = base + off; off += (n); } while (0)
	TAKE(encoded, BT * C);
	TAKE(ln1, L * BT * C);
	TAKE(ln1_mean, L * BT);
	TAKE(ln1_rstd, L * BT);
	TAKE(qkv, L * BT * 3 * C);
	TAKE(atty, L * BT * C);
	TAKE(att, L * B * NH * T * 2);
	TAKE(attrow, T);
	TAKE(attproj, L * BT * C);
	TAKE(residual2, L * BT * C);
	TAKE(ln2, L * BT * C);
	TAKE(ln2_mean, L * BT);
	TAKE(ln2_rstd, L * BT);
	TAKE(fch, L * BT * 4 * C);
	TAKE(fch_gelu, L * BT * 4 * C);
	TAKE(fcproj, L * BT * C);
	TAKE(residual3, L * BT * C);
	TAKE(lnf, BT * C);
	TAKE(lnf_mean, BT);
	TAKE(lnf_rstd, BT);
	TAKE(logits, BT * Vp);
	TAKE(probs, BT * Vp);
	TAKE(losses, BT);
#undef TAKE
	return off;
}

static size_t gacts_layout(struct ct_grad_acts *g, float *base, size_t B,
			   size_t T, size_t C, size_t NH, size_t Vp)
{
	size_t off = 0, BT = B * T;
#define TAKE(field, n) do { if (base) g->field = base + off; off += (n); } while (0)
	TAKE(dlogits, BT * Vp);
	TAKE(dresidual, BT * C);
	TAKE(dresidual_in, BT * C);
	TAKE(dresidual2, BT * C);
	TAKE(dln, BT * C);
	TAKE(datty, BT * C);
	TAKE(dattproj, BT * C);
	TAKE(dfcproj, BT * C);
	TAKE(dqkv, BT * 3 * C);
	TAKE(datt, ct_attention_scratch_floats((int)T, (int)C, (int)NH));
	TAKE(dfch, BT * 4 * C);
	TAKE(dfch_gelu, BT * 4 * C);
#undef TAKE
	return off;
}

static float *alloc_floats(size_t n)
{
	if (n > SIZE_MAX / sizeof(float))
		return NULL;
	return calloc(n, sizeof(float));
}

int ct_model_init(struct ct_model *m, const struct ct_gpt2_config *cfg,
		  const float *params, int B, int T, int training)
{
	size_t n, na;
	int rc;

	memset(m, 0, sizeof(*m));
	rc = ct_gpt2_config_check(cfg);
	if (rc < 0)
		return rc;
	if (B < 1 || T < 1 || T > cfg->maxT)
		return ct_error(CT_EINVAL, "batch %d x %d: need B >= 1 and 1 <= T <= maxT (%d)",
				B, T, cfg->maxT);
	m->cfg = *cfg;
	ct_gpt2_layout(cfg, &m->lay);
	m->B = B;
	m->T = T;
	n = m->lay.total;
	if (cfg->arch == CT_ARCH_LLAMA)
		na = ct_llama_acts_layout(m, NULL);
	else
		na = acts_layout(&m->acts, NULL, cfg->L, B, T, cfg->C, cfg->NH, cfg->Vp);
	m->params = alloc_floats(n);
	m->mem = alloc_floats(na);
	if (m->params == NULL || m->mem == NULL)
		goto nomem;
	if (cfg->arch == CT_ARCH_LLAMA) {
		ct_llama_acts_layout(m, m->mem);
		if (ct_llama_rope_table(cfg, T, m->acts.rope) < 0)
			goto nomem;
	} else {
		acts_layout(&m->acts, m->mem, cfg->L, B, T, cfg->C, cfg->NH, cfg->Vp);
	}
	if (params != NULL)
		memcpy(m->params, params, n * sizeof(float));
	if (training == 1 || training == CT_MODEL_FROZEN) {
		size_t ng = cfg->arch == CT_ARCH_LLAMA ? ct_llama_gacts_layout(m, NULL)
			    : gacts_layout(&m->gacts, NULL, B, T, cfg->C, cfg->NH, cfg->Vp);

		if (training == 1) {
			m->grads = alloc_floats(n);
			m->m = alloc_floats(n);
			m->v = alloc_floats(n);
			if (m->grads == NULL || m->m == NULL || m->v == NULL)
				goto nomem;
		}
		m->gmem = alloc_floats(ng);
		if (m->gmem == NULL)
			goto nomem;
		if (cfg->arch == CT_ARCH_LLAMA)
			ct_llama_gacts_layout(m, m->gmem);
		else
			gacts_layout(&m->gacts, m->gmem, B, T, cfg->C, cfg->NH, cfg->Vp);
	}
	return 0;
nomem:
	ct_model_free(m);
	return ct_error(CT_ENOMEM, "out of memory for a model of %zu parameters at batch %d x %d",
			n, B, T);
}

void ct_model_free(struct ct_model *m)
{
	ct_lora_detach(m);
	free(m->params);
	free(m->grads);
	free(m->m);
	free(m->v);
	free(m->mem);
	free(m->gmem);
	memset(m, 0, sizeof(*m));
}

/* Forward through block l, from `residual` (BT,C) into residual3[l]. */
static void block_forward(struct ct_model *m, int l, const float *residual)
{
	const int B = m->B, T = m->T, C = m->cfg.C, NH = m->cfg.NH, BT = B * T;
	const size_t lc = (size_t)l * BT * C, lt = (size_t)l * BT;
	struct ct_acts *a = &m->acts;
	struct layer_params p;

	layer_params(&m->lay, m->params, l, C, &p);
	ct_layernorm_forward(a->ln1 + lc, a->ln1_mean + lt, a->ln1_rstd + lt,
			     residual, p.ln1w, p.ln1b, BT, C);
	ct_matmul_forward(a->qkv + 3 * lc, a->ln1 + lc, p.qkvw, p.qkvb, BT, C, 3 * C);
	ct_lora_forward(m, l, CT_LORA_QKV, a->qkv + 3 * lc, a->ln1 + lc);
	ct_attention_forward_recompute(a->atty + lc, a->att + (size_t)l * B * NH * T * 2,
				       a->attrow, a->qkv + 3 * lc, B, T, C, NH);
	ct_matmul_forward(a->attproj + lc, a->atty + lc, p.attprojw, p.attprojb,
			  BT, C, C);
	ct_lora_forward(m, l, CT_LORA_ATTPROJ, a->attproj + lc, a->atty + lc);
	ct_residual_forward(a->residual2 + lc, residual, a->attproj + lc, (size_t)BT * C);
	ct_layernorm_forward(a->ln2 + lc, a->ln2_mean + lt, a->ln2_rstd + lt,
			     a->residual2 + lc, p.ln2w, p.ln2b, BT, C);
	ct_matmul_forward(a->fch + 4 * lc, a->ln2 + lc, p.fcw, p.fcb, BT, C, 4 * C);
	ct_lora_forward(m, l, CT_LORA_FC, a->fch + 4 * lc, a->ln2 + lc);
	ct_gelu_forward(a->fch_gelu + 4 * lc, a->fch + 4 * lc, (size_t)BT * 4 * C);
	ct_matmul_forward(a->fcproj + lc, a->fch_gelu + 4 * lc, p.fcprojw, p.fcprojb,
			  BT, 4 * C, C);
	ct_lora_forward(m, l, CT_LORA_FCPROJ, a->fcproj + lc, a->fch_gelu + 4 * lc);
	ct_residual_forward(a->residual3 + lc, a->residual2 + lc, a->fcproj + lc,
			    (size_t)BT * C);
}

float ct_model_forward(struct ct_model *m, const uint16_t *inputs,
		       const uint16_t *targets)
{
	const struct ct_gpt2_config *c = &m->cfg;
	const int BT = m->B * m->T;
	struct ct_acts *a = &m->acts;
	const float *residual = a->encoded;

	if (c->arch == CT_ARCH_LLAMA)
		return ct_llama_forward(m, inputs, targets);
	ct_encoder_forward(a->encoded, inputs, m->params + m->lay.offset[CT_WTE],
			   m->params + m->lay.offset[CT_WPE], m->B, m->T, c->C);
	for (int l = 0; l < c->L; l++) {
		block_forward(m, l, residual);
		residual = a->residual3 + (size_t)l * BT * c->C;
	}
	ct_layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, residual,
			     m->params + m->lay.offset[CT_LNFW],
			     m->params + m->lay.offset[CT_LNFB], BT, c->C);
	ct_matmul_forward(a->logits, a->lnf, m->params + m->lay.offset[CT_WTE],
			  NULL, BT, c->C, c->Vp);
	ct_crossentropy_forward(a->losses, a->probs, a->logits, targets, BT,
				c->V, c->Vp);
	if (targets == NULL)
		return 0.0f;
	return ct_mean_loss(a->losses, BT);
}

void ct_model_zero_grad(struct ct_model *m)
{
	if (m->grads != NULL)
		memset(m->grads, 0, m->lay.total * sizeof(float));
}

static void zero(float *p, size_t n)
{
	memset(p, 0, n * sizeof(float));
}

/* Backward through block l. On entry g->dresidual holds the gradient of
 * residual3[l]; on exit g->dresidual_in holds that of the block's input
 * `residual` (the caller swaps the two). */
static void block_backward(struct ct_model *m, int l, const float *residual)
{
	const int B = m->B, T = m->T, C = m->cfg.C, NH = m->cfg.NH, BT = B * T;
	const size_t lc = (size_t)l * BT * C, lt = (size_t)l * BT, n = (size_t)BT * C;
	struct ct_acts *a = &m->acts;
	struct ct_grad_acts *g = &m->gacts;
	struct layer_params p, d;

	layer_params(&m->lay, m->params, l, C, &p);
	if (m->grads != NULL)
		layer_params(&m->lay, m->grads, l, C, &d);
	else			/* frozen weights (LoRA): no parameter gradients */
		memset(&d, 0, sizeof(d));
	zero(g->dresidual_in, n);
	zero(g->dresidual2, n);
	zero(g->dfcproj, n);
	ct_residual_backward(g->dresidual2, g->dfcproj, g->dresidual, n);
	zero(g->dfch_gelu, 4 * n);
	ct_matmul_backward(g->dfch_gelu, d.fcprojw, d.fcprojb, g->dfcproj,
			   a->fch_gelu + 4 * lc, p.fcprojw, BT, 4 * C, C);
	ct_lora_backward(m, l, CT_LORA_FCPROJ, g->dfch_gelu, g->dfcproj, a->fch_gelu + 4 * lc);
	zero(g->dfch, 4 * n);
	ct_gelu_backward(g->dfch, a->fch + 4 * lc, g->dfch_gelu, 4 * n);
	zero(g->dln, n);
	ct_matmul_backward(g->dln, d.fcw, d.fcb, g->dfch, a->ln2 + lc, p.fcw,
			   BT, C, 4 * C);
	ct_lora_backward(m, l, CT_LORA_FC, g->dln, g->dfch, a->ln2 + lc);
	ct_layernorm_backward(g->dresidual2, d.ln2w, d.ln2b, g->dln,
			      a->residual2 + lc, p.ln2w, a->ln2_mean + lt,
			      a->ln2_rstd + lt, BT, C);
	zero(g->dattproj, n);
	ct_residual_backward(g->dresidual_in, g->dattproj, g->dresidual2, n);
	zero(g->datty, n);
	ct_matmul_backward(g->datty, d.attprojw, d.attprojb, g->dattproj,
			   a->atty + lc, p.attprojw, BT, C, C);
	ct_lora_backward(m, l, CT_LORA_ATTPROJ, g->datty, g->dattproj, a->atty + lc);
	zero(g->dqkv, 3 * n);
	ct_attention_backward_recompute(g->dqkv, g->datt, g->datty, a->qkv + 3 * lc,
					a->att + (size_t)l * B * NH * T * 2, B, T, C, NH);
	zero(g->dln, n);
	ct_matmul_backward(g->dln, d.qkvw, d.qkvb, g->dqkv, a->ln1 + lc, p.qkvw,
			   BT, C, 3 * C);
	ct_lora_backward(m, l, CT_LORA_QKV, g->dln, g->dqkv, a->ln1 + lc);
	ct_layernorm_backward(g->dresidual_in, d.ln1w, d.ln1b, g->dln, residual,
			      p.ln1w, a->ln1_mean + lt, a->ln1_rstd + lt, BT, C);
}

void ct_model_backward(struct ct_model *m, const uint16_t *inputs,
		       const uint16_t *targets)
{
	const struct ct_gpt2_config *c = &m->cfg;
	const int BT = m->B * m->T;
	const size_t n = (size_t)BT * c->C;
	struct ct_acts *a = &m->acts;
	struct ct_grad_acts *g = &m->gacts;
	const struct ct_gpt2_layout *lay = &m->lay;
	float *const gr = m->grads;	/* NULL: frozen weights (LoRA) */

	if (c->arch == CT_ARCH_LLAMA) {
		ct_llama_backward(m, inputs, targets);
		return;
	}
	ct_crossentropy_backward(g->dlogits, a->probs, targets, BT, c->V, c->Vp);
	zero(g->dln, n);
	ct_matmul_backward(g->dln, gr ? gr + lay->offset[CT_WTE] : NULL, NULL, g->dlogits,
			   a->lnf, m->params + lay->offset[CT_WTE], BT, c->C, c->Vp);
	zero(g->dresidual, n);
	ct_layernorm_backward(g->dresidual, gr ? gr + lay->offset[CT_LNFW] : NULL,
			      gr ? gr + lay->offset[CT_LNFB] : NULL, g->dln,
			      a->residual3 + (size_t)(c->L - 1) * n,
			      m->params + lay->offset[CT_LNFW], a->lnf_mean,
			      a->lnf_rstd, BT, c->C);
	for (int l = c->L - 1; l >= 0; l--) {
		const float *residual = l == 0 ? a->encoded
					       : a->residual3 + (size_t)(l - 1) * n;
		float *tmp;

		block_backward(m, l, residual);
		tmp = g->dresidual;
		g->dresidual = g->dresidual_in;
		g->dresidual_in = tmp;
	}
	if (gr == NULL)
		return;
	ct_encoder_backward(m->grads + lay->offset[CT_WTE],
			    m->grads + lay->offset[CT_WPE], g->dresidual, inputs,
			    m->B, m->T, c->C);
}

int ct_model_step(struct ct_model *m, const uint16_t *inputs,
		  const uint16_t *targets, int t, float lr, float beta1,
		  float beta2, float eps, float weight_decay, float grad_clip,
		  float *loss)
{
	struct ct_adamw_args a = { .lr = lr, .beta1 = beta1, .beta2 = beta2,
				   .eps = eps, .weight_decay = weight_decay };

	ct_adamw_bias_corrections(beta1, beta2, t, &a.bc1, &a.bc2);
	if (m->lora != NULL)
		return ct_lora_step(m, inputs, targets, &a, grad_clip, loss);
	if (m->grads == NULL)
		return ct_error(CT_ESTATE, "model opened for evaluation cannot train");
	ct_model_zero_grad(m);
	*loss = ct_model_forward(m, inputs, targets);
	ct_model_backward(m, inputs, targets);
	if (grad_clip > 0.0f)
		ct_grad_clip(m->grads, m->lay.total, grad_clip);
	ct_adamw_update(m->params, m->grads, m->m, m->v, m->lay.total, &a);
	return 0;
}
